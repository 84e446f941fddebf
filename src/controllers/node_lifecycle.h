// The node lifecycle controller and the taint eviction controller of kube-controller-manager
// (pkg/controller/nodelifecycle, pkg/controller/tainteviction; separate since 1.29).
//
// NodeLifecycleController watches nodes and their Leases in kube-node-lease. A node whose
// heartbeat (Lease renewTime or Ready lastHeartbeatTime) has not changed for the grace period
// (--node-monitor-grace-period, 40 s by default) gets its kubelet conditions set to Unknown.
// Every node then carries the taints its Ready condition calls for:
// node.kubernetes.io/unreachable (Unknown) or node.kubernetes.io/not-ready (False), each as
// NoSchedule and NoExecute; they are removed when the node is Ready again.
//
// TaintEvictionController deletes the pods on nodes with NoExecute taints they do not tolerate,
// at once, or after the shortest tolerationSeconds of the tolerations they use (the API server
// gives every pod 300 s for not-ready and unreachable).
//
// Both check every node on a ticker (node-monitor-period: an eighth of the grace period,
// between 100 ms and 5 s) and read time from the injected Clock; MonitorOnce and EvictOnce do
// one round for tests.
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>

#include "client/rest_client.h"
#include "controllers/controller_base.h"
#include "controllers/shared_informer.h"
#include "simtime/simulated_clock.h"

namespace berth::controllers {

inline constexpr const char* kNodeLeaseNamespace = "kube-node-lease";
inline constexpr const char* kNodeLeasesPath =
    "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
// Every namespace's Leases: the controller manager's one Lease informer, which the node
// lifecycle controller reads by "kube-node-lease/<node>" and the garbage collector shares, so
// each renewal is decoded once.
inline constexpr const char* kLeasesPath = "/apis/coordination.k8s.io/v1/leases";

// Runs `round` every `period` on a thread of its own until Stop.
class Ticker {
 public:
  // Runs `round` now and then every `period` of `clock`'s time. Under a SimulatedClock the
  // ticker is one of its participants: due at its next round, busy while a round runs; `what`
  // names the rounds in the clock's diagnostics (what kept the cluster busy).
  void Start(const Clock* clock, Duration period, std::function<void()> round,
             std::string what = "a node lifecycle round");
  void Stop();
  Ticker();
  ~Ticker();

 private:
  class SimProbe;
  const Clock* clock_ = nullptr;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool running_ = false;
  TimePoint next_{};
  std::string what_;
  std::thread thread_;
  std::unique_ptr<SimProbe> probe_;
  std::unique_ptr<simtime::ParticipantRegistration> registration_;
};

class NodeLifecycleController : public Controller {
 public:
  NodeLifecycleController(client::RestClient* rest, SharedInformer* nodes, SharedInformer* leases,
                          ControllerOptions options);
  void Start() override;
  void Stop() override;
  // One pass over every node; returns the number of nodes written.
  int MonitorOnce();

 private:
  struct Probe {
    // The heartbeats last seen (the Lease's renewTime, the Ready condition's
    // lastHeartbeatTime read from `node`), and when a round saw either change.
    std::string renew_time, node_heartbeat;
    TimePoint observed;
    uint64_t round = 0;  // the last MonitorOnce that saw the node
    // The node's document the fields below were read from.
    Object node;
    bool ready_unknown = false;
    bool taints_current = false;  // the node's taints are what its Ready condition asks for
  };
  static bool TaintsCurrent(const nlohmann::json& node, const std::string& now_text);
  // Marks a silent node Unknown, then brings its taints in line; returns the writes made.
  int UpdateNode(const nlohmann::json& doc, const std::string& name, bool silent,
                 const std::string& now_text);
  client::RestClient* rest_;
  SharedInformer* nodes_;
  // The renewTime of each node's Lease (by node name), kept by the Lease informer's handlers.
  std::string RenewTimeOf(const std::string& node) const;
  mutable std::mutex renewals_mu_;
  std::unordered_map<std::string, std::string> renewals_;
  ControllerOptions options_;
  std::mutex mu_;                                  // MonitorOnce runs one at a time
  std::unordered_map<std::string, Probe> probes_;  // by node name
  uint64_t monitor_round_ = 0;
  Ticker ticker_;
};

class TaintEvictionController : public Controller {
 public:
  TaintEvictionController(client::RestClient* rest, SharedInformer* nodes, SharedInformer* pods,
                          ControllerOptions options);
  void Start() override;
  void Stop() override;
  // Deletes the pods due for eviction; returns how many.
  int EvictOnce();

 private:
  client::RestClient* rest_;
  SharedInformer* nodes_;
  SharedInformer* pods_;
  ControllerOptions options_;
  std::mutex mu_;
  std::set<std::string> evicted_;  // pod UIDs deleted, until the informer forgets them
  Ticker ticker_;
};

// The ticker period for a grace period.
Duration NodeMonitorPeriod(Duration grace);

}  // namespace berth::controllers
