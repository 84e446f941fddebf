// The Store's writes other than deletions: Create, Mutate (read-modify-write under the lock)
// and Change (a change made in place when no reader holds the current version).
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <optional>
#include <string>
#include <utility>

#include "api/codec.h"
#include "apiserver/crd_registry.h"
#include "apiserver/field_errors.h"
#include "apiserver/namespace_deleter.h"
#include "apiserver/store_internal.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

// Whether `next` is a new generation of `current`: its spec changed, or, for a custom
// resource, anything but metadata (and status, when status is a subresource), as
// apiextensions-apiserver counts.
bool GenerationChanged(const ResourceInfo& r, const Json& current, const Json& next) {
  const CustomResourceVersion* custom = CustomResourceOf(r);
  if (!custom) {
    return next.contains("spec") && current.contains("spec") && next["spec"] != current["spec"];
  }
  const bool status_sub =
      std::find(r.subresources.begin(), r.subresources.end(), "status") != r.subresources.end();
  for (const auto* pair : {&current, &next}) {
    for (const auto& [key, value] : pair->items()) {
      if (key == "metadata" || key == "apiVersion" || key == "kind") continue;
      if (key == "status" && status_sub) continue;
      const Json& other = pair == &current ? next : current;
      auto it = other.find(key);
      if (it == other.end() || *it != value) return true;
    }
  }
  return false;
}

// The metadata of an update checked against the current object's: a resourceVersion other
// than the current one is a Conflict and another name a BadRequest; the fields the server owns
// are kept as they are.
VoidResult CheckUpdateMetadata(const ResourceInfo& r, std::string_view name, const Json& cur_meta,
                               Json& meta) {
  if (meta.contains("resourceVersion") && meta["resourceVersion"].is_string() &&
      !meta["resourceVersion"].get<std::string>().empty() &&
      meta["resourceVersion"] != cur_meta["resourceVersion"]) {
    return ConflictError(r, name);
  }
  if (meta.contains("name") && meta["name"] != cur_meta["name"]) {
    return Error{fmt::format("the name of the object ({}) does not match the name on the URL "
                             "({})",
                             meta["name"].dump(), name),
                 ErrorCode::kBadRequest};
  }
  // Immutable metadata the server owns.
  for (const char* field : {"name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
                            "deletionGracePeriodSeconds"}) {
    if (cur_meta.contains(field)) {
      meta[field] = cur_meta[field];
    } else {
      meta.erase(field);
    }
  }
  return {};
}

// While an object is being deleted, its finalizers can only be removed, never added.
VoidResult RefuseNewFinalizers(const ResourceInfo& r, std::string_view name, const Json& cur_meta,
                               const Json& meta) {
  const Json& before = cur_meta.contains("finalizers") ? cur_meta["finalizers"] : Json::array();
  for (const auto& f : meta["finalizers"]) {
    if (std::find(before.begin(), before.end(), f) == before.end()) {
      return Error{fmt::format("{} \"{}\" is forbidden: no new finalizers can be added if "
                               "the object is being deleted, found new finalizers [{}]",
                               r.plural, name, f.is_string() ? f.get<std::string>() : f.dump()),
                   ErrorCode::kForbidden};
    }
  }
  return {};
}

// A change made by Store::Change, with a throw (a document of an unexpected shape) answered as
// an error.
Result<bool> ApplyChange(const Store::ChangeFn& change, Json& obj) {
  try {
    return change(obj);
  } catch (const std::exception& e) {
    return Error{fmt::format("internal error: {}", e.what()), ErrorCode::kUnknown};
  }
}

}  // namespace

