// berth compare's text and JSON output (docs/compare.md documents both).
#include <fmt/format.h>

#include <algorithm>

#include "sim/compare.h"

namespace berth::sim {
namespace {

nlohmann::json SpreadJson(const Spread& s) {
  return {{"max", s.max}, {"maxAt", s.max_at}, {"min", s.min}, {"minAt", s.min_at}};
}

nlohmann::json MetricsJson(const ConfigMetrics& m, bool replay) {
  nlohmann::json j = {{"name", m.name},
                      {"pods", m.pods},
                      {"scheduled", m.scheduled},
                      {"pending", m.pending},
                      {"pendingPods", m.pending_pods},
                      {"preemptors", m.preemptors},
                      {"victims", m.victims},
                      {"nodes", m.nodes},
                      {"nodesUsed", m.nodes_used},
                      {"nodeSpread", SpreadJson(m.node_spread)},
                      {"perNode", m.per_node},
                      {"seconds", m.seconds},
                      {"cpuSeconds", m.cpu_seconds}};
  if (!m.per_zone.empty()) {
    j["zoneSpread"] = SpreadJson(m.zone_spread);
    j["perZone"] = m.per_zone;
  }
  if (m.shape_fit) {
    j["shapeFit"] = *m.shape_fit;
    j["shapeFitCapped"] = m.shape_fit_capped;
  }
  if (replay) {
    // Three series on the same times: [[milliseconds since the first event, value], ...].
    nlohmann::json pending = nlohmann::json::array(), nodes = nlohmann::json::array(),
                   preemptions = nlohmann::json::array();
    for (const TimeSample& s : m.over_time) {
      pending.push_back({s.at_ms, s.pending});
      nodes.push_back({s.at_ms, s.nodes_in_use});
      preemptions.push_back({s.at_ms, s.preemptions});
    }
    j["pendingOverTime"] = std::move(pending);
    j["nodesInUseOverTime"] = std::move(nodes);
    j["preemptionsOverTime"] = std::move(preemptions);
    j["meanPendingSeconds"] = m.mean_pending_seconds;
    j["maxPendingSeconds"] = m.max_pending_seconds;
  }
  return j;
}

nlohmann::json ViewJson(const NodeView& v) {
  nlohmann::json j = {{"state", std::string(StateName(v.state))}};
  if (v.state == NodeView::State::kScored) {
    j["total"] = v.total;
    nlohmann::json plugins = nlohmann::json::object();
    for (const auto& [name, points] : v.weighted) plugins[name] = points;
    j["plugins"] = std::move(plugins);
  }
  if (!v.reason.empty()) j["reason"] = v.reason;
  return j;
}

nlohmann::json DiffJson(const PodDiff& d) {
  nlohmann::json per = nlohmann::json::array();
  for (const ConfigDecision& cd : d.per_config) {
    nlohmann::json j = {{"result", cd.result}, {"explained", cd.explained}};
    if (!cd.node.empty()) j["node"] = cd.node;
    if (!cd.victims.empty()) j["victims"] = cd.victims;
    if (cd.explained) {
      nlohmann::json nodes = nlohmann::json::object();
      for (const NodeView& v : cd.views) nodes[v.node] = ViewJson(v);
      j["nodes"] = std::move(nodes);
      nlohmann::json tipped = nlohmann::json::array();
      for (const auto& [plugin, points] : cd.tipped_by)
        tipped.push_back({{"plugin", plugin}, {"points", points}});
      j["tippedBy"] = std::move(tipped);
    }
    per.push_back(std::move(j));
  }
  return {{"pod", d.pod}, {"candidates", d.candidates}, {"configurations", std::move(per)}};
}

std::string Outcome(const ConfigDecision& cd) { return cd.node.empty() ? cd.result : cd.node; }

std::string ViewText(const NodeView& v) {
  switch (v.state) {
    case NodeView::State::kScored: {
      std::string plugins;
      for (const auto& [name, points] : v.weighted)
        plugins += fmt::format("{}{}={}", plugins.empty() ? "" : " ", name, points);
      return fmt::format("{} total {} [{}]", v.node, v.total, plugins);
    }
    case NodeView::State::kRejected:
      return fmt::format("{} rejected ({})", v.node, v.reason);
    default:
      return fmt::format("{} {}", v.node, StateName(v.state));
  }
}

// The largest value of one series and when it was first reached: "3 at 65.0 s".
template <class Value>
std::string PeakText(const std::vector<TimeSample>& series, Value value) {
  const TimeSample* peak = nullptr;
  for (const TimeSample& s : series)
    if (!peak || value(s) > value(*peak)) peak = &s;
  if (!peak) return "-";
  return fmt::format("{} at {:.1f} s", value(*peak), static_cast<double>(peak->at_ms) / 1000);
}

void SummaryText(const CompareResult& r, std::string* out) {
  size_t width = 26;
  for (const ConfigMetrics& m : r.configs) width = std::max(width, m.name.size() + 2);
  const size_t label_width = std::max<size_t>(30, r.shape.size() + 12);
  auto row = [&](std::string_view label, auto&& cell) {
    *out += fmt::format("{:<{}}", label, label_width);
    for (const ConfigMetrics& m : r.configs) *out += fmt::format("{:<{}}", cell(m), width);
    *out += "\n";
  };
  row("", [](const ConfigMetrics& m) { return m.name; });
  row("scheduled",
      [](const ConfigMetrics& m) { return fmt::format("{}/{}", m.scheduled, m.pods); });
  row("pending", [](const ConfigMetrics& m) { return std::to_string(m.pending); });
  row("preemptions (victims)",
      [](const ConfigMetrics& m) { return fmt::format("{} ({})", m.preemptors, m.victims); });
  row("nodes used",
      [](const ConfigMetrics& m) { return fmt::format("{}/{}", m.nodes_used, m.nodes); });
  row("pods per node max/min", [](const ConfigMetrics& m) {
    return fmt::format("{}/{}", m.node_spread.max, m.node_spread.min);
  });
  if (!r.configs.empty() && !r.configs[0].per_zone.empty())
    row("pods per zone max/min", [](const ConfigMetrics& m) {
      return fmt::format("{}/{}", m.zone_spread.max, m.zone_spread.min);
    });
  if (!r.shape.empty())
    row(fmt::format("more {} fit", r.shape), [](const ConfigMetrics& m) {
      if (!m.shape_fit) return std::string("-");
      return fmt::format("{}{}", *m.shape_fit, m.shape_fit_capped ? "+" : "");
    });
  if (r.replay) {
    row("pending seconds mean/max", [](const ConfigMetrics& m) {
      return fmt::format("{:.1f}/{:.1f}", m.mean_pending_seconds, m.max_pending_seconds);
    });
    row("peak pending", [](const ConfigMetrics& m) {
      return PeakText(m.over_time, [](const TimeSample& s) { return s.pending; });
    });
    row("peak nodes in use", [](const ConfigMetrics& m) {
      return PeakText(m.over_time, [](const TimeSample& s) { return s.nodes_in_use; });
    });
  }
  row("scheduling time", [](const ConfigMetrics& m) { return fmt::format("{:.3f} s", m.seconds); });
}

}  // namespace

nlohmann::json ToJson(const CompareResult& r) {
  nlohmann::json configs = nlohmann::json::array();
  for (const ConfigMetrics& m : r.configs) configs.push_back(MetricsJson(m, r.replay));
  nlohmann::json diffs = nlohmann::json::array();
  for (const PodDiff& d : r.diffs) diffs.push_back(DiffJson(d));
  nlohmann::json j = {{"pods", r.pods},
                      {"differing", r.differing},
                      {"configurations", std::move(configs)},
                      {"differences", std::move(diffs)}};
  if (!r.shape.empty()) j["shape"] = {{"requests", r.shape}, {"source", r.shape_source}};
  if (r.replay) j["events"] = r.events;
  return j;
}

std::string ToText(const CompareResult& r) {
  std::string out = fmt::format(
      "{} configurations, {} pods{}: {} placed differently.\n", r.configs.size(), r.pods,
      r.replay ? fmt::format(" ({} recorded events)", r.events) : "", r.differing);
  if (!r.shape.empty())
    out += fmt::format("Shape for \"more ... fit\": {} ({}).\n", r.shape, r.shape_source);
  out += "\n";
  SummaryText(r, &out);
  if (r.diffs.empty()) return out;
  out += "\nDifferences:\n";
  for (const PodDiff& d : r.diffs) {
    out += d.pod + ":";
    for (size_t c = 0; c < d.per_config.size(); ++c)
      out += fmt::format("  {} -> {}", r.configs[c].name, Outcome(d.per_config[c]));
    out += "\n";
    for (size_t c = 0; c < d.per_config.size(); ++c) {
      const ConfigDecision& cd = d.per_config[c];
      if (!cd.explained) continue;
      out += fmt::format("  under {}:\n", r.configs[c].name);
      for (const NodeView& v : cd.views)
        out += fmt::format("    {}{}\n", v.node == cd.node ? "* " : "  ", ViewText(v));
      if (!cd.tipped_by.empty()) {
        std::string tipped;
        for (const auto& [plugin, points] : cd.tipped_by)
          tipped += fmt::format("{}{} +{}", tipped.empty() ? "" : ", ", plugin, points);
        out += fmt::format("    tipped by: {}\n", tipped);
      }
    }
  }
  return out;
}

}  // namespace berth::sim
