#include "scheduler/requeue_policy.h"

#include <algorithm>
#include <span>

#include "api/declared_features.h"
#include "berth/api/resources.h"

namespace berth {
namespace {

bool SameTaints(const Node& a, const Node& b) {
  if (a.spec.unschedulable != b.spec.unschedulable) return false;
  if (a.spec.taints.size() != b.spec.taints.size()) return false;
  for (size_t i = 0; i < a.spec.taints.size(); ++i) {
    const Taint& x = a.spec.taints[i];
    const Taint& y = b.spec.taints[i];
    if (x.key != y.key || x.value != y.value || x.effect != y.effect) return false;
  }
  return true;
}

bool SameResources(const ResourceList& a, const ResourceList& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first || ia->second.MilliValue() != ib->second.MilliValue()) return false;
  }
  return true;
}

bool SameTolerations(std::span<const Toleration> a, std::span<const Toleration> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].op != b[i].op || a[i].value != b[i].value ||
        a[i].effect != b[i].effect)
      return false;
  }
  return true;
}

void AddInterest(EventInterest& interest, const ClusterEvent& event) {
  if (event.resource == EventResource::kWildCard) {
    for (auto& actions : interest) actions |= event.actions;
  } else {
    interest[static_cast<int>(event.resource)] |= event.actions;
  }
}

}  // namespace

uint32_t NodeUpdateActions(const Node& old_node, const Node& new_node) {
  uint32_t actions = 0;
  if (!SameResources(old_node.status.allocatable, new_node.status.allocatable))
    actions |= kUpdateNodeAllocatable;
  if (old_node.metadata.labels != new_node.metadata.labels) actions |= kUpdateNodeLabel;
  if (!SameTaints(old_node, new_node)) actions |= kUpdateNodeTaint;
  if (old_node.metadata.annotations != new_node.metadata.annotations)
    actions |= kUpdateNodeAnnotation;
  // Upstream's UpdateNodeDeclaredFeature has no bit of its own in Berth's SDK: a change of
  // status.declaredFeatures is a node update "without finer bits".
  if (!declared_features::SameDeclaredFeatures(old_node, new_node)) actions |= kUpdateOther;
  return actions;
}

uint32_t AssignedPodUpdateActions(const Pod& old_pod, const Pod& new_pod) {
  uint32_t actions = 0;
  if (old_pod.metadata.labels != new_pod.metadata.labels) actions |= kUpdatePodLabel;
  if (!SameTolerations(old_pod.spec.tolerations, new_pod.spec.tolerations))
    actions |= kUpdatePodToleration;
  // A request that went down frees room on the node (in-place resize).
  const Resource before = ComputePodRequests(old_pod).requests;
  const Resource after = ComputePodRequests(new_pod).requests;
  if (after.milli_cpu < before.milli_cpu || after.memory < before.memory ||
      after.ephemeral_storage < before.ephemeral_storage)
    actions |= kUpdatePodScaleDown;
  return actions == 0 ? kUpdateOther : actions;
}

RequeuePolicy::RequeuePolicy(const std::vector<std::unique_ptr<Framework>>& profiles,
                             SchedulerMetricsSink* metrics, const Clock* clock)
    : metrics_(clock ? metrics : nullptr), clock_(clock) {
  for (const auto& fw : profiles) {
    Profile& p = profiles_[fw->profile_name()];
    for (const auto& reg : fw->event_registrations()) {
      p.by_plugin[reg.plugin] = &reg.events;
      for (const auto& e : reg.events) AddInterest(any_, e.event);
      p.dra_by_plugin[reg.plugin] = &reg.dra_events;
      for (const auto& e : reg.dra_events)
        any_dra_[static_cast<int>(e.event.resource)] |= e.event.actions;
      if (reg.volume_attachment_delete_hint) {
        p.volume_attachment_by_plugin[reg.plugin] = &reg.volume_attachment_delete_hint;
        any_volume_attachment_ = true;
      }
    }
  }
}

const RequeuePolicy::Profile* RequeuePolicy::ProfileOf(const Pod& pod) const {
  auto it = profiles_.find(pod.spec.scheduler_name);
  return it == profiles_.end() ? nullptr : &it->second;
}

bool RequeuePolicy::AnyInterest(const ClusterEvent& event) const {
  if (event.resource == EventResource::kWildCard) return true;
  return (any_[static_cast<int>(event.resource)] & event.actions) != 0 ||
         (any_[static_cast<int>(EventResource::kWildCard)] & event.actions) != 0;
}

