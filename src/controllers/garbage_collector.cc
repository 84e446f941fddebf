#include "controllers/garbage_collector.h"

#include <fmt/format.h>

#include <algorithm>

namespace berth::controllers {
namespace {

bool HasFinalizer(const Json& obj, std::string_view name) {
  const Json& f = Member(Member(obj, "metadata"), "finalizers");
  if (!f.is_array()) return false;
  return std::find(f.begin(), f.end(), name) != f.end();
}

const Json& OwnerRefsOf(const Json& obj) {
  return Member(Member(obj, "metadata"), "ownerReferences");
}

std::set<std::string> OwnerUids(const Json* obj) {
  std::set<std::string> out;
  if (obj == nullptr) return out;
  const Json& refs = OwnerRefsOf(*obj);
  if (!refs.is_array()) return out;
  for (const auto& ref : refs) {
    if (ref.is_object() && ref.contains("uid") && ref["uid"].is_string()) {
      out.insert(ref["uid"].get<std::string>());
    }
  }
  return out;
}

bool BlocksOwner(const Json& dependent, const std::string& owner_uid) {
  const Json& refs = OwnerRefsOf(dependent);
  if (!refs.is_array()) return false;
  for (const auto& ref : refs) {
    if (ref.is_object() && ref.value("uid", "") == owner_uid &&
        ref.value("blockOwnerDeletion", false)) {
      return true;
    }
  }
  return false;
}

bool IsNotFound(const Error& e) { return e.code == ErrorCode::kNotFound; }

// The index and key of a queue key "<index>|<namespace>/<name>".
std::pair<size_t, std::string> SplitQueueKey(const std::string& key) {
  const auto bar = key.find('|');
  if (bar == std::string::npos) return {SIZE_MAX, key};
  return {static_cast<size_t>(std::stoul(key.substr(0, bar))), key.substr(bar + 1)};
}

}  // namespace

std::string GcResource::CollectionPath() const {
  return (group.empty() ? "/api/v1/" : "/apis/" + group + "/v1/") + plural;
}

std::string GcResource::ObjectPath(const std::string& ns, const std::string& name) const {
  const std::string prefix = group.empty() ? "/api/v1" : "/apis/" + group + "/v1";
  if (!namespaced) return fmt::format("{}/{}/{}", prefix, plural, name);
  return fmt::format("{}/namespaces/{}/{}/{}", prefix, ns, plural, name);
}

const std::vector<GcResource>& GcResources() {
  // As upstream, events are left out: they are never owners and are many.
  static const std::vector<GcResource> kResources = {
      {"", "Pod", "pods"},
      {"", "Node", "nodes", false},
      {"", "Service", "services"},
      {"", "Endpoints", "endpoints"},
      {"", "ConfigMap", "configmaps"},
      {"", "Secret", "secrets"},
      {"", "ServiceAccount", "serviceaccounts"},
      {"", "PersistentVolume", "persistentvolumes", false},
      {"", "PersistentVolumeClaim", "persistentvolumeclaims"},
      {"", "ReplicationController", "replicationcontrollers"},
      {"", "PodTemplate", "podtemplates"},
      {"apps", "Deployment", "deployments"},
      {"apps", "ReplicaSet", "replicasets"},
      {"apps", "StatefulSet", "statefulsets"},
      {"apps", "DaemonSet", "daemonsets"},
      {"apps", "ControllerRevision", "controllerrevisions"},
      {"batch", "Job", "jobs"},
      {"batch", "CronJob", "cronjobs"},
      {"coordination.k8s.io", "Lease", "leases"},
      {"policy", "PodDisruptionBudget", "poddisruptionbudgets"},
      {"networking.k8s.io", "Ingress", "ingresses"},
      {"networking.k8s.io", "NetworkPolicy", "networkpolicies"},
      // Generated claims are owned by their pods, the simulated kubelets' slices by their nodes.
      {"resource.k8s.io", "ResourceClaim", "resourceclaims", true, true},
      {"resource.k8s.io", "ResourceSlice", "resourceslices", false, true},
  };
  return kResources;
}

GarbageCollector::GarbageCollector(std::vector<GcResource> resources,
                                   std::vector<SharedInformer*> informers, client::RestClient* rest,
                                   ControllerOptions options)
    : resources_(std::move(resources)),
      informers_(std::move(informers)),
      rest_(rest),
      options_(std::move(options)),
      queue_(options_.clock),
      workers_(
          &queue_, [this](const std::string& key) { return Sync(key); }, options_.log) {
  for (size_t i = 0; i < informers_.size(); ++i) {
    client::InformerHandlers h;
    h.on_add = [this, i](const Object& o) { OnChange(i, nullptr, &DocOf(o), false); };
    h.on_update = [this, i](const Object& a, const Object& b) {
      OnChange(i, &DocOf(a), &DocOf(b), false);
    };
    h.on_delete = [this, i](const Object& o) { OnChange(i, &DocOf(o), &DocOf(o), true); };
    informers_[i]->AddHandlers(std::move(h));
  }
}

GarbageCollector::~GarbageCollector() { Stop(); }

void GarbageCollector::Start() { workers_.Start(options_.workers); }

void GarbageCollector::Stop() { workers_.Stop(); }

std::string GarbageCollector::KeyFor(size_t index, const Json& obj) {
  return std::to_string(index) + "|" + KeyOf(obj);
}

void GarbageCollector::OnChange(size_t index, const Json* old_doc, const Json* doc, bool deleted) {
  // An update that changes neither the owner references (blockOwnerDeletion included) nor the
  // deletion state changes nothing the collector decides on, the owners having been checked
  // when they were set: most updates, such as a node Lease's renewals, end here.
  if (old_doc != nullptr && !deleted && !HasDeletionTimestamp(*doc) &&
      OwnerRefsOf(*old_doc) == OwnerRefsOf(*doc)) {
    return;
  }
  const std::set<std::string> owners = OwnerUids(doc);
  const std::string key = KeyFor(index, *doc);
  const std::string uid = UidOf(*doc);
  std::set<std::string> to_enqueue;
  {
    std::lock_guard lock(mu_);
    for (const auto& owner : OwnerUids(old_doc)) {
      auto it = dependents_.find(owner);
      if (it == dependents_.end()) continue;
      it->second.erase(key);
      if (it->second.empty()) dependents_.erase(it);
    }
    if (deleted) {
      keys_by_uid_.erase(uid);
      // Dependents find their owner gone; owners waiting for their dependents look again.
      if (auto it = dependents_.find(uid); it != dependents_.end()) {
        to_enqueue.insert(it->second.begin(), it->second.end());
      }
      for (const auto& owner : owners) {
        if (auto k = keys_by_uid_.find(owner); k != keys_by_uid_.end())
          to_enqueue.insert(k->second);
      }
    } else {
      keys_by_uid_[uid] = key;
      for (const auto& owner : owners) dependents_[owner].insert(key);
      if (!owners.empty()) to_enqueue.insert(key);
      if (HasDeletionTimestamp(*doc)) {
        if (HasFinalizer(*doc, kOrphanFinalizer) || HasFinalizer(*doc, kForegroundFinalizer)) {
          to_enqueue.insert(key);
        }
        // A dependent being deleted may be what its foreground-deleted owner waits for.
        for (const auto& owner : owners) {
          if (auto k = keys_by_uid_.find(owner); k != keys_by_uid_.end()) {
            to_enqueue.insert(k->second);
          }
        }
      }
    }
  }
  for (const auto& k : to_enqueue) queue_.Add(k);
}

const GcResource* GarbageCollector::ResourceOf(const Json& ref, size_t* index) const {
  const std::string api_version = ref.value("apiVersion", "");
  const std::string kind = ref.value("kind", "");
  for (size_t i = 0; i < resources_.size(); ++i) {
    if (resources_[i].kind == kind && resources_[i].ApiVersion() == api_version) {
      *index = i;
      return &resources_[i];
    }
  }
  return nullptr;
}

GarbageCollector::OwnerState GarbageCollector::StateOf(const std::string& ns, const Json& ref) {
  size_t index = 0;
  const GcResource* r = ResourceOf(ref, &index);
  // An owner of a kind not watched cannot be checked: it is left alone, never guessed absent.
  if (r == nullptr) return OwnerState::kUnknown;
  // A cluster-scoped dependent cannot have a namespaced owner (upstream treats it as absent).
  if (r->namespaced && ns.empty()) return OwnerState::kAbsent;
  const std::string owner_ns = r->namespaced ? ns : "";
  const std::string name = ref.value("name", "");
  const std::string uid = ref.value("uid", "");
  auto state = [&](const Json& owner) {
    if (UidOf(owner) != uid) return OwnerState::kAbsent;
    if (HasDeletionTimestamp(owner) && HasFinalizer(owner, kForegroundFinalizer)) {
      return OwnerState::kWaitingForDependents;
    }
    return OwnerState::kSolid;
  };
  const std::string cache_key = owner_ns.empty() ? name : owner_ns + "/" + name;
  if (auto cached = informers_[index]->Get(cache_key); cached && UidOf(DocOf(*cached)) == uid) {
    return state(DocOf(*cached));
  }
  {
    std::lock_guard lock(mu_);
    if (absent_owners_.count(uid)) return OwnerState::kAbsent;
  }
  // The cache may lag behind an owner just created: absence is confirmed by the server.
  auto live = rest_->Get(r->ObjectPath(owner_ns, name));
  if (!live.ok() && !IsNotFound(live.error())) return OwnerState::kUnknown;
  const OwnerState found = live.ok() ? state(*live) : OwnerState::kAbsent;
  if (found == OwnerState::kAbsent && !uid.empty()) {
    std::lock_guard lock(mu_);
    if (absent_owners_.insert(uid).second) {
      absent_order_.push_back(uid);
      if (absent_order_.size() > kAbsentOwnerCacheSize) {
        absent_owners_.erase(absent_order_.front());
        absent_order_.pop_front();
      }
    }
  }
  return found;
}

std::vector<GarbageCollector::Dependent> GarbageCollector::DependentsOf(const std::string& uid) {
  std::set<std::string> keys;
  {
    std::lock_guard lock(mu_);
    if (auto it = dependents_.find(uid); it != dependents_.end()) keys = it->second;
  }
  std::vector<Dependent> out;
  for (const auto& key : keys) {
    auto [index, object_key] = SplitQueueKey(key);
    if (index >= informers_.size()) continue;
    auto obj = informers_[index]->Get(object_key);
    if (obj && OwnerUids(&DocOf(*obj)).count(uid)) out.push_back({index, DocOf(*obj)});
  }
  return out;
}

VoidResult GarbageCollector::Sync(const std::string& key) {
  auto [index, object_key] = SplitQueueKey(key);
  if (index >= informers_.size()) return {};
  auto obj = informers_[index]->Get(object_key);
  if (!obj) return {};
  const Json doc = DocOf(*obj);
  if (HasDeletionTimestamp(doc)) {
    if (HasFinalizer(doc, kOrphanFinalizer)) return OrphanDependents(index, doc);
    if (HasFinalizer(doc, kForegroundFinalizer)) {
      if (auto ok = DeleteDependentsFirst(index, doc, key); !ok.ok()) return ok;
    }
    return {};
  }
  return AttemptToDelete(index, doc);
}

VoidResult GarbageCollector::AttemptToDelete(size_t index, const Json& doc) {
  const Json& refs = OwnerRefsOf(doc);
  if (!refs.is_array() || refs.empty()) return {};
  const std::string ns = NamespaceOf(doc);
  std::set<std::string> solid, absent, waiting;
  for (const auto& ref : refs) {
    if (!ref.is_object()) continue;
    const std::string uid = ref.value("uid", "");
    switch (StateOf(ns, ref)) {
      case OwnerState::kAbsent:
        absent.insert(uid);
        break;
      case OwnerState::kWaitingForDependents:
        waiting.insert(uid);
        break;
      case OwnerState::kSolid:
      case OwnerState::kUnknown:
        solid.insert(uid);
        break;
    }
  }
  if (!solid.empty()) {
    // Still owned: only the references to owners that are gone or going are dropped.
    std::set<std::string> drop = absent;
    drop.insert(waiting.begin(), waiting.end());
    if (drop.empty()) return {};
    return RemoveOwnerRefs(index, doc, drop);
  }
  // An owner waits for its dependents: one that has dependents of its own goes in the
  // foreground too, so theirs go first (upstream's attemptToDeleteItem).
  const bool foreground = !waiting.empty() && !DependentsOf(UidOf(doc)).empty();
  return DeleteObject(index, doc, foreground ? "Foreground" : "Background");
}

VoidResult GarbageCollector::OrphanDependents(size_t index, const Json& owner) {
  const std::string uid = UidOf(owner);
  for (const Dependent& d : DependentsOf(uid)) {
    if (auto ok = RemoveOwnerRefs(d.index, d.doc, {uid}); !ok.ok()) return ok;
  }
  return RemoveFinalizer(index, owner, kOrphanFinalizer);
}

VoidResult GarbageCollector::DeleteDependentsFirst(size_t index, const Json& owner,
                                                   const std::string& key) {
  const std::string uid = UidOf(owner);
  bool blocked = false;
  for (const Dependent& d : DependentsOf(uid)) {
    const bool blocking = BlocksOwner(d.doc, uid);
    blocked = blocked || blocking;
    if (HasDeletionTimestamp(d.doc)) continue;
    // A blocking dependent with dependents of its own goes in the foreground too, so theirs
    // go before it.
    const bool foreground = blocking && !DependentsOf(UidOf(d.doc)).empty();
    if (auto ok = DeleteObject(d.index, d.doc, foreground ? "Foreground" : "Background");
        !ok.ok()) {
      return ok;
    }
  }
  if (blocked) {
    // Each dependent's deletion enqueues the owner again; this is a backstop.
    queue_.AddAfter(key, std::chrono::seconds(5));
    return {};
  }
  return RemoveFinalizer(index, owner, kForegroundFinalizer);
}

VoidResult GarbageCollector::RemoveFinalizer(size_t index, const Json& obj,
                                             const std::string& finalizer) {
  Json kept = Json::array();
  for (const auto& f : Member(Member(obj, "metadata"), "finalizers")) {
    if (f != finalizer) kept.push_back(f);
  }
  // The resourceVersion makes the patch a compare-and-swap: a concurrent change of the list
  // is a conflict, and the key is synced again.
  Json patch = {{"metadata",
                 {{"finalizers", kept},
                  {"resourceVersion", StringAt(Member(obj, "metadata"), "resourceVersion")}}}};
  auto r = rest_->Patch(resources_[index].ObjectPath(NamespaceOf(obj), NameOf(obj)), patch,
                        "application/merge-patch+json");
  if (!r.ok() && !IsNotFound(r.error())) return r.error();
  return {};
}

VoidResult GarbageCollector::RemoveOwnerRefs(size_t index, const Json& obj,
                                             const std::set<std::string>& uids) {
  Json kept = Json::array();
  bool changed = false;
  for (const auto& ref : OwnerRefsOf(obj)) {
    if (ref.is_object() && uids.count(ref.value("uid", ""))) {
      changed = true;
      continue;
    }
    kept.push_back(ref);
  }
  if (!changed) return {};
  Json patch = {{"metadata",
                 {{"ownerReferences", kept},
                  {"resourceVersion", StringAt(Member(obj, "metadata"), "resourceVersion")}}}};
  auto r = rest_->Patch(resources_[index].ObjectPath(NamespaceOf(obj), NameOf(obj)), patch,
                        "application/merge-patch+json");
  if (!r.ok() && !IsNotFound(r.error())) return r.error();
  return {};
}

VoidResult GarbageCollector::DeleteObject(size_t index, const Json& obj,
                                          const std::string& policy) {
  Json options = {{"propagationPolicy", policy}, {"preconditions", {{"uid", UidOf(obj)}}}};
  auto r = rest_->Delete(resources_[index].ObjectPath(NamespaceOf(obj), NameOf(obj)), options);
  // Gone already, or replaced by another object of the same name (the uid precondition).
  if (!r.ok() && !IsNotFound(r.error()) && r.error().code != ErrorCode::kConflict) {
    return r.error();
  }
  if (options_.log && r.ok()) {
    options_.log(fmt::format("garbagecollector: deleted {} {}/{} (propagationPolicy {})",
                             resources_[index].kind, NamespaceOf(obj), NameOf(obj), policy));
  }
  return {};
}

}  // namespace berth::controllers
