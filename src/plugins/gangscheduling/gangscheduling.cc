#include "plugins/gangscheduling/gangscheduling.h"

#include <fmt/format.h>

#include "framework/group_member_lister.h"

namespace berth {

namespace {

std::string KeyOf(const Pod& pod) {
  return pod.metadata.namespace_ + "/" + *pod.spec.scheduling_group;
}

bool SameGroup(const Pod& a, const Pod& b) {
  return a.spec.scheduling_group && b.spec.scheduling_group &&
         *a.spec.scheduling_group == *b.spec.scheduling_group &&
         a.metadata.namespace_ == b.metadata.namespace_;
}

}  // namespace

GangScheduling::GangScheduling(Handle& handle) : handle_(handle), listers_(handle.listers()) {}

std::vector<Ptr<Pod>> GangScheduling::Members(const std::string& ns,
                                              const std::string& group) const {
  return ListSchedulingGroupMembers(listers_, ns, group);
}

// Runs with the queue locked: reads the listers only (they never wait for the queue).
Status GangScheduling::PreEnqueue(const Pod& pod) const {
  if (!pod.spec.scheduling_group) return Status::Success();
  const std::string& name = *pod.spec.scheduling_group;
  Ptr<SchedulingPodGroup> group = listers_.GetSchedulingPodGroup(pod.metadata.namespace_, name);
  if (group == nullptr) {
    return Status::Unresolvable(
        fmt::format("waiting for pod's pod group \"{}\" to appear in scheduling queue", name));
  }
  if (!group->gang) return Status::Success();
  if (static_cast<int64_t>(Members(pod.metadata.namespace_, name).size()) < group->min_count) {
    return Status::Unresolvable(
        "waiting for minCount pods from a gang to appear in scheduling queue");
  }
  return Status::Success();
}

Status GangScheduling::Reserve(CycleState&, const PodInfo& pod, const std::string&) {
  if (!pod->spec.scheduling_group) return Status::Success();
  std::lock_guard lock(mu_);
  reserved_[KeyOf(*pod)].insert(pod->metadata.name);
  return Status::Success();
}

void GangScheduling::Unreserve(CycleState&, const PodInfo& pod, const std::string&) {
  if (!pod->spec.scheduling_group) return;
  std::lock_guard lock(mu_);
  auto it = reserved_.find(KeyOf(*pod));
  if (it == reserved_.end()) return;
  it->second.erase(pod->metadata.name);
  if (it->second.empty()) reserved_.erase(it);
}

int GangScheduling::ScheduledCount(const std::string& key) const {
  const size_t slash = key.find('/');
  const std::string ns = key.substr(0, slash), name = key.substr(slash + 1);
  std::set<std::string> reserved;
  {
    std::lock_guard lock(mu_);
    if (auto it = reserved_.find(key); it != reserved_.end()) reserved = it->second;
  }
  int n = 0;
  for (const auto& p : Members(ns, name))
    n += !p->spec.node_name.empty() || reserved.count(p->metadata.name) ? 1 : 0;
  return n;
}

PermitDecision GangScheduling::Permit(CycleState&, const PodInfo& pod_info, const std::string&) {
  const Pod& pod = *pod_info.pod;
  if (!pod.spec.scheduling_group) return {Status::Success(), {}};
  const std::string& name = *pod.spec.scheduling_group;
  Ptr<SchedulingPodGroup> group = listers_.GetSchedulingPodGroup(pod.metadata.namespace_, name);
  if (group == nullptr) {
    return {Status::Error(fmt::format("failed to get podGroup {}/{}: not found",
                                      pod.metadata.namespace_, name)),
            {}};
  }
  if (!group->gang) return {Status::Success(), {}};
  if (ScheduledCount(KeyOf(pod)) < group->min_count) {
    // Members that wait in the pool for this one to be scheduled may go now.
    for (const auto& m : Members(pod.metadata.namespace_, name))
      if (m->spec.node_name.empty() && m->metadata.name != pod.metadata.name) handle_.Activate(*m);
    return {Status(Code::kWait, "waiting for minCount pods from a gang to be scheduled"),
            kPermitTimeout};
  }
  handle_.IterateOverWaitingPods([&](WaitingPod& w) {
    if (SameGroup(w.pod(), pod)) w.Allow(Name());
  });
  return {Status::Success(), {}};
}

std::vector<ClusterEventWithHint> GangScheduling::EventsToRegister() const {
  // A member added (pending or bound) may complete a gang; a PodGroup added, or its minCount
  // lowered, may admit its members. Each only for the pods of that group.
  QueueingHintFn pod_added = [](const Pod& pod, const EventObject&,
                                const EventObject& added) -> Result<QueueingHint> {
    const Pod* p = ObjectAs<Pod>(added);
    return p && SameGroup(pod, *p) ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
  };
  QueueingHintFn group_changed = [](const Pod& pod, const EventObject& old_object,
                                    const EventObject& new_object) -> Result<QueueingHint> {
    const SchedulingPodGroup* g = ObjectAs<SchedulingPodGroup>(new_object);
    if (!g || !pod.spec.scheduling_group || *pod.spec.scheduling_group != g->metadata.name ||
        pod.metadata.namespace_ != g->metadata.namespace_)
      return QueueingHint::kQueueSkip;
    const SchedulingPodGroup* old = ObjectAs<SchedulingPodGroup>(old_object);
    if (old && old->gang && g->gang && g->min_count >= old->min_count)
      return QueueingHint::kQueueSkip;
    return QueueingHint::kQueue;
  };
  return {{{EventResource::kUnscheduledPod, kAdd}, pod_added},
          {{EventResource::kPod, kAdd}, pod_added},
          {{EventResource::kSchedulingPodGroup, kAdd | kUpdateOther}, group_changed}};
}

PluginRegistration GangSchedulingRegistration() {
  return MakeRegistration(kGangSchedulingName, FactoryOf<GangScheduling>());
}

}  // namespace berth
