// `berth up`: the embedded API server and the scheduler in one process, for one machine.
//
// The scheduler talks to the API server through the same HTTP client and informers it uses
// against a real cluster (no in-process shortcut), so `berth up` exercises the production path.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "berth/api/result.h"
#include "berth/framework/registry.h"
#include "config/types.h"

namespace berth::daemon {

struct UpOptions {
  std::string data_dir;  // default: $XDG_DATA_HOME/berth or ~/.local/share/berth
  std::string bind_address = "127.0.0.1";
  int port = 6443;
  std::string config_file;  // KubeSchedulerConfiguration for the scheduler
  int demo_nodes = 0;
  std::string event_ttl = "1h0m0s";  // Go duration; events are deleted this long after a write
  bool no_scheduler = false;
  // Simulated kubelets play every node's kubelet (docs/up.md): leases, node status, pods
  // started, finished and deleted. Go durations for their pacing.
  bool no_kubelets = false;
  std::string pod_start_delay = "500ms";
  std::string max_termination_grace = "1s";
  std::string node_lease_renew_interval = "10s";
  std::string node_status_report_interval = "5m0s";
  // Workload controllers to run (kube-controller-manager's --controllers: "*", "name",
  // "-name"); empty: none.
  std::vector<std::string> controllers = {"*"};
  bool record_decisions = false;
  int verbosity = 0;
  std::vector<std::string> plugin_libraries;
  std::vector<PluginRegistration> compiled_in;  // plugins compiled into this binary
};

// Runs until SIGINT/SIGTERM; returns the process exit code.
int RunUp(const UpOptions& options);

// The configuration the embedded scheduler runs with: the --config file as written (its
// clientConnection with upstream's defaults), or else the defaults without a client-side rate
// limit. kube-scheduler's 50 requests a second spare an API server many clients share; this
// one is the scheduler's own, in the same process, and 200 pods would take eight seconds.
Result<config::SchedulerConfiguration> UpSchedulerConfiguration(const UpOptions& options,
                                                                const Registry& registry);

// The default data directory.
std::string DefaultDataDir();

}  // namespace berth::daemon
