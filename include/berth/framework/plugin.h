// Plugin interfaces, one per extension point.
//
// A plugin derives from Plugin and from the interfaces of the points it implements; the
// framework discovers them once (dynamic_cast) when a profile is built and afterwards calls
// through typed vectors. Contracts common to all points:
//   * Threads. One scheduling thread runs the scheduling cycle of one pod at a time (PreFilter
//     through Permit, and Unreserve when Reserve or Permit fails). Filter, Score and the
//     PreFilterExtensions run on the profile's parallel workers too, concurrently for different
//     nodes. The binding cycle (PreBind, Bind, PostBind, and Unreserve when binding fails) runs
//     on a binding thread per pod: it overlaps the scheduling cycles of later pods and the
//     binding cycles of other pods. A plugin's state shared across pods (not in CycleState)
//     that a binding-cycle point or Reserve/Unreserve touches needs the plugin's own lock.
//     PreEnqueue and QueueSort run on whichever thread adds or pops queued pods, with the
//     queue locked. Each point says where it deviates.
//   * Codes. Each point lists the codes it may return. Any other code, and Error, abort the
//     pod's attempt as an error (retried after backoff) with "running <point> plugin ..." in the
//     message. Rejections (Unschedulable, UnschedulableAndUnresolvable) carry reasons that end
//     up in the FailedScheduling message; the framework stamps the plugin's name.
//   * Plugins never throw: every outcome is a Status. An exception that escapes anyway is
//     caught at the call and fails that pod's attempt with Error (docs/plugin-authoring.md).
//   * Calls are not retried within an attempt: a pod's next attempt starts again at PreFilter
//     with a fresh CycleState. Cross-point data goes through that CycleState only.
//   * Plugins are built when a profile is built and destroyed with it, after every call on
//     them has returned.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "berth/export.h"
#include "berth/framework/clock.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/node_info.h"
#include "berth/framework/status.h"

namespace berth {

inline constexpr int64_t kMaxNodeScore = 100;
inline constexpr int64_t kMinNodeScore = 0;

class BERTH_EXPORT Plugin {
 public:
  virtual ~Plugin() = default;
  // The name the configuration enables it under; constant for the plugin's lifetime. Any thread.
  virtual std::string_view Name() const = 0;
};

// A pod waiting in the scheduling queue.
struct BERTH_EXPORT QueuedPodInfo {
  PodInfoPtr pod_info;
  TimePoint timestamp{};                  // last time it was added to the queue
  TimePoint initial_attempt_timestamp{};  // first time it entered activeQ
  int attempts = 0;
  int unschedulable_count = 0;
  int consecutive_errors_count = 0;
  // Sorted; FlatSet keeps a queued pod 48 bytes smaller than std::set would.
  FlatSet<std::string> unschedulable_plugins;
  FlatSet<std::string> pending_plugins;
  std::string gating_plugin;

  const Pod& pod() const { return *pod_info->pod; }
};

class BERTH_EXPORT PreEnqueuePlugin : public virtual Plugin {
 public:
  // Before a pod enters activeQ, each time it would (added, or moved back by an event).
  // Thread: the one delivering the pod (cluster event thread, timer, scheduling thread), with
  // the queue locked: must be cheap, must not block, must not call into the Handle.
  // Codes: Success lets the pod in; Unschedulable or UnschedulableAndUnresolvable keeps it
  // gated in the unschedulable pool (the plugin is its gating plugin) until an event it
  // registered moves it again. Idempotent: the same pod may be asked any number of times.
  virtual Status PreEnqueue(const Pod& pod) const = 0;
};

class BERTH_EXPORT QueueSortPlugin : public virtual Plugin {
 public:
  // Strict weak order of the active queue: true if a should be scheduled before b. Thread: any
  // thread adding or popping pods, with the queue locked; pure (no side effects, no Handle).
  // Every profile must use the same QueueSort plugin.
  virtual bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const = 0;
};

// Node names a PreFilter restricts the cycle to; nullopt = all nodes.
struct BERTH_EXPORT PreFilterResult {
  std::optional<std::set<std::string>> node_names;
  bool AllNodes() const { return !node_names.has_value(); }
  // Intersection; all-nodes is the identity.
  PreFilterResult Merge(const PreFilterResult& other) const;
};

// Incremental updates of a plugin's PreFilter state when a pod is hypothetically added to or
// removed from a node (nominated pods, preemption dry-runs).
// Thread: the scheduling thread and the parallel workers, concurrently, each call on its own
// clone of the cycle's CycleState (so writes to that state need no lock) and `node` a copy of a
// snapshot node with the change already applied. Not called for a plugin whose PreFilter
// returned Skip in this cycle.
// Codes: Success; anything else is an error of the dry run (the node is not a candidate).
class BERTH_EXPORT PreFilterExtensions {
 public:
  virtual ~PreFilterExtensions() = default;
  virtual Status AddPod(CycleState& state, const PodInfo& pod_to_schedule,
                        const PodInfoPtr& pod_to_add, const NodeInfo& node) const = 0;
  virtual Status RemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                           const PodInfoPtr& pod_to_remove, const NodeInfo& node) const = 0;
};

