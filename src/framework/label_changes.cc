#include "framework/label_changes.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>

#include "api/label_keys.h"

namespace berth {
namespace {

// Changes `want` so that it satisfies `key op values` for the set-based operators (In picks the
// first value; Gt and Lt are left to the caller).
void Satisfy(const std::string& key, const std::string& op, const std::vector<std::string>& values,
             Labels& want) {
  auto it = want.find(key);
  const bool listed =
      it != want.end() && std::find(values.begin(), values.end(), it->second) != values.end();
  if (op == "In" && !listed && !values.empty()) want[key] = values.front();
  if (op == "NotIn" && listed) want.erase(it);
  if (op == "Exists" && it == want.end()) want[key] = "true";
  if (op == "DoesNotExist" && it != want.end()) want.erase(it);
}

}  // namespace

// The changes that turn `have` into `want`.
LabelChanges Diff(const Labels& have, const Labels& want) {
  LabelChanges changes;
  for (const auto& [k, v] : have)
    if (!want.count(k)) changes[k] = std::nullopt;
  for (const auto& [k, v] : want)
    if (auto it = have.find(k); it == have.end() || it->second != v) changes[k] = v;
  return changes;
}

// The fewest label changes (roughly: one per requirement not met) after which `have` matches
// every selector. An Exists requirement takes "true"; a selector that contradicts itself gives
// changes that still do not match, which the verification then throws away.
LabelChanges ChangesToMatch(const std::vector<LabelSelector>& selectors, const Labels& have) {
  Labels want = have;
  for (const LabelSelector& sel : selectors) {
    for (const auto& [k, v] : sel.match_labels) want[k] = v;
    for (const LabelSelectorRequirement& r : sel.match_expressions)
      Satisfy(r.key, r.op, r.values, want);
  }
  return Diff(have, want);
}

// The label changes after which a node's labels match one required node affinity term (the
// term needing the fewest); nullopt when every term selects on fields (the node's name).
std::optional<LabelChanges> NodeTermChanges(const NodeSelector& required, const Labels& have) {
  std::optional<LabelChanges> best;
  for (const NodeSelectorTerm& term : required.terms) {
    if (!term.match_fields.empty() || term.match_expressions.empty()) continue;
    Labels want = have;
    for (const NodeSelectorRequirement& r : term.match_expressions) {
      Satisfy(r.key, r.op, r.values, want);
      auto it = want.find(r.key);
      if ((r.op == "Gt" || r.op == "Lt") && r.values.size() == 1) {
        char* end = nullptr;
        const long long bound = std::strtoll(r.values[0].c_str(), &end, 10);
        if (end == r.values[0].c_str() || *end) continue;
        long long now = 0;
        char* now_end = nullptr;
        const bool number = it != want.end() && !it->second.empty() &&
                            (now = std::strtoll(it->second.c_str(), &now_end, 10), !*now_end);
        const bool ok = number && (r.op == "Gt" ? now > bound : now < bound);
        if (!ok) want[r.key] = std::to_string(r.op == "Gt" ? bound + 1 : bound - 1);
      }
    }
    LabelChanges changes = Diff(have, want);
    if (!best || changes.size() < best->size()) best = std::move(changes);
  }
  return best;
}

void Apply(const LabelChanges& changes, Labels& labels) {
  for (const auto& [k, v] : changes) {
    if (v) {
      labels[k] = *v;
    } else {
      labels.erase(k);
    }
  }
}

// "a=1 b-" as kubectl label takes them.
std::string KubectlLabels(const LabelChanges& changes) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : changes) parts.push_back(v ? fmt::format("{}={}", k, *v) : k + "-");
  return fmt::format("{}", fmt::join(parts, " "));
}

// "a=1,b removed" for prose.
std::string DescribeLabels(const LabelChanges& changes) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : changes)
    parts.push_back(v ? fmt::format("{}={}", k, *v) : fmt::format("{} removed", k));
  return fmt::format("{}", fmt::join(parts, ","));
}

// The selector an existing pod must match to count for the incoming pod's required affinity
// term: the term's own, with matchLabelKeys / mismatchLabelKeys resolved against the incoming
// pod's labels as the scheduler resolves them (label_keys.h).
LabelSelector EffectiveSelector(const PodAffinityTerm& term, const Pod& pod) {
  LabelSelector s = term.label_selector.value_or(LabelSelector{});
  for (auto& req : PendingLabelKeyRequirements(term, pod.metadata.labels))
    s.match_expressions.push_back(std::move(req));
  return s;
}

// YAML of a label map under `indent`.
std::string LabelsYaml(const Labels& labels, std::string_view indent) {
  std::string out;
  for (const auto& [k, v] : labels) out += fmt::format("{}{}: \"{}\"\n", indent, k, v);
  return out;
}

bool IsMachineLabel(std::string_view key) {
  static constexpr std::string_view kMachine[] = {
      "kubernetes.io/hostname",           "kubernetes.io/os",      "kubernetes.io/arch",
      "node.kubernetes.io/instance-type", "beta.kubernetes.io/os", "beta.kubernetes.io/arch",
      "beta.kubernetes.io/instance-type"};
  return std::find(std::begin(kMachine), std::end(kMachine), key) != std::end(kMachine);
}

}  // namespace berth
