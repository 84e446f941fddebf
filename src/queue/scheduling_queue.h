// SchedulingQueue: pods waiting to be scheduled, with kube-scheduler's three sub-queues.
//
//   activeQ        ordered by the profile's QueueSort plugin; Pop() takes the head.
//   backoffQ       pods that failed recently, ordered by backoff expiry
//                  (initial × 2^(attempts-1), capped at max); pods that failed with an error
//                  (no plugin rejected them) wait apart, in the error backoffQ.
//   unschedulable  pods that failed and wait for a cluster change, plus gated pods (a PreEnqueue
//                  plugin said no).
//
// A cluster event (OnClusterEvent) moves the unschedulable pods that the RequeueDecider says it
// may help — the plugins that rejected them registered for it and their queueing hints said
// kQueue — to backoffQ, or to activeQ when their backoff already expired. Events that arrive
// while a pod is being scheduled are kept and replayed against that pod if it fails, so a change
// is never missed. The queue is also the PodNominator. Thread-safe; Pop() may block. The
// decider's hints run on the thread that delivers the event, with the queue locked.
#pragma once

#include <array>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "berth/api/boxed.h"
#include "berth/framework/clock.h"
#include "berth/framework/cluster_event.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"

namespace berth {

// Per resource, the actions an event must carry to concern a pod (union over the plugins that
// rejected it).
using EventInterest = std::array<uint32_t, kEventResourceCount>;

// Decides which events move which unschedulable pods (the scheduler's RequeuePolicy).
class RequeueDecider {
 public:
  enum class Strategy { kSkip, kAfterBackoff, kImmediately };
  virtual ~RequeueDecider() = default;
  // Computed once when the pod enters the unschedulable pool; events outside it skip the pod
  // without calling Decide.
  virtual EventInterest InterestOf(const QueuedPodInfo& pod) const = 0;
  virtual Strategy Decide(const QueuedPodInfo& pod, const ClusterEvent& event,
                          const EventObject& old_object, const EventObject& new_object) const = 0;
  // The events that may let a pod its PreEnqueue plugin gates in (pod.gating_plugin): only
  // what that plugin registered by name; none (the default) leaves gated pods to updates of
  // their own, as scheduling gates are lifted.
  virtual EventInterest GatingInterestOf(const QueuedPodInfo& /*pod*/) const { return {}; }
  // For a gated pod and an event in its GatingInterestOf: kSkip when the gating plugin's
  // queueing hints say the event cannot let it in, which spares it PreEnqueue; else
  // kImmediately (the default).
  virtual Strategy DecideGated(const QueuedPodInfo& /*pod*/, const ClusterEvent& /*event*/,
                               const EventObject& /*old_object*/,
                               const EventObject& /*new_object*/) const {
    return Strategy::kImmediately;
  }
};

// kube-scheduler's label of an event in scheduler_queue_incoming_pods_total ("NodeAdd",
// "NodeLabelChange", "AssignedPodDelete", ...).
std::string EventLabel(const ClusterEvent& event);

class SchedulingQueue final : public PodNominator {
 public:
  using LessFn = std::function<bool(const QueuedPodInfo&, const QueuedPodInfo&)>;
  // Runs the PreEnqueue plugins of the pod's profile.
  using PreEnqueueFn = std::function<Status(const Pod&)>;

  SchedulingQueue(LessFn less, PreEnqueueFn pre_enqueue, const Clock* clock,
                  Duration initial_backoff, Duration max_backoff);

  // kube-scheduler's SchedulerPopFromBackoffQ (KEP-5142). When on, Pop takes the head of
  // backoffQ rather than wait while activeQ is empty (never from the error backoffQ); backoffQ
  // is ordered by backoff expiry truncated to whole seconds (kBackoffOrderingWindow), then by
  // the QueueSort, and a pod's backoff ends once the clock has left its expiry's window; the
  // PreEnqueue plugins run when a pod enters backoffQ (a gated one stays in the pool). Set
  // before pods arrive.
  void SetPopFromBackoffQ(bool enabled);
  static constexpr Duration kBackoffOrderingWindow = std::chrono::seconds(1);

  // A new pending pod. `timestamp` defaults to the clock's now.
  void Add(PodInfoPtr pod, std::optional<TimePoint> timestamp = std::nullopt);
  // The pod object changed (e.g. a scheduling gate was removed).
  void Update(PodInfoPtr pod);
  void Delete(const Pod& pod);

