#include "daemon/cluster_runtime.h"

#include <fmt/format.h>

#include <cstdio>
#include <tuple>

#include "client/kubeconfig.h"
#include "daemon/scheduler_flags.h"

namespace berth::daemon {
namespace {

Result<Duration> NonNegative(const std::string& text, const char* flag) {
  auto ms = ParseGoDurationMs(text, flag);
  if (!ms.ok()) return ms.error();
  if (*ms < 0) return Error{fmt::format("{}: must not be negative", flag), ErrorCode::kInvalid};
  return Duration(std::chrono::milliseconds(*ms));
}

}  // namespace

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
  controllers::ControllerManagerOptions co;
  co.controllers = options.controllers;
  co.node_monitor_grace_period = *grace;
  co.taint_toleration_comparison_operators = options.taint_toleration_comparison_operators;
  co.log = [](const std::string& m) { std::fprintf(stderr, "controllers: %s\n", m.c_str()); };
  return controllers::ControllerManager::Start(std::move(rest), std::move(co));
}

}  // namespace berth::daemon
