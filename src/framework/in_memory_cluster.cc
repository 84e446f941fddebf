#include "framework/in_memory_cluster.h"

#include <fmt/format.h>

namespace berth {
namespace {

template <class M>
auto Lookup(const M& m, std::string_view key) -> typename M::mapped_type {
  auto it = m.find(key);
  return it == m.end() ? nullptr : it->second;
}

template <class M>
auto Values(const M& m) {
  std::vector<typename M::mapped_type> out;
  out.reserve(m.size());
  for (const auto& [k, v] : m) out.push_back(v);
  return out;
}

// Objects of one namespace: keys are "ns/name", so they form one contiguous range.
template <class M>
auto ValuesIn(const M& m, std::string_view ns) {
  std::vector<typename M::mapped_type> out;
  std::string prefix = std::string(ns) + "/";
  for (auto it = m.lower_bound(prefix); it != m.end() && it->first.starts_with(prefix); ++it)
    out.push_back(it->second);
  return out;
}

}  // namespace

std::string InMemoryCluster::Key(std::string_view ns, std::string_view name) {
  std::string k;
  k.reserve(ns.size() + name.size() + 1);
  k.append(ns).append("/").append(name);
  return k;
}

void InMemoryCluster::SetEventHandler(ClusterEventHandler* handler) {
  std::lock_guard lock(mu_);
  handler_ = handler;
}

void InMemoryCluster::SetDelayedDelivery(bool delayed) {
  std::lock_guard lock(mu_);
  delayed_ = delayed;
}

ClusterEventHandler* InMemoryCluster::EventTargetLocked() {
  if (!handler_) return nullptr;
  return delayed_ ? &recorder_ : handler_;
}

size_t InMemoryCluster::DeliverPendingEvents() {
  size_t delivered = 0;
  for (;;) {
    auto events = recorder_.Take();
    if (events.empty()) return delivered;
    ClusterEventHandler* h;
    {
      std::lock_guard lock(mu_);
      h = handler_;
    }
    for (auto& event : events) {
      if (h) event(*h);
      ++delivered;
    }
  }
}

size_t InMemoryCluster::pending_events() const { return recorder_.size(); }

void InMemoryCluster::EventRecorder::Push(std::function<void(ClusterEventHandler&)> event) {
  std::lock_guard lock(mu_);
  events_.push_back(std::move(event));
}

std::deque<std::function<void(ClusterEventHandler&)>> InMemoryCluster::EventRecorder::Take() {
  std::lock_guard lock(mu_);
  return std::exchange(events_, {});
}

size_t InMemoryCluster::EventRecorder::size() const {
  std::lock_guard lock(mu_);
  return events_.size();
}

void InMemoryCluster::EventRecorder::OnPodAdd(const Ptr<Pod>& pod) {
  Push([pod](ClusterEventHandler& h) { h.OnPodAdd(pod); });
}
void InMemoryCluster::EventRecorder::OnPodUpdate(const Ptr<Pod>& old_pod, const Ptr<Pod>& new_pod) {
  Push([old_pod, new_pod](ClusterEventHandler& h) { h.OnPodUpdate(old_pod, new_pod); });
}
void InMemoryCluster::EventRecorder::OnPodDelete(const Ptr<Pod>& pod) {
  Push([pod](ClusterEventHandler& h) { h.OnPodDelete(pod); });
}
void InMemoryCluster::EventRecorder::OnNodeAdd(const Ptr<Node>& node) {
  Push([node](ClusterEventHandler& h) { h.OnNodeAdd(node); });
}
void InMemoryCluster::EventRecorder::OnNodeUpdate(const Ptr<Node>& old_node,
                                                  const Ptr<Node>& new_node) {
  Push([old_node, new_node](ClusterEventHandler& h) { h.OnNodeUpdate(old_node, new_node); });
}
void InMemoryCluster::EventRecorder::OnNodeDelete(const Ptr<Node>& node) {
  Push([node](ClusterEventHandler& h) { h.OnNodeDelete(node); });
}
void InMemoryCluster::EventRecorder::OnObjectEvent(const ClusterEvent& event,
                                                   const EventObject& old_object,
                                                   const EventObject& new_object) {
  Push([event, old_object, new_object](ClusterEventHandler& h) {
    h.OnObjectEvent(event, old_object, new_object);
  });
}

void InMemoryCluster::EventRecorder::PushDra(const DraClusterEvent& event,
                                             DraEventObject old_object, DraEventObject new_object) {
  Push([event, old_object, new_object](ClusterEventHandler& h) {
    if (auto* dra = dynamic_cast<DraEventHandler*>(&h))
      dra->OnDraEvent(event, old_object, new_object);
  });
}

void InMemoryCluster::EventRecorder::OnVolumeAttachmentDelete(const VolumeAttachmentInfo& deleted) {
  Push([deleted](ClusterEventHandler& h) {
    if (auto* va = VolumeAttachmentEventsOf(&h)) va->OnVolumeAttachmentDelete(deleted);
  });
}

InMemoryCluster::WriteCounts InMemoryCluster::write_counts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

void InMemoryCluster::AddPod(Ptr<Pod> pod) {
  ClusterEventHandler* h;
  Ptr<Pod> old;
  std::vector<Ptr<ResourceClaim>> made;
  {
    std::lock_guard lock(mu_);
    pod = WithTemplateClaimsLocked(std::move(pod), &made);
    old = ReplacePodLocked(pod);
    h = EventTargetLocked();
  }
  for (const auto& claim : made) SendDra(h, {DraEventResource::kResourceClaim, kAdd}, {}, claim);
  if (!h) return;
  if (old) {
    h->OnPodUpdate(old, pod);
  } else {
    h->OnPodAdd(pod);
  }
}

void InMemoryCluster::UpdatePod(Ptr<Pod> pod) { AddPod(std::move(pod)); }

namespace {

// The group keys ("namespace/group") `pod` is filed under in each index; empty when none.
std::string SchedulingGroupKey(const Pod* pod) {
  if (pod == nullptr || !pod->spec.scheduling_group) return {};
  return pod->metadata.namespace_ + "/" + *pod->spec.scheduling_group;
}
std::string LabeledGroupKey(const Pod* pod) {
  if (pod == nullptr) return {};
  auto it = pod->metadata.labels.find(kPodGroupLabel);
  if (it == pod->metadata.labels.end() || it->second.empty()) return {};
  return pod->metadata.namespace_ + "/" + it->second;
}

void Refile(std::map<std::string, std::set<std::string>, std::less<>>& index,
            const std::string& from, const std::string& to, const std::string& key) {
  if (from == to) return;
  if (!from.empty()) {
    if (auto it = index.find(from); it != index.end()) {
      it->second.erase(key);
      if (it->second.empty()) index.erase(it);
    }
  }
  if (!to.empty()) index[to].insert(key);
}

}  // namespace

// `old` replaced by `pod` (either null for an add or a removal) under pod key `key`.
void InMemoryCluster::IndexPodLocked(const Pod* old, const Pod* pod, const std::string& key) {
  Refile(group_members_, SchedulingGroupKey(old), SchedulingGroupKey(pod), key);
  Refile(labeled_members_, LabeledGroupKey(old), LabeledGroupKey(pod), key);
}

Ptr<Pod> InMemoryCluster::ReplacePodLocked(Ptr<Pod> pod) {
  std::string key = Key(pod->metadata.namespace_, pod->metadata.name);
  auto& slot = pods_[key];
  IndexPodLocked(slot.get(), pod.get(), key);
  Ptr<Pod> old = slot;
  slot = std::move(pod);
  return old;
}

void InMemoryCluster::RemovePod(std::string_view ns, std::string_view name) {
  ClusterEventHandler* h;
  Ptr<Pod> old;
  {
    std::lock_guard lock(mu_);
    auto it = pods_.find(Key(ns, name));
    if (it == pods_.end()) return;
    old = it->second;
    IndexPodLocked(old.get(), nullptr, it->first);
    pods_.erase(it);
    h = EventTargetLocked();
  }
  if (h) h->OnPodDelete(old);
}

void InMemoryCluster::AddNode(Ptr<Node> node) {
  ClusterEventHandler* h;
  Ptr<Node> old;
  {
    std::lock_guard lock(mu_);
    if (auto it = nodes_.find(node->metadata.name); it != nodes_.end()) {
      old = it->second;
      auto entry = nodes_.extract(it);  // re-keyed: the key must view the stored node's name
      entry.key() = node->metadata.name;
      entry.mapped() = node;
      nodes_.insert(std::move(entry));
    } else {
      nodes_.emplace(node->metadata.name, node);
    }
    h = EventTargetLocked();
  }
  if (!h) return;
  if (old) {
    h->OnNodeUpdate(old, node);
  } else {
    h->OnNodeAdd(node);
  }
}

void InMemoryCluster::RemoveNode(std::string_view name) {
  ClusterEventHandler* h;
  Ptr<Node> old;
  {
    std::lock_guard lock(mu_);
    auto it = nodes_.find(name);
    if (it == nodes_.end()) return;
    old = it->second;
    nodes_.erase(it);
    h = EventTargetLocked();
  }
  if (h) h->OnNodeDelete(old);
}

void InMemoryCluster::RemoveService(std::string_view ns, std::string_view name) {
  ClusterEventHandler* h;
  Ptr<Service> old;
  {
    std::lock_guard lock(mu_);
    auto it = services_.find(Key(ns, name));
    if (it == services_.end()) return;
    old = it->second;
    services_.erase(it);
    h = EventTargetLocked();
  }
  if (h) h->OnObjectEvent({EventResource::kService, kDelete}, old, {});
}

template <class T>
void InMemoryCluster::Store(Map<T>& map, std::string key, Ptr<T> obj, EventResource resource) {
  ClusterEventHandler* h;
  Ptr<T> old;
  {
    std::lock_guard lock(mu_);
    Ptr<T>& slot = map[std::move(key)];
    old = std::exchange(slot, obj);
    h = EventTargetLocked();
  }
  if (!h) return;
  if (old) {
    h->OnObjectEvent({resource, kUpdateOther}, old, obj);
  } else {
    h->OnObjectEvent({resource, kAdd}, {}, obj);
  }
}

void InMemoryCluster::AddNamespace(Ptr<Namespace> o) {
  Store(namespaces_, o->metadata.name, o, EventResource::kNamespace);
}
void InMemoryCluster::AddService(Ptr<Service> o) {
  Store(services_, Key(o->metadata.namespace_, o->metadata.name), o, EventResource::kService);
}
void InMemoryCluster::AddReplicationController(Ptr<ReplicationController> o) {
  Store(rcs_, Key(o->metadata.namespace_, o->metadata.name), o,
        EventResource::kReplicationController);
}
void InMemoryCluster::AddReplicaSet(Ptr<ReplicaSet> o) {
  Store(rss_, Key(o->metadata.namespace_, o->metadata.name), o, EventResource::kReplicaSet);
}
void InMemoryCluster::AddStatefulSet(Ptr<StatefulSet> o) {
  Store(sss_, Key(o->metadata.namespace_, o->metadata.name), o, EventResource::kStatefulSet);
}
void InMemoryCluster::AddPV(Ptr<PersistentVolume> o) {
  Store(pvs_, o->metadata.name, o, EventResource::kPersistentVolume);
}
void InMemoryCluster::AddPVC(Ptr<PersistentVolumeClaim> o) {
  Store(pvcs_, Key(o->metadata.namespace_, o->metadata.name), o,
        EventResource::kPersistentVolumeClaim);
}
void InMemoryCluster::AddStorageClass(Ptr<StorageClass> o) {
  Store(storage_classes_, o->metadata.name, o, EventResource::kStorageClass);
}
void InMemoryCluster::AddCSINode(Ptr<CSINode> o) {
  Store(csinodes_, o->metadata.name, o, EventResource::kCSINode);
}
void InMemoryCluster::AddCSIDriver(std::string name, CSIDriverInfo info) {
  ClusterEventHandler* h;
  bool existed;
  {
    std::lock_guard lock(mu_);
    existed = !csi_drivers_.insert_or_assign(std::move(name), info).second;
    h = EventTargetLocked();
  }
  // The scheduler's events carry no CSIDriver object (it is not an SDK type).
  if (h) h->OnObjectEvent({EventResource::kCSIDriver, existed ? kUpdateOther : kAdd}, {}, {});
}
void InMemoryCluster::AddVolumeAttachment(VolumeAttachmentInfo va) {
  std::lock_guard lock(mu_);
  std::string name = va.name;
  volume_attachments_.insert_or_assign(std::move(name), std::move(va));
}
void InMemoryCluster::DeleteVolumeAttachment(std::string_view name) {
  VolumeAttachmentEventHandler* h = nullptr;
  VolumeAttachmentInfo deleted;
  {
    std::lock_guard lock(mu_);
    auto it = volume_attachments_.find(name);
    if (it == volume_attachments_.end()) return;
    deleted = std::move(it->second);
    volume_attachments_.erase(it);
    h = VolumeAttachmentEventsOf(EventTargetLocked());
  }
  if (h) h->OnVolumeAttachmentDelete(deleted);
}
void InMemoryCluster::AddPDB(Ptr<PodDisruptionBudget> o) {
  Store(pdbs_, Key(o->metadata.namespace_, o->metadata.name), o,
        EventResource::kPodDisruptionBudget);
}
void InMemoryCluster::AddPriorityClass(Ptr<PriorityClass> o) {
  Store(priority_classes_, o->metadata.name, o, EventResource::kPriorityClass);
}

void InMemoryCluster::AddPodGroup(Ptr<PodGroup> o) {
  Store(pod_groups_, Key(o->metadata.namespace_, o->metadata.name), o, EventResource::kPodGroup);
}
void InMemoryCluster::AddSchedulingPodGroup(Ptr<SchedulingPodGroup> o) {
  Store(scheduling_pod_groups_, Key(o->metadata.namespace_, o->metadata.name), o,
        EventResource::kSchedulingPodGroup);
}
void InMemoryCluster::RemovePodGroup(std::string_view ns, std::string_view name) {
  ClusterEventHandler* h;
  Ptr<PodGroup> old;
  {
    std::lock_guard lock(mu_);
    auto it = pod_groups_.find(Key(ns, name));
    if (it == pod_groups_.end()) return;
    old = it->second;
    pod_groups_.erase(it);
    h = EventTargetLocked();
  }
  if (h) h->OnObjectEvent({EventResource::kPodGroup, kDelete}, old, {});
}

Ptr<Pod> InMemoryCluster::GetPod(std::string_view ns, std::string_view name) const {
  std::lock_guard lock(mu_);
  return Lookup(pods_, Key(ns, name));
}
std::vector<Ptr<Pod>> InMemoryCluster::ListPods() const {
  std::lock_guard lock(mu_);
  return Values(pods_);
}
namespace {

// The pods filed under `group_key` in `index`, in key order.
template <class Pods>
std::vector<Ptr<Pod>> FiledUnder(
    const std::map<std::string, std::set<std::string>, std::less<>>& index, const Pods& pods,
    const std::string& group_key) {
  std::vector<Ptr<Pod>> out;
  auto members = index.find(group_key);
  if (members == index.end()) return out;
  for (const auto& key : members->second) {
    if (auto it = pods.find(key); it != pods.end()) out.push_back(it->second);
  }
  return out;
}

}  // namespace

std::vector<Ptr<Pod>> InMemoryCluster::ListSchedulingGroupMembers(std::string_view ns,
                                                                  std::string_view group) const {
  std::lock_guard lock(mu_);
  return FiledUnder(group_members_, pods_, Key(ns, group));
}
std::vector<Ptr<Pod>> InMemoryCluster::ListLabeledGroupMembers(std::string_view ns,
                                                               std::string_view group) const {
  std::lock_guard lock(mu_);
  return FiledUnder(labeled_members_, pods_, Key(ns, group));
}
Ptr<Node> InMemoryCluster::GetNode(std::string_view name) const {
  std::lock_guard lock(mu_);
  return Lookup(nodes_, name);
}
std::vector<Ptr<Node>> InMemoryCluster::ListNodes() const {
  std::lock_guard lock(mu_);
  return Values(nodes_);
}
Ptr<Namespace> InMemoryCluster::GetNamespace(std::string_view name) const {
  std::lock_guard lock(mu_);
  return Lookup(namespaces_, name);
}
std::vector<Ptr<Namespace>> InMemoryCluster::ListNamespaces() const {
  std::lock_guard lock(mu_);
  return Values(namespaces_);
}
std::vector<Ptr<Service>> InMemoryCluster::ListServices(std::string_view ns) const {
  std::lock_guard lock(mu_);
  return ValuesIn(services_, ns);
}
std::vector<Ptr<ReplicationController>> InMemoryCluster::ListReplicationControllers(
    std::string_view ns) const {
  std::lock_guard lock(mu_);
  return ValuesIn(rcs_, ns);
}
std::vector<Ptr<ReplicaSet>> InMemoryCluster::ListReplicaSets(std::string_view ns) const {
  std::lock_guard lock(mu_);
  return ValuesIn(rss_, ns);
}
std::vector<Ptr<StatefulSet>> InMemoryCluster::ListStatefulSets(std::string_view ns) const {
  std::lock_guard lock(mu_);
  return ValuesIn(sss_, ns);
}
Ptr<PersistentVolumeClaim> InMemoryCluster::GetPVC(std::string_view ns,
                                                   std::string_view name) const {
  std::lock_guard lock(mu_);
  return Lookup(pvcs_, Key(ns, name));
}
Ptr<PersistentVolume> InMemoryCluster::GetPV(std::string_view name) const {
  std::lock_guard lock(mu_);
  return Lookup(pvs_, name);
}
std::vector<Ptr<PersistentVolume>> InMemoryCluster::ListPVs() const {
  std::lock_guard lock(mu_);
  return Values(pvs_);
}
std::vector<Ptr<StorageClass>> InMemoryCluster::ListStorageClasses() const {
  std::lock_guard lock(mu_);
  return Values(storage_classes_);
}
Ptr<StorageClass> InMemoryCluster::GetStorageClass(std::string_view name) const {
  std::lock_guard lock(mu_);
  return Lookup(storage_classes_, name);
}
Ptr<CSINode> InMemoryCluster::GetCSINode(std::string_view node_name) const {
  std::lock_guard lock(mu_);
  return Lookup(csinodes_, node_name);
}
std::vector<VolumeAttachmentInfo> InMemoryCluster::VolumeAttachmentsOn(
    std::string_view node_name) const {
  std::lock_guard lock(mu_);
  std::vector<VolumeAttachmentInfo> out;
  for (const auto& [name, va] : volume_attachments_)
    if (va.node_name == node_name) out.push_back(va);
  return out;
}
std::optional<CSIDriverInfo> InMemoryCluster::GetCSIDriver(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = csi_drivers_.find(name);
  if (it == csi_drivers_.end()) return std::nullopt;
  return it->second;
}
std::vector<Ptr<PodDisruptionBudget>> InMemoryCluster::ListPDBs() const {
  std::lock_guard lock(mu_);
  return Values(pdbs_);
}
Ptr<PriorityClass> InMemoryCluster::GetPriorityClass(std::string_view name) const {
  std::lock_guard lock(mu_);
  return Lookup(priority_classes_, name);
}

Ptr<PodGroup> InMemoryCluster::GetPodGroup(std::string_view ns, std::string_view name) const {
  std::lock_guard lock(mu_);
  return Lookup(pod_groups_, Key(ns, name));
}
std::vector<Ptr<PodGroup>> InMemoryCluster::ListPodGroups(std::string_view ns) const {
  std::lock_guard lock(mu_);
  return ns.empty() ? Values(pod_groups_) : ValuesIn(pod_groups_, ns);
}
Ptr<SchedulingPodGroup> InMemoryCluster::GetSchedulingPodGroup(std::string_view ns,
                                                               std::string_view name) const {
  std::lock_guard lock(mu_);
  return Lookup(scheduling_pod_groups_, Key(ns, name));
}

VoidResult InMemoryCluster::Bind(const Pod& pod, std::string_view node_name) {
  ClusterEventHandler* h;
  Ptr<Pod> old, updated;
  {
    std::lock_guard lock(mu_);
    auto it = pods_.find(Key(pod.metadata.namespace_, pod.metadata.name));
    if (it == pods_.end())
      return Error{fmt::format("pods \"{}\" not found", pod.metadata.name), ErrorCode::kNotFound};
    if (!it->second->spec.node_name.empty())
      return Error{fmt::format("pod {} is already assigned to node \"{}\"", pod.Key(),
                               it->second->spec.node_name),
                   ErrorCode::kConflict};
    if (nodes_.find(node_name) == nodes_.end())
      return Error{fmt::format("nodes \"{}\" not found", node_name), ErrorCode::kNotFound};
    old = it->second;
    auto copy = std::make_shared<Pod>(*old);
    copy->spec.node_name = std::string(node_name);
    copy->status.nominated_node_name.clear();
    erase_if(copy->status.conditions,
             [](const PodCondition& c) { return c.type == "PodScheduled"; });
    copy->status.conditions.push_back({"PodScheduled", "True", "", ""});
    updated = copy;
    it->second = updated;
    ++counts_.binds;
    h = EventTargetLocked();
  }
  if (h) h->OnPodUpdate(old, updated);
  return {};
}

VoidResult InMemoryCluster::DeletePod(const Pod& pod, std::function<void(const Error&)>) {
  {
    std::lock_guard lock(mu_);
    if (pods_.find(Key(pod.metadata.namespace_, pod.metadata.name)) == pods_.end())
      return Error{fmt::format("pods \"{}\" not found", pod.metadata.name), ErrorCode::kNotFound};
    ++counts_.deletes;
  }
  RemovePod(pod.metadata.namespace_, pod.metadata.name);
  return {};
}

VoidResult InMemoryCluster::SetNominatedNodeName(const Pod& pod, std::string_view node_name) {
  ClusterEventHandler* h;
  Ptr<Pod> old, updated;
  {
    std::lock_guard lock(mu_);
    auto it = pods_.find(Key(pod.metadata.namespace_, pod.metadata.name));
    if (it == pods_.end())
      return Error{fmt::format("pods \"{}\" not found", pod.metadata.name), ErrorCode::kNotFound};
    if (it->second->status.nominated_node_name == node_name) return {};
    old = it->second;
    auto copy = std::make_shared<Pod>(*old);
    copy->status.nominated_node_name = std::string(node_name);
    updated = copy;
    it->second = updated;
    ++counts_.nominations;
    h = EventTargetLocked();
  }
  if (h) h->OnPodUpdate(old, updated);
  return {};
}

VoidResult InMemoryCluster::SetPodScheduledCondition(const Pod& pod, const PodCondition& cond) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(Key(pod.metadata.namespace_, pod.metadata.name));
  if (it == pods_.end())
    return Error{fmt::format("pods \"{}\" not found", pod.metadata.name), ErrorCode::kNotFound};
  // A status-only change: the scheduler does not need an event for it.
  auto copy = std::make_shared<Pod>(*it->second);
  erase_if(copy->status.conditions, [&](const PodCondition& c) { return c.type == cond.type; });
  copy->status.conditions.push_back(cond);
  it->second = copy;
  ++counts_.conditions;
  return {};
}

