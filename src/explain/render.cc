// `berth explain`'s output: JSON (a stable contract, docs/simulate.md#explain) and text.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "explain/explain.h"

namespace berth::explain {
namespace {

// Text output: nodes listed one per line up to this many; beyond, grouped.
constexpr size_t kMaxTextRows = 30;
constexpr size_t kBestShown = 5;

// " (Plugin=score×weight ...)" of scored node i: each plugin's normalized score and weight.
std::string Scores(const SchedulingAttempt& a, size_t i) {
  std::vector<std::string> parts;
  for (size_t p = 0; p < a.score_plugins.size() && p < a.scores.plugin_scores.size(); ++p)
    if ((p >= a.scores.plugin_ran.size() || a.scores.plugin_ran[p]) &&
        i < a.scores.plugin_scores[p].size() && p < a.score_weights.size())
      parts.push_back(fmt::format("{}={}x{}", a.score_plugins[p], a.scores.plugin_scores[p][i],
                                  a.score_weights[p]));
  if (parts.empty()) return "";
  return fmt::format(" ({})", fmt::join(parts, " "));
}

// One line per node: the plugin that rejected it and why, or its scores.
std::string NodeRows(const Explanation& e) {
  const SchedulingAttempt& a = *e.attempt;
  std::map<std::string, std::string> rows;
  for (const auto& [node, st] : a.filter_statuses)
    rows[node] = fmt::format("rejected by {}: {}", st.plugin(), st.Message());
  for (size_t i = 0; i < a.scored_nodes.size(); ++i)
    rows[a.scored_nodes[i]] = fmt::format("fits, score {}{}", a.scores.totals[i], Scores(a, i));
  std::string out = rows.empty() ? "" : "\n";
  for (const auto& [node, text] : rows)
    out += fmt::format("  {} {:<20} {}\n", node == e.node ? "*" : " ", node, text);
  return out;
}

// The best scored nodes, then the rejections grouped by plugin and reason with examples.
std::string GroupedRows(const Explanation& e) {
  const SchedulingAttempt& a = *e.attempt;
  std::string out;
  std::vector<size_t> order(a.scored_nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t x, size_t y) { return a.scores.totals[x] > a.scores.totals[y]; });
  if (!order.empty()) out += fmt::format("\n  {} node(s) fit; the best scored:\n", order.size());
  for (size_t k = 0; k < order.size() && k < kBestShown; ++k) {
    const std::string& node = a.scored_nodes[order[k]];
    out += fmt::format("  {} {:<20} fits, score {}{}\n", node == e.node ? "*" : " ", node,
                       a.scores.totals[order[k]], Scores(a, order[k]));
  }
  struct Group {
    int count = 0;
    std::vector<std::string> examples;
  };
  std::map<std::pair<std::string, std::string>, Group> groups;
  std::vector<std::string> names;
  for (const auto& [node, st] : a.filter_statuses) names.push_back(node);
  std::sort(names.begin(), names.end());
  for (const auto& node : names) {
    const Status& st = a.filter_statuses.at(node);
    Group& g = groups[{st.plugin(), st.Message()}];
    ++g.count;
    if (g.examples.size() < 3) g.examples.push_back(node);
  }
  std::vector<std::pair<std::pair<std::string, std::string>, Group>> sorted(groups.begin(),
                                                                            groups.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& x, const auto& y) { return x.second.count > y.second.count; });
  if (!sorted.empty()) out += fmt::format("\n  {} node(s) rejected:\n", a.filter_statuses.size());
  for (const auto& [key, g] : sorted)
    out += fmt::format("    {:>6} by {}: {} (e.g. {})\n", g.count, key.first, key.second,
                       fmt::join(g.examples, ", "));
  return out;
}

