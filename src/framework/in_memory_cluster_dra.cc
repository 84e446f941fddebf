// InMemoryCluster's resource.k8s.io objects: storage, the DRA listers and the claim status
// writer, and the claims the resourceclaim controller would make from templates.
#include <fmt/format.h>

#include <type_traits>
#include <utility>

#include "framework/in_memory_cluster.h"

namespace berth {

void InMemoryCluster::SendDra(ClusterEventHandler* h, const DraClusterEvent& event,
                              DraEventObject old_object, DraEventObject new_object) {
  if (!h) return;
  if (h == &recorder_) {
    recorder_.PushDra(event, std::move(old_object), std::move(new_object));
  } else if (auto* dra = dynamic_cast<DraEventHandler*>(h)) {
    dra->OnDraEvent(event, old_object, new_object);
  }
}

template <class T>
void InMemoryCluster::StoreDra(Map<T>& map, std::string key, Ptr<T> obj,
                               DraEventResource resource) {
  ClusterEventHandler* h;
  Ptr<T> old;
  {
    std::lock_guard lock(mu_);
    Ptr<T>& slot = map[std::move(key)];
    old = std::exchange(slot, obj);
    if constexpr (std::is_same_v<T, ResourceClaim>) claim_log_.Put(obj);
    h = EventTargetLocked();
  }
  if (old) {
    SendDra(h, {resource, kUpdateOther}, old, obj);
  } else {
    SendDra(h, {resource, kAdd}, {}, obj);
  }
}

void InMemoryCluster::AddDeviceClass(Ptr<DeviceClass> c) {
  StoreDra(device_classes_, c->metadata.name, c, DraEventResource::kDeviceClass);
}

void InMemoryCluster::SendSliceChanges(ClusterEventHandler* h,
                                       const std::vector<TaintedSlices::Change>& changes) {
  for (const TaintedSlices::Change& c : changes) {
    const uint32_t action = !c.old_slice ? kAdd : !c.new_slice ? kDelete : kUpdateOther;
    DraEventObject old_object, new_object;
    if (c.old_slice) old_object = c.old_slice;
    if (c.new_slice) new_object = c.new_slice;
    SendDra(h, {DraEventResource::kResourceSlice, action}, std::move(old_object),
            std::move(new_object));
  }
}

void InMemoryCluster::AddResourceSlice(Ptr<ResourceSlice> s) {
  ClusterEventHandler* h;
  TaintedSlices::Change change;
  {
    std::lock_guard lock(mu_);
    change = resource_slices_.PutSlice(std::move(s));
    ++slice_generation_;
    h = EventTargetLocked();
  }
  SendSliceChanges(h, {change});
}

void InMemoryCluster::AddDeviceTaintRule(const DeviceTaintRule& rule) {
  ChangeTaintRules([&] { return resource_slices_.PutRule(rule); });
}

void InMemoryCluster::RemoveDeviceTaintRule(std::string_view name) {
  ChangeTaintRules([&] { return resource_slices_.RemoveRule(name); });
}

void InMemoryCluster::ChangeTaintRules(
    const std::function<std::vector<TaintedSlices::Change>()>& change) {
  ClusterEventHandler* h;
  std::vector<TaintedSlices::Change> changes;
  {
    std::lock_guard lock(mu_);
    changes = change();
    if (!changes.empty()) ++slice_generation_;
    h = EventTargetLocked();
  }
  SendSliceChanges(h, changes);
}

void InMemoryCluster::AddResourceClaim(Ptr<ResourceClaim> c) {
  if (c->metadata.uid.empty()) {
    auto copy = std::make_shared<ResourceClaim>(*c);
    copy->metadata.uid = "claim-" + c->metadata.namespace_ + "-" + c->metadata.name;
    c = std::move(copy);
  }
  StoreDra(resource_claims_, Key(c->metadata.namespace_, c->metadata.name), c,
           DraEventResource::kResourceClaim);
}

void InMemoryCluster::AddResourceClaimTemplate(Ptr<ResourceClaimTemplate> t) {
  std::vector<Ptr<Pod>> waiting;
  {
    std::lock_guard lock(mu_);
    resource_claim_templates_[Key(t->metadata.namespace_, t->metadata.name)] = t;
    for (const auto& [key, pod] : pods_) {
      if (pod->metadata.namespace_ != t->metadata.namespace_ || !pod->spec.node_name.empty())
        continue;
      for (const PodResourceClaim& c : PodResourceClaimsOf(*pod))
        if (c.resource_claim_template_name == t->metadata.name) waiting.push_back(pod);
    }
  }
  // Re-adding makes their claims and reports the pods' updates.
  for (auto& pod : waiting) AddPod(pod);
}

void InMemoryCluster::RemoveResourceClaim(std::string_view ns, std::string_view name) {
  ClusterEventHandler* h;
  Ptr<ResourceClaim> old;
  {
    std::lock_guard lock(mu_);
    auto it = resource_claims_.find(Key(ns, name));
    if (it == resource_claims_.end()) return;
    old = it->second;
    resource_claims_.erase(it);
    claim_log_.Erase(ns, name);
    h = EventTargetLocked();
  }
  SendDra(h, {DraEventResource::kResourceClaim, kDelete}, old, {});
}

void InMemoryCluster::RemoveResourceSlice(std::string_view name) {
  ClusterEventHandler* h;
  TaintedSlices::Change change;
  {
    std::lock_guard lock(mu_);
    change = resource_slices_.RemoveSlice(name);
    if (!change.old_slice) return;
    ++slice_generation_;
    h = EventTargetLocked();
  }
  SendSliceChanges(h, {change});
}

Ptr<ResourceClaimTemplate> InMemoryCluster::GetResourceClaimTemplate(std::string_view ns,
                                                                     std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = resource_claim_templates_.find(Key(ns, name));
  return it == resource_claim_templates_.end() ? nullptr : it->second;
}

int InMemoryCluster::claim_finalizer_writes() const {
  std::lock_guard lock(mu_);
  return claim_finalizer_writes_;
}

int InMemoryCluster::claim_status_writes() const {
  std::lock_guard lock(mu_);
  return claim_status_writes_;
}

Ptr<Pod> InMemoryCluster::WithTemplateClaimsLocked(Ptr<Pod> pod,
                                                   std::vector<Ptr<ResourceClaim>>* made) {
  if (!pod->raw || !pod->spec.node_name.empty()) return pod;
  const std::vector<PodResourceClaim> entries = PodResourceClaimsOf(*pod);
  if (entries.empty()) return pod;
  auto statuses = PodResourceClaimStatusesOf(*pod);
  bool changed = false;
  for (const PodResourceClaim& entry : entries) {
    if (!entry.resource_claim_template_name) continue;
    bool recorded = false;
    for (const auto& s : statuses) recorded = recorded || s.first == entry.name;
    if (recorded) continue;
    auto t = resource_claim_templates_.find(
        Key(pod->metadata.namespace_, *entry.resource_claim_template_name));
    if (t == resource_claim_templates_.end()) continue;  // made when the template arrives
    auto claim = std::make_shared<ResourceClaim>();
    claim->metadata = t->second->spec.metadata;
    claim->metadata.name = pod->metadata.name + "-" + entry.name;
    claim->metadata.namespace_ = pod->metadata.namespace_;
    claim->metadata.uid = "claim-" + claim->metadata.namespace_ + "-" + claim->metadata.name;
    claim->metadata.resource_version = std::to_string(++claim_version_);
    claim->metadata.creation_timestamp = pod->metadata.creation_timestamp;
    claim->metadata.owner_references.push_back(
        OwnerReference{"v1", "Pod", pod->metadata.name, pod->metadata.uid, true});
    claim->spec.devices = t->second->spec.devices;
    const std::string key = Key(claim->metadata.namespace_, claim->metadata.name);
    if (!resource_claims_.count(key)) {
      resource_claims_[key] = claim;
      claim_log_.Put(claim);
      made->push_back(claim);
    }
    statuses.emplace_back(entry.name, claim->metadata.name);
    changed = true;
  }
  if (!changed) return pod;
  auto copy = std::make_shared<Pod>(*pod);
  SetPodResourceClaimStatuses(*copy, statuses);
  return copy;
}

std::vector<Ptr<ResourceSlice>> InMemoryCluster::ListResourceSlices() const {
  return resource_slices_.List();
}

Ptr<ResourceClaim> InMemoryCluster::GetResourceClaim(std::string_view ns,
                                                     std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = resource_claims_.find(Key(ns, name));
  return it == resource_claims_.end() ? nullptr : it->second;
}

std::vector<Ptr<ResourceClaim>> InMemoryCluster::ListResourceClaims() const {
  std::lock_guard lock(mu_);
  std::vector<Ptr<ResourceClaim>> out;
  out.reserve(resource_claims_.size());
  for (const auto& [k, v] : resource_claims_) out.push_back(v);
  return out;
}

ClaimChanges InMemoryCluster::ClaimChangesSince(uint64_t cursor) const {
  return claim_log_.ClaimChangesSince(cursor);
}

Ptr<DeviceClass> InMemoryCluster::GetDeviceClass(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = device_classes_.find(name);
  return it == device_classes_.end() ? nullptr : it->second;
}

std::vector<Ptr<DeviceClass>> InMemoryCluster::ListDeviceClasses() const {
  std::lock_guard lock(mu_);
  std::vector<Ptr<DeviceClass>> out;
  for (const auto& [k, v] : device_classes_) out.push_back(v);
  return out;
}

Result<Ptr<ResourceClaim>> InMemoryCluster::UpdateResourceClaimStatus(const ResourceClaim& claim) {
  ClusterEventHandler* h;
  Ptr<ResourceClaim> old, stored;
  {
    std::lock_guard lock(mu_);
    auto it = resource_claims_.find(Key(claim.metadata.namespace_, claim.metadata.name));
    if (it == resource_claims_.end()) {
      return Error{
          fmt::format("resourceclaims.resource.k8s.io \"{}\" not found", claim.metadata.name),
          ErrorCode::kNotFound};
    }
    old = it->second;
    if ((!claim.metadata.uid.empty() && claim.metadata.uid != old->metadata.uid) ||
        (!claim.metadata.resource_version.empty() &&
         claim.metadata.resource_version != old->metadata.resource_version)) {
      return Error{fmt::format("Operation cannot be fulfilled on resourceclaims.resource.k8s.io "
                               "\"{}\": the object has been modified; please apply your changes "
                               "to the latest version and try again",
                               claim.metadata.name),
                   ErrorCode::kConflict};
    }
    auto next = std::make_shared<ResourceClaim>(*old);
    next->status = claim.status;
    next->metadata.resource_version = std::to_string(++claim_version_);
    next->raw = nullptr;  // the typed fields are the object now
    stored = next;
    it->second = stored;
    claim_log_.Put(stored);
    ++claim_status_writes_;
    h = EventTargetLocked();
  }
  SendDra(h, {DraEventResource::kResourceClaim, kUpdateOther}, old, stored);
  return stored;
}

}  // namespace berth
