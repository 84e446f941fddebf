// InterPodAffinity: required and preferred pod affinity / anti-affinity, with kube-scheduler's
// semantics (filtering, scoring and the existing pods' required anti-affinity "symmetry").
//
// PreFilter counts, per topology pair (topologyKey, value), the existing pods that match the
// incoming pod's required affinity / anti-affinity terms and the existing pods whose required
// anti-affinity terms match the incoming pod; Filter then only looks the node's pairs up.
// PreScore accumulates the preferred-term weights (and hardPodAffinityWeight for existing pods'
// required affinity) per topology pair; Score sums the node's pairs; NormalizeScore maps the
// sums linearly from [min, max] onto [0, 100].
//
// The counts are kept across cycles (memo.h): a node's contribution is recomputed only when its
// Node object or its pods changed, in parallel with the handle's Parallelizer, so a cycle costs
// a pointer comparison per tracked pod plus the matching on the nodes that changed. Filter and
// Score then do a few label lookups and flat-map probes per node, with no allocation.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "berth/config/plugin_args.h"
#include "berth/framework/cluster_event.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"
#include "berth/framework/pod_signer.h"
#include "berth/framework/registry.h"
#include "berth/framework/remedy.h"
#include "config/plugin_names.h"

namespace berth {

// "InterPodAffinity" with its factory and InterPodAffinityArgs decoder.
PluginRegistration InterPodAffinityRegistration();

namespace interpodaffinity {

inline constexpr std::string_view kName = config::names::kInterPodAffinity;

inline constexpr std::string_view kErrReasonExistingAntiAffinityRulesNotMatch =
    "node(s) didn't satisfy existing pods anti-affinity rules";
inline constexpr std::string_view kErrReasonAffinityRulesNotMatch =
    "node(s) didn't match pod affinity rules";
inline constexpr std::string_view kErrReasonAntiAffinityRulesNotMatch =
    "node(s) didn't match pod anti-affinity rules";

struct PluginCaches;

class InterPodAffinity final : public PreFilterPlugin,
                               public FilterPlugin,
                               public PreFilterExtensions,
                               public PreScorePlugin,
                               public ScorePlugin,
                               public EnqueueExtensions,
                               public FilterRemedySearch,
                               public PodSigner {
 public:
  // `handle` must outlive the plugin. `args` are expected to be validated already.
  InterPodAffinity(const config::InterPodAffinityArgs& args, Handle& handle);
  ~InterPodAffinity() override;

  std::string_view Name() const override { return kName; }

  // A pod with affinity or anti-affinity of its own depends on the pods of other nodes: not
  // signed. Otherwise the preferred terms of existing pods read its labels, unless
  // ignorePreferredTermsOfExistingPods leaves them out.
  bool Signable(const Pod& pod) const override {
    return !pod.spec.affinity ||
           (!pod.spec.affinity->pod_affinity && !pod.spec.affinity->pod_anti_affinity);
  }
  bool SameSignature(const Pod& a, const Pod& b) const override {
    return args_.ignore_preferred_terms_of_existing_pods || a.metadata.labels == b.metadata.labels;
  }

  // Skip when neither the incoming pod has required (anti-)affinity nor any existing pod's
  // required anti-affinity matches it. UnschedulableAndUnresolvable "parsing pod: ..." when the
  // incoming pod's affinity terms have invalid selectors.
  Status PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   PreFilterResult* result) override;
  const PreFilterExtensions* Extensions() const override { return this; }

  // In order: affinity (UnschedulableAndUnresolvable), the pod's anti-affinity (Unschedulable),
  // existing pods' anti-affinity (Unschedulable).
  Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;

  Status AddPod(CycleState& state, const PodInfo& pod_to_schedule, const PodInfoPtr& pod_to_add,
                const NodeInfo& node) const override;
  Status RemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                   const PodInfoPtr& pod_to_remove, const NodeInfo& node) const override;

  // Skip when nothing contributes to any topology pair (or when ignoring existing pods'
  // preferred terms and the pod has no preferred terms of its own).
  Status PreScore(CycleState& state, const PodInfo& pod,
                  std::span<const NodeInfo* const> feasible) override;
  Status Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               int64_t* score) const override;
  bool HasNormalize() const override { return true; }
  Status NormalizeScore(const CycleState& state, const PodInfo& pod,
                        std::span<NodeScore> scores) const override;

  // Assigned pods its terms match coming, relabelled or going (or carrying anti-affinity);
  // nodes gaining or changing a topology key its terms use; namespaces relabelled (selectors).
  std::vector<ClusterEventWithHint> EventsToRegister() const override;

  // Bound pods moved off the domain (anti-affinity), a matching pod in it or the node moved to
  // another (affinity): remedies.h.
  RemedyProposal ProposeRemedies(const Pod& pod, std::span<const RejectedNode> rejected,
                                 size_t max_per_group) const override;

 private:
  // Adds (multiplier = 1) or removes (-1) `other`, placed on `node`, from the PreFilter counts.
  Status UpdateWithPod(CycleState& state, const PodInfo& other, const NodeInfo& node,
                       int64_t multiplier) const;

  config::InterPodAffinityArgs args_;
  Handle& handle_;
  // Indexes kept across cycles (PreFilter and PreScore run on the scheduling thread only).
  std::unique_ptr<PluginCaches> caches_;
  // Filter's rejections, built once (a copy costs a reference count; see Status).
  const Status affinity_not_match_ =
      Status::Unresolvable(std::string(kErrReasonAffinityRulesNotMatch)).WithPlugin(kName);
  const Status anti_affinity_not_match_ =
      Status::Unschedulable(std::string(kErrReasonAntiAffinityRulesNotMatch)).WithPlugin(kName);
  const Status existing_anti_affinity_not_match_ =
      Status::Unschedulable(std::string(kErrReasonExistingAntiAffinityRulesNotMatch))
          .WithPlugin(kName);
};

}  // namespace interpodaffinity
}  // namespace berth