  // Takes the head of activeQ; blocks while it is empty unless `block` is false. With
  // SetPopFromBackoffQ, an empty activeQ yields the head of backoffQ instead.
  // nullopt when closed or (non-blocking) empty.
  std::optional<QueuedPodInfo> Pop(bool block = true);
  // A pod group's scheduling cycle (GenericWorkload): takes every other queued pod of `pod`'s
  // scheduling group (same namespace and spec.schedulingGroup) out of the queue, from activeQ,
  // either backoffQ or the unschedulable pool, but not gated ones; each is in flight and counts
  // an attempt, as Pop does, and comes back through AddUnschedulableIfNotPresent or Done.
  // Ordered by the QueueSort.
  std::vector<QueuedPodInfo> PopGroupMembers(const Pod& pod);
  // The pod's scheduling attempt is over (called before the binding cycle).
  void Done(const std::string& uid);
  // A failed attempt: to backoffQ or the unschedulable pool (see class comment).
  void AddUnschedulableIfNotPresent(QueuedPodInfo pod, int64_t scheduling_cycle);
  // Without a decider every event moves every unschedulable pod. Set before events arrive;
  // `decider` must outlive the queue.
  // May be replaced while pods flow (a configuration reload); `decider` must outlive its use.
  void SetRequeueDecider(const RequeueDecider* decider);
  // A change the ClusterEvent enum does not describe (DRA objects, berth/framework/dra.h):
  // moves the unschedulable and gated pods `decide` picks (a gated pod goes through PreEnqueue
  // again). A pod in flight meanwhile
  // counts it as a wildcard event (it is retried after backoff if its cycle fails). `label`
  // names the event in metrics ("ResourceClaimChange").
  void OnOtherEvent(std::string_view label,
                    const std::function<RequeueDecider::Strategy(const QueuedPodInfo&)>& decide);
  // A cluster change: moves the unschedulable pods it may help (see class comment).
  // `except_uid` names a pod the event must not move (the one whose binding just failed).
  void OnClusterEvent(const ClusterEvent& event, const EventObject& old_object,
                      const EventObject& new_object, std::string_view except_uid = {});
  // A change that may help any pod (a wildcard event).
  void MoveAllToActiveOrBackoffQueue();
  // Moves the pod from the unschedulable pool or the backoff queue to the active queue
  // ("ForceActivate"); a pod in flight goes there when it comes back unschedulable. Pods not
  // queued are ignored. Any thread.
  void Activate(const Pod& pod);
  // Moves pods whose backoff expired to activeQ.
  void FlushBackoffQCompleted();
  // Moves pods that waited longer than `max_wait` in the unschedulable pool.
  void FlushUnschedulableLeftover(Duration max_wait);
  // Earliest time a pod in backoffQ completes its backoff, if any (simulation advances its
  // clock to it).
  std::optional<TimePoint> NextBackoffExpiry() const;
  int64_t scheduling_cycle() const;
  // Cluster events kept for pods in flight that have not seen them (tests, diagnostics).
  size_t in_flight_events() const;
  void Close();
  bool closed() const;
  // Makes one blocking Pop (the one waiting, or the next to wait) return nullopt without
  // closing the queue: the scheduling loop has other work between cycles (a reload).
  void Wake();

  // Called, with the queue locked, for every pod entering a sub-queue ("active", "backoff",
  // "unschedulable", "gated") with what moved it ("PodAdd", "ScheduleAttemptFailure",
  // "BackoffComplete", "UnschedulableTimeout", an EventLabel): must be cheap and must not call
  // back into the queue. Set before pods arrive.
  using IncomingPodHook = std::function<void(std::string_view queue, std::string_view event)>;
  void SetIncomingPodHook(IncomingPodHook hook) { incoming_hook_ = std::move(hook); }
  // Unschedulable and gated pods by the plugin that rejected or gates them, and profile.
  struct PluginCount {
    std::string plugin, profile;
    size_t pods = 0;
  };
  std::vector<PluginCount> UnschedulableByPlugin() const;

  struct Counts {
    size_t active = 0, backoff = 0, unschedulable = 0, gated = 0;
  };
  Counts counts() const;

  // ---- nominator
  void AddNominatedPod(PodInfoPtr pod, const std::string& node);
  void DeleteNominatedPodIfExists(const Pod& pod);
  std::vector<PodInfoPtr> NominatedPodsForNode(std::string_view node) const override;
  bool HasNominatedPods() const override;
  // Pods nominated to `node` (for clearing lower-priority nominations).
  std::vector<PodInfoPtr> NominatedPods(std::string_view node) const {
    return NominatedPodsForNode(node);
  }

 private:
  struct Entry;
  using EntryPtr = std::shared_ptr<Entry>;
  struct ActiveLess {
    const SchedulingQueue* q;
    bool operator()(const EntryPtr& a, const EntryPtr& b) const;
  };
  using ActiveSet = std::set<EntryPtr, ActiveLess>;
  struct BackoffLess {
    const SchedulingQueue* q;
    // The error backoffQ orders by expiry alone; backoffQ by the QueueSort within a window.
    bool by_queue_sort = false;
    bool operator()(const EntryPtr& a, const EntryPtr& b) const;
  };
  using BackoffSet = std::set<EntryPtr, BackoffLess>;
  struct Entry {
    QueuedPodInfo info;
    uint64_t seq = 0;
    // Where it is in active_, when it is there: it leaves by this position, not by a lookup
    // of its key, since a QueueSort may order pods differently from when they went in
    // (Coscheduling sorts a group by the time of its last failure).
    std::optional<ActiveSet::iterator> active_at;
    // Likewise in backoff_ or error_backoff_ (`backoff_set`), ordered by the QueueSort too.
    std::optional<BackoffSet::iterator> backoff_at;
    BackoffSet* backoff_set = nullptr;
    // Set when it enters the unschedulable pool; out of line, since most pods never do.
    Boxed<EventInterest> interest;
  };
  // An event received while pods were in flight, for replay when one of them fails.
  struct InFlightEvent {
    uint64_t seq;
    ClusterEvent event;
    EventObject old_object, new_object;
  };
  // by_uid_ holds entries keyed by their own pod's UID (namespace/name without one), so no
  // copy of a 36-character UID is kept per queued pod; lookups take the UID as a string_view.
  struct EntryUidHash {
    using is_transparent = void;
    size_t operator()(std::string_view uid) const;
    size_t operator()(const EntryPtr& e) const;
  };
  struct EntryUidEqual {
    using is_transparent = void;
    bool operator()(const EntryPtr& a, const EntryPtr& b) const;
    bool operator()(const EntryPtr& e, std::string_view uid) const;
    bool operator()(std::string_view uid, const EntryPtr& e) const { return (*this)(e, uid); }
  };