class BERTH_EXPORT PreFilterPlugin : public virtual Plugin {
 public:
  // Once per cycle, first, on the scheduling thread, in profile order. `nodes` is the
  // snapshot's node list (read-only: the NodeInfos are the cache's). Writes what Filter needs
  // into `state`. May narrow the nodes through *result (intersected across plugins; an empty
  // set rejects the pod as UnschedulableAndUnresolvable).
  // Codes: Success; Skip disables this plugin's Filter and extensions for the cycle;
  // Unschedulable makes every node fail with this status, later PreFilters still run (their
  // state serves preemption); UnschedulableAndUnresolvable stops the cycle at once (no
  // preemption helps). Error aborts the attempt.
  virtual Status PreFilter(CycleState& state, const PodInfo& pod,
                           std::span<const NodeInfo* const> nodes, PreFilterResult* result) = 0;
  // Non-null if the plugin keeps PreFilter state that must follow hypothetical pod changes.
  // Asked on the scheduling thread and the workers; return the same object every time.
  virtual const PreFilterExtensions* Extensions() const { return nullptr; }
};

class BERTH_EXPORT FilterPlugin : public virtual Plugin {
 public:
  // Per node, concurrently on the parallel workers (and twice for a node with nominated pods:
  // once on a copy with them added and a cloned state). Reads `state` only. The result for a
  // node must not depend on the order or timing of other nodes' calls.
  // Codes: Success; Unschedulable (preemption may help); UnschedulableAndUnresolvable (it
  // cannot); Error aborts the attempt.
  virtual Status Filter(const CycleState& state, const PodInfo& pod,
                        const NodeInfo& node) const = 0;
};

// Node name -> status of every node that was rejected (and nodes outside a PreFilterResult).
using NodeStatusMap = std::unordered_map<std::string, Status>;

struct BERTH_EXPORT NominatingInfo {
  std::string node_name;
  // true: set status.nominatedNodeName to node_name (Override); false: leave it (Noop).
  bool override_nomination = false;
};

struct BERTH_EXPORT PostFilterResult {
  std::optional<NominatingInfo> nominating;
  // Pods the plugin evicted ("namespace/name"), for explanations; informational only.
  std::vector<std::string> victims;
};

class BERTH_EXPORT PostFilterPlugin : public virtual Plugin {
 public:
  // Only when no node is feasible, on the scheduling thread, in profile order until one
  // succeeds. May use the Handle's parallelizer and framework runners (dry runs on clones).
  // Codes: Success with a nomination: the pod may fit later (preemption: victims are being
  // deleted); Unschedulable: this plugin could not help, the next one runs;
  // UnschedulableAndUnresolvable: stop here. Error aborts the attempt.
  virtual Status PostFilter(CycleState& state, const PodInfo& pod,
                            const NodeStatusMap& filtered_statuses, PostFilterResult* result) = 0;
};

class BERTH_EXPORT PreScorePlugin : public virtual Plugin {
 public:
  // Once per cycle over the feasible nodes (when more than one node is feasible), on the
  // scheduling thread. Writes what Score needs into `state`.
  // Codes: Success; Skip disables this plugin's Score for the cycle; anything else aborts the
  // attempt as an error.
  virtual Status PreScore(CycleState& state, const PodInfo& pod,
                          std::span<const NodeInfo* const> feasible) = 0;
};

struct BERTH_EXPORT NodeScore {
  const NodeInfo* node = nullptr;
  int64_t score = 0;
};