Result<StoredObject> Store::Create(const ResourceInfo& r, std::string_view ns, Json obj,
                                   bool dry_run, Durability durability) {
  if (const StorageView* view = ViewOf(r)) {
    return Viewed(
        *view, r,
        Create(*view->storage, ns, view->to_storage(std::move(obj)), dry_run, durability));
  }
  int64_t rv;
  StoredObject result;
  {
    std::lock_guard lock(impl_->mu);
    Json& meta = obj["metadata"];
    if (!meta.is_object()) meta = Json::object();
    std::string name = meta.value("name", "");
    auto& m = impl_->Objects(r);
    if (name.empty()) {
      std::string prefix = meta.value("generateName", "");
      if (prefix.empty()) {
        return InvalidObject(
            r.kind, "",
            {{FieldErrorType::kRequired, "metadata.name", "name or generateName is required"}});
      }
      // Cut as kube-apiserver's generator cuts it, so the name stays within a label's 63.
      prefix.resize(std::min<size_t>(prefix.size(), 58));
      do {
        name = prefix + impl_->RandomSuffix(prefix);
      } while (m.count(ObjectKey(ns, name)) > 0);
      meta["name"] = name;
    }
    if (r.namespaced) {
      const StoredObject* space = impl_->FindNamespace(ns);
      if (!space) {
        return Error{fmt::format("namespaces \"{}\" not found", ns), ErrorCode::kNotFound};
      }
      // Checked under the lock that the namespace's deletion takes: no object slips in after
      // the deleter has listed the namespace's content (kube-apiserver's NamespaceLifecycle).
      if ((*space->object)["metadata"].contains("deletionTimestamp")) {
        return NamespaceTerminatingError(r.StorageName(), name, ns);
      }
    }
    const std::string key = ObjectKey(ns, name);
    // One search of the (large) map serves the existence check and the insertion below.
    auto at = m.lower_bound(key);
    if (at != m.end() && at->first == key) {
      return Error{fmt::format("{} \"{}\" already exists", r.StorageName(), name),
                   ErrorCode::kAlreadyExists};
    }
    if (r.namespaced) {
      meta["namespace"] = std::string(ns);
    } else {
      meta.erase("namespace");
    }
    meta["uid"] = impl_->NewUid();
    meta["creationTimestamp"] = FormatTimestamp(NowUnixSeconds());
    if (obj.contains("spec") || CustomResourceOf(r)) meta["generation"] = 1;
    obj["apiVersion"] = r.GroupVersion();
    obj["kind"] = r.kind;
    if (dry_run) return impl_->Seal(std::move(obj), impl_->revision);
    rv = ++impl_->revision;
    result = impl_->Seal(std::move(obj), rv);
    m.emplace_hint(at, key, result);
    impl_->Publish(r, ns, key, WatchEventType::kAdded, result);
  }
  return impl_->Acknowledge(std::move(result), rv, durability);
}

