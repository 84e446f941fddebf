// Matching of label selectors, node selectors and taints, with Kubernetes semantics.
#pragma once

#include <span>
#include <string_view>

#include "berth/api/objects.h"
#include "berth/api/result.h"
#include "berth/export.h"

namespace berth {

// A LabelSelector validated once and then matched many times. A default-constructed
// CompiledSelector matches nothing (like labels.Nothing()); Everything() matches every set.
class BERTH_EXPORT CompiledSelector {
 public:
  CompiledSelector() = default;
  static CompiledSelector Everything();
  static CompiledSelector Nothing() { return {}; }
  // Converts a metav1.LabelSelector as kube-scheduler's LabelSelectorAsSelector does: an empty
  // selector matches everything; an invalid operator or values list is an error.
  static Result<CompiledSelector> Compile(const LabelSelector& s);
  // Like Compile, but a null selector matches nothing and an invalid one matches nothing
  // (kube-scheduler's callers that ignore the conversion error behave this way).
  static CompiledSelector FromOptional(const std::optional<LabelSelector>& s);
  // Selector that requires every label of `set` (Service / RC selector semantics).
  static CompiledSelector FromSet(const Labels& set);

  bool Matches(const Labels& labels) const;
  bool Empty() const { return everything_ && reqs_.empty(); }
  bool MatchesNothing() const { return !everything_; }

  // Adds `key In (value)` (e.g. for matchLabelKeys) or `key NotIn (value)`.
  void AddIn(std::string key, std::string value);
  void AddNotIn(std::string key, std::string value);

 private:
  struct Req {
    std::string key;
    enum class Op { kIn, kNotIn, kExists, kDoesNotExist } op;
    std::vector<std::string> values;  // sorted
  };
  std::vector<Req> reqs_;
  bool everything_ = false;
};

// True if `term` (ANDed expressions and fields) matches the node. matchFields supports only
// metadata.name. An empty term matches nothing.
BERTH_EXPORT bool NodeSelectorTermMatches(const NodeSelectorTerm& term, const Node& node);
// Terms are ORed; an empty term list matches nothing.
BERTH_EXPORT bool NodeSelectorMatches(const NodeSelector& selector, const Node& node);
// spec.nodeSelector AND required node affinity (what NodeAffinity's filter and
// PodTopologySpread's nodeAffinityPolicy: Honor check).
BERTH_EXPORT bool PodMatchesNodeSelectorAndAffinityTerms(const Pod& pod, const Node& node);

BERTH_EXPORT bool TolerationToleratesTaint(const Toleration& t, const Taint& taint);
// The first taint (with an effect accepted by `effect_filter`) that no toleration tolerates.
BERTH_EXPORT const Taint* FindUntoleratedTaint(std::span<const Taint> taints,
                                               std::span<const Toleration> tolerations,
                                               bool (*effect_filter)(const Taint&));
// NoSchedule or NoExecute.
BERTH_EXPORT bool IsScheduleBlockingTaint(const Taint& t);

}  // namespace berth
