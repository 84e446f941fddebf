#include "explain/decision_record.h"

#include <algorithm>
#include <nlohmann/json.hpp>
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

NodeResultValues SelectNodeResults(const SchedulingAttempt& a, size_t max_nodes) {
  NodeResultValues out;
  // Scored nodes, best first (the chosen one leading, ties in scoring order), within the bound:
  // only the nodes kept are ordered.
  const size_t scored = a.scored_nodes.size();
  size_t total_nodes = scored + a.scored_nodes_omitted + a.filter_statuses.size();
  if (a.scored_nodes.empty() && !a.node.empty()) ++total_nodes;
  size_t budget = max_nodes;
  if (a.scored_nodes.empty() && !a.node.empty() && budget > 0) {
    out.lone_node = a.node;
    --budget;
  }
  size_t selected = std::string::npos;
  for (size_t i = 0; i < scored && selected == std::string::npos; ++i)
    if (a.scored_nodes[i] == a.node) selected = i;
  const std::vector<size_t> order = BestScoredRows(a.scores.totals, selected, budget);
  budget -= order.size();
  std::vector<const std::string*> rejected;
  rejected.reserve(a.filter_statuses.size());
  for (const auto& [node, status] : a.filter_statuses) rejected.push_back(&node);
  const size_t rejected_kept = std::min(budget, rejected.size());
  std::partial_sort(rejected.begin(), rejected.begin() + static_cast<long>(rejected_kept),
                    rejected.end(), [](const auto* x, const auto* y) { return *x < *y; });
  rejected.resize(rejected_kept);
  budget -= rejected_kept;
  out.truncated = total_nodes - (max_nodes - budget);

  out.filter_plugins = a.filter_plugins;
  std::vector<size_t> columns;
  for (size_t pl = 0; pl < a.score_plugins.size(); ++pl) {
    if (!a.scores.HasRow(pl)) continue;
    columns.push_back(pl);
    out.score_plugins.push_back(a.score_plugins[pl]);
    out.score_weights.push_back(a.score_weights[pl]);
  }
  for (const auto& [extender, contributions] : a.scores.extender_scores)
    out.extenders.push_back(extender);
  out.scored.reserve(order.size());
  for (size_t i : order) {
    NodeResultValues::Scored& row = out.scored.emplace_back();
    row.node = a.scored_nodes[i];
    row.scores.reserve(columns.size());
    for (size_t pl : columns) row.scores.push_back(a.scores.plugin_scores[pl][i]);
    for (const auto& [extender, contributions] : a.scores.extender_scores)
      row.contributions.push_back(contributions[i]);
  }
  out.rejected.reserve(rejected.size());
  for (const std::string* node : rejected) {
    const Status& st = a.filter_statuses.at(*node);
    NodeResultValues::Rejected& r = out.rejected.emplace_back();
    r.node = *node;
    r.plugin = st.plugin().empty() ? "Unknown" : st.plugin();
    r.message = st.Message();
    while (r.passed < a.filter_plugins.size() && a.filter_plugins[r.passed] != st.plugin())
      ++r.passed;
  }
  return out;
}

size_t NodeResultValues::bytes() const {
  size_t n = sizeof(*this);
  for (const auto& p : filter_plugins) n += sizeof(p) + p.size();
  for (const auto& p : score_plugins) n += sizeof(p) + p.size();
  for (const auto& e : extenders) n += sizeof(e) + e.size();
  n += score_weights.size() * sizeof(int64_t);
  for (const Scored& s : scored)
    n += sizeof(s) + s.node.size() + (s.scores.size() + s.contributions.size()) * sizeof(int64_t);
  for (const Rejected& r : rejected)
    n += sizeof(r) + r.node.size() + r.plugin.size() + r.message.size();
  return n;
}

NodeResults NodeResultsJson(const NodeResultValues& v) {
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
  auto quoted = [](std::string_view s) {
    std::string q;
    AppendJsonString(s, &q);
    return q;
  };
  const std::string passed = quoted("passed");
  auto passed_before = [&](size_t count) {
    Members m;
    for (size_t k = 0; k < count && k < v.filter_plugins.size(); ++k)
      m.emplace_back(v.filter_plugins[k], passed);
    return m;
  };
  Members filter, score, final_score;
  if (v.lone_node || !v.scored.empty()) {
    std::string every_filter_passed;
    append_object(passed_before(v.filter_plugins.size()), &every_filter_passed);
    if (v.lone_node) filter.emplace_back(*v.lone_node, every_filter_passed);
    for (const NodeResultValues::Scored& row : v.scored) {
      filter.emplace_back(row.node, every_filter_passed);
      Members s, f;
      for (size_t c = 0; c < row.scores.size(); ++c) {
        s.emplace_back(v.score_plugins[c], quoted(std::to_string(row.scores[c])));
        f.emplace_back(v.score_plugins[c],
                       quoted(std::to_string(row.scores[c] * v.score_weights[c])));
      }
      for (size_t e = 0; e < row.contributions.size(); ++e)
        f.emplace_back(v.extenders[e], quoted(std::to_string(row.contributions[e])));
      std::string s_text, f_text;
      append_object(std::move(s), &s_text);
      append_object(std::move(f), &f_text);
      score.emplace_back(row.node, std::move(s_text));
      final_score.emplace_back(row.node, std::move(f_text));
    }
  }
  // Rejected nodes: the plugins before the failing one passed.
  for (const NodeResultValues::Rejected& r : v.rejected) {
    Members m = passed_before(r.passed);
    m.emplace_back(r.plugin, quoted(r.message));
    std::string text;
    append_object(std::move(m), &text);
    filter.emplace_back(r.node, std::move(text));
  }
  NodeResults out;
  append_object(std::move(filter), &out.filter);
  append_object(std::move(score), &out.score);
  append_object(std::move(final_score), &out.final_score);
  return out;
}

std::map<std::string, std::string> DecisionAnnotations(const SchedulingAttempt& a,
                                                       size_t max_nodes) {
  const std::string p(kAnnotationPrefix);
  std::map<std::string, std::string> out;
  NodeResultValues values = SelectNodeResults(a, max_nodes);
  NodeResults nodes = NodeResultsJson(values);

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
    for (const auto& r : values.rejected) post_filter[r.node] = json::object();
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
  if (values.truncated > 0) out[p + "result-nodes-truncated"] = std::to_string(values.truncated);
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