EventInterest RequeuePolicy::InterestOf(const QueuedPodInfo& pod) const {
  EventInterest interest{};
  const Profile* profile = ProfileOf(pod.pod());
  auto add_plugin = [&](const std::string& name) {
    auto it = profile ? profile->by_plugin.find(name) : decltype(profile->by_plugin.end()){};
    if (!profile || it == profile->by_plugin.end()) {
      interest.fill(kAllActions);
      return;
    }
    for (const auto& e : *it->second) AddInterest(interest, e.event);
  };
  if (pod.unschedulable_plugins.empty() && pod.pending_plugins.empty()) interest.fill(kAllActions);
  for (const auto& name : pod.unschedulable_plugins) add_plugin(name);
  for (const auto& name : pod.pending_plugins) add_plugin(name);
  return interest;
}

EventInterest RequeuePolicy::GatingInterestOf(const QueuedPodInfo& pod) const {
  EventInterest interest{};
  const Profile* profile = ProfileOf(pod.pod());
  if (!profile || pod.gating_plugin.empty()) return interest;
  auto it = profile->by_plugin.find(pod.gating_plugin);
  if (it == profile->by_plugin.end()) return interest;
  for (const auto& e : *it->second)
    if (e.event.resource != EventResource::kWildCard) AddInterest(interest, e.event);
  return interest;
}

namespace {

// Whether a gated pod's plugin lets it through PreEnqueue again on `event`: one of its
// registrations covering the event has no hint, or a hint that says kQueue, fails or throws (an
// error queues).
template <class Registrations, class Event, class Object>
bool AnyHintQueues(const Registrations& registrations, const Event& event, const Pod& pod,
                   const Object& old_object, const Object& new_object) {
  for (const auto& reg : registrations) {
    if (!reg.event.Covers(event)) continue;
    if (!reg.hint) return true;
    try {
      Result<QueueingHint> h = reg.hint(pod, old_object, new_object);
      if (!h.ok() || *h == QueueingHint::kQueue) return true;
    } catch (...) {
      return true;
    }
  }
  return false;
}

using ByPlugin = std::unordered_map<std::string, const std::vector<ClusterEventWithHint>*>;

// The strategy a queued pod's rejecting plugins ask for on an event that only some plugins
// register by a kind of their own (DRA objects, VolumeAttachments): `queues(name)` says whether
// plugin `name`'s own registration asks to queue. A plugin with a wildcard registration always
// does; one the profile does not know (an extender) queues the pod after backoff. A pending
// plugin's interest queues at once, an unschedulable one's after backoff. `by_plugin` is null
// for a pod of no profile.
template <class Queues>
RequeueDecider::Strategy ConsultRejecting(const QueuedPodInfo& pod, const ByPlugin* by_plugin,
                                          Queues queues) {
  using Strategy = RequeueDecider::Strategy;
  if (pod.unschedulable_plugins.empty() && pod.pending_plugins.empty())
    return Strategy::kAfterBackoff;
  if (by_plugin == nullptr) return Strategy::kAfterBackoff;
  Strategy strategy = Strategy::kSkip;
  auto consult = [&](const std::string& name, bool pending) {
    const Strategy on_queue = pending ? Strategy::kImmediately : Strategy::kAfterBackoff;
    auto it = by_plugin->find(name);
    if (it == by_plugin->end()) {
      strategy = std::max(strategy, Strategy::kAfterBackoff);
      return;
    }
    const bool every_event = std::any_of(
        it->second->begin(), it->second->end(),
        [](const ClusterEventWithHint& r) { return r.event.resource == EventResource::kWildCard; });
    if (every_event || queues(name)) strategy = std::max(strategy, on_queue);
  };
  for (const auto& name : pod.pending_plugins) consult(name, true);
  for (const auto& name : pod.unschedulable_plugins) consult(name, false);
  return strategy;
}

}  // namespace

RequeueDecider::Strategy RequeuePolicy::DecideGated(const QueuedPodInfo& pod,
                                                    const ClusterEvent& event,
                                                    const EventObject& old_object,
                                                    const EventObject& new_object) const {
  const Profile* profile = ProfileOf(pod.pod());
  if (!profile) return Strategy::kImmediately;
  auto it = profile->by_plugin.find(pod.gating_plugin);
  if (it == profile->by_plugin.end()) return Strategy::kImmediately;
  return AnyHintQueues(*it->second, event, pod.pod(), old_object, new_object)
             ? Strategy::kImmediately
             : Strategy::kSkip;
}