std::string SuggestionsText(const Explanation& e) {
  std::string out;
  if (!e.notes.empty()) {
    out += "\nWhy:\n";
    for (const std::string& note : e.notes) out += fmt::format("  - {}\n", note);
  }
  if (!e.diagnoses.empty()) {
    out += "\nWhy, as the plugins that rejected nodes see it:\n";
    for (const NodeDiagnosis& d : e.diagnoses) {
      out += fmt::format("  {} ({}):\n", d.node, d.plugin);
      for (const std::string& line : d.lines) out += fmt::format("    - {}\n", line);
    }
  }
  if (!e.suggestions.empty()) {
    out += "\nSmallest changes that would place it (each checked by scheduling again):\n";
    for (size_t i = 0; i < e.suggestions.size(); ++i) {
      const Suggestion& s = e.suggestions[i];
      out += fmt::format("  {}. {} — fits {} node(s)\n", i + 1, s.description, s.opens_nodes);
      for (const std::string* yaml : {&s.yaml, &s.new_pod}) {
        for (size_t pos = 0; pos < yaml->size();) {
          size_t nl = yaml->find('\n', pos);
          out += "       " + yaml->substr(pos, nl - pos) + "\n";
          pos = nl == std::string::npos ? yaml->size() : nl + 1;
        }
      }
    }
  } else if (e.result == "Unschedulable") {
    out +=
        "\nNo single change the plugins that rejected nodes proposed places it (each was checked "
        "by scheduling again).\n";
  }
  return out;
}

}  // namespace

nlohmann::json ToJson(const Explanation& e) {
  nlohmann::json j = {{"pod", e.pod}, {"result", e.result}, {"message", e.message}};
  if (!e.node.empty()) j["node"] = e.node;
  if (!e.configuration.empty()) j["configuration"] = e.configuration;
  if (e.attempt) {
    nlohmann::json nodes = nlohmann::json::object();
    for (const auto& [node, st] : e.attempt->filter_statuses)
      nodes[node] = {{"rejectedBy", st.plugin()}, {"reason", st.Message()}};
    const SchedulingAttempt& a = *e.attempt;
    for (size_t i = 0; i < a.scored_nodes.size(); ++i) {
      nlohmann::json scores = nlohmann::json::object();
      for (size_t p = 0; p < a.score_plugins.size() && p < a.scores.plugin_scores.size(); ++p)
        if (p >= a.scores.plugin_ran.size() || a.scores.plugin_ran[p])
          scores[a.score_plugins[p]] = a.scores.plugin_scores[p][i] * a.score_weights[p];
      nodes[a.scored_nodes[i]] = {{"scores", scores}, {"total", a.scores.totals[i]}};
    }
    j["nodes"] = std::move(nodes);
    // Each node's "scores" are weighted; the weights let a reader recover the plugin's own.
    nlohmann::json weights = nlohmann::json::object();
    for (size_t p = 0; p < a.score_plugins.size() && p < a.score_weights.size(); ++p)
      weights[a.score_plugins[p]] = a.score_weights[p];
    j["scoreWeights"] = std::move(weights);
  }
  nlohmann::json s = nlohmann::json::array();
  for (const auto& x : e.suggestions) {
    nlohmann::json o = {
        {"kind", x.kind}, {"description", x.description}, {"opensNodes", x.opens_nodes}};
    if (!x.yaml.empty()) o["podChange"] = x.yaml;
    if (!x.node.empty()) o["node"] = x.node;
    if (!x.victims.empty()) o["victims"] = x.victims;
    if (!x.change.empty()) o["change"] = x.change;
    if (!x.domain.empty()) o["domain"] = x.domain;
    if (!x.running_pod.empty()) o["runningPod"] = x.running_pod;
    if (!x.new_pod.empty()) o["newPod"] = x.new_pod;
    s.push_back(std::move(o));
  }
  j["suggestions"] = std::move(s);
  if (!e.notes.empty()) j["notes"] = e.notes;
  if (!e.diagnoses.empty()) {
    auto& d = j["diagnoses"];
    for (const NodeDiagnosis& x : e.diagnoses)
      d.push_back({{"node", x.node}, {"plugin", x.plugin}, {"lines", x.lines}});
  }
  return j;
}

std::string ToText(const Explanation& e) {
  std::string out = fmt::format("{}: {}{}\n", e.pod, e.result,
                                e.node.empty() ? "" : fmt::format(" -> {}", e.node));
  if (!e.message.empty() && e.result != "Scheduled") out += fmt::format("  {}\n", e.message);
  if (e.attempt) {
    // Per node on a small cluster; on a large one the best scored nodes and the rejections
    // grouped by plugin and reason, so the answer fits on a screen.
    const size_t total = e.attempt->filter_statuses.size() + e.attempt->scored_nodes.size();
    out += total <= kMaxTextRows ? NodeRows(e) : GroupedRows(e);
  }
  out += SuggestionsText(e);
  if (!e.configuration.empty() && e.result != "Bound")
    out += fmt::format("\n(scheduler configuration: {})\n", e.configuration);
  return out;
}

}  // namespace berth::explain
