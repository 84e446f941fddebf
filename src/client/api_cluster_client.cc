#include "client/api_cluster_client.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "api/json_text.h"
#include "client/api_cluster_client_internal.h"
#include "client/micro_time.h"

namespace berth::client {

using Json = nlohmann::json;
using internal::kStopDrainBudget;

namespace {

// The pods informer's indexes (GroupMemberLister) of spec.schedulingGroup.podGroupName and of
// the scheduling.x-k8s.io/pod-group label, by "namespace/group".
constexpr char kSchedulingGroupIndex[] = "schedulingGroup";
constexpr char kLabeledGroupIndex[] = "podGroupLabel";

std::string NsKey(std::string_view ns, std::string_view name) {
  return std::string(ns) + "/" + std::string(name);
}

// What the scheduler reads of a VolumeAttachment the informer keeps as a document.
std::optional<VolumeAttachmentInfo> VolumeAttachmentOf(const Object& o) {
  const auto* doc = std::get_if<std::shared_ptr<const UnknownObject>>(&o);
  if (doc == nullptr || !*doc || !(*doc)->raw) return std::nullopt;
  return VolumeAttachmentInfoOf(*(*doc)->raw);
}

// The event form of an informer's object (kinds without an event form carry none).
EventObject ToEventObject(const Object& object) {
  return std::visit(
      [](const auto& o) -> EventObject {
        if constexpr (std::is_constructible_v<EventObject, std::decay_t<decltype(o)>> &&
                      !std::is_same_v<std::decay_t<decltype(o)>,
                                      std::shared_ptr<const UnknownObject>>) {
          return o;
        } else {
          return std::monostate{};
        }
      },
      object);
}

}  // namespace

BindingPipeline BindingPipelineFor(std::string_view version_body) {
  const Json doc = Json::parse(version_body, nullptr, false);
  const auto git = doc.is_object() ? doc.find("gitVersion") : doc.end();
  const bool berth = git != doc.end() && git->is_string() &&
                     git->get_ref<const std::string&>().ends_with("-berth");
  return berth ? kOwnServerBindings : BindingPipeline{};
}

ApiClusterClient::ApiClusterClient(std::unique_ptr<RestClient> rest,
                                   std::function<void(const std::string&)> log,
                                   BindingPipeline bindings)
    : rest_(std::move(rest)),
      bindings_(rest_.get(), 2, bindings.connections, bindings.batch),
      log_(std::move(log)),
      status_writer_(log_),
      victim_writer_(log_, 10000, kVictimWriters) {}

ApiClusterClient::~ApiClusterClient() { Stop(); }

void ApiClusterClient::Start() {
  struct Spec {
    const char* path;
    const char* kind;
    EventResource resource;
  };
  using R = EventResource;
  static constexpr Spec kSpecs[kKindCount] = {
      {"/api/v1/pods", "Pod", R::kPod},
      {"/api/v1/nodes", "Node", R::kNode},
      {"/api/v1/namespaces", "Namespace", R::kNamespace},
      {"/api/v1/services", "Service", R::kService},
      {"/api/v1/replicationcontrollers", "ReplicationController", R::kReplicationController},
      {"/apis/apps/v1/replicasets", "ReplicaSet", R::kReplicaSet},
      {"/apis/apps/v1/statefulsets", "StatefulSet", R::kStatefulSet},
      {"/api/v1/persistentvolumes", "PersistentVolume", R::kPersistentVolume},
      {"/api/v1/persistentvolumeclaims", "PersistentVolumeClaim", R::kPersistentVolumeClaim},
      {"/apis/storage.k8s.io/v1/storageclasses", "StorageClass", R::kStorageClass},
      {"/apis/storage.k8s.io/v1/csinodes", "CSINode", R::kCSINode},
      {"/apis/storage.k8s.io/v1/csidrivers", "CSIDriver", R::kCSIDriver},
      // No EventResource either: deletions go to VolumeAttachmentEventHandler (below).
      {"/apis/storage.k8s.io/v1/volumeattachments", "VolumeAttachment", R::kWildCard},
      {"/apis/policy/v1/poddisruptionbudgets", "PodDisruptionBudget", R::kPodDisruptionBudget},
      {"/apis/scheduling.k8s.io/v1/priorityclasses", "PriorityClass", R::kPriorityClass},
      {"/apis/scheduling.x-k8s.io/v1alpha1/podgroups", "PodGroup", R::kPodGroup},
      {"/apis/scheduling.k8s.io/v1beta1/podgroups", "PodGroup", R::kSchedulingPodGroup},
      // DRA kinds have no EventResource; their events go to DraEventHandler (below).
      {"/apis/resource.k8s.io/v1/deviceclasses", "DeviceClass", R::kWildCard},
      {"/apis/resource.k8s.io/v1/resourceslices", "ResourceSlice", R::kWildCard},
      {"/apis/resource.k8s.io/v1/resourceclaims", "ResourceClaim", R::kWildCard},
      {"/apis/resource.k8s.io/v1/devicetaintrules", "DeviceTaintRule", R::kWildCard},
  };
  for (int k = 0; k < kKindCount; ++k) {
    InformerHandlers h;
    ClusterEventHandler* handler = handler_;
    if (k == kPods) {
      h.on_add = [handler](const Object& o) {
        if (auto p = std::get_if<Ptr<Pod>>(&o); p && handler) handler->OnPodAdd(*p);
      };
      h.on_update = [handler](const Object& a, const Object& b) {
        auto pa = std::get_if<Ptr<Pod>>(&a);
        auto pb = std::get_if<Ptr<Pod>>(&b);
        if (pa && pb && handler) handler->OnPodUpdate(*pa, *pb);
      };
      h.on_delete = [handler](const Object& o) {
        if (auto p = std::get_if<Ptr<Pod>>(&o); p && handler) handler->OnPodDelete(*p);
      };
    } else if (k == kNodes) {
      h.on_add = [handler](const Object& o) {
        if (auto p = std::get_if<Ptr<Node>>(&o); p && handler) handler->OnNodeAdd(*p);
      };
      h.on_update = [handler](const Object& a, const Object& b) {
        auto pa = std::get_if<Ptr<Node>>(&a);
        auto pb = std::get_if<Ptr<Node>>(&b);
        if (pa && pb && handler) handler->OnNodeUpdate(*pa, *pb);
      };
      h.on_delete = [handler](const Object& o) {
        if (auto p = std::get_if<Ptr<Node>>(&o); p && handler) handler->OnNodeDelete(*p);
      };
    } else if (k == kResourceSlices) {
      h = SliceInformerHandlers();
    } else if (k == kDeviceTaintRules) {
      h = TaintRuleInformerHandlers();
    } else if (k == kDeviceClasses || k == kResourceClaims) {
      h = DraInformerHandlers(k == kDeviceClasses ? DraEventResource::kDeviceClass
                                                  : DraEventResource::kResourceClaim);
    } else if (k == kVolumeAttachments) {
      h = VolumeAttachmentInformerHandlers();
    } else if (handler) {
      const EventResource resource = kSpecs[k].resource;
      h.on_add = [handler, resource](const Object& o) {
        handler->OnObjectEvent({resource, kAdd}, {}, ToEventObject(o));
      };
      h.on_update = [handler, resource](const Object& a, const Object& b) {
        handler->OnObjectEvent({resource, kUpdateOther}, ToEventObject(a), ToEventObject(b));
      };
      h.on_delete = [handler, resource](const Object& o) {
        handler->OnObjectEvent({resource, kDelete}, ToEventObject(o), {});
      };
    }
    InformerOptions options{kSpecs[k].path, kSpecs[k].kind, 500, true, log_};
    options.keep_documents = keep_documents_;
    // VolumeAttachments too: a server without them has no attached volumes to count.
    options.optional = k == kPodGroups || k == kSchedulingPodGroups || k == kDeviceClasses ||
                       k == kResourceSlices || k == kResourceClaims || k == kDeviceTaintRules ||
                       k == kVolumeAttachments;
    informers_.push_back(std::make_unique<Informer>(rest_.get(), std::move(options), h));
  }
  AddIndexes();
  for (auto& inf : informers_) inf->Start();
  constexpr int kEventWriters = 2;
  for (int i = 0; i < kEventWriters; ++i) event_threads_.emplace_back([this] { EventLoop(); });
}

void ApiClusterClient::AddIndexes() {
  informers_[kPods]->AddIndex(kSchedulingGroupIndex, [](const Object& o) {
    const auto* pod = std::get_if<Ptr<Pod>>(&o);
    if (pod == nullptr || !(*pod)->spec.scheduling_group) return std::vector<std::string>{};
    return std::vector<std::string>{
        NsKey((*pod)->metadata.namespace_, *(*pod)->spec.scheduling_group)};
  });
  informers_[kPods]->AddIndex(kLabeledGroupIndex, [](const Object& o) {
    const auto* pod = std::get_if<Ptr<Pod>>(&o);
    if (pod == nullptr) return std::vector<std::string>{};
    auto label = (*pod)->metadata.labels.find(kPodGroupLabel);
    if (label == (*pod)->metadata.labels.end() || label->second.empty()) {
      return std::vector<std::string>{};
    }
    return std::vector<std::string>{NsKey((*pod)->metadata.namespace_, label->second)};
  });
}

void ApiClusterClient::StopWatching() {
  for (auto& inf : informers_) inf->Stop();
}

void ApiClusterClient::Stop() {
  // The events' drain budget runs from the call: stopping the informers (a request in flight
  // may take its time) counts against it rather than before it.
  {
    std::lock_guard lock(events_mu_);
    if (stopping_) return;
    stopping_ = true;
    drain_until_ = std::chrono::steady_clock::now() + kStopDrainBudget;
  }
  stop_retrying_ = true;
  events_cv_.notify_all();
  StopWatching();
  for (auto& t : event_threads_) t.join();
  event_threads_.clear();
}

bool ApiClusterClient::HasSynced() const {
  if (informers_.empty()) return false;
  for (const auto& inf : informers_) {
    if (!inf->HasSynced()) return false;
  }
  return true;
}

template <class T>
Ptr<T> ApiClusterClient::GetTyped(Kind k, const std::string& key) const {
  if (informers_.empty()) return nullptr;
  auto o = informers_[k]->Get(key);
  if (!o) return nullptr;
  auto p = std::get_if<Ptr<T>>(&*o);
  return p ? *p : nullptr;
}

template <class T>
std::vector<Ptr<T>> ApiClusterClient::ListInNamespace(Kind k, std::string_view ns) const {
  if (informers_.empty()) return {};
  auto all = informers_[k]->ListTyped<T>();
  if (ns.empty()) return all;
  std::vector<Ptr<T>> out;
  for (auto& p : all) {
    if (p->metadata.namespace_ == ns) out.push_back(std::move(p));
  }
  return out;
}

Ptr<Pod> ApiClusterClient::GetPod(std::string_view ns, std::string_view name) const {
  return GetTyped<Pod>(kPods, NsKey(ns, name));
}
std::vector<Ptr<Pod>> ApiClusterClient::ListPods() const { return ListInNamespace<Pod>(kPods, ""); }
std::vector<Ptr<Pod>> ApiClusterClient::PodsByIndex(const char* index, std::string_view ns,
                                                    std::string_view group) const {
  std::vector<Ptr<Pod>> out;
  if (informers_.empty()) return out;
  for (const Object& o : informers_[kPods]->ByIndex(index, NsKey(ns, group))) {
    if (const auto* pod = std::get_if<Ptr<Pod>>(&o)) out.push_back(*pod);
  }
  return out;
}
std::vector<Ptr<Pod>> ApiClusterClient::ListSchedulingGroupMembers(std::string_view ns,
                                                                   std::string_view group) const {
  return PodsByIndex(kSchedulingGroupIndex, ns, group);
}
std::vector<Ptr<Pod>> ApiClusterClient::ListLabeledGroupMembers(std::string_view ns,
                                                                std::string_view group) const {
  return PodsByIndex(kLabeledGroupIndex, ns, group);
}
Ptr<Node> ApiClusterClient::GetNode(std::string_view name) const {
  return GetTyped<Node>(kNodes, std::string(name));
}
std::vector<Ptr<Node>> ApiClusterClient::ListNodes() const {
  return ListInNamespace<Node>(kNodes, "");
}
Ptr<Namespace> ApiClusterClient::GetNamespace(std::string_view name) const {
  return GetTyped<Namespace>(kNamespaces, std::string(name));
}
std::vector<Ptr<Namespace>> ApiClusterClient::ListNamespaces() const {
  return ListInNamespace<Namespace>(kNamespaces, "");
}
std::vector<Ptr<Service>> ApiClusterClient::ListServices(std::string_view ns) const {
  return ListInNamespace<Service>(kServices, ns);
}
std::vector<Ptr<ReplicationController>> ApiClusterClient::ListReplicationControllers(
    std::string_view ns) const {
  return ListInNamespace<ReplicationController>(kReplicationControllers, ns);
}
std::vector<Ptr<ReplicaSet>> ApiClusterClient::ListReplicaSets(std::string_view ns) const {
  return ListInNamespace<ReplicaSet>(kReplicaSets, ns);
}
std::vector<Ptr<StatefulSet>> ApiClusterClient::ListStatefulSets(std::string_view ns) const {
  return ListInNamespace<StatefulSet>(kStatefulSets, ns);
}
Ptr<PersistentVolumeClaim> ApiClusterClient::GetPVC(std::string_view ns,
                                                    std::string_view name) const {
  return GetTyped<PersistentVolumeClaim>(kPVCs, NsKey(ns, name));
}
Ptr<PersistentVolume> ApiClusterClient::GetPV(std::string_view name) const {
  return GetTyped<PersistentVolume>(kPVs, std::string(name));
}
std::vector<Ptr<PersistentVolume>> ApiClusterClient::ListPVs() const {
  return ListInNamespace<PersistentVolume>(kPVs, "");
}
Ptr<StorageClass> ApiClusterClient::GetStorageClass(std::string_view name) const {
  return GetTyped<StorageClass>(kStorageClasses, std::string(name));
}
Ptr<CSINode> ApiClusterClient::GetCSINode(std::string_view node_name) const {
  return GetTyped<CSINode>(kCSINodes, std::string(node_name));
}
std::optional<CSIDriverInfo> ApiClusterClient::GetCSIDriver(std::string_view name) const {
  if (informers_.empty()) return std::nullopt;
  auto o = informers_[kCSIDrivers]->Get(std::string(name));
  if (!o) return std::nullopt;
  // Berth does not model CSIDriver: the informer keeps it as a document.
  auto* driver = std::get_if<std::shared_ptr<const UnknownObject>>(&*o);
  if (driver == nullptr || !*driver || !(*driver)->raw) return CSIDriverInfo{};
  return CSIDriverInfoOf(*(*driver)->raw);
}
std::vector<VolumeAttachmentInfo> ApiClusterClient::VolumeAttachmentsOn(
    std::string_view node_name) const {
  std::vector<VolumeAttachmentInfo> out;
  std::lock_guard lock(attachments_.mu);
  auto it = attachments_.by_node.find(node_name);
  if (it == attachments_.by_node.end()) return out;
  out.reserve(it->second.size());
  for (const auto& [name, va] : it->second) out.push_back(va);
  return out;
}
void ApiClusterClient::Attachments::Put(VolumeAttachmentInfo va) {
  std::lock_guard lock(mu);
  auto [at, added] = node_of.try_emplace(va.name, va.node_name);
  if (!added && at->second != va.node_name) {
    auto old = by_node.find(at->second);
    old->second.erase(va.name);
    if (old->second.empty()) by_node.erase(old);
    at->second = va.node_name;
  }
  std::string name = va.name;
  by_node[va.node_name].insert_or_assign(std::move(name), std::move(va));
}
void ApiClusterClient::Attachments::Remove(const std::string& name) {
  std::lock_guard lock(mu);
  auto at = node_of.find(name);
  if (at == node_of.end()) return;
  auto node = by_node.find(at->second);
  node->second.erase(name);
  if (node->second.empty()) by_node.erase(node);
  node_of.erase(at);
}
InformerHandlers ApiClusterClient::VolumeAttachmentInformerHandlers() {
  InformerHandlers h;
  Attachments* attachments = &attachments_;
  h.on_add = [attachments](const Object& o) {
    if (auto va = VolumeAttachmentOf(o)) attachments->Put(std::move(*va));
  };
  h.on_update = [attachments](const Object&, const Object& o) {
    if (auto va = VolumeAttachmentOf(o)) attachments->Put(std::move(*va));
  };
  VolumeAttachmentEventHandler* handler = VolumeAttachmentEventsOf(handler_);
  h.on_delete = [attachments, handler](const Object& o) {
    auto va = VolumeAttachmentOf(o);
    if (!va) return;
    attachments->Remove(va->name);
    if (handler) handler->OnVolumeAttachmentDelete(*va);
  };
  return h;
}
std::vector<Ptr<PodDisruptionBudget>> ApiClusterClient::ListPDBs() const {
  return ListInNamespace<PodDisruptionBudget>(kPDBs, "");
}
Ptr<PriorityClass> ApiClusterClient::GetPriorityClass(std::string_view name) const {
  return GetTyped<PriorityClass>(kPriorityClasses, std::string(name));
}

Ptr<PodGroup> ApiClusterClient::GetPodGroup(std::string_view ns, std::string_view name) const {
  return GetTyped<PodGroup>(kPodGroups, NsKey(ns, name));
}
std::vector<Ptr<PodGroup>> ApiClusterClient::ListPodGroups(std::string_view ns) const {
  return ListInNamespace<PodGroup>(kPodGroups, ns);
}
Ptr<SchedulingPodGroup> ApiClusterClient::GetSchedulingPodGroup(std::string_view ns,
                                                                std::string_view name) const {
  return GetTyped<SchedulingPodGroup>(kSchedulingPodGroups, NsKey(ns, name));
}

}  // namespace berth::client
