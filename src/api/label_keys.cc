#include "api/label_keys.h"

#include <algorithm>

namespace berth {

std::vector<LabelSelectorRequirement> PendingLabelKeyRequirements(const PodAffinityTerm& term,
                                                                  const Labels& pod_labels) {
  std::vector<LabelSelectorRequirement> out;
  if (!term.label_selector) return out;
  const LabelSelector& selector = *term.label_selector;
  auto names = [&](const std::string& key) {
    return selector.match_labels.find(key) != selector.match_labels.end() ||
           std::any_of(selector.match_expressions.begin(), selector.match_expressions.end(),
                       [&](const LabelSelectorRequirement& r) { return r.key == key; });
  };
  for (const std::string& key : term.match_label_keys) {
    auto it = pod_labels.find(key);
    if (it == pod_labels.end() || names(key)) continue;
    out.push_back({key, "In", {it->second}});
  }
  for (const std::string& key : term.mismatch_label_keys) {
    auto it = pod_labels.find(key);
    if (it == pod_labels.end()) continue;
    LabelSelectorRequirement req{key, "NotIn", {it->second}};
    if (std::find(selector.match_expressions.begin(), selector.match_expressions.end(), req) !=
        selector.match_expressions.end()) {
      continue;
    }
    out.push_back(std::move(req));
  }
  return out;
}

}  // namespace berth
