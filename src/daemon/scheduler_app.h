// SchedulerApp: `berth scheduler` running — the API client and its informers, the Scheduler and
// its loop, leader election, events and the health/metrics endpoints, wired together.
//
// Threads: Start/Stop on the main thread. Inside: one scheduling thread (ScheduleOne in a
// loop), one timer thread for the queue's flushes, the informers' threads, the client's event
// writer, the endpoints' I/O threads and the elector's thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "berth/api/result.h"
#include "client/local_list_watch.h"
#include "config/feature_gates.h"
#include "config/types.h"
#include "scheduler/scheduler.h"

namespace berth::daemon {

struct SchedulerAppOptions {
  // The configuration file ("" = defaults); ignored when `config` is set.
  std::string config_file;
  std::optional<config::SchedulerConfiguration> config;
  std::string kubeconfig;  // overrides clientConnection.kubeconfig when set
  // Live reload of config_file (docs/configuration.md): the file's text as the configuration
  // the command runs with (its flags applied); unset: config::LoadConfig with leader_elect.
  std::function<Result<config::SchedulerConfiguration>(const std::string& text,
                                                       const Registry& registry)>
      load_config;
  // Polls config_file every second and reloads a new content (ReloadConfiguration reads it
  // at once either way).
  bool watch_config = true;
  // Called on the scheduling thread with each configuration a reload applied.
  std::function<void(const config::SchedulerConfiguration&)> on_reloaded;
  // A legacy Policy read through the API from this ConfigMap's "policy.cfg" (--policy-configmap):
  // it decides the profile and the extenders.
  std::string policy_configmap, policy_configmap_namespace = "kube-system";
  std::string master;
  std::optional<bool> leader_elect;  // overrides leaderElection.leaderElect
  int64_t pod_max_in_unschedulable_ms = 5 * 60 * 1000;
  int verbosity = 0;
  bool record_decisions = false;
  std::vector<std::string> plugin_libraries;
  std::vector<PluginRegistration> compiled_in;  // plugins compiled into this binary
  config::FeatureGates feature_gates;           // --feature-gates: the plugins are built under them
  // Endpoints (/healthz, /livez, /readyz, /configz, /metrics); port 0 turns them off.
  int secure_port = 10259;
  std::string bind_address = "0.0.0.0";
  bool plain_http = false;
  std::string tls_cert_file, tls_private_key_file;
  std::vector<std::string> startup_warnings;  // logged once the logger exists
  // Also told of every attempt, with its per-node details, after the daemon's own handling
  // (`berth up`'s web view keeps decisions this way). Called where AttemptObserver says
  // (scheduling or binding thread); they must outlive the app.
  std::vector<AttemptObserver*> extra_observers;
  // The scored nodes those observers show per attempt (0: all); the scheduler keeps no more
  // unless the daemon itself needs them (-v=10 logs every node, --record-decisions 100).
  size_t extra_observer_nodes = 0;
  // Lists and watches served in this process (`berth up`: the API server's store), read by
  // the scheduler's informers instead of HTTP; null: HTTP. Must outlive the app.
  client::LocalListWatch* local_list_watch = nullptr;
};

class SchedulerApp {
 public:
  // Connects, starts the informers and (once leading) scheduling. Errors name the file,
  // context or server.
  static Result<std::unique_ptr<SchedulerApp>> Start(SchedulerAppOptions options);
  ~SchedulerApp();
  // Drains binding cycles, releases the lease, stops every thread. Idempotent.
  void Stop();
  // True when the app cannot go on (leadership lost): the process should exit non-zero.
  bool Failed() const;
  uint16_t endpoints_port() const;
  // What /metrics of the endpoints serves (Prometheus text format), for embedding callers.
  std::string Metrics();
  // Reads the configuration file again now (SIGHUP) and reloads it if it changed. Any thread.
  void ReloadConfiguration();

  struct Impl;

 private:
  explicit SchedulerApp(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

struct SchedulerFlags;
// `berth scheduler`: runs until SIGINT/SIGTERM; returns the exit code.
int RunSchedulerCommand(const SchedulerFlags& flags);

}  // namespace berth::daemon
