#include "explain/decision_record.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

namespace berth::explain {

std::map<std::string, std::string> DecisionAnnotations(const SchedulingAttempt& a,
                                                       size_t max_nodes) {
  using nlohmann::json;
  const std::string p(kAnnotationPrefix);
  std::map<std::string, std::string> out;

  // Scored nodes, best first (the chosen one leading), within the bound.
  std::vector<size_t> order(a.scored_nodes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if ((a.scored_nodes[x] == a.node) != (a.scored_nodes[y] == a.node))
      return a.scored_nodes[x] == a.node;
    return a.scores.totals[x] > a.scores.totals[y];
  });
  size_t total_nodes = a.scored_nodes.size() + a.filter_statuses.size();
  if (a.scored_nodes.empty() && !a.node.empty()) ++total_nodes;
  size_t budget = max_nodes;

  json filter = json::object(), score = json::object(), final_score = json::object();
  auto passed_all = [&](const std::string& node) {
    json& n = filter[node];
    n = json::object();
    for (const auto& plugin : a.filter_plugins) n[plugin] = "passed";
  };
  if (a.scored_nodes.empty() && !a.node.empty() && budget > 0) {
    passed_all(a.node);  // the only feasible node: not scored
    --budget;
  }
  for (size_t k = 0; k < order.size() && budget > 0; ++k, --budget) {
    const size_t i = order[k];
    const std::string& node = a.scored_nodes[i];
    passed_all(node);
    json s = json::object(), f = json::object();
    for (size_t pl = 0; pl < a.score_plugins.size() && pl < a.scores.plugin_scores.size(); ++pl) {
      if (pl < a.scores.plugin_ran.size() && !a.scores.plugin_ran[pl]) continue;
      const int64_t v = a.scores.plugin_scores[pl][i];
      s[a.score_plugins[pl]] = std::to_string(v);
      f[a.score_plugins[pl]] = std::to_string(v * a.score_weights[pl]);
    }
    for (const auto& [extender, contributions] : a.scores.extender_scores)
      f[extender] = std::to_string(contributions[i]);
    score[node] = std::move(s);
    final_score[node] = std::move(f);
  }
  // Rejected nodes, in name order: the plugins before the failing one passed.
  std::vector<std::string> rejected;
  for (const auto& [node, status] : a.filter_statuses) rejected.push_back(node);
  std::sort(rejected.begin(), rejected.end());
  for (size_t k = 0; k < rejected.size() && budget > 0; ++k, --budget) {
    const Status& st = a.filter_statuses.at(rejected[k]);
    json n = json::object();
    for (const auto& plugin : a.filter_plugins) {
      if (plugin == st.plugin()) break;
      n[plugin] = "passed";
    }
    n[st.plugin().empty() ? "Unknown" : st.plugin()] = st.Message();
    filter[rejected[k]] = std::move(n);
  }

  out[p + "filter-result"] = filter.dump();
  out[p + "score-result"] = score.dump();
  out[p + "finalscore-result"] = final_score.dump();
  if (a.outcome == SchedulingAttempt::Outcome::kScheduled) out[p + "selected-node"] = a.node;
  if (a.pre_filter_rejection) {
    out[p + "prefilter-result-status"] =
        json{{a.pre_filter_rejection->plugin(), a.pre_filter_rejection->Message()}}.dump();
  }
  const size_t recorded = max_nodes - budget;
  if (total_nodes > recorded)
    out[p + "result-nodes-truncated"] = std::to_string(total_nodes - recorded);
  return out;
}

}  // namespace berth::explain
