// SimCluster: `berth up`'s whole cluster in one process on a simulated clock: the embedded API
// server, the controllers (one worker each), the simulated kubelets and the scheduler. The
// kubelets and the scheduler run on the caller's thread (RunOnce, ScheduleOne), so their order
// is the caller's; the server and the controllers keep their threads, whose work the clock's
// quiescence probes track (simtime/simulated_clock.h).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "berth/api/result.h"
#include "berth/framework/registry.h"
#include "config/types.h"
#include "scenario/cluster_watch.h"
#include "scenario/scenario_spec.h"
#include "scheduler/scheduler.h"
#include "simtime/simulated_clock.h"

namespace berth::apiserver {
class Server;
}
namespace berth::client {
class ApiClusterClient;
}
namespace berth::controllers {
class ControllerManager;
}
namespace berth::kubelet {
class SimulatedKubelets;
}

namespace berth::scenario {

struct ClusterOptions {
  uint64_t seed = 1;
  std::string config_file;  // KubeSchedulerConfiguration; empty: the defaults
  std::vector<std::string> feature_gates;
  std::function<void(const std::string&)> log;  // components' messages; null: dropped
};

class SimCluster final : public AttemptObserver {
 public:
  // Starts everything with `clock` (which must outlive the cluster) at its current time, with
  // the scenario's generated nodes, and waits until every component has synced.
  static Result<std::unique_ptr<SimCluster>> Start(const ClusterSpec& spec,
                                                   const ClusterOptions& options,
                                                   simtime::SimulatedClock* clock);
  ~SimCluster() override;
  void Stop();

  // Runs everything due by the clock's current time until the cluster is quiescent.
  VoidResult Settle();
  // The earliest time anything has work (a timer of a component, a kubelet's next heartbeat,
  // a pod's backoff, the scheduler's periodic retry of unschedulable pods).
  std::optional<TimePoint> NextDue() const;
  // Moves the clock to `t` and lets the scheduler's queue see it.
  void AdvanceTo(TimePoint t);

  client::RestClient& rest() { return *rest_; }
  ClusterWatch& watch() { return *watch_; }

  void OnAttempt(const SchedulingAttempt& attempt) override;

 private:
  SimCluster() = default;
  VoidResult StartScheduler(const ClusterOptions& options);
  VoidResult WaitForSync();
  bool KubeletsDue() const;

  simtime::SimulatedClock* clock_ = nullptr;
  std::string data_dir_;
  std::function<void(const std::string&)> log_;
  std::unique_ptr<apiserver::Server> server_;
  std::unique_ptr<client::RestClient> rest_;
  std::unique_ptr<ClusterWatch> watch_;
  std::unique_ptr<controllers::ControllerManager> controllers_;
  std::unique_ptr<client::RestClient> kubelet_rest_;
  std::unique_ptr<kubelet::SimulatedKubelets> kubelets_;
  Registry registry_;
  config::SchedulerConfiguration config_;
  std::unique_ptr<client::ApiClusterClient> client_;
  std::unique_ptr<Scheduler> scheduler_;
  TimePoint next_unschedulable_flush_{};
  bool stopped_ = false;
};

// The Kubernetes-style RFC 3339 text of a time point (whole seconds).
std::string TimestampOf(TimePoint t);

}  // namespace berth::scenario
