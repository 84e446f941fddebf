#include "client/api_cluster_client.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "api/json_text.h"
#include "client/micro_time.h"

namespace berth::client {

using Json = nlohmann::json;

namespace {

// The pods informer's indexes (GroupMemberLister) of spec.schedulingGroup.podGroupName and of
// the scheduling.x-k8s.io/pod-group label, by "namespace/group".
constexpr char kSchedulingGroupIndex[] = "schedulingGroup";
constexpr char kLabeledGroupIndex[] = "podGroupLabel";

std::string NsKey(std::string_view ns, std::string_view name) {
  return std::string(ns) + "/" + std::string(name);
}

// How long a write whose outcome is unknown (the connection broke, the request timed out) is
// sent again. Connections cut every few hundred milliseconds on a busy machine can fail many
// attempts in a row; every retried write here is safe to repeat.
constexpr auto kUnknownOutcomeBudget = std::chrono::seconds(30);
constexpr size_t kMaxQueuedEvents = 10000;  // events waiting to be written
constexpr size_t kEventBatch = 64;          // events a writer sends together
// How long a writer waits for more events before sending fewer than a batch. Events are for
// people reading them later: a few milliseconds late, many go in one round trip (one wake-up
// of each side), and they take less from the binding of pods they describe.
constexpr auto kEventLinger = std::chrono::milliseconds(10);
// How long a stop keeps writing the events still queued (kube-scheduler's broadcaster gives up
// on shutdown too); the kubelet allows a stopping pod 30 s in all.
constexpr auto kStopDrainBudget = std::chrono::seconds(3);

bool OutcomeUnknown(const Error& e) {
  return e.code == ErrorCode::kUnavailable || e.code == ErrorCode::kTimeout;
}

// Waits before the next attempt: doubling up to a second, jittered so that writes which failed
// together do not retry together.
void BackOff(std::chrono::milliseconds* wait) {
  static thread_local std::mt19937 rng{std::random_device{}()};
  const auto w = wait->count();
  std::this_thread::sleep_for(
      std::chrono::milliseconds(w / 2 + std::uniform_int_distribution<long>(0, w)(rng)));
  *wait = std::min(*wait * 2, std::chrono::milliseconds(1000));
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

std::string PodPath(const Pod& pod) {
  return fmt::format("/api/v1/namespaces/{}/pods/{}", pod.metadata.namespace_, pod.metadata.name);
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
    } else if (k == kDeviceClasses || k == kResourceSlices || k == kResourceClaims) {
      h = DraInformerHandlers(k == kDeviceClasses    ? DraEventResource::kDeviceClass
                              : k == kResourceSlices ? DraEventResource::kResourceSlice
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
                       k == kResourceSlices || k == kResourceClaims || k == kVolumeAttachments;
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
  StopWatching();
  {
    std::lock_guard lock(events_mu_);
    if (stopping_) return;
    stopping_ = true;
    drain_until_ = std::chrono::steady_clock::now() + kStopDrainBudget;
  }
  stop_retrying_ = true;
  events_cv_.notify_all();
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

VoidResult ApiClusterClient::Bind(const Pod& pod, std::string_view node_name) {
  // Written without a document: a binding is sent for every pod.
  std::string binding;
  binding.reserve(200);
  binding.append(R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":)");
  AppendJsonString(pod.metadata.name, &binding);
  binding.append(R"(,"namespace":)");
  AppendJsonString(pod.metadata.namespace_, &binding);
  binding.append(R"(,"uid":)");
  AppendJsonString(pod.metadata.uid, &binding);
  binding.append(R"(},"target":{"apiVersion":"v1","kind":"Node","name":)");
  AppendJsonString(node_name, &binding);
  binding.append("}}");
  // A POST whose answer was lost (a cut connection, a timeout) may have bound the pod, and a
  // repeated one (here, or the HTTP client's resend on a fresh connection) is then refused
  // with 409. The server binds only an unbound pod, so sending the binding again is safe; a 409
  // is settled by the pod itself: bound to this node means an earlier attempt landed (success,
  // reported once), anything else is a real Conflict.
  const std::string path = PodPath(pod) + "/binding";
  auto wait = std::chrono::milliseconds(100);
  const auto give_up = std::chrono::steady_clock::now() + kUnknownOutcomeBudget;
  for (int attempt = 0;; ++attempt) {
    // The first attempt goes with the other binding threads' (WriteCombiner). A retry, and a
    // first attempt turned away for now (429) or never sent, take the one-request path, which
    // retries those itself.
    VoidRequestResult r =
        attempt == 0 ? bindings_.Send(path, binding) : rest_->SendEncoded("POST", path, binding);
    if (attempt == 0 && !r.ok() &&
        (r.error().code == ErrorCode::kTooManyRequests || r.error().never_sent)) {
      r = rest_->SendEncoded("POST", path, binding);
    }
    if (r.ok()) return {};
    if (r.error().code == ErrorCode::kConflict) {
      // The read that settles it can be cut as well: it is retried within the same budget, or
      // an earlier attempt that did bind would be reported as a conflict.
      for (;;) {
        auto live = rest_->Get(PodPath(pod));
        if (live.ok()) {
          if (!live->is_object()) return r.error();
          const Json& meta = (*live)["metadata"];
          const Json& spec = (*live)["spec"];
          const bool same_pod =
              pod.metadata.uid.empty() || meta.value("uid", "") == pod.metadata.uid;
          if (same_pod && spec.is_object() && spec.value("nodeName", "") == node_name) return {};
          return r.error();
        }
        if (!OutcomeUnknown(live.error()) || std::chrono::steady_clock::now() > give_up)
          return r.error();
        BackOff(&wait);
      }
    }
    if (!OutcomeUnknown(r.error()) || std::chrono::steady_clock::now() > give_up) return r.error();
    if (log_)
      log_(fmt::format("binding {} to {} is retried: {}", pod.Key(), node_name, r.error().message));
    BackOff(&wait);
  }
}

VoidResult ApiClusterClient::DeletePod(const Pod& pod,
                                       std::function<void(const Error&)> on_failure) {
  // Queued: the scheduling thread (PostFilter) does not wait for the API server, and victims go
  // in parallel, as upstream's asynchronous preemption. A failure is logged by the writer and
  // reported to the caller, which retries the preemptor at once: no deletion event will come to
  // move it out of the unschedulable pool.
  victim_writer_.Submit("preempting pod " + pod.Key(),
                        [this, victim = pod, on_failure = std::move(on_failure)] {
                          VoidResult r = DeleteVictim(victim);
                          if (!r.ok() && on_failure) on_failure(r.error());
                          return r;
                        });
  return {};
}

void ApiClusterClient::DeletePodThen(const Pod& pod, std::function<void(const Error*)> done) {
  // On the victim writers too: `done` runs on the writer thread that made the calls.
  auto shared_done = std::make_shared<std::function<void(const Error*)>>(std::move(done));
  const bool queued =
      victim_writer_.Submit("preempting pod " + pod.Key(), [this, victim = pod, shared_done] {
        VoidResult r = DeleteVictim(victim);
        if (*shared_done) (*shared_done)(r.ok() ? nullptr : &r.error());
        return r;
      });
  if (!queued && *shared_done) {
    const Error dropped{"the deletion was dropped: too many writes are waiting",
                        ErrorCode::kUnavailable};
    (*shared_done)(&dropped);
  }
}

VoidResult ApiClusterClient::DeleteVictim(const Pod& pod) {
  // Preemption victims learn why they go before they go (the DisruptionTarget condition).
  Json cond = {{"type", "DisruptionTarget"},
               {"status", "True"},
               {"reason", "PreemptionByScheduler"},
               {"message", fmt::format("{}: preempting to accommodate a higher priority pod",
                                       reporting_name_)},
               {"lastTransitionTime",
                FormatTimestamp(std::chrono::duration_cast<std::chrono::seconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count())}};
  auto patched = rest_->Patch(PodPath(pod) + "/status", Json{{"status", {{"conditions", {cond}}}}},
                              "application/strategic-merge-patch+json");
  if (!patched.ok() && patched.error().code == ErrorCode::kNotFound) return {};  // already gone
  if (!patched.ok() && log_)
    log_("setting DisruptionTarget on " + pod.Key() + ": " + patched.error().message);
  Json opts = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (!pod.metadata.uid.empty()) opts["preconditions"] = {{"uid", pod.metadata.uid}};
  auto r = rest_->Delete(PodPath(pod), opts);
  if (!r.ok() && r.error().code != ErrorCode::kNotFound) return r.error();  // gone is as good
  return {};
}

VoidResult ApiClusterClient::SetNominatedNodeName(const Pod& pod, std::string_view node_name) {
  Json patch = {
      {"status", {{"nominatedNodeName", node_name.empty() ? Json(nullptr) : Json(node_name)}}}};
  // Status patches go through the status writer: the scheduler does not wait for them (a
  // failure is logged), as kube-scheduler's asynchronous API calls.
  QueueStatusPatch(pod, "setting nominatedNodeName of pod", std::move(patch),
                   "application/merge-patch+json");
  return {};
}

VoidResult ApiClusterClient::SetPodScheduledCondition(const Pod& pod, const PodCondition& cond) {
  Json c = {{"type", cond.type},
            {"status", cond.status},
            {"lastProbeTime", nullptr},
            {"lastTransitionTime",
             FormatTimestamp(std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count())}};
  if (!cond.reason.empty()) c["reason"] = cond.reason;
  if (!cond.message.empty()) c["message"] = cond.message;
  Json patch = {
      {"status", {{"$setElementOrder/conditions", {{{"type", cond.type}}}}, {"conditions", {c}}}}};
  QueueStatusPatch(pod, "updating the PodScheduled condition of pod", std::move(patch),
                   "application/strategic-merge-patch+json");
  return {};
}

void ApiClusterClient::AnnotatePod(const Pod& pod,
                                   const std::map<std::string, std::string>& annotations) {
  Ptr<Pod> live = GetPod(pod.metadata.namespace_, pod.metadata.name);
  if (!live) return;
  Json changed = Json::object();
  for (const auto& [k, v] : annotations) {
    auto it = live->metadata.annotations.find(k);
    if (it == live->metadata.annotations.end() || it->second != v) changed[k] = v;
  }
  if (changed.empty()) return;
  QueueStatusPatch(*live, "recording the scheduling decision on pod",
                   Json{{"metadata", {{"annotations", std::move(changed)}}}},
                   "application/merge-patch+json", "");
}

void ApiClusterClient::QueueStatusPatch(const Pod& pod, std::string_view what, Json patch,
                                        std::string content_type, std::string_view subresource) {
  std::string path = PodPath(pod) + std::string(subresource);
  status_writer_.Submit(std::string(what) + " " + pod.Key(),
                        [this, path, patch = std::move(patch), content_type]() -> VoidResult {
                          auto r = rest_->Send("PATCH", path, patch, content_type);
                          // A pod deleted meanwhile needs no status.
                          if (!r.ok() && r.error().code != ErrorCode::kNotFound) return r.error();
                          return {};
                        });
}

VoidResult ApiClusterClient::BindVolume(const PersistentVolumeClaim& pvc,
                                        std::string_view pv_name) {
  Json pv_patch = {
      {"spec",
       {{"claimRef",
         {{"kind", "PersistentVolumeClaim"},
          {"apiVersion", "v1"},
          {"namespace", pvc.metadata.namespace_},
          {"name", pvc.metadata.name},
          {"uid", pvc.metadata.uid}}}}},
      // The scheduler chose the volume, as upstream's binder records it.
      {"metadata", {{"annotations", {{"pv.kubernetes.io/bound-by-controller", "yes"}}}}}};
  auto r = rest_->Patch(fmt::format("/api/v1/persistentvolumes/{}", pv_name), pv_patch,
                        "application/merge-patch+json");
  if (!r.ok()) return r.error();
  Json pvc_patch = {{"spec", {{"volumeName", pv_name}}},
                    {"metadata",
                     {{"annotations",
                       {{"pv.kubernetes.io/bind-completed", "yes"},
                        {"pv.kubernetes.io/bound-by-controller", "yes"}}}}}};
  auto r2 = rest_->Patch(fmt::format("/api/v1/namespaces/{}/persistentvolumeclaims/{}",
                                     pvc.metadata.namespace_, pvc.metadata.name),
                         pvc_patch, "application/merge-patch+json");
  if (!r2.ok()) return r2.error();
  return {};
}

VoidResult ApiClusterClient::RequestProvisioning(const PersistentVolumeClaim& pvc,
                                                 std::string_view node_name) {
  Json patch = {
      {"metadata", {{"annotations", {{"volume.kubernetes.io/selected-node", node_name}}}}}};
  auto r = rest_->Patch(fmt::format("/api/v1/namespaces/{}/persistentvolumeclaims/{}",
                                    pvc.metadata.namespace_, pvc.metadata.name),
                        patch, "application/merge-patch+json");
  if (!r.ok()) return r.error();
  return {};
}

void ApiClusterClient::RecordPodEvent(const Pod& pod, std::string_view type,
                                      std::string_view reason, std::string_view action,
                                      std::string message, std::string_view controller) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  if (message.size() > 1024) message.resize(1024);
  PendingEvent ev{fmt::format("{}.{:x}", pod.metadata.name, rng() & 0xffffffffffffULL),
                  pod.metadata.namespace_,
                  std::string(type),
                  std::string(reason),
                  std::string(action),
                  std::string(controller),
                  MicroTimeNow(),
                  std::move(message),
                  pod.metadata.name,
                  pod.metadata.uid,
                  pod.metadata.resource_version};
  bool queued = false;
  size_t depth = 0;    // events waiting, this one included
  size_t dropped = 0;  // to report now
  {
    std::lock_guard lock(events_mu_);
    queued = events_.size() < kMaxQueuedEvents;
    if (queued) {
      events_.push_back(std::move(ev));
      depth = events_.size();
    } else {
      // The API server is not keeping up: drop, as client-go's broadcaster does (it keeps
      // 1,000), and say so at most every ten seconds.
      ++events_dropped_;
      const auto now = std::chrono::steady_clock::now();
      if (now - drops_logged_ >= std::chrono::seconds(10)) {
        dropped = std::exchange(events_dropped_, 0);
        drops_logged_ = now;
      }
    }
  }
  // A writer is woken by the first event (then waits a moment for more) and by a full batch,
  // not by every event.
  if (queued && (depth == 1 || depth == kEventBatch)) {
    events_cv_.notify_one();
  } else if (!queued && dropped > 0 && log_) {
    log_(
        fmt::format("events dropped: {} since the last report ({} wait to be written; the API "
                    "server is not keeping up)",
                    dropped, kMaxQueuedEvents));
  }
}

namespace {

// "regarding" / "involvedObject": the pod the event is about.
void AppendPodReference(const std::string& ns, const std::string& name, const std::string& uid,
                        const std::string& resource_version, std::string* out) {
  out->append(R"({"apiVersion":"v1","kind":"Pod","name":)");
  AppendJsonString(name, out);
  out->append(R"(,"namespace":)");
  AppendJsonString(ns, out);
  out->append(R"(,"resourceVersion":)");
  AppendJsonString(resource_version, out);
  out->append(R"(,"uid":)");
  AppendJsonString(uid, out);
  out->push_back('}');
}

// `{"apiVersion":...,"kind":"Event","metadata":{...}`: the start of either form of an event.
void AppendEventHead(std::string_view api_version, const std::string& name, const std::string& ns,
                     std::string* out) {
  out->append(R"({"apiVersion":)");
  AppendJsonString(api_version, out);
  out->append(R"(,"kind":"Event","metadata":{"name":)");
  AppendJsonString(name, out);
  out->append(R"(,"namespace":)");
  AppendJsonString(ns, out);
  out->push_back('}');
}

void AppendMember(std::string_view key, std::string_view value, std::string* out) {
  out->push_back(',');
  AppendJsonString(key, out);
  out->push_back(':');
  AppendJsonString(value, out);
}

}  // namespace

std::string ApiClusterClient::EventsV1Body(const PendingEvent& ev) {
  std::string out;
  out.reserve(512 + ev.note.size());
  AppendEventHead("events.k8s.io/v1", ev.name, ev.namespace_, &out);
  AppendMember("action", ev.action, &out);
  AppendMember("eventTime", ev.event_time, &out);
  AppendMember("note", ev.note, &out);
  AppendMember("reason", ev.reason, &out);
  out.append(R"(,"regarding":)");
  AppendPodReference(ev.namespace_, ev.pod_name, ev.pod_uid, ev.pod_resource_version, &out);
  AppendMember("reportingController", ev.controller, &out);
  AppendMember("reportingInstance", ev.controller + "-berth", &out);
  AppendMember("type", ev.type, &out);
  out.push_back('}');
  return out;
}

std::string ApiClusterClient::CoreV1EventBody(const PendingEvent& ev) {
  // core/v1 timestamps have whole seconds only.
  const std::string seconds = ev.event_time.substr(0, 19) + "Z";
  std::string out;
  out.reserve(640 + ev.note.size());
  AppendEventHead("v1", ev.name, ev.namespace_, &out);
  AppendMember("action", ev.action, &out);
  out.append(R"(,"count":1)");
  AppendMember("eventTime", ev.event_time, &out);
  AppendMember("firstTimestamp", seconds, &out);
  out.append(R"(,"involvedObject":)");
  AppendPodReference(ev.namespace_, ev.pod_name, ev.pod_uid, ev.pod_resource_version, &out);
  AppendMember("lastTimestamp", seconds, &out);
  AppendMember("message", ev.note, &out);
  AppendMember("reason", ev.reason, &out);
  AppendMember("reportingComponent", ev.controller, &out);
  AppendMember("reportingInstance", ev.controller + "-berth", &out);
  out.append(R"(,"source":{"component":)");
  AppendJsonString(ev.controller, &out);
  out.push_back('}');
  AppendMember("type", ev.type, &out);
  out.push_back('}');
  return out;
}

void ApiClusterClient::EventLoop() {
  std::vector<PendingEvent> batch;
  std::vector<RestClient::EncodedWrite> writes;
  for (;;) {
    batch.clear();
    {
      std::unique_lock lock(events_mu_);
      events_cv_.wait(lock, [&] { return stopping_ || !events_.empty(); });
      if (stopping_ && !events_.empty() && std::chrono::steady_clock::now() >= drain_until_) {
        const size_t left = events_.size();
        events_.clear();
        lock.unlock();
        if (log_)
          log_(fmt::format(
              "stopping: {} events not written within {} s are dropped", left,
              std::chrono::duration_cast<std::chrono::seconds>(kStopDrainBudget).count()));
        return;
      }
      if (events_.empty()) return;
      if (events_.size() < kEventBatch && !stopping_) {
        events_cv_.wait_for(lock, kEventLinger,
                            [&] { return stopping_ || events_.size() >= kEventBatch; });
      }
      // What waits, up to a batch, goes out together (pipelined on one connection): one round
      // trip for the lot.
      while (!events_.empty() && batch.size() < kEventBatch) {
        batch.push_back(std::move(events_.front()));
        events_.pop_front();
      }
    }
    // An event's name is chosen here, so a resend after a lost answer cannot duplicate it (the
    // server answers AlreadyExists): one that may not have arrived is sent again.
    auto post = [&](const std::string& path, const std::string& body) -> VoidRequestResult {
      auto wait = std::chrono::milliseconds(100);
      const auto give_up = std::chrono::steady_clock::now() + kUnknownOutcomeBudget;
      for (;;) {
        auto r = rest_->SendEncoded("POST", path, body);
        if (r.ok() || r.error().code == ErrorCode::kAlreadyExists) return {};
        if (!OutcomeUnknown(r.error()) || std::chrono::steady_clock::now() > give_up ||
            stop_retrying_)
          return r.error();
        BackOff(&wait);
      }
    };
    std::vector<const PendingEvent*> core_v1;
    if (events_api_ != 2) {
      writes.clear();
      for (const PendingEvent& ev : batch) {
        writes.push_back({fmt::format("/apis/events.k8s.io/v1/namespaces/{}/events", ev.namespace_),
                          EventsV1Body(ev)});
      }
      auto results = rest_->SendEncodedPipelined("POST", writes);
      for (size_t i = 0; i < batch.size(); ++i) {
        VoidRequestResult r = std::move(results[i]);
        // Lost or turned away for now (429): sent again alone, with backoff.
        if (!r.ok() && (OutcomeUnknown(r.error()) || r.error().code == ErrorCode::kTooManyRequests))
          r = post(writes[i].path, writes[i].body);
        if (r.ok() || r.error().code == ErrorCode::kAlreadyExists) {
          events_api_ = 1;
        } else if (r.error().code == ErrorCode::kNotFound) {
          events_api_ = 2;
          core_v1.push_back(&batch[i]);
        } else if (log_) {
          log_("writing event: " + r.error().message);
        }
      }
    } else {
      for (const PendingEvent& ev : batch) core_v1.push_back(&ev);
    }
    // core/v1 Events, for API servers without events.k8s.io.
    for (const PendingEvent* ev : core_v1) {
      auto r =
          post(fmt::format("/api/v1/namespaces/{}/events", ev->namespace_), CoreV1EventBody(*ev));
      if (!r.ok() && log_) log_("writing event: " + r.error().message);
    }
  }
}

}  // namespace berth::client
