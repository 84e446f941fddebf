// The Store's deletions: preconditions, graceful deletion, finalizers holding a deletion back,
// and namespaces, which go with their content in one transaction.
#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

#include "api/codec.h"
#include "apiserver/crd_registry.h"
#include "apiserver/store_internal.h"

namespace berth::apiserver {

using Json = nlohmann::json;

bool HasFinalizers(const Json& meta) {
  auto it = meta.find("finalizers");
  return it != meta.end() && it->is_array() && !it->empty();
}

bool HasSpecFinalizers(const Json& obj) {
  auto spec = obj.find("spec");
  return spec != obj.end() && spec->is_object() && HasFinalizers(*spec);
}

namespace {

bool GracePending(const Json& meta) {
  auto it = meta.find("deletionGracePeriodSeconds");
  return it != meta.end() && it->is_number_integer() && it->get<int64_t>() > 0;
}

// Ends the grace period of a marked object now: its deletionTimestamp moves up by what was left
// of it and deletionGracePeriodSeconds becomes 0.
void EndGracePeriod(Json& meta) {
  const int64_t grace = meta.value("deletionGracePeriodSeconds", int64_t{0});
  auto marked = ParseTimestamp(meta.value("deletionTimestamp", ""));
  meta["deletionTimestamp"] = FormatTimestamp(marked.ok() ? *marked - grace : NowUnixSeconds());
  meta["deletionGracePeriodSeconds"] = 0;
}

}  // namespace

StoredObject Store::Impl::RemoveNamespace(const ResourceInfo& r,
                                          std::map<std::string, StoredObject>& m,
                                          std::map<std::string, StoredObject>::iterator it,
                                          Json last, int64_t* rv) {
  OneTransaction transaction(*this);
  const std::string name = last["metadata"].value("name", "");
  const std::string prefix = name + "/";
  std::vector<const ResourceInfo*> kinds;
  for (const auto& res : ServedResources()) kinds.push_back(&res);
  for (const ResourceInfo* custom : CustomStorageResources()) kinds.push_back(custom);
  for (const ResourceInfo* kind : kinds) {
    const ResourceInfo& res = *kind;
    if (!res.namespaced || res.create_only || ViewOf(res)) continue;
    auto found = objects.find(res.StorageName());
    if (found == objects.end()) continue;
    auto& content = found->second;
    for (auto o = content.lower_bound(prefix);
         o != content.end() && o->first.compare(0, prefix.size(), prefix) == 0;) {
      StoredObject gone = Seal(Json(*o->second.object), ++revision);
      const std::string key = o->first;
      o = content.erase(o);
      Publish(res, name, key, WatchEventType::kDeleted, gone);
    }
  }
  *rv = ++revision;
  StoredObject removed = Seal(std::move(last), *rv);
  const std::string key = it->first;
  m.erase(it);
  Publish(r, "", key, WatchEventType::kDeleted, removed);
  return removed;
}

Result<StoredObject> Store::Impl::DeleteLocked(const ResourceInfo& r, std::string_view ns,
                                               std::string_view name,
                                               const DeletePreconditions& preconditions,
                                               bool dry_run, int64_t* rv, const GraceFn& grace) {
  auto [m, key, it] = Locate(r, ns, name);
  if (it == m.end()) return NotFoundError(r, name);
  const Json& meta = (*it->second.object)["metadata"];
  if (const auto& uid = preconditions.uid; uid && meta.value("uid", "") != *uid) {
    return Error{fmt::format("Precondition failed: UID in precondition: {}, UID in object meta: "
                             "{}",
                             *uid, meta.value("uid", "")),
                 ErrorCode::kConflict};
  }
  if (const auto& want = preconditions.resource_version;
      want && meta.value("resourceVersion", "") != *want) {
    return Error{fmt::format("Precondition failed: ResourceVersion in precondition: {}, "
                             "ResourceVersion in object meta: {}",
                             *want, meta.value("resourceVersion", "")),
                 ErrorCode::kConflict};
  }
  const GraceDecision decision = grace ? grace(*it->second.object) : GraceDecision{};
  if (decision.action == GraceDecision::kPending) return it->second;
  if (decision.action == GraceDecision::kMark) {
    // Marked for a graceful deletion: whoever stops the object (a pod's kubelet) deletes it
    // again with no grace when done.
    if (dry_run) return it->second;
    Json obj = *it->second.object;
    obj["metadata"]["deletionTimestamp"] = decision.deletion_timestamp;
    obj["metadata"]["deletionGracePeriodSeconds"] = decision.grace_seconds;
    if (obj["metadata"].contains("generation")) {
      obj["metadata"]["generation"] = obj["metadata"].value("generation", int64_t{0}) + 1;
    }
    *rv = ++revision;
    StoredObject graceful = Seal(std::move(obj), *rv);
    const StoredObject before = std::exchange(it->second, graceful);
    Publish(r, ns, key, WatchEventType::kModified, graceful, &before);
    return graceful;
  }
  const bool marked = meta.contains("deletionTimestamp");
  if (IsNamespaces(r) && !marked) {
    // The namespace starts terminating; it goes once the deleter has emptied it.
    Json obj = *it->second.object;
    obj["metadata"]["deletionTimestamp"] = FormatTimestamp(NowUnixSeconds());
    obj["status"]["phase"] = "Terminating";
    if (dry_run) return Seal(std::move(obj), it->second.rv);
    *rv = ++revision;
    StoredObject terminating = Seal(std::move(obj), *rv);
    const StoredObject before = std::exchange(it->second, terminating);
    Publish(r, ns, key, WatchEventType::kModified, terminating, &before);
    return terminating;
  }
  const bool held =
      HasFinalizers(meta) || (IsNamespaces(r) && HasSpecFinalizers(*it->second.object));
  if (held && marked && grace && !dry_run && GracePending(meta)) {
    // A graceful deletion cut short (a pod's kubelet confirming, or a forced delete) while
    // finalizers hold the object: from now on only they do, so removing the last one deletes it.
    Json obj = *it->second.object;
    EndGracePeriod(obj["metadata"]);
    *rv = ++revision;
    StoredObject ended = Seal(std::move(obj), *rv);
    const StoredObject before = std::exchange(it->second, ended);
    Publish(r, ns, key, WatchEventType::kModified, ended, &before);
    return ended;
  }
  if (held) {
    // Marked for deletion; the object goes when its last finalizer is removed.
    if (marked || dry_run) return it->second;
    Json obj = *it->second.object;
    obj["metadata"]["deletionTimestamp"] = FormatTimestamp(NowUnixSeconds());
    obj["metadata"]["deletionGracePeriodSeconds"] = 0;
    *rv = ++revision;
    StoredObject marking = Seal(std::move(obj), *rv);
    const StoredObject before = std::exchange(it->second, marking);
    Publish(r, ns, key, WatchEventType::kModified, marking, &before);
    return marking;
  }
  if (dry_run) return it->second;
  if (IsNamespaces(r)) return RemoveNamespace(r, m, it, Json(*it->second.object), rv);
  *rv = ++revision;
  StoredObject last = Seal(Json(*it->second.object), *rv);
  m.erase(it);
  Publish(r, ns, key, WatchEventType::kDeleted, last);
  return last;
}

StoredObject Store::Impl::FinishDeletion(const ResourceInfo& r, std::string_view ns,
                                         const std::string& key,
                                         std::map<std::string, StoredObject>& m,
                                         std::map<std::string, StoredObject>::iterator it,
                                         Json last, int64_t* rv) {
  if (IsNamespaces(r)) return RemoveNamespace(r, m, it, std::move(last), rv);
  *rv = ++revision;
  StoredObject removed = Seal(std::move(last), *rv);
  m.erase(it);
  Publish(r, ns, key, WatchEventType::kDeleted, removed);
  return removed;
}

Result<StoredObject> Store::Delete(const ResourceInfo& r, std::string_view ns,
                                   std::string_view name, const DeletePreconditions& preconditions,
                                   bool dry_run, Durability durability, const GraceFn& grace) {
  if (const StorageView* view = ViewOf(r)) {
    return Viewed(
        *view, r,
        DeleteObject(*view->storage, ns, name, preconditions, dry_run, durability, grace));
  }
  return DeleteObject(r, ns, name, preconditions, dry_run, durability, grace);
}

Result<StoredObject> Store::DeleteObject(const ResourceInfo& r, std::string_view ns,
                                         std::string_view name,
                                         const DeletePreconditions& preconditions, bool dry_run,
                                         Durability durability, const GraceFn& grace) {
  int64_t rv = 0;
  StoredObject last;
  {
    std::lock_guard lock(impl_->mu);
    auto gone = impl_->DeleteLocked(r, ns, name, preconditions, dry_run, &rv, grace);
    if (!gone.ok()) return gone.error();
    last = std::move(gone).value();
  }
  if (rv == 0) return last;
  return impl_->Acknowledge(std::move(last), rv, durability);
}

Result<int64_t> Store::DeleteMany(const std::vector<ObjectRef>& objects, Durability durability,
                                  const GraceFn& grace) {
  int64_t last_rv = 0;
  {
    std::lock_guard lock(impl_->mu);
    Impl::OneTransaction transaction(*impl_);
    for (const ObjectRef& o : objects) {
      const StorageView* view = ViewOf(*o.resource);
      DeletePreconditions preconditions;
      if (!o.uid.empty()) preconditions.uid = o.uid;
      // Gone already, or another object of that name now: left alone.
      (void)impl_->DeleteLocked(view ? *view->storage : *o.resource, o.ns, o.name, preconditions,
                                false, &last_rv, grace);
    }
  }
  if (last_rv == 0 || durability == Durability::kLater) return last_rv;
  if (auto d = impl_->WaitDurable(last_rv); !d.ok()) return d.error();
  return last_rv;
}

}  // namespace berth::apiserver
