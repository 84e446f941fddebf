#include "explain/decision_record.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <string_view>

#include "api/json_text.h"

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

NodeResults NodeResultsJson(const SchedulingAttempt& a, size_t max_nodes) {
  NodeResults out;
  // Scored nodes, best first (the chosen one leading, ties in scoring order), within the bound:
  // only the nodes kept are ordered.
  const size_t scored = a.scored_nodes.size();
  size_t total_nodes = scored + a.filter_statuses.size();
  if (a.scored_nodes.empty() && !a.node.empty()) ++total_nodes;
  size_t budget = max_nodes;
  const bool lone_node = a.scored_nodes.empty() && !a.node.empty() && budget > 0;
  if (lone_node) --budget;  // the only feasible node: not scored
  std::vector<size_t> order(scored);
  std::iota(order.begin(), order.end(), 0);
  const size_t kept = std::min(budget, scored);
  auto chosen = [&](size_t i) { return a.scored_nodes[i] == a.node; };
  std::partial_sort(order.begin(), order.begin() + static_cast<long>(kept), order.end(),
                    [&](size_t x, size_t y) {
                      if (chosen(x) != chosen(y)) return chosen(x);
                      if (a.scores.totals[x] != a.scores.totals[y])
                        return a.scores.totals[x] > a.scores.totals[y];
                      return x < y;
                    });
  order.resize(kept);
  budget -= kept;
  std::vector<std::string_view> rejected;
  rejected.reserve(a.filter_statuses.size());
  for (const auto& [node, status] : a.filter_statuses) rejected.push_back(node);
  std::sort(rejected.begin(), rejected.end());
  if (rejected.size() > budget) rejected.resize(budget);
  budget -= rejected.size();
  out.truncated = total_nodes - (max_nodes - budget);

  // Objects are written with their keys in order and a repeated key's last value, as a JSON
  // document would hold them.
  using Members = std::vector<std::pair<std::string_view, std::string>>;
  auto append_object = [](Members members, std::string* text) {
    std::stable_sort(members.begin(), members.end(),
                     [](const auto& x, const auto& y) { return x.first < y.first; });
    text->push_back('{');
    for (size_t k = 0; k < members.size(); ++k) {
      if (k + 1 < members.size() && members[k + 1].first == members[k].first) continue;
      if (text->back() != '{') text->push_back(',');
      AppendJsonString(members[k].first, text);
      text->push_back(':');
      text->append(members[k].second);
    }
    text->push_back('}');
  };
  auto quoted = [](std::string_view v) {
    std::string q;
    AppendJsonString(v, &q);
    return q;
  };
  const std::string passed = quoted("passed");
  auto all_passed = [&] {
    Members m;
    for (const auto& plugin : a.filter_plugins) m.emplace_back(plugin, passed);
    std::string text;
    append_object(std::move(m), &text);
    return text;
  };
  Members filter, score, final_score;
  if (lone_node || !order.empty()) {
    const std::string every_filter_passed = all_passed();
    if (lone_node) filter.emplace_back(a.node, every_filter_passed);
    for (size_t i : order) {
      const std::string& node = a.scored_nodes[i];
      filter.emplace_back(node, every_filter_passed);
      Members s, f;
      for (size_t pl = 0; pl < a.score_plugins.size() && pl < a.scores.plugin_scores.size(); ++pl) {
        if (pl < a.scores.plugin_ran.size() && !a.scores.plugin_ran[pl]) continue;
        const int64_t v = a.scores.plugin_scores[pl][i];
        s.emplace_back(a.score_plugins[pl], quoted(std::to_string(v)));
        f.emplace_back(a.score_plugins[pl], quoted(std::to_string(v * a.score_weights[pl])));
      }
      for (const auto& [extender, contributions] : a.scores.extender_scores)
        f.emplace_back(extender, quoted(std::to_string(contributions[i])));
      std::string s_text, f_text;
      append_object(std::move(s), &s_text);
      append_object(std::move(f), &f_text);
      score.emplace_back(node, std::move(s_text));
      final_score.emplace_back(node, std::move(f_text));
    }
  }
  // Rejected nodes, in name order: the plugins before the failing one passed.
  for (std::string_view node : rejected) {
    const Status& st = a.filter_statuses.find(std::string(node))->second;
    Members m;
    for (const auto& plugin : a.filter_plugins) {
      if (plugin == st.plugin()) break;
      m.emplace_back(plugin, passed);
    }
    const std::string message = quoted(st.Message());
    m.emplace_back(st.plugin().empty() ? std::string_view("Unknown") : st.plugin(), message);
    std::string text;
    append_object(std::move(m), &text);
    filter.emplace_back(node, std::move(text));
    out.recorded_rejected.emplace_back(node);
  }
  out.filter.clear();
  out.score.clear();
  out.final_score.clear();
  append_object(std::move(filter), &out.filter);
  append_object(std::move(score), &out.score);
  append_object(std::move(final_score), &out.final_score);
  return out;
}

std::map<std::string, std::string> DecisionAnnotations(const SchedulingAttempt& a,
                                                       size_t max_nodes) {
  const std::string p(kAnnotationPrefix);
  std::map<std::string, std::string> out;
  NodeResults nodes = NodeResultsJson(a, max_nodes);

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
    for (const std::string& node : nodes.recorded_rejected) post_filter[node] = json::object();
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
  out[p + "filter-result"] = std::move(nodes.filter);
  out[p + "postfilter-result"] = post_filter.dump();
  out[p + "prescore-result"] = PerPlugin(a.pre_score_outcomes).dump();
  out[p + "score-result"] = std::move(nodes.score);
  out[p + "finalscore-result"] = std::move(nodes.final_score);
  out[p + "reserve-result"] = PerPlugin(a.reserve_outcomes).dump();
  out[p + "permit-result"] = PerPlugin(a.permit_outcomes).dump();
  out[p + "permit-result-timeout"] = permit_timeout.dump();
  out[p + "prebind-result"] = PerPlugin(a.pre_bind_outcomes).dump();
  out[p + "bind-result"] = PerPlugin(a.bind_outcomes).dump();
  out[p + "selected-node"] = !a.selected_node.empty()                              ? a.selected_node
                             : a.outcome == SchedulingAttempt::Outcome::kScheduled ? a.node
                                                                                   : std::string();
  if (nodes.truncated > 0) out[p + "result-nodes-truncated"] = std::to_string(nodes.truncated);
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
