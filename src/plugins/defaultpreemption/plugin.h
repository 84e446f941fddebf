// The DefaultPreemption plugin class. Most callers only need defaultpreemption.h; the steps are
// public here so tests (and future preemption plugins) can drive them one at a time.
//
// Threading: PostFilter runs on the scheduling thread. DryRunPreemption evaluates nodes on the
// handle's parallelizer; SelectVictimsOnNode must therefore only touch its own CycleState and
// NodeInfo copies and the thread-safe Handle runners.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "berth/config/plugin_args.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"
#include "framework/preemptions_in_flight.h"
#include "plugins/defaultpreemption/defaultpreemption.h"
#include "plugins/defaultpreemption/preemption.h"

namespace berth {

class DefaultPreemption final : public PostFilterPlugin,
                                public PreEnqueuePlugin,
                                public EnqueueExtensions {
 public:
  // `async_preemption`: the SchedulerAsyncPreemption gate (preemptions_in_flight.h). Off, the
  // victims' deletions are asked for inside PostFilter, one after another.
  DefaultPreemption(Handle& handle, const config::DefaultPreemptionArgs& args,
                    bool async_preemption = true);

  std::string_view Name() const override { return kDefaultPreemptionName; }

  // Success with a nomination (override) and the evicted victims; Unschedulable with a
  // "preemption: ..." message when preemption cannot help (with an empty override nomination
  // when no node qualified, clearing any earlier nomination); Error on internal failures.
  Status PostFilter(CycleState& state, const PodInfo& pod, const NodeStatusMap& filtered_statuses,
                    PostFilterResult* result) override;

  // With asynchronous preemption, keeps a preemptor whose victims are still being deleted out
  // of the active queue (UnschedulableAndUnresolvable).
  Status PreEnqueue(const Pod& pod) const override;
  // With asynchronous preemption: assigned pods' deletions, which let a preemptor it gates
  // through PreEnqueue again.
  std::vector<ClusterEventWithHint> EventsToRegister() const override;
  // True while `pod`'s preemption is under way (always false without asynchronous preemption).
  bool IsPodRunningPreemption(const Pod& pod) const;

  // ---- steps

  // False, with the reason, for pods that must not preempt now: preemptionPolicy Never, or a
  // nominated node (not rejected as unresolvable) that still holds a lower-priority pod being
  // deleted by an earlier preemption.
  bool PodEligibleToPreemptOthers(const Pod& pod, const NodeStatusMap& statuses,
                                  std::string* reason) const;

  // (random offset in [0, num_nodes), number of candidates to collect).
  std::pair<int32_t, int32_t> GetOffsetAndNumCandidates(int32_t num_nodes);

  struct DryRunResult {
    // Candidates without PDB violations first, each group in evaluation order.
    std::vector<preemption::Candidate> candidates;
    // Statuses of the evaluated nodes that are not candidates.
    NodeStatusMap statuses;
    // Messages of Error statuses among them.
    std::vector<std::string> errors;
  };
  // Evaluates `potential` starting at `offset` (wrapping) until at least one candidate without
  // PDB violations exists and the candidates number at least `num_candidates` (at most
  // `num_candidates` of each kind are kept). Nodes are evaluated in parallel batches; the result
  // equals a one-node-at-a-time evaluation in that order.
  DryRunResult DryRunPreemption(const CycleState& state, const PodInfo& pod,
                                std::span<const NodeInfo* const> potential,
                                std::span<const preemption::CompiledPdb> pdbs, int32_t offset,
                                int32_t num_candidates);

  // The fewest lower-priority pods to evict from `node` for `pod` to fit, most important first.
  // `state` and `node` are scratch copies and are modified. Success means `victims` is filled;
  // otherwise the status explains why the node cannot become a candidate.
  Status SelectVictimsOnNode(CycleState& state, const PodInfo& pod, NodeInfo& node,
                             std::span<const preemption::CompiledPdb> pdbs,
                             preemption::Victims* victims) const;

  // Evicts the victims (rejecting those waiting at Permit instead) and clears the nominations
  // of lower-priority pods nominated to the candidate's node. With asynchronous preemption the
  // deletions are only started (preemptions_in_flight.h).
  Status PrepareCandidate(const preemption::Candidate& candidate, const Pod& preemptor);

 private:
  Status Preempt(CycleState& state, const PodInfo& pod, const NodeStatusMap& filtered_statuses,
                 PostFilterResult* result);
  Status RemoveFromNode(CycleState& state, const PodInfo& pod, const PodInfoPtr& victim,
                        NodeInfo& node) const;

  Handle& handle_;
  config::DefaultPreemptionArgs args_;
  // Null without asynchronous preemption. The scheduler's (DetachedServices) when it has one;
  // shared with the deletions' continuations.
  std::shared_ptr<preemption::PreemptionsInFlight> in_flight_;
};

}  // namespace berth
