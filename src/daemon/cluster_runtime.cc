#include "daemon/cluster_runtime.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "client/kubeconfig.h"
#include "daemon/scheduler_flags.h"
#include "kubelet/node_status.h"

namespace berth::daemon {
namespace {

Result<Duration> NonNegative(const std::string& text, const char* flag) {
  auto ms = ParseGoDurationMs(text, flag);
  if (!ms.ok()) return ms.error();
  if (*ms < 0) return Error{fmt::format("{}: must not be negative", flag), ErrorCode::kInvalid};
  return Duration(std::chrono::milliseconds(*ms));
}

}  // namespace

PodCidrs PodCidrsFor(int nodes) {
  // The kubelets' default, 10.64.0.0/10 in /24s, holds 16,384 nodes of 254 pod IPs.
  PodCidrs out{"10.64.0.0/10", 24};
  if (nodes <= (1 << (24 - 10))) return out;
  // Larger: all of 10.0.0.0/8, in the largest blocks that still hold every node, but never
  // below the /25 that holds a node's 110 pods (131,072 nodes).
  out.cluster_cidr = "10.0.0.0/8";
  while (out.node_mask_size < 25 && nodes > (1 << (out.node_mask_size - 8))) ++out.node_mask_size;
  return out;
}

Result<std::unique_ptr<kubelet::SimulatedKubelets>> StartKubelets(const RuntimeOptions& options,
                                                                  const std::string& kubeconfig) {
  kubelet::SimulatedKubeletOptions ko;
  ko.all_nodes = options.all_nodes;
  const std::tuple<const char*, const std::string*, Duration*> durations[] = {
      {"--pod-start-delay", &options.pod_start_delay, &ko.pod_start_delay},
      {"--max-termination-grace", &options.max_termination_grace, &ko.termination_grace_cap},
      {"--node-lease-renew-interval", &options.node_lease_renew_interval, &ko.lease_renew_interval},
      {"--node-status-report-interval", &options.node_status_report_interval,
       &ko.node_status_report_interval}};
  for (const auto& [flag, text, out] : durations) {
    auto d = NonNegative(*text, flag);
    if (!d.ok()) return d.error();
    *out = *d;
  }
  if (!options.cluster_cidr.empty()) {
    auto net = kubelet::ParseIpv4Net(options.cluster_cidr);
    if (!net.ok()) return Error{"--cluster-cidr: " + net.error().message, ErrorCode::kInvalid};
    ko.cluster_cidr = options.cluster_cidr;
    ko.node_cidr_prefix = std::max(ko.node_cidr_prefix, net->prefix);
  }
  if (options.node_cidr_mask_size != 0) ko.node_cidr_prefix = options.node_cidr_mask_size;
  auto cluster = kubelet::ParseIpv4Net(ko.cluster_cidr);
  if (cluster.ok() &&
      (ko.node_cidr_prefix < cluster->prefix || ko.node_cidr_prefix > kMaxNodeCidrMaskSize)) {
    return Error{fmt::format("--node-cidr-mask-size: {} must be between the cluster CIDR's "
                             "prefix ({}) and {}",
                             ko.node_cidr_prefix, cluster->prefix, kMaxNodeCidrMaskSize),
                 ErrorCode::kInvalid};
  }
  if (!options.node_devices.empty()) {
    auto devices = kubelet::LoadNodeDevices(options.node_devices);
    if (!devices.ok())
      return Error{"--node-devices: " + devices.error().message, devices.error().code};
    ko.node_devices = std::move(devices).value();
  }
  const std::string prefix = options.log_prefix;
  ko.log = [prefix](const std::string& m) {
    std::fprintf(stderr, "%s: %s\n", prefix.c_str(), m.c_str());
  };
  ko.local_list_watch = options.local_list_watch;
  auto kubelets = kubelet::SimulatedKubelets::ForKubeconfig(kubeconfig, std::move(ko));
  if (!kubelets.ok()) return kubelets.error();
  if (auto started = (*kubelets)->Start(); !started.ok()) return started.error();
  return kubelets;
}

Result<std::unique_ptr<controllers::ControllerManager>> StartControllers(
    const RuntimeOptions& options, const std::string& kubeconfig) {
  if (options.controllers.empty()) return std::unique_ptr<controllers::ControllerManager>();
  auto grace = NonNegative(options.node_monitor_grace_period, "--node-monitor-grace-period");
  if (!grace.ok()) return grace.error();
  auto conn = client::ResolveConnection({.explicit_path = kubeconfig});
  if (!conn.ok()) return conn.error();
  auto http = net::HttpClient::Create(*conn);
  if (!http.ok()) return http.error();
  auto rest = std::make_unique<client::RestClient>(
      std::move(http).value(), client::RestOptions{.qps = options.controller_qps});
  rest->set_local(options.local_list_watch);
  controllers::ControllerManagerOptions co;
  co.controllers = options.controllers;
  co.node_monitor_grace_period = *grace;
  co.terminated_pod_gc_threshold = options.terminated_pod_gc_threshold;
  co.taint_toleration_comparison_operators = options.taint_toleration_comparison_operators;
  co.log = [](const std::string& m) { std::fprintf(stderr, "controllers: %s\n", m.c_str()); };
  return controllers::ControllerManager::Start(std::move(rest), std::move(co));
}

}  // namespace berth::daemon