VoidResult InMemoryCluster::BindVolume(const PersistentVolumeClaim& pvc, std::string_view pv_name) {
  ClusterEventHandler* h;
  Ptr<PersistentVolume> old_pv, new_pv;
  Ptr<PersistentVolumeClaim> old_claim, new_claim;
  {
    std::lock_guard lock(mu_);
    auto key = Key(pvc.metadata.namespace_, pvc.metadata.name);
    auto cit = pvcs_.find(key);
    if (cit == pvcs_.end())
      return Error{fmt::format("persistentvolumeclaims \"{}\" not found", pvc.metadata.name),
                   ErrorCode::kNotFound};
    auto pit = pvs_.find(pv_name);
    if (pit == pvs_.end())
      return Error{fmt::format("persistentvolumes \"{}\" not found", pv_name),
                   ErrorCode::kNotFound};
    auto pv = std::make_shared<PersistentVolume>(*pit->second);
    if (pv->spec.claim_ref && (pv->spec.claim_ref->name != pvc.metadata.name ||
                               pv->spec.claim_ref->namespace_ != pvc.metadata.namespace_))
      return Error{fmt::format("persistentvolume \"{}\" is already bound to {}/{}", pv_name,
                               pv->spec.claim_ref->namespace_, pv->spec.claim_ref->name),
                   ErrorCode::kConflict};
    pv->spec.claim_ref = PersistentVolume::Spec::ClaimRef{pvc.metadata.namespace_,
                                                          pvc.metadata.name, pvc.metadata.uid};
    pv->status.phase = "Bound";
    auto claim = std::make_shared<PersistentVolumeClaim>(*cit->second);
    claim->spec.volume_name = std::string(pv_name);
    claim->metadata.annotations["pv.kubernetes.io/bind-completed"] = "yes";
    claim->status.phase = "Bound";
    old_pv = std::exchange(pit->second, pv);
    old_claim = std::exchange(cit->second, claim);
    new_pv = pv;
    new_claim = claim;
    ++counts_.volume_binds;
    h = EventTargetLocked();
  }
  if (h) {
    h->OnObjectEvent({EventResource::kPersistentVolume, kUpdateOther}, old_pv, new_pv);
    h->OnObjectEvent({EventResource::kPersistentVolumeClaim, kUpdateOther}, old_claim, new_claim);
  }
  return {};
}

VoidResult InMemoryCluster::RequestProvisioning(const PersistentVolumeClaim& pvc,
                                                std::string_view node_name) {
  ClusterEventHandler* h;
  Ptr<PersistentVolumeClaim> old_claim, new_claim;
  {
    std::lock_guard lock(mu_);
    auto cit = pvcs_.find(Key(pvc.metadata.namespace_, pvc.metadata.name));
    if (cit == pvcs_.end())
      return Error{fmt::format("persistentvolumeclaims \"{}\" not found", pvc.metadata.name),
                   ErrorCode::kNotFound};
    auto claim = std::make_shared<PersistentVolumeClaim>(*cit->second);
    claim->metadata.annotations["volume.kubernetes.io/selected-node"] = std::string(node_name);
    old_claim = std::exchange(cit->second, claim);
    new_claim = claim;
    ++counts_.provisions;
    h = EventTargetLocked();
  }
  if (h)
    h->OnObjectEvent({EventResource::kPersistentVolumeClaim, kUpdateOther}, old_claim, new_claim);
  return {};
}

}  // namespace berth
