#include "queue/scheduling_queue.h"

#include <algorithm>
#include <utility>

#include "berth/api/resource_claims.h"

namespace berth {
namespace {

// A pod's identity in the queue: its UID, or namespace/name (built in `scratch`) without one.
std::string_view UidView(const Pod& pod, std::string* scratch) {
  if (!pod.metadata.uid.empty()) return pod.metadata.uid;
  *scratch = pod.Key();
  return *scratch;
}

std::string UidOf(const Pod& pod) {
  std::string scratch;
  return std::string(UidView(pod, &scratch));
}

size_t HashUid(std::string_view uid) { return std::hash<std::string_view>{}(uid); }

// Status-only changes (conditions, nominatedNodeName) do not make a pod schedulable.
bool MeaningfulUpdate(const PodInfo& a, const PodInfo& b) {
  const Pod& x = *a.pod;
  const Pod& y = *b.pod;
  return x.spec.scheduling_gates != y.spec.scheduling_gates ||
         x.metadata.labels != y.metadata.labels || x.spec.node_selector != y.spec.node_selector ||
         x.spec.tolerations.size() != y.spec.tolerations.size() ||
         // The resourceclaim controller recorded a claim it made for the pod.
         (x.raw != y.raw && PodResourceClaimStatusesOf(x) != PodResourceClaimStatusesOf(y)) ||
         !(a.requests.requests == b.requests.requests) ||
         x.spec.affinity.has_value() != y.spec.affinity.has_value();
}

}  // namespace

std::string EventLabel(const ClusterEvent& event) {
  static constexpr std::string_view kResources[kEventResourceCount] = {"AssignedPod",
                                                                       "Node",
                                                                       "PersistentVolume",
                                                                       "PersistentVolumeClaim",
                                                                       "StorageClass",
                                                                       "CSINode",
                                                                       "CSIDriver",
                                                                       "CSIStorageCapacity",
                                                                       "Service",
                                                                       "Namespace",
                                                                       "ReplicationController",
                                                                       "ReplicaSet",
                                                                       "StatefulSet",
                                                                       "PodDisruptionBudget",
                                                                       "PriorityClass",
                                                                       "PodGroup",
                                                                       "SchedulingPodGroup",
                                                                       "UnscheduledPod",
                                                                       "WildCard"};
  const std::string_view resource = kResources[static_cast<int>(event.resource)];
  if (event.resource == EventResource::kWildCard) return std::string(resource);
  std::string label(resource);
  if (event.actions & kAdd) return label + "Add";
  if (event.actions & kDelete) return label + "Delete";
  if (event.resource == EventResource::kNode) {
    if (event.actions & kUpdateNodeAllocatable) return "NodeAllocatableChange";
    if (event.actions & kUpdateNodeLabel) return "NodeLabelChange";
    if (event.actions & kUpdateNodeTaint) return "NodeTaintChange";
    if (event.actions & kUpdateNodeCondition) return "NodeConditionChange";
    if (event.actions & kUpdateNodeAnnotation) return "NodeAnnotationChange";
  }
  if (event.resource == EventResource::kPod) {
    if (event.actions & kUpdatePodLabel) return "PodLabelChange";
    if (event.actions & kUpdatePodScaleDown) return "PodRequestScaledDown";
    if (event.actions & kUpdatePodToleration) return "PodTolerationChange";
  }
  return label + "Update";
}

bool SchedulingQueue::ActiveLess::operator()(const EntryPtr& a, const EntryPtr& b) const {
  if (q->less_(a->info, b->info)) return true;
  if (q->less_(b->info, a->info)) return false;
  return a->seq < b->seq;
}

bool SchedulingQueue::BackoffLess::operator()(const EntryPtr& a, const EntryPtr& b) const {
  TimePoint ea = q->BackoffExpiry(a->info), eb = q->BackoffExpiry(b->info);
  if (ea != eb) return ea < eb;
  if (by_queue_sort) {
    if (q->less_(a->info, b->info)) return true;
    if (q->less_(b->info, a->info)) return false;
  }
  return a->seq < b->seq;
}

SchedulingQueue::SchedulingQueue(LessFn less, PreEnqueueFn pre_enqueue, const Clock* clock,
                                 Duration initial_backoff, Duration max_backoff)
    : less_(std::move(less)),
      pre_enqueue_(std::move(pre_enqueue)),
      clock_(clock),
      initial_backoff_(initial_backoff),
      max_backoff_(max_backoff),
      active_(ActiveLess{this}),
      backoff_(BackoffLess{this}),
      error_backoff_(BackoffLess{this}) {}

void SchedulingQueue::SetPopFromBackoffQ(bool enabled) {
  std::lock_guard lock(mu_);
  pop_from_backoff_ = enabled;
  // Within a window, pods leave backoffQ in the order activeQ would take them.
  backoff_ = BackoffSet(BackoffLess{this, enabled});
}

TimePoint SchedulingQueue::AlignToWindow(TimePoint t) const {
  if (!pop_from_backoff_) return t;
  return t - (t.time_since_epoch() % kBackoffOrderingWindow);
}

void SchedulingQueue::AddToBackoffSetLocked(const EntryPtr& e) {
  BackoffSet& set = BackoffSetFor(e->info);
  Entry* raw = e.get();
  raw->backoff_at = set.insert(e).first;
  raw->backoff_set = &set;
}

void SchedulingQueue::EraseFromBackoffLocked(Entry& e) {
  if (!e.backoff_at) return;
  e.backoff_set->erase(*std::exchange(e.backoff_at, std::nullopt));
  e.backoff_set = nullptr;
}

SchedulingQueue::BackoffSet& SchedulingQueue::BackoffSetFor(const QueuedPodInfo& info) {
  return info.unschedulable_plugins.empty() && info.pending_plugins.empty() ? error_backoff_
                                                                            : backoff_;
}

TimePoint SchedulingQueue::BackoffExpiry(const QueuedPodInfo& info) const {
  if (info.attempts == 0) return info.timestamp;
  Duration d = initial_backoff_;
  for (int i = 1; i < info.attempts; ++i) {
    if (d >= max_backoff_ / 2) {
      d = max_backoff_;
      break;
    }
    d *= 2;
  }
  return AlignToWindow(info.timestamp + std::min(d, max_backoff_));
}

bool SchedulingQueue::IsBackingOff(const QueuedPodInfo& info) const {
  if (!pop_from_backoff_) return BackoffExpiry(info) > clock_->Now();
  // With windows, a pod whose expiry falls in the current window still waits: the window is
  // flushed as a whole once the clock has left it. A pod never tried owes no backoff.
  return info.attempts > 0 && BackoffExpiry(info) >= AlignToWindow(clock_->Now());
}

size_t SchedulingQueue::EntryUidHash::operator()(std::string_view uid) const {
  return HashUid(uid);
}

size_t SchedulingQueue::EntryUidHash::operator()(const EntryPtr& e) const {
  std::string scratch;
  return HashUid(UidView(e->info.pod(), &scratch));
}

bool SchedulingQueue::EntryUidEqual::operator()(const EntryPtr& a, const EntryPtr& b) const {
  std::string scratch;
  return (*this)(a, UidView(b->info.pod(), &scratch));
}

bool SchedulingQueue::EntryUidEqual::operator()(const EntryPtr& e, std::string_view uid) const {
  std::string scratch;
  return UidView(e->info.pod(), &scratch) == uid;
}

SchedulingQueue::EntryPtr SchedulingQueue::FindLocked(std::string_view uid) const {
  auto it = by_uid_.find(uid);
  return it == by_uid_.end() ? nullptr : *it;
}

void SchedulingQueue::IndexLocked(const EntryPtr& e) {
  if (auto it = by_uid_.find(e); it != by_uid_.end()) by_uid_.erase(it);
  by_uid_.insert(e);
}

void SchedulingQueue::UnindexLocked(std::string_view uid) {
  if (auto it = by_uid_.find(uid); it != by_uid_.end()) by_uid_.erase(it);
}

void SchedulingQueue::AddToActiveLocked(EntryPtr e, std::string_view event) {
  // Gated pods stay in the unschedulable pool until PreEnqueue passes.
  Status s = pre_enqueue_ ? pre_enqueue_(e->info.pod()) : Status::Success();
  IndexLocked(e);
  if (!s.IsSuccess()) {
    GateLocked(std::move(e), s, event);
    return;
  }
  e->info.gating_plugin.clear();
  if (e->info.initial_attempt_timestamp == TimePoint{})
    e->info.initial_attempt_timestamp = clock_->Now();
  Entry* raw = e.get();
  raw->active_at = active_.insert(std::move(e)).first;
  Incoming("active", event);
  cv_.notify_one();
}

void SchedulingQueue::GateLocked(EntryPtr e, const Status& s, std::string_view event) {
  const std::string uid = UidOf(e->info.pod());
  e->info.gating_plugin = s.plugin();
  if (decider_) {
    const EventInterest gating = decider_->GatingInterestOf(e->info);
    if (std::any_of(gating.begin(), gating.end(), [](uint32_t a) { return a != 0; })) {
      e->interest = gating;
    } else {
      e->interest.reset();
    }
  }
  unschedulable_[uid] = std::move(e);
  unschedulable_since_[uid] = clock_->Now();
  Incoming("gated", event);
}

void SchedulingQueue::InsertBackoffLocked(EntryPtr e, std::string_view event) {
  if (pop_from_backoff_ && pre_enqueue_) {
    // The pod may be popped from backoffQ without passing through activeQ's door: PreEnqueue
    // runs now instead, and a gated pod waits in the pool.
    Status s = pre_enqueue_(e->info.pod());
    if (!s.IsSuccess()) {
      IndexLocked(e);
      GateLocked(std::move(e), s, event);
      return;
    }
    e->info.gating_plugin.clear();
  }
  AddToBackoffSetLocked(e);
  Incoming("backoff", event);
  // A blocked Pop may take it at once.
  if (pop_from_backoff_ && e->backoff_set == &backoff_) cv_.notify_one();
}

void SchedulingQueue::Incoming(std::string_view queue, std::string_view event) const {
  if (incoming_hook_ && !event.empty()) incoming_hook_(queue, event);
}

std::vector<SchedulingQueue::PluginCount> SchedulingQueue::UnschedulableByPlugin() const {
  std::lock_guard lock(mu_);
  std::map<std::pair<std::string, std::string>, size_t> counts;
  for (const auto& [uid, e] : unschedulable_) {
    const std::string& profile = e->info.pod().spec.scheduler_name;
    if (!e->info.gating_plugin.empty()) {
      ++counts[{e->info.gating_plugin, profile}];
      continue;
    }
    for (const auto& plugin : e->info.unschedulable_plugins) ++counts[{plugin, profile}];
    for (const auto& plugin : e->info.pending_plugins) ++counts[{plugin, profile}];
  }
  std::vector<PluginCount> out;
  for (const auto& [key, n] : counts) out.push_back({key.first, key.second, n});
  return out;
}

void SchedulingQueue::Add(PodInfoPtr pod, std::optional<TimePoint> timestamp) {
  std::lock_guard lock(mu_);
  const std::string uid = UidOf(*pod->pod);
  if (FindLocked(uid) || in_flight_.count(uid)) return;
  auto e = std::make_shared<Entry>();
  e->info.pod_info = pod;
  e->info.timestamp = timestamp.value_or(clock_->Now());
  e->seq = next_seq_++;
  if (!pod->pod->status.nominated_node_name.empty())
    AddNominatedLocked(pod, pod->pod->status.nominated_node_name);
  AddToActiveLocked(std::move(e), "PodAdd");
}

SchedulingQueue::EntryPtr SchedulingQueue::RemoveLocked(const std::string& uid) {
  EntryPtr e = FindLocked(uid);
  if (!e) return nullptr;
  UnindexLocked(uid);
  if (e->active_at) active_.erase(*std::exchange(e->active_at, std::nullopt));
  EraseFromBackoffLocked(*e);
  unschedulable_.erase(uid);
  unschedulable_since_.erase(uid);
  return e;
}

void SchedulingQueue::Update(PodInfoPtr pod) {
  std::lock_guard lock(mu_);
  const std::string uid = UidOf(*pod->pod);
  {
    // Keep the nomination in step with status.nominatedNodeName.
    const auto& nnn = pod->pod->status.nominated_node_name;
    if (nnn.empty()) {
      DeleteNominatedLocked(uid);
    } else {
      AddNominatedLocked(pod, nnn);
    }
  }
  EntryPtr old = FindLocked(uid);
  if (!old) return;  // in flight: its attempt will requeue it
  bool was_unschedulable = unschedulable_.count(uid) > 0;
  bool meaningful = MeaningfulUpdate(*old->info.pod_info, *pod);
  bool in_backoff = old->backoff_at.has_value();
  RemoveLocked(uid);
  auto e = std::make_shared<Entry>(*old);
  e->info.pod_info = std::move(pod);
  if (!was_unschedulable) {
    if (in_backoff) {
      IndexLocked(e);
      AddToBackoffSetLocked(e);  // stays where it was: not an incoming pod
    } else {
      AddToActiveLocked(e, {});
    }
    return;
  }
  if (!meaningful) {
    IndexLocked(e);
    unschedulable_[uid] = e;
    unschedulable_since_[uid] = clock_->Now();
    return;
  }
  MoveToActiveOrBackoffLocked(std::move(e), "UnscheduledPodUpdate");
}

void SchedulingQueue::Delete(const Pod& pod) {
  std::lock_guard lock(mu_);
  const std::string uid = UidOf(pod);
  RemoveLocked(uid);
  DeleteNominatedLocked(uid);
}

std::optional<QueuedPodInfo> SchedulingQueue::Pop(bool block) {
  std::unique_lock lock(mu_);
  while (active_.empty()) {
    // Rather than wait, retry the pod whose backoff ends first (SchedulerPopFromBackoffQ).
    if (pop_from_backoff_ && !backoff_.empty()) break;
    if (closed_ || !block) return std::nullopt;
    if (std::exchange(woken_, false)) return std::nullopt;
    cv_.wait(lock);
  }
  EntryPtr e;
  if (!active_.empty()) {
    e = *active_.begin();
    active_.erase(active_.begin());
    e->active_at.reset();
  } else {
    e = *backoff_.begin();
    EraseFromBackoffLocked(*e);
    if (e->info.initial_attempt_timestamp == TimePoint{})
      e->info.initial_attempt_timestamp = clock_->Now();
    Incoming("active", "PopFromBackoffQ");
  }
  const std::string uid = UidOf(e->info.pod());
  UnindexLocked(uid);
  MarkInFlightLocked(uid);
  ++scheduling_cycle_;
  e->info.attempts++;
  return e->info;
}

void SchedulingQueue::MarkInFlightLocked(const std::string& uid) {
  if (auto [it, inserted] = in_flight_.try_emplace(uid, next_event_seq_); !inserted) {
    DropInFlightSeqLocked(it->second);
    it->second = next_event_seq_;
  }
  ++in_flight_seqs_[next_event_seq_];
}

std::vector<QueuedPodInfo> SchedulingQueue::PopGroupMembers(const Pod& pod) {
  std::vector<QueuedPodInfo> out;
  if (!pod.spec.scheduling_group) return out;
  const std::string& group = *pod.spec.scheduling_group;
  std::lock_guard lock(mu_);
  std::vector<EntryPtr> members;
  for (const EntryPtr& e : by_uid_) {
    const Pod& p = e->info.pod();
    if (p.spec.scheduling_group && *p.spec.scheduling_group == group &&
        p.metadata.namespace_ == pod.metadata.namespace_ && e->info.gating_plugin.empty() &&
        &p != &pod)
      members.push_back(e);
  }
  std::sort(members.begin(), members.end(), [this](const EntryPtr& a, const EntryPtr& b) {
    if (less_(a->info, b->info)) return true;
    if (less_(b->info, a->info)) return false;
    return a->seq < b->seq;
  });
  out.reserve(members.size());
  for (const EntryPtr& e : members) {
    const std::string uid = UidOf(e->info.pod());
    RemoveLocked(uid);
    if (e->info.initial_attempt_timestamp == TimePoint{})
      e->info.initial_attempt_timestamp = clock_->Now();
    MarkInFlightLocked(uid);
    e->info.attempts++;
    out.push_back(e->info);
  }
  return out;
}

void SchedulingQueue::Done(const std::string& uid) {
  std::lock_guard lock(mu_);
  ForgetInFlightLocked(uid);
}

void SchedulingQueue::ForgetInFlightLocked(const std::string& uid) {
  if (auto it = in_flight_.find(uid); it != in_flight_.end()) {
    DropInFlightSeqLocked(it->second);
    in_flight_.erase(it);
  }
  activate_on_return_.erase(uid);
  PruneInFlightEventsLocked();
}

void SchedulingQueue::DropInFlightSeqLocked(uint64_t seq) {
  auto it = in_flight_seqs_.find(seq);
  if (it != in_flight_seqs_.end() && --it->second == 0) in_flight_seqs_.erase(it);
}

void SchedulingQueue::PruneInFlightEventsLocked() {
  // Drop the events no in-flight pod still needs.
  uint64_t oldest_needed = next_event_seq_;
  if (!in_flight_seqs_.empty())
    oldest_needed = std::min(oldest_needed, in_flight_seqs_.begin()->first);
  while (!in_flight_events_.empty() && in_flight_events_.front().seq < oldest_needed)
    in_flight_events_.pop_front();
}

void SchedulingQueue::AddUnschedulableIfNotPresent(QueuedPodInfo pod, int64_t scheduling_cycle) {
  (void)scheduling_cycle;
  std::lock_guard lock(mu_);
  const std::string uid = UidOf(pod.pod());
  uint64_t first_unseen = next_event_seq_;
  bool force_active = false;
  if (auto it = in_flight_.find(uid); it != in_flight_.end()) {
    first_unseen = it->second;
    DropInFlightSeqLocked(it->second);
    in_flight_.erase(it);
    force_active = activate_on_return_.erase(uid) > 0;
  }
  // The events it missed are replayed below, then dropped if no other pod needs them.
  struct Prune {
    SchedulingQueue* q;
    ~Prune() { q->PruneInFlightEventsLocked(); }
  } prune{this};
  if (FindLocked(uid)) return;
  pod.timestamp = clock_->Now();
  auto e = std::make_shared<Entry>();
  e->info = std::move(pod);
  e->seq = next_seq_++;
  IndexLocked(e);
  if (force_active) {
    AddToActiveLocked(e, "ForceActivate");
    return;
  }
  if (!e->info.pending_plugins.empty()) {
    AddToActiveLocked(e, "ScheduleAttemptFailure");
    return;
  }
  if (e->info.unschedulable_plugins.empty()) {  // an error, not a rejection: retry after backoff
    InsertBackoffLocked(e, "ScheduleAttemptFailure");
    return;
  }
  // Replay what happened while the pod was being scheduled: a change it missed may help it.
  e->interest = InterestLocked(e->info);
  RequeueDecider::Strategy strategy = RequeueDecider::Strategy::kSkip;
  for (const auto& ev : in_flight_events_) {
    if (ev.seq < first_unseen) continue;
    strategy = std::max(strategy, DecideLocked(*e, ev.event, ev.old_object, ev.new_object));
    if (strategy == RequeueDecider::Strategy::kImmediately) break;
  }
  if (strategy == RequeueDecider::Strategy::kImmediately) {
    AddToActiveLocked(e, "ScheduleAttemptFailure");
  } else if (strategy == RequeueDecider::Strategy::kAfterBackoff) {
    InsertBackoffLocked(e, "ScheduleAttemptFailure");
  } else {
    e->info.unschedulable_count++;
    AddToUnschedulableLocked(e);
    Incoming("unschedulable", "ScheduleAttemptFailure");
  }
}

void SchedulingQueue::AddToUnschedulableLocked(EntryPtr e) {
  const std::string uid = UidOf(e->info.pod());
  e->interest = InterestLocked(e->info);
  unschedulable_[uid] = e;
  unschedulable_since_[uid] = clock_->Now();
}

EventInterest SchedulingQueue::InterestLocked(const QueuedPodInfo& info) const {
  if (decider_) return decider_->InterestOf(info);
  EventInterest all;
  all.fill(kAllActions);
  return all;
}

RequeueDecider::Strategy SchedulingQueue::DecideLocked(const Entry& e, const ClusterEvent& event,
                                                       const EventObject& old_object,
                                                       const EventObject& new_object) const {
  static const EventInterest kNone{};
  const EventInterest& interest = e.interest ? *e.interest : kNone;
  if (event.resource != EventResource::kWildCard &&
      (interest[static_cast<int>(event.resource)] & event.actions) == 0 &&
      (interest[static_cast<int>(EventResource::kWildCard)] & event.actions) == 0)
    return RequeueDecider::Strategy::kSkip;
  if (!decider_) return RequeueDecider::Strategy::kAfterBackoff;
  return decider_->Decide(e.info, event, old_object, new_object);
}

void SchedulingQueue::MoveToActiveOrBackoffLocked(EntryPtr e, std::string_view event) {
  IndexLocked(e);
  if (IsBackingOff(e->info)) {
    InsertBackoffLocked(std::move(e), event);
  } else {
    AddToActiveLocked(std::move(e), event);
  }
}

void SchedulingQueue::Activate(const Pod& pod) {
  std::lock_guard lock(mu_);
  const std::string uid = UidOf(pod);
  if (in_flight_.count(uid)) {
    activate_on_return_.insert(uid);
    return;
  }
  EntryPtr queued = FindLocked(uid);
  if (!queued || queued->active_at) return;
  EntryPtr e = RemoveLocked(uid);
  AddToActiveLocked(std::move(e), "ForceActivate");  // gated pods stay gated
}

void SchedulingQueue::MoveAllToActiveOrBackoffQueue() {
  OnClusterEvent(ClusterEvent{EventResource::kWildCard, kAllActions}, {}, {});
}

void SchedulingQueue::OnClusterEvent(const ClusterEvent& event, const EventObject& old_object,
                                     const EventObject& new_object, std::string_view except_uid) {
  std::lock_guard lock(mu_);
  const std::string label = incoming_hook_ ? EventLabel(event) : std::string();
  if (!in_flight_.empty())
    in_flight_events_.push_back({next_event_seq_, event, old_object, new_object});
  ++next_event_seq_;
  std::vector<std::pair<EntryPtr, RequeueDecider::Strategy>> moving;
  for (auto& [uid, e] : unschedulable_) {
    if (uid == except_uid) continue;
    if (!e->info.gating_plugin.empty()) {
      // A gated pod moves only on an event its gating plugin registered: it then goes through
      // PreEnqueue again (and back to the pool if it is still gated).
      if (event.resource != EventResource::kWildCard && e->interest &&
          ((*e->interest)[static_cast<int>(event.resource)] & event.actions) != 0 &&
          (!decider_ || decider_->DecideGated(e->info, event, old_object, new_object) !=
                            RequeueDecider::Strategy::kSkip))
        moving.emplace_back(e, RequeueDecider::Strategy::kImmediately);
      continue;
    }
    // Interest alone decides a wildcard event's fate; the matrix check is cheap for the rest.
    const RequeueDecider::Strategy s = event.resource == EventResource::kWildCard
                                           ? RequeueDecider::Strategy::kAfterBackoff
                                           : DecideLocked(*e, event, old_object, new_object);
    if (s != RequeueDecider::Strategy::kSkip) moving.emplace_back(e, s);
  }
  // Deterministic order for reproducible simulation.
  std::sort(moving.begin(), moving.end(),
            [](const auto& a, const auto& b) { return a.first->seq < b.first->seq; });
  for (auto& [e, strategy] : moving) {
    const std::string uid = UidOf(e->info.pod());
    unschedulable_.erase(uid);
    unschedulable_since_.erase(uid);
    if (strategy == RequeueDecider::Strategy::kImmediately) {
      AddToActiveLocked(e, label);
    } else {
      MoveToActiveOrBackoffLocked(e, label);
    }
  }
}

void SchedulingQueue::OnOtherEvent(
    std::string_view label,
    const std::function<RequeueDecider::Strategy(const QueuedPodInfo&)>& decide) {
  std::lock_guard lock(mu_);
  if (!in_flight_.empty())
    in_flight_events_.push_back(
        {next_event_seq_, ClusterEvent{EventResource::kWildCard, kAllActions}, {}, {}});
  ++next_event_seq_;
  std::vector<std::pair<EntryPtr, RequeueDecider::Strategy>> moving;
  for (auto& [uid, e] : unschedulable_) {
    const RequeueDecider::Strategy s = decide(e->info);
    if (s != RequeueDecider::Strategy::kSkip) moving.emplace_back(e, s);
  }
  std::sort(moving.begin(), moving.end(),
            [](const auto& a, const auto& b) { return a.first->seq < b.first->seq; });
  const std::string event_label = incoming_hook_ ? std::string(label) : std::string();
  for (auto& [e, strategy] : moving) {
    const std::string uid = UidOf(e->info.pod());
    unschedulable_.erase(uid);
    unschedulable_since_.erase(uid);
    if (strategy == RequeueDecider::Strategy::kImmediately) {
      AddToActiveLocked(e, event_label);
    } else {
      MoveToActiveOrBackoffLocked(e, event_label);
    }
  }
}

void SchedulingQueue::FlushBackoffQCompleted() {
  std::lock_guard lock(mu_);
  FlushBackoffSetLocked(backoff_);
  FlushBackoffSetLocked(error_backoff_);
}

void SchedulingQueue::FlushBackoffSetLocked(BackoffSet& set) {
  while (!set.empty()) {
    EntryPtr e = *set.begin();
    if (IsBackingOff(e->info)) break;
    EraseFromBackoffLocked(*e);
    AddToActiveLocked(e, "BackoffComplete");
  }
}

void SchedulingQueue::FlushUnschedulableLeftover(Duration max_wait) {
  std::lock_guard lock(mu_);
  TimePoint now = clock_->Now();
  std::vector<EntryPtr> moving;
  for (auto& [uid, since] : unschedulable_since_) {
    auto& e = unschedulable_[uid];
    if (e->info.gating_plugin.empty() && now - since > max_wait) moving.push_back(e);
  }
  for (auto& e : moving) {
    const std::string uid = UidOf(e->info.pod());
    unschedulable_.erase(uid);
    unschedulable_since_.erase(uid);
    MoveToActiveOrBackoffLocked(e, "UnschedulableTimeout");
  }
  // Like any move, it reaches the pods being scheduled right now (kube-scheduler's
  // UnschedulableTimeout event is a wildcard).
  if (!moving.empty() && !in_flight_.empty())
    in_flight_events_.push_back({next_event_seq_++, ClusterEvent{}, {}, {}});
}

std::optional<TimePoint> SchedulingQueue::NextBackoffExpiry() const {
  std::lock_guard lock(mu_);
  std::optional<TimePoint> next;
  for (const BackoffSet* set : {&backoff_, &error_backoff_}) {
    if (set->empty()) continue;
    TimePoint t = BackoffExpiry((*set->begin())->info);
    // A window's pods complete when the next window starts.
    if (pop_from_backoff_ && (*set->begin())->info.attempts > 0) t += kBackoffOrderingWindow;
    if (!next || t < *next) next = t;
  }
  return next;
}

int64_t SchedulingQueue::scheduling_cycle() const {
  std::lock_guard lock(mu_);
  return scheduling_cycle_;
}

size_t SchedulingQueue::in_flight_events() const {
  std::lock_guard lock(mu_);
  return in_flight_events_.size();
}

void SchedulingQueue::SetRequeueDecider(const RequeueDecider* decider) {
  std::lock_guard lock(mu_);
  decider_ = decider;
}

bool SchedulingQueue::closed() const {
  std::lock_guard lock(mu_);
  return closed_;
}

void SchedulingQueue::Wake() {
  std::lock_guard lock(mu_);
  woken_ = true;
  cv_.notify_all();
}

void SchedulingQueue::Close() {
  std::lock_guard lock(mu_);
  closed_ = true;
  cv_.notify_all();
}

SchedulingQueue::Counts SchedulingQueue::counts() const {
  std::lock_guard lock(mu_);
  Counts c;
  c.active = active_.size();
  c.backoff = backoff_.size() + error_backoff_.size();
  for (const auto& [uid, e] : unschedulable_) {
    if (e->info.gating_plugin.empty()) {
      ++c.unschedulable;
    } else {
      ++c.gated;
    }
  }
  return c;
}

// ---------------------------------------------------------------- nominator

void SchedulingQueue::AddNominatedLocked(PodInfoPtr pod, const std::string& node) {
  std::lock_guard lock(nom_mu_);
  const std::string uid = UidOf(*pod->pod);
  auto it = nominated_node_of_.find(uid);
  if (it != nominated_node_of_.end()) {
    auto& v = nominated_[it->second];
    std::erase_if(v, [&](const PodInfoPtr& p) { return UidOf(*p->pod) == uid; });
    if (v.empty()) nominated_.erase(it->second);
  }
  nominated_node_of_[uid] = node;
  nominated_[node].push_back(std::move(pod));
}

void SchedulingQueue::DeleteNominatedLocked(const std::string& uid) {
  std::lock_guard lock(nom_mu_);
  auto it = nominated_node_of_.find(uid);
  if (it == nominated_node_of_.end()) return;
  auto nit = nominated_.find(it->second);
  if (nit != nominated_.end()) {
    std::erase_if(nit->second, [&](const PodInfoPtr& p) { return UidOf(*p->pod) == uid; });
    if (nit->second.empty()) nominated_.erase(nit);
  }
  nominated_node_of_.erase(it);
}

void SchedulingQueue::AddNominatedPod(PodInfoPtr pod, const std::string& node) {
  AddNominatedLocked(std::move(pod), node);
}

void SchedulingQueue::DeleteNominatedPodIfExists(const Pod& pod) {
  DeleteNominatedLocked(UidOf(pod));
}

bool SchedulingQueue::HasNominatedPods() const {
  std::lock_guard lock(nom_mu_);
  return !nominated_.empty();
}

std::vector<PodInfoPtr> SchedulingQueue::NominatedPodsForNode(std::string_view node) const {
  std::lock_guard lock(nom_mu_);
  auto it = nominated_.find(node);
  return it == nominated_.end() ? std::vector<PodInfoPtr>{} : it->second;
}

}  // namespace berth
