// Cycle state of InterPodAffinity (internal to the plugin and its tests).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "berth/api/objects.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/handle.h"
#include "berth/framework/node_info.h"
#include "plugins/interpodaffinity/topology_counter.h"

namespace berth::interpodaffinity {

// The incoming pod's required terms as PreFilter resolved them. Immutable after PreFilter and
// shared by every clone of the state.
struct IncomingPod {
  std::shared_ptr<const Pod> pod;
  // Required terms with namespaceSelector folded into `namespaces` (the selector is then either
  // "everything" or "nothing"), so matching them never needs the other pod's namespace labels.
  std::vector<AffinityTerm> required_affinity;
  std::vector<AffinityTerm> required_anti_affinity;
  // Labels of the incoming pod's namespace (empty when the namespace is unknown).
  Labels namespace_labels;
  // The pod matches all of its own required affinity terms (false when it has none).
  bool matches_own_affinity = false;
};

// A counter shared with the plugin's indexes; whoever changes it first copies it if anyone
// else still holds it.
using SharedCounter = std::shared_ptr<TopologyCounter>;

// The counter `c` may be changed through: `c` itself after copying it if it is shared.
inline TopologyCounter& MutableCounter(SharedCounter& c) {
  if (c.use_count() > 1) c = std::make_shared<TopologyCounter>(*c);
  return *c;
}

class PreFilterState final : public StateData {
 public:
  // Clones share the counters until one of them changes (AddPod / RemovePod).
  std::shared_ptr<StateData> Clone() const override {
    return std::make_shared<PreFilterState>(*this);
  }

  std::shared_ptr<const IncomingPod> incoming;
  // Existing pods whose required anti-affinity terms match the incoming pod.
  SharedCounter existing_anti_affinity_counts;
  // Existing pods that match all of the incoming pod's required affinity terms (one count per
  // term).
  SharedCounter affinity_counts;
  // Existing pods that match the incoming pod's required anti-affinity terms (one count per
  // matching term).
  SharedCounter anti_affinity_counts;
};

inline constexpr StateKey<PreFilterState> kPreFilterStateKey{"PreFilterInterPodAffinity"};

class PreScoreState final : public StateData, public std::enable_shared_from_this<PreScoreState> {
 public:
  // Read-only after PreScore, so clones share it.
  std::shared_ptr<StateData> Clone() const override {
    return std::const_pointer_cast<PreScoreState>(shared_from_this());
  }

  // The weight of a topology pair is the sum over sources of multiplier x count.
  struct Source {
    std::shared_ptr<const TopologyCounter> counts;
    int64_t multiplier;
  };
  std::vector<Source> sources;
};

inline constexpr StateKey<PreScoreState> kPreScoreStateKey{"PreScoreInterPodAffinity"};

// Labels of namespace `ns` as the cluster reports them now; empty when it does not exist.
Labels NamespaceLabels(const ClusterListers& client, std::string_view ns);

// Folds a term's non-empty namespaceSelector into its namespace set, using the namespaces the
// client lists (`namespaces` is filled on first use and reused across terms).
void MergeNamespaceSelector(AffinityTerm& term, const ClusterListers& client,
                            std::optional<std::vector<Ptr<Namespace>>>& namespaces);

// The error kube-scheduler reports when the pod's affinity terms do not parse (invalid label or
// namespace selectors), or nullopt.
std::optional<std::string> AffinityParseError(const Pod& pod);

}  // namespace berth::interpodaffinity
