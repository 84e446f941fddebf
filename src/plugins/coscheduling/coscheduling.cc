#include "plugins/coscheduling/coscheduling.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>

#include "framework/group_member_lister.h"

namespace berth {

namespace {

const std::string* GroupLabel(const Pod& pod) {
  auto it = pod.metadata.labels.find(kPodGroupLabel);
  return it == pod.metadata.labels.end() || it->second.empty() ? nullptr : &it->second;
}

TimePoint FromUnix(UnixTime t) {
  return TimePoint{std::chrono::duration_cast<Duration>(std::chrono::seconds(t))};
}

// Whether a dated entry of `map` is still in force at `now`; expired entries are dropped.
bool InForce(std::map<std::string, TimePoint, std::less<>>& map, const std::string& key,
             TimePoint now) {
  auto it = map.find(key);
  if (it == map.end()) return false;
  if (it->second > now) return true;
  map.erase(it);
  return false;
}

// What is left of a node for a group: allocatable minus the requests of the pods on it that
// are not the group's own (the group's placed members count as free for it).
Resource FreeFor(const NodeInfo& node, const std::string& ns, const std::string& group) {
  Resource used = node.requested();
  int64_t pods = static_cast<int64_t>(node.pods().size());
  for (const PodInfoPtr& p : node.pods()) {
    const std::string* g = GroupLabel(*p->pod);
    if (g && *g == group && p->pod->metadata.namespace_ == ns) {
      used.Subtract(p->requests.requests);
      --pods;
    }
  }
  Resource free = node.allocatable();
  free.Subtract(used);
  free.allowed_pod_number = node.allocatable().allowed_pod_number - pods;
  return free;
}

std::string FormatGap(const Resource& gap) {
  std::vector<std::string> parts;
  if (gap.milli_cpu > 0) parts.push_back(fmt::format("cpu: {}m", gap.milli_cpu));
  if (gap.memory > 0) parts.push_back(fmt::format("memory: {}", gap.memory));
  if (gap.ephemeral_storage > 0)
    parts.push_back(fmt::format("ephemeral-storage: {}", gap.ephemeral_storage));
  if (gap.allowed_pod_number > 0) parts.push_back(fmt::format("pods: {}", gap.allowed_pod_number));
  for (const auto& [name, v] : gap.scalar)
    if (v > 0) parts.push_back(fmt::format("{}: {}", name, v));
  return fmt::format("resource gap: {}", fmt::join(parts, ", "));
}

}  // namespace

Coscheduling::Coscheduling(Handle& handle, const CoschedulingArgs& args)
    : handle_(handle), listers_(handle.listers()), clock_(handle.clock()), args_(args) {}

Ptr<PodGroup> Coscheduling::GroupOf(const Pod& pod, std::string* key) const {
  const std::string* name = GroupLabel(pod);
  if (name == nullptr) return nullptr;
  if (key) *key = pod.metadata.namespace_ + "/" + *name;
  return listers_.GetPodGroup(pod.metadata.namespace_, *name);
}

std::vector<Ptr<Pod>> Coscheduling::Members(const Pod& pod) const {
  const std::string* name = GroupLabel(pod);
  if (name == nullptr) return {};
  return ListLabeledGroupMembers(listers_, pod.metadata.namespace_, *name);
}

// Reads the listers and the plugin's own map under its lock, never the Handle: QueueSort runs
// with the queue locked, and the listers' reads do not wait for the queue.
bool Coscheduling::Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const {
  const int32_t pa = a.pod().Priority(), pb = b.pod().Priority();
  if (pa != pb) return pa > pb;
  auto sort_time = [&](const QueuedPodInfo& q) {
    std::string key;
    const std::string* name = GroupLabel(q.pod());
    if (name == nullptr) return q.initial_attempt_timestamp;
    key = q.pod().metadata.namespace_ + "/" + *name;
    {
      std::lock_guard lock(mu_);
      if (auto it = last_failed_.find(key); it != last_failed_.end()) return it->second;
    }
    Ptr<PodGroup> group = listers_.GetPodGroup(q.pod().metadata.namespace_, *name);
    return group ? FromUnix(group->metadata.creation_timestamp) : q.initial_attempt_timestamp;
  };
  const TimePoint ta = sort_time(a), tb = sort_time(b);
  if (ta == tb) {
    const Pod &x = a.pod(), &y = b.pod();
    if (x.metadata.namespace_ != y.metadata.namespace_)
      return x.metadata.namespace_ < y.metadata.namespace_;
    return x.metadata.name < y.metadata.name;
  }
  return ta < tb;
}

Status Coscheduling::PreFilter(CycleState&, const PodInfo& pod_info,
                               std::span<const NodeInfo* const> nodes, PreFilterResult*) {
  const Pod& pod = *pod_info.pod;
  std::string key;
  Ptr<PodGroup> group = GroupOf(pod, &key);
  if (group == nullptr) return Status::Success();
  {
    std::lock_guard lock(mu_);
    if (InForce(backed_off_until_, key, clock_.Now()))
      return Status::Unresolvable(fmt::format("podGroup {} failed recently", key));
  }
  const std::vector<Ptr<Pod>> members = Members(pod);
  int64_t gap = group->spec.min_member - static_cast<int64_t>(members.size());
  if (gap > 0) {
    return Status::Unresolvable(
        fmt::format("pre-filter pod {} cannot find enough sibling pods, current pods number: {}, "
                    "minMember of group: {}",
                    pod.metadata.name, members.size(), group->spec.min_member));
  }
  // A gated member cannot be scheduled yet: it counts as missing.
  for (const auto& m : members) {
    if (!m->spec.scheduling_gates.empty() && ++gap > 0) {
      return Status::Unresolvable(
          fmt::format("pre-filter pod {} cannot proceed due to gated pods in the same PodGroup",
                      pod.metadata.name));
    }
  }
  if (!group->spec.min_resources) return Status::Success();
  {
    std::lock_guard lock(mu_);
    if (InForce(resources_ok_until_, key, clock_.Now())) return Status::Success();
  }
  std::string why = ResourceGap(*group, key, nodes);
  if (!why.empty()) return Status::Unresolvable(std::move(why));
  std::lock_guard lock(mu_);
  resources_ok_until_[key] = clock_.Now() + std::chrono::seconds(args_.permit_waiting_time_seconds);
  return Status::Success();
}

std::string Coscheduling::ResourceGap(const PodGroup& group, const std::string& key,
                                      std::span<const NodeInfo* const> nodes) const {
  Resource want = Resource::FromList(*group.spec.min_resources);
  want.allowed_pod_number = group.spec.min_member;
  const std::string ns = group.metadata.namespace_, name = group.metadata.name;
  (void)key;
  auto satisfied = [&] {
    bool done = want.milli_cpu <= 0 && want.memory <= 0 && want.ephemeral_storage <= 0 &&
                want.allowed_pod_number <= 0;
    for (const auto& [n, v] : want.scalar) done = done && v <= 0;
    return done;
  };
  for (const NodeInfo* node : nodes) {
    if (node == nullptr || node->node() == nullptr) continue;
    const Resource free = FreeFor(*node, ns, name);
    want.milli_cpu -= free.milli_cpu;
    want.memory -= free.memory;
    want.ephemeral_storage -= free.ephemeral_storage;
    want.allowed_pod_number -= free.allowed_pod_number;
    for (auto& [n, v] : want.scalar) v -= free.Scalar(n);
    if (satisfied()) return "";
  }
  return satisfied() ? "" : FormatGap(want);
}

Status Coscheduling::PostFilter(CycleState&, const PodInfo& pod_info, const NodeStatusMap&,
                                PostFilterResult*) {
  const Pod& pod = *pod_info.pod;
  std::string key;
  Ptr<PodGroup> group = GroupOf(pod, &key);
  if (group == nullptr) return Status::Unschedulable("can not find pod group");
  const int min = group->spec.min_member;
  const int assigned = AssignedCount(key);
  // Enough members are placed already: the group does not fail for this one.
  if (assigned >= min) return Status(Code::kUnschedulable, std::vector<std::string>{});
  // A small gap to the quorum: later members may still close it.
  const double not_assigned = min > 0 ? static_cast<double>(min - assigned) / min : 0;
  if (not_assigned <= args_.pod_group_reject_percentage / 100.0)
    return Status(Code::kUnschedulable, std::vector<std::string>{});
  // If this member fits nowhere, the others most likely will not either.
  const std::string why = "optimistic rejection in PostFilter";
  DecideWaiting(key, &why);
  if (args_.pod_group_backoff_seconds > 0 && static_cast<int>(Members(pod).size()) >= min) {
    // A backoff in force is not extended: members turned away by it fail here too.
    std::lock_guard lock(mu_);
    const TimePoint now = clock_.Now();
    if (!InForce(backed_off_until_, key, now))
      backed_off_until_[key] = now + std::chrono::seconds(args_.pod_group_backoff_seconds);
  }
  MarkFailed(key);
  return Status::Unschedulable(
      fmt::format("PodGroup {} gets rejected due to Pod {} is unschedulable even after PostFilter",
                  key, pod.metadata.name));
}

Status Coscheduling::Reserve(CycleState&, const PodInfo&, const std::string&) {
  return Status::Success();
}

void Coscheduling::Unreserve(CycleState&, const PodInfo& pod_info, const std::string&) {
  const Pod& pod = *pod_info.pod;
  std::string key;
  if (GroupOf(pod, &key) == nullptr) return;
  {
    std::lock_guard lock(mu_);
    if (auto it = reserved_.find(key); it != reserved_.end()) {
      it->second.erase(pod.metadata.name);
      if (it->second.empty()) reserved_.erase(it);
    }
  }
  const std::string why = "rejection in Unreserve";
  DecideWaiting(key, &why);
  MarkFailed(key);
}

PermitDecision Coscheduling::Permit(CycleState&, const PodInfo& pod_info, const std::string&) {
  const Pod& pod = *pod_info.pod;
  std::string key;
  Ptr<PodGroup> group = GroupOf(pod, &key);
  if (key.empty()) return {Status::Success(), {}};
  if (group == nullptr) return {Status::Unschedulable("PodGroup not found"), {}};
  size_t reserved;
  {
    std::lock_guard lock(mu_);
    auto& set = reserved_[key];
    set.insert(pod.metadata.name);
    reserved = set.size();
  }
  if (AssignedCount(key) >= group->spec.min_member) {
    {
      std::lock_guard lock(mu_);
      last_failed_.erase(key);
    }
    DecideWaiting(key, nullptr);
    return {Status::Success(), {}};
  }
  // The group's first member to wait brings its siblings forward (they may sit in the
  // unschedulable pool since an earlier failure); later members need not.
  if (reserved == 1) {
    for (const auto& m : Members(pod))
      if (m->metadata.name != pod.metadata.name && m->spec.node_name.empty()) handle_.Activate(*m);
  }
  return {Status::Wait(), WaitTime(*group)};
}

int Coscheduling::AssignedCount(const std::string& key) const {
  const size_t slash = key.find('/');
  const std::string ns = key.substr(0, slash), name = key.substr(slash + 1);
  std::set<std::string> reserved;
  {
    std::lock_guard lock(mu_);
    if (auto it = reserved_.find(key); it != reserved_.end()) reserved = it->second;
  }
  int n = 0;
  for (const auto& p : ListLabeledGroupMembers(listers_, ns, name)) {
    if (!p->spec.node_name.empty() || reserved.count(p->metadata.name)) ++n;
  }
  return n;
}

void Coscheduling::DecideWaiting(const std::string& key, const std::string* reject) {
  const size_t slash = key.find('/');
  const std::string_view ns = std::string_view(key).substr(0, slash);
  const std::string_view name = std::string_view(key).substr(slash + 1);
  handle_.IterateOverWaitingPods([&](WaitingPod& w) {
    const std::string* g = GroupLabel(w.pod());
    if (g == nullptr || *g != name || w.pod().metadata.namespace_ != ns) return;
    if (reject) {
      w.Reject(Name(), *reject);
    } else {
      w.Allow(Name());
    }
  });
}

void Coscheduling::MarkFailed(const std::string& key) {
  std::lock_guard lock(mu_);
  resources_ok_until_.erase(key);
  last_failed_[key] = clock_.Now();
}

Duration Coscheduling::WaitTime(const PodGroup& group) const {
  if (group.spec.schedule_timeout_seconds)
    return std::chrono::seconds(*group.spec.schedule_timeout_seconds);
  if (args_.permit_waiting_time_seconds != 0)
    return std::chrono::seconds(args_.permit_waiting_time_seconds);
  return std::chrono::seconds(60);
}

std::vector<ClusterEventWithHint> Coscheduling::EventsToRegister() const {
  // A new pod may complete a group; a new or changed PodGroup may admit its members.
  return {{{EventResource::kPod, kAdd}, {}},
          {{EventResource::kUnscheduledPod, kAdd}, {}},
          {{EventResource::kPodGroup, kAdd | kUpdateOther}, {}}};
}

PluginRegistration CoschedulingRegistration() {
  auto factory = [](const PluginArgs* args, Handle& handle) -> Result<std::unique_ptr<Plugin>> {
    static const CoschedulingArgs kDefaults;
    auto typed = ArgsAs<CoschedulingArgs>(args, &kDefaults, "CoschedulingArgs");
    if (!typed.ok()) return typed.error();
    return std::unique_ptr<Plugin>(std::make_unique<Coscheduling>(handle, **typed));
  };
  return MakeRegistration(kCoschedulingName, factory, DecodeCoschedulingArgs);
}

}  // namespace berth
