// What `berth up` and `berth cluster` both run beside an API server: the workload controllers
// and the simulated kubelets, clients of the server a kubeconfig names.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "berth/api/result.h"
#include "client/local_list_watch.h"
#include "controllers/controller_manager.h"
#include "kubelet/simulated_kubelets.h"

namespace berth::daemon {

struct RuntimeOptions {
  // Simulated kubelets' pacing (Go durations).
  std::string pod_start_delay = "500ms";
  std::string max_termination_grace = "1s";
  std::string node_lease_renew_interval = "10s";
  std::string node_status_report_interval = "5m0s";
  // The pod CIDRs handed to nodes that have none (kube-controller-manager's --cluster-cidr and
  // --node-cidr-mask-size); empty and 0: the kubelets' defaults, 10.64.0.0/10 in /24s.
  std::string cluster_cidr;
  int node_cidr_mask_size = 0;
  // A --node-devices file (kubelet/node_devices.h); empty: no devices.
  std::string node_devices;
  // Every node's kubelet, or only those of nodes annotated berth.dev/simulated-kubelet "true".
  bool all_nodes = true;
  // kube-controller-manager's --controllers ("*", "name", "-name"); empty: none.
  std::vector<std::string> controllers = {"*"};
  std::string node_monitor_grace_period = "40s";
  // kube-controller-manager's --terminated-pod-gc-threshold (0: keep every finished pod).
  int terminated_pod_gc_threshold = 12500;
  // Prefixes log lines ("berth up", "berth cluster").
  std::string log_prefix = "berth";
  // A limit on the controllers' requests a second (0: none, for the process's own server).
  double controller_qps = 0;
  // The controllers' TaintTolerationComparisonOperators gate (--feature-gates).
  bool taint_toleration_comparison_operators = false;
  // Lists and watches served in this process (`berth up`: its API server's store), read by the
  // controllers' and kubelets' informers instead of HTTP; null: HTTP. Must outlive them.
  client::LocalListWatch* local_list_watch = nullptr;
};

// The widest per-node mask a cluster CIDR is cut into (4 pod IPs).
inline constexpr int kMaxNodeCidrMaskSize = 30;

// The pod CIDRs `berth up` gives a cluster of `nodes` demo nodes when no flag says: the
// kubelets' default where it holds them, else 10.0.0.0/8 in blocks that do.
struct PodCidrs {
  std::string cluster_cidr;
  int node_mask_size = 24;
};
PodCidrs PodCidrsFor(int nodes);

Result<std::unique_ptr<kubelet::SimulatedKubelets>> StartKubelets(const RuntimeOptions& options,
                                                                  const std::string& kubeconfig);
// Null when options.controllers is empty.
Result<std::unique_ptr<controllers::ControllerManager>> StartControllers(
    const RuntimeOptions& options, const std::string& kubeconfig);

}  // namespace berth::daemon
