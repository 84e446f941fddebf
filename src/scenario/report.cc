#include "scenario/report.h"

#include <fmt/format.h>

#include <algorithm>

namespace berth::scenario {
namespace {

using Json = nlohmann::json;

double Seconds(Duration d) {
  return static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) /
         1000.0;
}

Json SummaryJson(const Summary& s) {
  Json by_phase = Json::object();
  for (const auto& [phase, n] : s.pods_by_phase) by_phase[phase] = n;
  Json per_node = Json::object();
  for (const auto& [node, n] : s.pods_per_node) per_node[node] = n;
  return {{"name", s.name},
          {"at", FormatDuration(s.at)},
          {"seconds", Seconds(s.at)},
          {"pods", {{"total", s.pods}, {"terminating", s.terminating}, {"byPhase", by_phase}}},
          {"pendingPods", s.pending},
          {"nodes",
           {{"ready", s.ready_nodes.size()},
            {"notReady", s.not_ready_nodes.size()},
            {"notReadyNodes", s.not_ready_nodes}}},
          {"podsPerNode", per_node},
          {"preemptions", s.preemptions},
          {"evictions", s.evictions}};
}

void SummaryText(const Summary& s, const char* title, std::string* out) {
  *out += fmt::format("{} at {}\n", title, FormatDuration(s.at));
  std::vector<std::string> phases;
  for (const auto& [phase, n] : s.pods_by_phase) phases.push_back(fmt::format("{} {}", phase, n));
  if (s.terminating > 0) phases.push_back(fmt::format("Terminating {}", s.terminating));
  *out += fmt::format("  Pods:        {}{}\n", s.pods,
                      phases.empty() ? "" : fmt::format(" ({})", fmt::join(phases, ", ")));
  if (s.pending.empty()) {
    *out += "  Unbound:     none\n";
  } else {
    *out += fmt::format("  Unbound:     {} ({}{})\n", s.pending.size(),
                        fmt::join(s.pending.begin(),
                                  s.pending.begin() + std::min<size_t>(10, s.pending.size()), ", "),
                        s.pending.size() > 10 ? ", ..." : "");
  }
  *out += fmt::format(
      "  Nodes:       {} Ready, {} NotReady{}\n", s.ready_nodes.size(), s.not_ready_nodes.size(),
      s.not_ready_nodes.empty() ? "" : fmt::format(" ({})", fmt::join(s.not_ready_nodes, ", ")));
  std::vector<std::string> per_node;
  for (const auto& [node, n] : s.pods_per_node) per_node.push_back(fmt::format("{} {}", node, n));
  *out += fmt::format("  Pods/node:   {}\n", fmt::join(per_node, ", "));
  *out += fmt::format("  Preemptions: {}, evictions: {}\n\n", s.preemptions, s.evictions);
}

}  // namespace

Json ReportJson(const RunResult& result) {
  Json checkpoints = Json::array();
  for (const Summary& s : result.checkpoints) checkpoints.push_back(SummaryJson(s));
  Json timeline = Json::array();
  for (const TimelineEntry& e : result.timeline) {
    timeline.push_back({{"at", FormatDuration(e.at)},
                        {"seconds", Seconds(e.at)},
                        {"kind", e.kind},
                        {"object", e.object},
                        {"detail", e.detail}});
  }
  Json out = {{"scenario", result.scenario},
              {"seed", result.seed},
              {"simulated", FormatDuration(result.end.at)},
              {"checkpoints", std::move(checkpoints)},
              {"end", SummaryJson(result.end)},
              {"timeline", std::move(timeline)}};
  if (!result.series.is_null()) out["series"] = result.series;
  if (!result.error.empty()) out["error"] = result.error;
  return out;
}

std::string ReportText(const RunResult& result) {
  std::string out = fmt::format("Scenario {} (seed {}): {} simulated{}\n\n", result.scenario,
                                result.seed, FormatDuration(result.end.at),
                                result.error.empty() ? "" : ", stopped by an error");
  for (const Summary& s : result.checkpoints) {
    SummaryText(s, fmt::format("Checkpoint {}", s.name).c_str(), &out);
  }
  SummaryText(result.end, "End", &out);
  out += "Timeline\n";
  size_t width_kind = 4, width_object = 6;
  for (const TimelineEntry& e : result.timeline) {
    width_kind = std::max(width_kind, e.kind.size());
    width_object = std::max(width_object, e.object.size());
  }
  for (const TimelineEntry& e : result.timeline) {
    out += fmt::format("  {:>10}  {:<{}}  {:<{}}  {}\n", FormatDuration(e.at), e.kind, width_kind,
                       e.object, width_object, e.detail);
  }
  if (!result.error.empty()) out += fmt::format("\nError: {}\n", result.error);
  return out;
}

}  // namespace berth::scenario