RequeueDecider::Strategy RequeuePolicy::Decide(const QueuedPodInfo& pod, const ClusterEvent& event,
                                               const EventObject& old_object,
                                               const EventObject& new_object) const {
  if (event.resource == EventResource::kWildCard) return Strategy::kAfterBackoff;
  if (pod.unschedulable_plugins.empty() && pod.pending_plugins.empty())
    return Strategy::kAfterBackoff;
  const Profile* profile = ProfileOf(pod.pod());
  if (!profile) return Strategy::kAfterBackoff;

  // kQueue from a plugin that left the pod pending retries it at once; from one that rejected
  // it, after its backoff.
  Strategy strategy = Strategy::kSkip;
  std::string event_label;  // built at the first timed hint
  auto consult = [&](const std::string& name, bool pending) {
    auto it = profile->by_plugin.find(name);
    if (it == profile->by_plugin.end()) {
      strategy = std::max(strategy, Strategy::kAfterBackoff);
      return;
    }
    for (const auto& reg : *it->second) {
      if (!reg.event.Covers(event)) continue;
      bool queue = true;
      if (reg.hint) {
        const TimePoint start = metrics_ ? clock_->Now() : TimePoint{};
        bool failed = false;
        try {
          Result<QueueingHint> h = reg.hint(pod.pod(), old_object, new_object);
          failed = !h.ok();
          queue = failed || *h == QueueingHint::kQueue;
        } catch (...) {
          failed = queue = true;  // a throwing hint is an error, and an error queues
        }
        if (metrics_) {
          if (event_label.empty()) event_label = EventLabel(event);
          metrics_->QueueingHint(name, event_label,
                                 failed  ? "Error"
                                 : queue ? "Queue"
                                         : "QueueSkip",
                                 clock_->Now() - start);
        }
      }
      if (queue) {
        strategy = std::max(strategy, pending ? Strategy::kImmediately : Strategy::kAfterBackoff);
        return;
      }
    }
  };
  for (const auto& name : pod.pending_plugins) {
    consult(name, true);
    if (strategy == Strategy::kImmediately) return strategy;
  }
  for (const auto& name : pod.unschedulable_plugins) {
    consult(name, false);
    if (strategy != Strategy::kSkip) return strategy;
  }
  return strategy;
}

bool RequeuePolicy::AnyDraInterest(const DraClusterEvent& event) const {
  return (any_dra_[static_cast<int>(event.resource)] & event.actions) != 0 ||
         any_[static_cast<int>(EventResource::kWildCard)] != 0;
}

RequeueDecider::Strategy RequeuePolicy::DecideDra(const QueuedPodInfo& pod,
                                                  const DraClusterEvent& event,
                                                  const DraEventObject& old_object,
                                                  const DraEventObject& new_object) const {
  const Profile* profile = ProfileOf(pod.pod());
  if (!pod.gating_plugin.empty()) {
    // Only what the gating plugin registered lets a gated pod through PreEnqueue again.
    if (!profile) return Strategy::kSkip;
    auto dra = profile->dra_by_plugin.find(pod.gating_plugin);
    if (dra == profile->dra_by_plugin.end()) return Strategy::kSkip;
    return AnyHintQueues(*dra->second, event, pod.pod(), old_object, new_object)
               ? Strategy::kImmediately
               : Strategy::kSkip;
  }
  auto dra_queues = [&](const std::string& name) {
    auto dra = profile->dra_by_plugin.find(name);
    return dra != profile->dra_by_plugin.end() &&
           AnyHintQueues(*dra->second, event, pod.pod(), old_object, new_object);
  };
  return ConsultRejecting(pod, profile ? &profile->by_plugin : nullptr, dra_queues);
}

bool RequeuePolicy::AnyVolumeAttachmentInterest() const {
  return any_volume_attachment_ || any_[static_cast<int>(EventResource::kWildCard)] != 0;
}

RequeueDecider::Strategy RequeuePolicy::DecideVolumeAttachmentDelete(
    const QueuedPodInfo& pod, const VolumeAttachmentInfo& deleted) const {
  const Profile* profile = ProfileOf(pod.pod());
  // Whether plugin `name`'s hint says the deletion may help (a throwing hint does).
  auto hint_queues = [&](const std::string& name) {
    auto it = profile->volume_attachment_by_plugin.find(name);
    if (it == profile->volume_attachment_by_plugin.end()) return false;
    try {
      return (*it->second)(pod.pod(), deleted) == QueueingHint::kQueue;
    } catch (...) {
      return true;
    }
  };
  if (!pod.gating_plugin.empty())
    return profile && hint_queues(pod.gating_plugin) ? Strategy::kImmediately : Strategy::kSkip;
  return ConsultRejecting(pod, profile ? &profile->by_plugin : nullptr, hint_queues);
}

}  // namespace berth
