#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "sim/simulator.h"

namespace berth::sim {
namespace {

nlohmann::json StatusJson(const Status& s) {
  nlohmann::json j;
  j["plugin"] = s.plugin();
  j["code"] = std::string(CodeName(s.code()));
  j["reasons"] = s.reasons();
  return j;
}

}  // namespace

nlohmann::json ToJson(const SimulationResult& result) {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : result.results) {
    nlohmann::json j;
    j["pod"] = r.pod;
    j["schedulerName"] = r.scheduler_name;
    j["result"] = r.result;
    if (!r.node.empty()) j["node"] = r.node;
    if (!r.nominated_node.empty()) {
      j["nominatedNode"] = r.nominated_node;
      j["victims"] = r.victims;
    }
    if (r.result != "Scheduled" && !r.message.empty()) j["message"] = r.message;
    j["attempts"] = r.attempts;
    if (r.last) {
      const SchedulingAttempt& a = *r.last;
      j["evaluatedNodes"] = a.evaluated_nodes;
      j["feasibleNodes"] = a.feasible_nodes;
      if (a.pre_filter_rejection) {
        j["preFilter"] = {{"plugin", a.pre_filter_rejection->plugin()},
                          {"reasons", a.pre_filter_rejection->reasons()}};
      }
      nlohmann::json filter = nlohmann::json::object();
      for (const auto& [node, st] : a.filter_statuses) filter[node] = StatusJson(st);
      j["filter"] = std::move(filter);
      if (!a.skipped_extender_errors.empty())
        j["skippedExtenderErrors"] = a.skipped_extender_errors;
      nlohmann::json score = nlohmann::json::object();
      const ScoreTable& t = a.scores;
      for (size_t i = 0; i < a.scored_nodes.size(); ++i) {
        nlohmann::json plugins = nlohmann::json::object();
        for (size_t p = 0; p < t.plugin_scores.size() && p < a.score_plugins.size(); ++p) {
          if (!t.plugin_ran[p]) continue;
          plugins[a.score_plugins[p]] = t.plugin_scores[p][i];
        }
        nlohmann::json extenders = nlohmann::json::object();
        for (const auto& [name, v] : t.extender_scores) extenders[name] = v[i];
        score[a.scored_nodes[i]] = {
            {"total", t.totals[i]}, {"plugins", plugins}, {"extenders", extenders}};
      }
      j["score"] = std::move(score);
    }
    results.push_back(std::move(j));
  }
  return nlohmann::json{{"results", std::move(results)}};
}

std::string ToTable(const SimulationResult& result) {
  std::ostringstream out;
  for (const auto& r : result.results) {
    out << fmt::format("{}  [{}]  {}", r.pod, r.scheduler_name, r.result);
    if (!r.node.empty()) out << " -> " << r.node;
    if (r.attempts > 1) out << fmt::format("  (after {} attempts)", r.attempts);
    out << "\n";
    if (!r.nominated_node.empty())
      out << fmt::format("  preemption: nominated {}, victims [{}]\n", r.nominated_node,
                         fmt::join(r.victims, ", "));
    if (r.result != "Scheduled" && !r.message.empty()) out << "  " << r.message << "\n";
    if (!r.last) {
      out << "\n";
      continue;
    }
    const SchedulingAttempt& a = *r.last;
    if (a.pre_filter_rejection)
      out << fmt::format("  PreFilter {} rejected: {}\n", a.pre_filter_rejection->plugin(),
                         a.pre_filter_rejection->Message());
    for (const auto& err : a.skipped_extender_errors)
      out << fmt::format("  ignorable extender skipped: {}\n", err);
    // One row per node: rejected ones with the first failing plugin (or extender), feasible ones
    // with scores.
    std::map<std::string, std::string> rows;
    for (const auto& [node, st] : a.filter_statuses)
      rows[node] =
          fmt::format("rejected by {} ({}): {}", st.plugin(), CodeName(st.code()), st.Message());
    const ScoreTable& t = a.scores;
    for (size_t i = 0; i < a.scored_nodes.size(); ++i) {
      std::vector<std::string> parts;
      for (size_t p = 0; p < t.plugin_scores.size() && p < a.score_plugins.size(); ++p) {
        if (!t.plugin_ran[p]) continue;
        parts.push_back(
            fmt::format("{}={}x{}", a.score_plugins[p], t.plugin_scores[p][i], a.score_weights[p]));
      }
      for (const auto& [extender, contributions] : t.extender_scores)
        parts.push_back(fmt::format("extender {}=+{}", extender, contributions[i]));
      rows[a.scored_nodes[i]] =
          fmt::format("feasible, total {:>5}  {}", t.totals[i], fmt::join(parts, " "));
    }
    if (!a.node.empty() && a.scored_nodes.empty() && !rows.count(a.node))
      rows[a.node] = "feasible (only candidate, not scored)";
    size_t width = 4;
    for (const auto& [n, _] : rows) width = std::max(width, n.size());
    for (const auto& [n, text] : rows) {
      const char* mark = n == r.node ? "*" : " ";
      out << fmt::format("  {} {:<{}}  {}\n", mark, n, width, text);
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace berth::sim