class BERTH_EXPORT ScorePlugin : public virtual Plugin {
 public:
  // Per feasible node, concurrently on the parallel workers. Reads `state` only. Writes the raw
  // score to *score (in [0, 100] unless HasNormalize() maps it there).
  // Codes: Success; anything else aborts the attempt as an error.
  virtual Status Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                       int64_t* score) const = 0;
  // Constant for the plugin's lifetime.
  virtual bool HasNormalize() const { return false; }
  // Once per cycle after every Score call returned, on the scheduling thread: maps this
  // plugin's raw scores (one per feasible node, in no particular order) into [0, 100] in place.
  // A final score outside that range is an error of the attempt.
  // Codes: Success; anything else aborts the attempt as an error.
  virtual Status NormalizeScore(const CycleState& state, const PodInfo& pod,
                                std::span<NodeScore> scores) const {
    (void)state, (void)pod, (void)scores;
    return Status::Success();
  }
};

// Optional, beside ScorePlugin and PreScorePlugin: the plugin's Score computes what its
// PreScore prepares when that PreScore did not run, because the profile enables the plugin at
// `score` but not at `preScore` (a v1 configuration that lists it under `score` only, with
// `disabled: "*"` elsewhere). Framework creation warns about a profile that enables a
// PreScorePlugin's Score without its PreScore unless the plugin derives from this marker.
class BERTH_EXPORT ScoresWithoutPreScore {
 public:
  virtual ~ScoresWithoutPreScore() = default;
};

class BERTH_EXPORT ReservePlugin : public virtual Plugin {
 public:
  // After the pod is assumed on `node` in the cache, on the scheduling thread, in profile
  // order. Claims what the plugin tracks per node (it may overlap binding cycles of other pods
  // that touch the same bookkeeping: lock it).
  // Codes: Success; Unschedulable or UnschedulableAndUnresolvable reject the pod on this node;
  // Error aborts. On any failure (here or at a later point) Unreserve follows.
  virtual Status Reserve(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
  // Undoes Reserve when the pod's attempt fails after Reserve: on the scheduling thread (a
  // later Reserve or Permit failed) or on the pod's binding thread (WaitOnPermit, PreBind or
  // Bind failed). Called on every Reserve plugin in reverse order, including plugins whose
  // Reserve was never called or failed: must be idempotent and tolerate a missing Reserve.
  // Cannot fail.
  virtual void Unreserve(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

struct BERTH_EXPORT PermitDecision {
  Status status;       // Success, Wait, or a rejection
  Duration timeout{};  // with Wait: how long to wait (capped at 15 minutes)
};

class BERTH_EXPORT PermitPlugin : public virtual Plugin {
 public:
  // After Reserve, on the scheduling thread, in profile order.
  // Codes: Success; Wait holds the pod (its binding cycle blocks in WaitOnPermit) until every
  // waiting plugin allows it through Handle::GetWaitingPod, one rejects it, or its timeout
  // passes (then it is rejected as Unschedulable); Unschedulable or
  // UnschedulableAndUnresolvable reject the pod now; Error aborts. Allow and Reject may come
  // from any thread, including a later Permit call for another pod (a gang's last member).
  virtual PermitDecision Permit(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

// Binding-cycle points: called on the pod's binding thread after Permit allowed it, in profile
// order. They overlap later pods' scheduling cycles and other pods' binding cycles (see the
// top of this file). The snapshot (Handle::snapshot) is not theirs to read.
class BERTH_EXPORT PreBindPlugin : public virtual Plugin {
 public:
  // Before Bind; may block on API calls (volume binding). Codes: Success; Unschedulable or
  // UnschedulableAndUnresolvable reject the pod (Unreserve follows, the pod is requeued);
  // Error aborts the same way, retried after backoff.
  virtual Status PreBind(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

class BERTH_EXPORT BindPlugin : public virtual Plugin {
 public:
  // Binds the pod to `node` (the API write). Codes: Success ends the binding (later binders
  // are not called); Skip: not handled, the next binder is asked (none left is an error);
  // Unschedulable, UnschedulableAndUnresolvable or Error fail the binding (Unreserve follows).
  virtual Status Bind(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

class BERTH_EXPORT PostBindPlugin : public virtual Plugin {
 public:
  // Informational, after a successful Bind. Cannot fail.
  virtual void PostBind(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

// Scoring helper with kube-scheduler's DefaultNormalizeScore semantics: scales to [0, max_priority]
// by the maximum; reverse flips (max - s). If the maximum is 0, reverse gives max to all.
BERTH_EXPORT void DefaultNormalizeScore(int64_t max_priority, bool reverse,
                                        std::span<NodeScore> scores);

}  // namespace berth
