#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <ostream>
#include <sstream>
#include <string_view>

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
        for (size_t p = 0; p < a.score_plugins.size(); ++p) {
          if (!t.HasRow(p)) continue;
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

void WriteTable(std::ostream& out, const SimulationResult& result) {
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
    // One row per node, in name order: rejected ones with the first failing plugin (or
    // extender), feasible ones with scores (a node in both is shown scored). Rows are indexes
    // into the attempt, formatted as they are written: at 250,000 nodes the formatted rows
    // would take more memory than the cluster.
    enum class RowKind : uint8_t { kRejected, kScored, kOnlyCandidate };
    struct Row {
      std::string_view node;
      RowKind kind;
      const Status* status;
      size_t scored;
    };
    std::vector<Row> rows;
    rows.reserve(a.filter_statuses.size() + a.scored_nodes.size() + 1);
    for (const auto& [node, st] : a.filter_statuses)
      rows.push_back({node, RowKind::kRejected, &st, 0});
    for (size_t i = 0; i < a.scored_nodes.size(); ++i)
      rows.push_back({a.scored_nodes[i], RowKind::kScored, nullptr, i});
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Row& x, const Row& y) { return x.node < y.node; });
    // Of rows for one node the last added wins (scored over rejected).
    std::vector<Row> unique;
    unique.reserve(rows.size());
    for (const Row& row : rows) {
      if (!unique.empty() && unique.back().node == row.node) {
        unique.back() = row;
      } else {
        unique.push_back(row);
      }
    }
    rows = std::move(unique);
    if (!a.node.empty() && a.scored_nodes.empty()) {
      auto at = std::lower_bound(rows.begin(), rows.end(), std::string_view(a.node),
                                 [](const Row& x, std::string_view n) { return x.node < n; });
      if (at == rows.end() || at->node != a.node)
        rows.insert(at, Row{a.node, RowKind::kOnlyCandidate, nullptr, 0});
    }
    size_t width = 4;
    for (const Row& row : rows) width = std::max(width, row.node.size());
    const ScoreTable& t = a.scores;
    std::string text;
    for (const Row& row : rows) {
      text.clear();
      switch (row.kind) {
        case RowKind::kRejected:
          fmt::format_to(std::back_inserter(text), "rejected by {} ({}): {}", row.status->plugin(),
                         CodeName(row.status->code()), row.status->Message());
          break;
        case RowKind::kScored: {
          const size_t i = row.scored;
          fmt::format_to(std::back_inserter(text), "feasible, total {:>5} ", t.totals[i]);
          const size_t bare = text.size();
          for (size_t p = 0; p < a.score_plugins.size(); ++p) {
            if (!t.HasRow(p)) continue;
            fmt::format_to(std::back_inserter(text), " {}={}x{}", a.score_plugins[p],
                           t.plugin_scores[p][i], a.score_weights[p]);
          }
          for (const auto& [extender, contributions] : t.extender_scores)
            fmt::format_to(std::back_inserter(text), " extender {}=+{}", extender,
                           contributions[i]);
          if (text.size() == bare) text += ' ';
          break;
        }
        case RowKind::kOnlyCandidate:
          text = "feasible (only candidate, not scored)";
          break;
      }
      const char* mark = row.node == r.node ? "*" : " ";
      out << fmt::format("  {} {:<{}}  {}\n", mark, row.node, width, text);
    }
    out << "\n";
  }
}

std::string ToTable(const SimulationResult& result) {
  std::ostringstream out;
  WriteTable(out, result);
  return out.str();
}

}  // namespace berth::sim
