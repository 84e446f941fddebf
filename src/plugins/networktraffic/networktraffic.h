// NetworkTraffic (PreScore, Score; opt-in): prefers nodes that received less network traffic
// recently, as reported by Prometheus — the scoring-plugin tutorials' NetworkTraffic.
//
// Raw score: bytes received on `networkInterface` over the last `timeRangeInMinutes`
// (sum_over_time(node_network_receive_bytes_total{device=...}[Nm]) summed per node, the node
// named by the series label `nodeLabel`). NormalizeScore: 100 - bytes * 100 / most bytes (the
// busiest node 0, a node without traffic 100).
//
// One Prometheus query per scheduling cycle at most, for all nodes, reused for `cacheSeconds`
// (5) across cycles, with the request bounded by `timeout`. Fallback: a node without a sample,
// or every node while Prometheus cannot answer, scores 0 (the plugin then does not influence
// the choice); the reason is written to stderr once per distinct reason.
//
// Args (NetworkTrafficArgs): prometheusAddress (required), networkInterface ("eth0"),
// timeRangeInMinutes (2), timeout ("1s"), nodeLabel ("kubernetes_node").
#pragma once

#include <string>
#include <string_view>

#include "berth/framework/registry.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kNetworkTrafficName = config::names::kNetworkTraffic;

struct NetworkTrafficArgs final : PluginArgs {
  std::string prometheus_address;
  std::string network_interface = "eth0";
  int64_t time_range_minutes = 2;
  int64_t timeout_ms = 1000;
  std::string node_label = "kubernetes_node";

  std::string_view Kind() const override { return "NetworkTrafficArgs"; }
  void Encode(nlohmann::json& out) const override;
};

PluginRegistration NetworkTrafficRegistration();

}  // namespace berth
