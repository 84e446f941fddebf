// Handle: the services the framework offers to the plugins of one profile.
//
// A plugin receives a Handle& at construction and may keep it; the handle outlives the plugin.
// Each method says which threads may call it (see plugin.h for the threads of each point).
// Nothing here throws; none of the methods may be called from PreEnqueue, QueueSort or a
// queueing hint (they run with the queue locked).
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "berth/export.h"
#include "berth/framework/clock.h"
#include "berth/framework/cluster.h"
#include "berth/framework/extender.h"
#include "berth/framework/node_info.h"
#include "berth/framework/plugin.h"

namespace berth {

// A pod held at Permit. Thread-safe: any thread, concurrently. Once the pod's wait has ended
// (allowed, rejected, timed out) further Allow and Reject calls do nothing.
class BERTH_EXPORT WaitingPod {
 public:
  virtual ~WaitingPod() = default;
  virtual const Pod& pod() const = 0;
  // Plugins that returned Wait and have not allowed yet.
  virtual std::vector<std::string> PendingPlugins() const = 0;
  // The named plugin lets the pod through; it binds once every waiting plugin allowed.
  // Idempotent; a name that is not waiting changes nothing.
  virtual void Allow(std::string_view plugin) = 0;
  // Fails the pod's Permit with an Unschedulable status from `plugin` (the pod is
  // unreserved and requeued on its binding thread). The first Reject wins.
  virtual void Reject(std::string_view plugin, std::string_view message) = 0;
};

// Pods nominated to nodes (status.nominatedNodeName or a fresh preemption). Thread-safe; the
// answer reflects the queue at the time of the call.
class BERTH_EXPORT PodNominator {
 public:
  virtual ~PodNominator() = default;
  virtual std::vector<PodInfoPtr> NominatedPodsForNode(std::string_view node) const = 0;
  // False when no pod is nominated anywhere (lets the filter loop skip per-node lookups).
  virtual bool HasNominatedPods() const { return true; }
};

// Runs fn(i) for i in [0, n) on up to `parallelism` workers (the calling thread included) and
// returns when every call returned. Call it from the scheduling thread only, never from inside
// `fn` (not re-entrant) nor from Filter or Score (they already run on its workers). `fn` must
// not throw; calls for different i run concurrently in no particular order.
class BERTH_EXPORT Parallelizer {
 public:
  virtual ~Parallelizer() = default;
  virtual void Until(int n, const std::function<void(int)>& fn) = 0;
  virtual int parallelism() const = 0;
};

class BERTH_EXPORT Handle {
 public:
  virtual ~Handle() = default;

  // The snapshot of the current scheduling cycle: read it during the scheduling cycle only
  // (PreFilter to Permit, on the scheduling thread and, from Filter/Score, the workers). The
  // cache updates it in place before the next cycle, so neither it nor its NodeInfos may be
  // kept across cycles or read from binding-cycle points; compare NodeInfo::generation() to
  // tell changed nodes from unchanged ones.
  virtual const Snapshot& snapshot() const = 0;
  // Reads of the cluster's objects, served from caches (informers in the daemon): any
  // extension point, any thread, Filter and Score concurrently. Never blocks on the network.
  virtual const ClusterListers& listers() const = 0;
  // API writes: for the binding cycle (PreBind, Bind: a binding thread) and preemption
  // (PostFilter: the scheduling thread) only, never Filter or Score, since in the daemon each
  // blocks on the API server. A write's failure is its VoidResult, with a code (NotFound,
  // Conflict, ...; see ClusterWriter); retries are the plugin's decision.
  virtual ClusterWriter& writer() = 0;
  // A failure the plugin recovers from (a write that only speeds things up), so that it is
  // logged rather than lost: the daemon writes an error line naming `plugin`. Any thread.
  virtual void LogError(std::string_view /*plugin*/, std::string_view /*message*/) {}
  // Thread-safe. Simulated time under `berth simulate`: use it instead of the system clock.
  virtual const Clock& clock() const = 0;
  // The profile's seeded random source (scheduling thread only, not from Filter or Score).
  virtual Random& random() = 0;
  // The profile's workers (contract on Parallelizer above).
  virtual Parallelizer& parallelizer() = 0;
  // Thread-safe (contract on PodNominator above).
  virtual PodNominator& nominator() = 0;
  // Moves a pod waiting in the scheduling queue (unschedulable or backing off) to the active
  // queue so that it is tried again at once; a pod being scheduled right now goes there when its
  // attempt ends. Pods not in the queue are ignored. Any thread. For plugins that learn, outside
  // a cluster event, that a pod they rejected may fit now (preemption whose victims could not be
  // deleted). The default does nothing: a handle without a queue.
  virtual void Activate(const Pod& /*pod*/) {}
  // The scheduler's extenders, in the order they are consulted (shared by all profiles).
  // Constant after start; calls on them block on HTTP (PostFilter only).
  virtual std::span<Extender* const> extenders() const { return {}; }

  // Permit bookkeeping. Thread-safe: any thread, concurrently with Permit and binding cycles.
  // Calls `fn` for every pod waiting at Permit in this profile, on the calling thread, outside
  // the framework's lock (fn may Allow or Reject; pods starting or ending their wait meanwhile
  // may or may not be visited).
  virtual void IterateOverWaitingPods(const std::function<void(WaitingPod&)>& fn) = 0;
  // The waiting pod, shared: it stays valid after its binding cycle moves on (Allow or Reject
  // on it then do nothing). Null if none waits with this uid.
  virtual std::shared_ptr<WaitingPod> GetWaitingPod(std::string_view uid) = 0;
  // Rejects the waiting pod with this uid; returns false if none. Idempotent.
  virtual bool RejectWaitingPod(std::string_view uid) = 0;

  // Framework runners used by PostFilter plugins (preemption dry runs), on the scheduling
  // thread or from the parallelizer's `fn`, concurrently, each call with its own `state` (a
  // CycleState::Clone() of the cycle's) and its own `node` (a copy of a snapshot NodeInfo the
  // caller changed). They run every PreFilter plugin's extension (AddPod / RemovePod), skipping
  // plugins that skipped this cycle. Codes: Success, or Error naming the failing plugin.
  virtual Status RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod_to_schedule,
                                             const PodInfoPtr& pod_to_add,
                                             const NodeInfo& node) = 0;
  virtual Status RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                                                const PodInfoPtr& pod_to_remove,
                                                const NodeInfo& node) = 0;
  // Filters with the nominated pods of higher or equal priority added (kube-scheduler's two-pass
  // check). `node` may be a modified copy of a snapshot node. Same threads as above. Codes: as
  // a Filter plugin's (the first non-Success, stamped with its plugin).
  virtual Status RunFilterPluginsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                                   const NodeInfo& node) = 0;
};

}  // namespace berth
