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
#include "daemon/demo_nodes.h"

namespace berth::daemon {

struct UpOptions {
  std::string data_dir;  // default: $XDG_DATA_HOME/berth or ~/.local/share/berth
  std::string bind_address = "127.0.0.1";
  int port = 6443;
  std::string config_file;  // KubeSchedulerConfiguration for the scheduler
  // Nodes created when none are stored; -1: kDefaultDemoNodes on a new data directory.
  int demo_nodes = -1;
  NodeShape demo_node_shape;
  std::string event_ttl = "1h0m0s";  // Go duration; events are deleted this long after a write
  bool no_scheduler = false;
  // Simulated kubelets play every node's kubelet (docs/up.md): leases, node status, pods
  // started, finished and deleted. Go durations for their pacing.
  bool no_kubelets = false;
  // A --node-devices file: the DRA devices the simulated nodes publish (docs/up.md).
  std::string node_devices;
  std::string pod_start_delay = "500ms";
  std::string max_termination_grace = "1s";
  std::string node_lease_renew_interval = "10s";
  std::string node_status_report_interval = "5m0s";
  // Pod CIDRs (RuntimeOptions); unset, a --demo-nodes count the default range cannot hold gets
  // a range that can (PodCidrsFor).
  std::string cluster_cidr;
  int node_cidr_mask_size = 0;
  // Workload controllers to run (kube-controller-manager's --controllers: "*", "name",
  // "-name"); empty: none.
  std::vector<std::string> controllers = {"*"};
  // The node lifecycle controller's --node-monitor-grace-period (Go duration).
  std::string node_monitor_grace_period = "40s";
  // The pod garbage collector's --terminated-pod-gc-threshold (0: keep every finished pod).
  int terminated_pod_gc_threshold = 12500;
  bool record_decisions = false;
  int verbosity = 0;
  std::vector<std::string> plugin_libraries;
  std::vector<PluginRegistration> compiled_in;  // plugins compiled into this binary
  // --feature-gates occurrences: the scheduler's gates, and the API server's for
  // TaintTolerationComparisonOperators (tolerations with Lt and Gt).
  std::vector<std::string> feature_gates;
};

// Runs until SIGINT/SIGTERM; returns the process exit code.
int RunUp(const UpOptions& options);

// The configuration the embedded scheduler runs with: the --config file as written (its
// clientConnection with upstream's defaults), or else the defaults without a client-side rate
// limit. kube-scheduler's 50 requests a second spare an API server many clients share; this
// one is the scheduler's own, in the same process, and 200 pods would take eight seconds.
Result<config::SchedulerConfiguration> UpSchedulerConfiguration(const UpOptions& options,
                                                                const Registry& registry);

inline constexpr int kDefaultDemoNodes = 8;
// Where `--port 0` keeps the port it picked, in the data directory.
inline constexpr const char* kPortFileName = "port";
// The port an earlier `--port 0` start picked (0: none).
int RememberedPort(const std::string& data_dir);
void RememberPort(const std::string& data_dir, int port);

// The default data directory.
std::string DefaultDataDir();

}  // namespace berth::daemon