Result<StoredObject> Store::Mutate(const ResourceInfo& r, std::string_view ns,
                                   std::string_view name, const MutateFn& fn, bool allow_create,
                                   bool dry_run, bool* created, Durability durability) {
  if (const StorageView* view = ViewOf(r)) {
    MutateFn stored_fn = [&](const Json* current) -> Result<Json> {
      std::optional<Json> viewed;
      if (current) viewed = view->from_storage(*current);
      auto next = fn(viewed ? &*viewed : nullptr);
      if (!next.ok()) return next.error();
      return view->to_storage(std::move(next).value());
    };
    return Viewed(
        *view, r,
        Mutate(*view->storage, ns, name, stored_fn, allow_create, dry_run, created, durability));
  }
  if (created) *created = false;
  const nlohmann::json* current = nullptr;
  {
    std::unique_lock lock(impl_->mu);
    auto [m, key, it] = impl_->Locate(r, ns, name);
    if (it != m.end()) current = it->second.object.get();
    if (!current && !allow_create) return NotFoundError(r, name);
    auto next = fn(current);
    if (!next.ok()) return next.error();
    Json obj = std::move(next).value();
    if (!current) {
      lock.unlock();
      if (created) *created = true;
      obj["metadata"]["name"] = std::string(name);
      obj["metadata"].erase("resourceVersion");
      return Create(r, ns, std::move(obj), dry_run, durability);
    }
    const Json& cur_meta = (*current)["metadata"];
    Json& meta = obj["metadata"];
    if (!meta.is_object()) meta = Json::object();
    if (auto ok = CheckUpdateMetadata(r, name, cur_meta, meta); !ok.ok()) return ok.error();
    const bool being_deleted = cur_meta.contains("deletionTimestamp");
    // A graceful deletion still running (a pod its kubelet is stopping) is not finished by an
    // update; only a deletion held back by finalizers alone is.
    const bool grace_pending = cur_meta.value("deletionGracePeriodSeconds", int64_t{0}) > 0;
    if (being_deleted && !grace_pending && !HasFinalizers(meta) &&
        !(IsNamespaces(r) && HasSpecFinalizers(obj)) && !dry_run) {
      // The last finalizer is gone: the deletion it held back happens now.
      int64_t rv = 0;
      StoredObject last = impl_->FinishDeletion(r, ns, key, m, it, std::move(obj), &rv);
      lock.unlock();
      return impl_->Acknowledge(std::move(last), rv, durability);
    }
    if (being_deleted && HasFinalizers(meta)) {
      if (auto ok = RefuseNewFinalizers(r, name, cur_meta, meta); !ok.ok()) return ok.error();
    }
    const bool spec_changed = GenerationChanged(r, *current, obj);
    if (spec_changed) {
      meta["generation"] = cur_meta.value("generation", 0) + 1;
    } else if (cur_meta.contains("generation")) {
      meta["generation"] = cur_meta["generation"];
    }
    obj["apiVersion"] = r.GroupVersion();
    obj["kind"] = r.kind;
    // A changed spec already tells the objects apart (a binding's does): no second comparison.
    if ((!spec_changed && obj == *current) || dry_run) {
      // Unchanged: no new revision, as kube-apiserver.
      return dry_run ? impl_->Seal(std::move(obj), it->second.rv) : it->second;
    }
    int64_t rv = ++impl_->revision;
    StoredObject result = impl_->Seal(std::move(obj), rv);
    const StoredObject before = std::exchange(it->second, result);
    impl_->Publish(r, ns, key, WatchEventType::kModified, result, &before);
    lock.unlock();
    return impl_->Acknowledge(std::move(result), rv, durability);
  }
}

Result<StoredObject> Store::Change(const ResourceInfo& r, std::string_view ns,
                                   std::string_view name, const ChangeFn& change, bool dry_run,
                                   Durability durability) {
  int64_t rv;
  StoredObject result;
  {
    std::unique_lock lock(impl_->mu);
    auto [m, key, it] = impl_->Locate(r, ns, name);
    if (it == m.end()) return NotFoundError(r, name);
    // Someone else holds this version (a reader, a list, a watcher): change a copy instead.
    if (dry_run || ViewOf(r) || it->second.object.use_count() != 1) {
      lock.unlock();
      return Mutate(
          r, ns, name,
          [&](const Json* current) -> Result<Json> {
            Json next = *current;
            if (auto changed = ApplyChange(change, next); !changed.ok()) return changed.error();
            return next;
          },
          false, dry_run, nullptr, durability);
    }
    // Only the store holds it, and only under this lock can anyone else get it (the watch
    // history keeps weak references, taken under the lock): it is changed where it is.
    const std::vector<char> matched_before = impl_->MatchedBefore(r, ns, *it->second.object);
    Json& obj = const_cast<Json&>(*it->second.object);
    const int64_t generation = obj["metadata"].value("generation", int64_t{0});
    auto spec_changed = ApplyChange(change, obj);
    if (!spec_changed.ok()) {
      // A change that failed half way (a document of an unexpected shape) must not leave the
      // stored tree unlike its text: the version is read back from its text.
      it->second.object = TreeOf({}, it->second.text);
      return spec_changed.error();
    }
    // As Mutate: a changed spec is a new generation.
    if (*spec_changed) obj["metadata"]["generation"] = generation + 1;
    rv = ++impl_->revision;
    const StoredObject before{it->second.rv, nullptr, it->second.text};
    result = impl_->Seal(std::move(obj), rv);
    it->second = result;
    impl_->Publish(r, ns, key, WatchEventType::kModified, result, &before, &matched_before);
  }
  return impl_->Acknowledge(std::move(result), rv, durability);
}

}  // namespace berth::apiserver
