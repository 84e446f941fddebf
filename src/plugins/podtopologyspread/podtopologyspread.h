// PodTopologySpread: spreads pods across topology domains (zones, nodes, any node label) as
// kube-scheduler does, from the pod's topologySpreadConstraints or, when it has none, from the
// plugin's default constraints with a selector derived from the Services, ReplicationControllers,
// ReplicaSets and StatefulSets that select the pod.
//
// Filter (whenUnsatisfiable: DoNotSchedule): for each constraint, a node lacking the topology key
// is UnschedulableAndUnresolvable; otherwise
//   skew = matching pods in the node's domain + (1 if the pod matches its own selector)
//          - global minimum over eligible domains (0 while fewer than minDomains domains exist)
// and skew > maxSkew is Unschedulable. Only nodes carrying every constraint's key and passing
// the constraint's nodeAffinityPolicy / nodeTaintsPolicy form domains and contribute pods; only
// non-terminating pods in the incoming pod's namespace count.
//
// Score (whenUnsatisfiable: ScheduleAnyway): per feasible node, the sum over constraints of
// matching pods in its domain times ln(#domains among feasible nodes + 2) plus maxSkew - 1,
// rounded; NormalizeScore maps lower sums to higher scores. Feasible nodes lacking a key are
// scored 0 ("ignored"), except with system-default constraints, where a missing key is a domain
// of its own.
//
// Performance: PreFilter and PreScore walk every node of the snapshot, so they run on integer
// domain ids and per-node counts memoized across cycles (see spread_cache.h); Filter and Score
// are a pointer-hash lookup and a few array reads per node.
#pragma once

#include <string_view>

#include "berth/config/plugin_args.h"
#include "berth/framework/cluster_event.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"
#include "berth/framework/pod_signer.h"
#include "berth/framework/registry.h"
#include "berth/framework/remedy.h"
#include "config/feature_gates.h"
#include "config/plugin_names.h"
#include "framework/node_batch_score.h"
#include "plugins/podtopologyspread/spread_cache.h"

namespace berth {

// "PodTopologySpread" with its factory and PodTopologySpreadArgs decoder, at every gate's
// default; with `gates`, nodeTaintsPolicy Honor matches tolerations under the
// TaintTolerationComparisonOperators gate.
PluginRegistration PodTopologySpreadRegistration();
PluginRegistration PodTopologySpreadRegistration(const config::FeatureGates& gates);

namespace podtopologyspread {

inline constexpr std::string_view kName = config::names::kPodTopologySpread;
inline constexpr std::string_view kErrReasonConstraintsNotMatch =
    "node(s) didn't match pod topology spread constraints";
inline constexpr std::string_view kErrReasonNodeLabelNotMatch =
    "node(s) didn't match pod topology spread constraints (missing required label)";

// hostname maxSkew 3 and zone maxSkew 5, both ScheduleAnyway (defaultingType: System).
std::vector<TopologySpreadConstraint> SystemDefaultConstraints();

class PodTopologySpread final : public PreFilterPlugin,
                                public FilterPlugin,
                                public PreFilterExtensions,
                                public PreScorePlugin,
                                public ScorePlugin,
                                public NodeBatchScorer,
                                public EnqueueExtensions,
                                public FilterRemedySearch,
                                public PodSigner {
 public:
  // `handle` must outlive the plugin; `args` are expected to be validated already.
  // `comparison_operators`: the TaintTolerationComparisonOperators gate.
  PodTopologySpread(const config::PodTopologySpreadArgs& args, Handle& handle,
                    bool comparison_operators = false);

  std::string_view Name() const override { return kName; }

  // Spreading counts pods on every node: a pod with constraints, its own or the profile's
  // defaults (the system defaults included), is not signed.
  bool Signable(const Pod& pod) const override {
    return pod.spec.topology_spread_constraints.empty() && default_constraints_.empty();
  }
  bool SameSignature(const Pod&, const Pod&) const override { return true; }

  // Skip when the pod has no DoNotSchedule constraint (own or default). Error when a selector
  // does not parse.
  Status PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   PreFilterResult* result) override;
  const PreFilterExtensions* Extensions() const override { return this; }
  Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  Status AddPod(CycleState& state, const PodInfo& pod_to_schedule, const PodInfoPtr& pod_to_add,
                const NodeInfo& node) const override;
  Status RemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                   const PodInfoPtr& pod_to_remove, const NodeInfo& node) const override;

  // Skip when the snapshot is empty or the pod has no ScheduleAnyway constraint (own or
  // default). Pods are counted over every node of the handle's snapshot.
  Status PreScore(CycleState& state, const PodInfo& pod,
                  std::span<const NodeInfo* const> feasible) override;
  Status Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               int64_t* score) const override;
  // A run of the feasible list PreScore saw reads its scores by position; other nodes as Score.
  Status ScoreNodes(const CycleState& state, const PodInfo& pod,
                    std::span<const NodeInfo* const> nodes, int64_t* out) const override;
  bool HasNormalize() const override { return true; }
  Status NormalizeScore(const CycleState& state, const PodInfo& pod,
                        std::span<NodeScore> scores) const override;

  // Assigned pods of the pod's namespace that its selectors count coming, going or relabelled;
  // nodes with its topology keys coming, going, relabelled or retainted.
  std::vector<ClusterEventWithHint> EventsToRegister() const override;

  // The maxSkew each of the pod's DoNotSchedule constraints would need (remedies.cc).
  RemedyProposal ProposeRemedies(const Pod& pod, std::span<const RejectedNode> rejected,
                                 size_t max_per_group) const override;

 private:
  // The pod's constraints with `action`, or the default constraints when it has none.
  Result<std::vector<SpreadConstraint>> Constraints(const Pod& pod, std::string_view action);
  Status UpdateWithPod(CycleState& state, const Pod& pod_to_schedule, const Pod& other,
                       const NodeInfo& node, int32_t delta) const;
  // The handle's snapshot when `nodes` is its node list and the scheduler's cache maintains it
  // incrementally (see SpreadCache::Refresh); null otherwise.
  const Snapshot* IncrementalSnapshot(std::span<const NodeInfo* const> nodes) const;
  // cache_.Refresh with the snapshot's last change set when it applies.
  std::shared_ptr<const NodeTable> RefreshTable(std::span<const NodeInfo* const> nodes);

  std::vector<TopologySpreadConstraint> default_constraints_;
  bool system_defaulted_ = false;
  Handle& handle_;
  SpreadCache cache_;
  const bool comparison_operators_;
  // Filter's rejections, built once: a zone at its skew limit rejects every node in it, and a
  // copy of a Status costs a reference count where a new one costs three allocations.
  const Status constraints_not_match_ =
      Status::Unschedulable(std::string(kErrReasonConstraintsNotMatch)).WithPlugin(kName);
  const Status node_label_not_match_ =
      Status::Unresolvable(std::string(kErrReasonNodeLabelNotMatch)).WithPlugin(kName);
};

}  // namespace podtopologyspread
}  // namespace berth
