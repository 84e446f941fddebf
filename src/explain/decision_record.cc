#include "explain/decision_record.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

namespace berth::explain {
namespace {

using nlohmann::json;

// The simulator's text for one plugin's status at a point other than Filter.
std::string OutcomeText(const Status& s) {
  if (s.IsSuccess()) return "success";
  if (s.IsWait()) return "wait";
  return s.Message();
}

json PerPlugin(const PluginOutcomes& outcomes) {
  json out = json::object();
  for (const auto& o : outcomes) out[o.plugin] = OutcomeText(o.status);
  return out;
}

// "<v / 10^prec>" with the fraction's trailing zeros (and a bare point) left out, as Go does.
std::string WithFraction(uint64_t v, int prec) {
  uint64_t scale = 1;
  for (int i = 0; i < prec; ++i) scale *= 10;
  std::string out = std::to_string(v / scale);
  uint64_t frac = v % scale;
  if (frac == 0) return out;
  std::string digits = std::to_string(frac);
  digits.insert(0, static_cast<size_t>(prec) - digits.size(), '0');
  while (digits.back() == '0') digits.pop_back();
  return out + "." + digits;
}

}  // namespace

std::string GoDurationString(Duration d) {
  const int64_t ns = d.count();
  const bool neg = ns < 0;
  const uint64_t u = neg ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string out;
  if (u == 0) return "0s";
  if (u < 1000) {
    out = std::to_string(u) + "ns";
  } else if (u < 1000000) {
    out = WithFraction(u, 3) + "\u00b5s";
  } else if (u < 1000000000) {
    out = WithFraction(u, 6) + "ms";
  } else {
    const uint64_t secs = u / 1000000000, minutes = secs / 60, hours = minutes / 60;
    out = WithFraction(secs % 60 * 1000000000 + u % 1000000000, 9) + "s";
    if (minutes > 0) {
      out = std::to_string(minutes % 60) + "m" + out;
      if (hours > 0) out = std::to_string(hours) + "h" + out;
    }
  }
  return neg ? "-" + out : out;
}

std::map<std::string, std::string> DecisionAnnotations(const SchedulingAttempt& a,
                                                       size_t max_nodes) {
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
  std::vector<const std::string*> recorded_rejected;
  for (size_t k = 0; k < rejected.size() && budget > 0; ++k, --budget) {
    const Status& st = a.filter_statuses.at(rejected[k]);
    json n = json::object();
    for (const auto& plugin : a.filter_plugins) {
      if (plugin == st.plugin()) break;
      n[plugin] = "passed";
    }
    n[st.plugin().empty() ? "Unknown" : st.plugin()] = st.Message();
    filter[rejected[k]] = std::move(n);
    recorded_rejected.push_back(&rejected[k]);
  }

  // PreFilter: every plugin that ran; a rejection recorded without them still shows.
  json pre_filter_status = PerPlugin(a.pre_filter_outcomes);
  if (a.pre_filter_rejection && !pre_filter_status.contains(a.pre_filter_rejection->plugin()))
    pre_filter_status[a.pre_filter_rejection->plugin()] = a.pre_filter_rejection->Message();
  json pre_filter_result = json::object();
  for (const auto& o : a.pre_filter_outcomes) {
    if (!o.node_names) continue;
    const auto& names = *o.node_names;
    pre_filter_result[o.plugin] =
        std::vector<std::string>(names.begin(), names.begin() + std::min(names.size(), max_nodes));
  }

  // PostFilter saw the rejected nodes; the plugin that succeeded nominated one.
  json post_filter = json::object();
  if (!a.post_filter_outcomes.empty()) {
    for (const std::string* node : recorded_rejected) post_filter[*node] = json::object();
    if (a.nominating && !a.nominating->node_name.empty()) {
      for (const auto& o : a.post_filter_outcomes) {
        if (!o.status.IsSuccess()) continue;
        post_filter[a.nominating->node_name][o.plugin] = "preemption victim";
      }
    }
  }

  json permit_timeout = json::object();
  for (const auto& o : a.permit_outcomes) permit_timeout[o.plugin] = GoDurationString(o.timeout);

  out[p + "prefilter-result-status"] = pre_filter_status.dump();
  out[p + "prefilter-result"] = pre_filter_result.dump();
  out[p + "filter-result"] = filter.dump();
  out[p + "postfilter-result"] = post_filter.dump();
  out[p + "prescore-result"] = PerPlugin(a.pre_score_outcomes).dump();
  out[p + "score-result"] = score.dump();
  out[p + "finalscore-result"] = final_score.dump();
  out[p + "reserve-result"] = PerPlugin(a.reserve_outcomes).dump();
  out[p + "permit-result"] = PerPlugin(a.permit_outcomes).dump();
  out[p + "permit-result-timeout"] = permit_timeout.dump();
  out[p + "prebind-result"] = PerPlugin(a.pre_bind_outcomes).dump();
  out[p + "bind-result"] = PerPlugin(a.bind_outcomes).dump();
  out[p + "selected-node"] = !a.selected_node.empty()                              ? a.selected_node
                             : a.outcome == SchedulingAttempt::Outcome::kScheduled ? a.node
                                                                                   : std::string();
  const size_t recorded = max_nodes - budget;
  if (total_nodes > recorded)
    out[p + "result-nodes-truncated"] = std::to_string(total_nodes - recorded);
  return out;
}

void WithResultHistory(const Labels& current, std::map<std::string, std::string>* record) {
  const std::string history_key(kResultHistoryKey);
  json history = json::array();
  if (auto it = current.find(history_key); it != current.end()) {
    json parsed = json::parse(it->second, nullptr, /*allow_exceptions=*/false);
    // Entries are objects of strings; anything else on the pod is not ours to keep.
    if (parsed.is_array()) {
      for (auto& e : parsed)
        if (e.is_object()) history.push_back(std::move(e));
    }
  }
  json entry(*record);
  if (!history.empty() && history.back() == entry) {
    // Unchanged decision: keep the history as it is, so the pod is not rewritten.
    (*record)[history_key] = current.at(history_key);
    return;
  }
  history.push_back(std::move(entry));

  // What the pod's other annotations and this record take; the history gets the rest.
  size_t others = history_key.size();
  for (const auto& [k, v] : current)
    if (!record->count(k) && k != history_key) others += k.size() + v.size();
  for (const auto& [k, v] : *record) others += k.size() + v.size();
  const size_t budget = others < kTotalAnnotationSizeLimit ? kTotalAnnotationSizeLimit - others : 0;
  std::vector<size_t> sizes;
  size_t total = 2;  // the brackets
  for (const auto& e : history) {
    sizes.push_back(e.dump().size());
    total += sizes.back() + 1;  // and a comma
  }
  size_t drop = 0;
  while (drop < sizes.size() && total > budget) total -= sizes[drop++] + 1;
  history.erase(history.begin(), history.begin() + static_cast<std::ptrdiff_t>(drop));
  (*record)[history_key] = history.dump();
}

}  // namespace berth::explain
