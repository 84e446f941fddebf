// Topology spread constraints in the form PodTopologySpread evaluates them: selectors compiled,
// matchLabelKeys folded in, defaults applied, plus the selector that default constraints use
// (derived from the Services, ReplicationControllers, ReplicaSets and StatefulSets selecting a
// pod).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/objects.h"
#include "berth/api/result.h"
#include "berth/api/selectors.h"
#include "berth/framework/cluster.h"
#include "berth/framework/node_info.h"

namespace berth::podtopologyspread {

inline constexpr std::string_view kLabelHostname = "kubernetes.io/hostname";
inline constexpr std::string_view kLabelTopologyZone = "topology.kubernetes.io/zone";
inline constexpr std::string_view kDoNotSchedule = "DoNotSchedule";
inline constexpr std::string_view kScheduleAnyway = "ScheduleAnyway";

struct SpreadConstraint {
  int32_t max_skew = 1;
  std::string topology_key;
  bool is_hostname = false;  // topology_key == kubernetes.io/hostname
  CompiledSelector selector;
  // Canonical text of `selector` plus the pod's namespace: two constraints with the same key
  // count exactly the same pods on every node. Empty when the selector can never count a pod
  // (it matches nothing, or it is empty, which kube-scheduler counts as zero pods).
  std::string count_key;
  int32_t min_domains = 1;
  bool honor_node_affinity = true;  // nodeAffinityPolicy (default Honor)
  bool honor_node_taints = false;   // nodeTaintsPolicy (default Ignore)
};

// The pod's own constraints whose whenUnsatisfiable is `action`, in spec order. An invalid
// labelSelector is an error carrying the selector's problem.
Result<std::vector<SpreadConstraint>> ConstraintsFromPod(const Pod& pod, std::string_view action);

// The selector default constraints use for `pod`: the union of the selectors of the Services in
// the pod's namespace that select it and of its controlling ReplicationController, ANDed with the
// selector of its controlling ReplicaSet or StatefulSet. nullopt when that selector has no
// requirement at all (the pod then gets no default constraints).
std::optional<LabelSelector> DefaultSelector(const Pod& pod, const ClusterListers& client);

// `defaults` whose whenUnsatisfiable is `action`, all using `selector` (see DefaultSelector).
std::vector<SpreadConstraint> ConstraintsFromDefaults(
    const std::vector<TopologySpreadConstraint>& defaults, std::string_view action,
    const LabelSelector& selector, std::string_view pod_namespace);

// True if `node` carries every constraint's topology key.
bool NodeHasAllKeys(const Node& node, const std::vector<SpreadConstraint>& constraints);

// True if the pod has a nodeSelector or a required node affinity (else every node matches them).
bool HasNodeAffinityInputs(const Pod& pod);

// Whether pods on `node` count for a constraint with the given inclusion policies:
// nodeAffinityPolicy Honor requires the pod's nodeSelector and required node affinity to match
// the node; nodeTaintsPolicy Honor requires every NoSchedule/NoExecute taint to be tolerated
// (Lt and Gt tolerations match only with `comparison_operators`, the
// TaintTolerationComparisonOperators gate).
bool NodeIncluded(const SpreadConstraint& c, const Pod& pod, const Node& node,
                  bool comparison_operators);

// Pods in `pods` that are in `ns`, not terminating, and match `selector`; zero for an empty
// selector.
int32_t CountMatchingPods(const std::vector<PodInfoPtr>& pods, const CompiledSelector& selector,
                          std::string_view ns);

}  // namespace berth::podtopologyspread
