#include "extender/examples.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <re2/re2.h>

#include <algorithm>
#include <limits>
#include <mutex>
#include <stdexcept>

#include "prometheus/client.h"

namespace berth::extender {
namespace {

bool HasLabel(const Pod& pod, const LabelRuleOptions& o) {
  auto it = pod.metadata.labels.find(o.label_key);
  return it != pod.metadata.labels.end() && it->second == o.label_value;
}

// Prometheus answers shared by concurrent requests, refreshed when older than `cache_for`.
class TrafficCache {
 public:
  TrafficCache(std::unique_ptr<prometheus::PrometheusClient> client, NetworkTrafficOptions options)
      : client_(std::move(client)), options_(std::move(options)) {}

  // Node -> bytes; throws (an HTTP 500 for the scheduler, which then ignores this extender's
  // scores) when Prometheus cannot answer.
  std::map<std::string, double> Get() {
    std::lock_guard lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (fetched_ && now - fetched_at_ < options_.cache_for) return bytes_;
    auto bytes = prometheus::NodeReceiveBytes(*client_, options_.network_interface,
                                              options_.time_range_minutes, options_.node_label);
    if (!bytes.ok()) throw std::runtime_error(bytes.error().message);
    bytes_ = std::move(bytes).value();
    fetched_ = true;
    fetched_at_ = now;
    return bytes_;
  }

 private:
  std::unique_ptr<prometheus::PrometheusClient> client_;
  NetworkTrafficOptions options_;
  std::mutex mu_;
  bool fetched_ = false;
  std::chrono::steady_clock::time_point fetched_at_;
  std::map<std::string, double> bytes_;
};

}  // namespace

Result<LabelRuleOptions> ParseLabelRule(std::string_view label, std::string_view nodes) {
  LabelRuleOptions o;
  const size_t eq = label.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return Error{fmt::format("--label: expected KEY=VALUE, got \"{}\"", label)};
  o.label_key = std::string(label.substr(0, eq));
  o.label_value = std::string(label.substr(eq + 1));
  size_t start = 0;
  while (start <= nodes.size()) {
    size_t comma = nodes.find(',', start);
    if (comma == std::string_view::npos) comma = nodes.size();
    std::string_view name = nodes.substr(start, comma - start);
    if (!name.empty()) o.nodes.insert(std::string(name));
    start = comma + 1;
  }
  if (o.nodes.empty()) return Error{"--nodes: expected at least one node name"};
  return o;
}

void RegisterLabelRule(ExtenderServer& server, const LabelRuleOptions& options) {
  auto o = std::make_shared<const LabelRuleOptions>(options);
  server.Filter(o->filter_verb, [o](const v1::ExtenderArgs& args) {
    if (!args.pod || !HasLabel(*args.pod, *o)) {
      // Every node passes: the answer repeats the nodes in the form they came in.
      v1::ExtenderFilterResult all;
      if (args.nodes && !args.node_names) {
        all.nodes = args.nodes;
      } else {
        all.node_names = args.node_names.value_or(std::vector<std::string>());
      }
      return all;
    }
    std::vector<std::string> passing;
    v1::FailedNodesMap failed;
    const std::string reason = fmt::format("pods labelled {}={} may only run on nodes [{}]",
                                           o->label_key, o->label_value, fmt::join(o->nodes, " "));
    for (auto& name : NodeNamesOf(args)) {
      if (o->nodes.count(name)) {
        passing.push_back(std::move(name));
      } else {
        failed[name] = reason;
      }
    }
    v1::ExtenderFilterResult r = FilterResultFor(args, passing);
    r.failed_nodes = std::move(failed);
    return r;
  });
  server.Prioritize(o->prioritize_verb, [o](const v1::ExtenderArgs& args) {
    const bool labelled = args.pod && HasLabel(*args.pod, *o);
    v1::HostPriorityList out;
    auto add = [&](const std::string& name) {
      out.push_back({name, labelled && o->nodes.count(name) ? 10 : 0});
    };
    if (args.node_names) {
      out.reserve(args.node_names->size());
      for (const auto& name : *args.node_names) add(name);
    } else if (args.nodes) {
      out.reserve(args.nodes->size());
      for (const auto& node : *args.nodes) add(node->metadata.name);
    }
    return out;
  });
}

VoidResult RegisterNetworkTraffic(ExtenderServer& server, const NetworkTrafficOptions& options) {
  // The names go into a PromQL query: keep them to what Prometheus and interfaces allow.
  static const re2::RE2 kDevice("[A-Za-z0-9_.:@-]+");
  static const re2::RE2 kLabel("[A-Za-z_][A-Za-z0-9_]*");
  if (options.prometheus_address.empty()) return Error{"--prometheus-address: required"};
  if (!re2::RE2::FullMatch(options.network_interface, kDevice))
    return Error{fmt::format("--network-interface: \"{}\" is not an interface name",
                             options.network_interface)};
  if (!re2::RE2::FullMatch(options.node_label, kLabel))
    return Error{fmt::format("--node-label: \"{}\" is not a label name", options.node_label)};
  if (options.time_range_minutes <= 0)
    return Error{
        fmt::format("--time-range-minutes: must be positive, got {}", options.time_range_minutes)};
  auto client = prometheus::PrometheusClient::Create(options.prometheus_address);
  if (!client.ok()) return client.error();
  auto cache = std::make_shared<TrafficCache>(std::move(client).value(), options);
  server.Prioritize(options.prioritize_verb, [cache](const v1::ExtenderArgs& args) {
    const std::map<std::string, double> bytes = cache->Get();
    const std::vector<std::string> names = NodeNamesOf(args);
    // Min-max over the candidates with data: the quietest scores 10 (the most an extender
    // gives), the busiest 0.
    double most = 0, least = std::numeric_limits<double>::infinity();
    for (const auto& name : names) {
      if (auto it = bytes.find(name); it != bytes.end()) {
        most = std::max(most, it->second);
        least = std::min(least, it->second);
      }
    }
    v1::HostPriorityList out;
    for (const auto& name : names) {
      auto it = bytes.find(name);
      int64_t score = 0;
      if (it != bytes.end()) {
        score =
            most <= least ? 10 : static_cast<int64_t>(10 * (most - it->second) / (most - least));
      }
      out.push_back({name, std::clamp<int64_t>(score, 0, 10)});
    }
    return out;
  });
  return {};
}

}  // namespace berth::extender
