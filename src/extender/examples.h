// Example extenders built with the SDK (berth/extender/server.h), runnable as
// `berth extender label-rule` and `berth extender network-traffic`.
//
//   * label-rule: pods carrying a label (e.g. want=you) may only land on the listed nodes;
//     its prioritizer prefers those nodes for such pods (10) over the others (0).
//   * network-traffic: a prioritizer preferring nodes that received fewer bytes recently, as
//     reported by Prometheus (node_network_receive_bytes_total): score = 10 - 10 x bytes /
//     the most bytes among the candidate nodes; nodes without a sample score 0.
//
// Handlers are thread-safe (the SDK calls them concurrently).
#pragma once

#include <chrono>
#include <memory>
#include <set>
#include <string>

#include "berth/api/result.h"
#include "berth/extender/server.h"

namespace berth::extender {

struct LabelRuleOptions {
  std::string label_key, label_value;
  std::set<std::string> nodes;
  std::string filter_verb = "filter";
  std::string prioritize_verb = "prioritize";
};

// Parses "--label KEY=VALUE" and "--nodes a,b,c"; errors name the flag.
Result<LabelRuleOptions> ParseLabelRule(std::string_view label, std::string_view nodes);
void RegisterLabelRule(ExtenderServer& server, const LabelRuleOptions& options);

struct NetworkTrafficOptions {
  std::string prometheus_address;  // http://host:9090
  std::string network_interface = "eth0";
  int time_range_minutes = 5;
  // The series label that names the node.
  std::string node_label = "kubernetes_node";
  std::string prioritize_verb = "prioritize";
  // Prometheus answers are reused for this long (one query serves many scheduling cycles).
  std::chrono::milliseconds cache_for{2000};
};

// Validates the options (address, interface and label names) and registers the prioritizer.
VoidResult RegisterNetworkTraffic(ExtenderServer& server, const NetworkTrafficOptions& options);

}  // namespace berth::extender
