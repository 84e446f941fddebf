#include "controllers/pod_census.h"

#include "controllers/pod_util.h"

namespace berth::controllers {

namespace {

// The counts' key of a pod: its controller's uid and its namespace ('/' is in neither).
std::string OwnerKey(std::string_view controller_uid, std::string_view ns) {
  std::string key;
  key.reserve(controller_uid.size() + ns.size() + 1);
  key.append(controller_uid).append("/").append(ns);
  return key;
}

std::string OwnerKeyOf(const Pod& pod) {
  const OwnerReference* ref = ControllerOf(pod.metadata);
  return OwnerKey(ref ? std::string_view(ref->uid) : std::string_view(), pod.metadata.namespace_);
}

}  // namespace

void PodCensus::Watch(SharedInformer* pods) {
  client::InformerHandlers h;
  h.on_add = [this](const Object& o) { Add(o); };
  h.on_update = [this](const Object& a, const Object& b) { Update(a, b); };
  h.on_delete = [this](const Object& o) { Delete(o); };
  pods->AddHandlers(std::move(h));
}

void PodCensus::Add(const Object& obj) {
  std::lock_guard lock(mu_);
  Apply(obj, +1);
}

void PodCensus::Update(const Object& old_obj, const Object& new_obj) {
  std::lock_guard lock(mu_);
  Apply(old_obj, -1);
  Apply(new_obj, +1);
}

void PodCensus::Delete(const Object& obj) {
  std::lock_guard lock(mu_);
  Apply(obj, -1);
}

void PodCensus::Apply(const Object& obj, int sign) {
  const auto* p = std::get_if<std::shared_ptr<const Pod>>(&obj);
  if (!p || !*p || !IsPodActive(**p)) return;
  const Pod& pod = **p;
  const int ready = IsPodReady(pod) ? 1 : 0;
  const UnixTime since = ready && pod.raw ? ReadySince(*pod.raw) : 0;
  const std::string key = OwnerKeyOf(pod);
  auto owner = owners_.find(key);
  if (sign > 0) {
    if (owner == owners_.end()) owner = owners_.emplace(key, std::map<Labels, Counts>{}).first;
    Counts& c = owner->second[pod.metadata.labels];
    c.active += 1;
    c.ready += ready;
    if (ready) c.ready_since[since] += 1;
    return;
  }
  // Taking back a share that was never added would be a handler sequence the informer does not
  // produce; it is ignored rather than counted negative.
  if (owner == owners_.end()) return;
  auto group = owner->second.find(pod.metadata.labels);
  if (group == owner->second.end()) return;
  Counts& c = group->second;
  c.active -= 1;
  c.ready -= ready;
  if (ready) {
    if (auto t = c.ready_since.find(since); t != c.ready_since.end() && --t->second <= 0) {
      c.ready_since.erase(t);
    }
  }
  if (c.active <= 0) owner->second.erase(group);
  if (owner->second.empty()) owners_.erase(owner);
}

int64_t PodCensus::Group::Available(int64_t min_ready_seconds, UnixTime now) const {
  if (min_ready_seconds == 0) return ready;
  int64_t n = 0;
  for (const auto& [since, count] : ready_since) {
    if (since != 0 && since + min_ready_seconds < now) n += count;
  }
  return n;
}

std::vector<PodCensus::Group> PodCensus::Groups(const std::string& controller_uid,
                                                const std::string& ns) const {
  std::vector<Group> out;
  std::lock_guard lock(mu_);
  auto owner = owners_.find(OwnerKey(controller_uid, ns));
  if (owner == owners_.end()) return out;
  out.reserve(owner->second.size());
  for (const auto& [labels, c] : owner->second) {
    out.push_back({labels, c.active, c.ready, c.ready_since});
  }
  return out;
}

std::vector<PodCensus::Group> PodCensus::Recount(const std::vector<Object>& pods,
                                                 const std::string& controller_uid,
                                                 const std::string& ns) {
  std::map<Labels, Group> groups;
  for (const Object& o : pods) {
    const auto* p = std::get_if<std::shared_ptr<const Pod>>(&o);
    if (!p || !*p || !IsPodActive(**p) || (*p)->metadata.namespace_ != ns) continue;
    const OwnerReference* ref = ControllerOf((*p)->metadata);
    if ((ref ? ref->uid : std::string()) != controller_uid) continue;
    Group& g = groups[(*p)->metadata.labels];
    g.labels = (*p)->metadata.labels;
    g.active += 1;
    if (!IsPodReady(**p)) continue;
    g.ready += 1;
    g.ready_since[(*p)->raw ? ReadySince(*(*p)->raw) : 0] += 1;
  }
  std::vector<Group> out;
  for (auto& [labels, g] : groups) out.push_back(std::move(g));
  return out;
}

}  // namespace berth::controllers