  // Expiry of the pod's backoff, truncated to its ordering window with SetPopFromBackoffQ.
  TimePoint BackoffExpiry(const QueuedPodInfo& info) const;
  TimePoint AlignToWindow(TimePoint t) const;
  bool IsBackingOff(const QueuedPodInfo& info) const;
  // The backoff set `info` belongs in: the error backoffQ when no plugin rejected it.
  BackoffSet& BackoffSetFor(const QueuedPodInfo& info);
  // Takes the first pod of `set` whose backoff is over into activeQ, until none is.
  void FlushBackoffSetLocked(BackoffSet& set);
  void AddToBackoffSetLocked(const EntryPtr& e);
  // Keeps `e` in the unschedulable pool, gated by the plugin of the PreEnqueue status `s`.
  void GateLocked(EntryPtr e, const Status& s, std::string_view event);
  void EraseFromBackoffLocked(Entry& e);
  void MoveToActiveOrBackoffLocked(EntryPtr e, std::string_view event);
  void InsertBackoffLocked(EntryPtr e, std::string_view event);
  void Incoming(std::string_view queue, std::string_view event) const;
  RequeueDecider::Strategy DecideLocked(const Entry& e, const ClusterEvent& event,
                                        const EventObject& old_object,
                                        const EventObject& new_object) const;
  void AddToUnschedulableLocked(EntryPtr e);
  void ForgetInFlightLocked(const std::string& uid);
  void PruneInFlightEventsLocked();
  void DropInFlightSeqLocked(uint64_t seq);
  // Records the pod as in flight from now (Pop, PopGroupMembers).
  void MarkInFlightLocked(const std::string& uid);
  EventInterest InterestLocked(const QueuedPodInfo& info) const;
  void AddToActiveLocked(EntryPtr e, std::string_view event);
  // Removes the pod (by UID) from every sub-queue; returns the entry if found.
  EntryPtr RemoveLocked(const std::string& uid);
  // by_uid_: the queued entry of `uid` (null if none); add or replace `e`; drop `uid`.
  EntryPtr FindLocked(std::string_view uid) const;
  void IndexLocked(const EntryPtr& e);
  void UnindexLocked(std::string_view uid);
  void AddNominatedLocked(PodInfoPtr pod, const std::string& node);
  void DeleteNominatedLocked(const std::string& uid);

  LessFn less_;
  PreEnqueueFn pre_enqueue_;
  const Clock* clock_;
  Duration initial_backoff_, max_backoff_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  ActiveSet active_;
  BackoffSet backoff_;        // rejected by plugins: may be popped early
  BackoffSet error_backoff_;  // failed with an error: waits its backoff out
  bool pop_from_backoff_ = false;
  std::unordered_map<std::string, EntryPtr> unschedulable_;           // incl. gated
  std::unordered_set<EntryPtr, EntryUidHash, EntryUidEqual> by_uid_;  // queued, not in flight
  std::unordered_map<std::string, TimePoint> unschedulable_since_;
  const RequeueDecider* decider_ = nullptr;
  IncomingPodHook incoming_hook_;
  // In-flight pods with the sequence number of the first event they have not seen yet.
  std::unordered_map<std::string, uint64_t> in_flight_;
  // How many in-flight pods have each first-unseen sequence number: the oldest event still
  // needed without a scan of every pod in flight (thousands wait for their binding under load).
  std::map<uint64_t, size_t> in_flight_seqs_;
  std::deque<InFlightEvent> in_flight_events_;
  // In-flight pods Activate() asked for: active again as soon as they return.
  std::unordered_set<std::string> activate_on_return_;
  uint64_t next_event_seq_ = 0;
  uint64_t next_seq_ = 0;
  int64_t scheduling_cycle_ = 0;
  bool closed_ = false;
  bool woken_ = false;

  mutable std::mutex nom_mu_;
  std::map<std::string, std::vector<PodInfoPtr>, std::less<>> nominated_;  // node -> pods
  std::unordered_map<std::string, std::string> nominated_node_of_;         // uid -> node
};

}  // namespace berth
