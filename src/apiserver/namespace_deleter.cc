#include "apiserver/namespace_deleter.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "api/codec.h"
#include "apiserver/crd_registry.h"
#include "apiserver/resources.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

const ResourceInfo& Namespaces() { return *FindResource("", "v1", "namespaces"); }

// The resources a namespace's content is kept under. events.k8s.io Events are core/v1 Events
// in storage, so deleting those deletes both; bindings are not kept.
bool IsContent(const ResourceInfo& r) {
  return r.namespaced && !r.create_only && !(r.group == "events.k8s.io" && r.plural == "events");
}

// Every kind, built-in or custom (crd_registry.h), whose objects a namespace may hold. The
// pointers stay valid for the process's life.
std::vector<const ResourceInfo*> ContentKinds() {
  std::vector<const ResourceInfo*> out;
  for (const ResourceInfo& r : ServedResources()) {
    if (IsContent(r)) out.push_back(&r);
  }
  for (const ResourceInfo* r : CustomStorageResources()) {
    if (IsContent(*r)) out.push_back(r);
  }
  return out;
}

const Json& MetadataOf(const Json& obj) {
  static const Json kEmpty = Json::object();
  auto it = obj.find("metadata");
  return it != obj.end() && it->is_object() ? *it : kEmpty;
}

std::vector<std::string> StringsAt(const Json& obj, const char* key) {
  std::vector<std::string> out;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_array()) return out;
  for (const Json& v : *it) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

std::vector<std::string> SpecFinalizers(const Json& ns) {
  auto spec = ns.find("spec");
  if (spec == ns.end() || !spec->is_object()) return {};
  return StringsAt(*spec, "finalizers");
}

// The namespace controller's deletion conditions, in its order, with the variant that says
// all is well where nothing failed.
struct Condition {
  const char* type;
  const char* ok_reason;
  const char* ok_message;
};
constexpr Condition kConditions[] = {
    {"NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered",
     "All resources successfully discovered"},
    {"NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions",
     "All legacy kube types successfully parsed"},
    {"NamespaceDeletionContentFailure", "ContentDeleted",
     "All content successfully deleted, may be waiting on finalization"},
    {"NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"},
    {"NamespaceFinalizersRemaining", "ContentRemoved", "All content successfully removed"},
};

// What is left in a namespace: objects per resource ("configmaps." for core, as upstream
// names a group/resource) and per finalizer.
struct Remaining {
  int64_t total = 0;
  std::map<std::string, int64_t> per_resource;
  std::map<std::string, int64_t> per_finalizer;
};

// `status.conditions` updated with what `left` says, as the namespace controller updates them:
// a condition whose status changes gets a new lastTransitionTime. Returns whether anything
// changed.
bool UpdateConditions(Json& status, const Remaining& left, const std::string& now) {
  std::map<std::string, std::pair<std::string, std::string>> failing;  // type -> reason, message
  if (!left.per_resource.empty()) {
    std::vector<std::string> parts;
    for (const auto& [resource, n] : left.per_resource) {
      parts.push_back(fmt::format("{} has {} resource instances", resource, n));
    }
    failing["NamespaceContentRemaining"] = {
        "SomeResourcesRemain", fmt::format("Some resources are remaining: {}",
                                           fmt::join(parts.begin(), parts.end(), ", "))};
  }
  if (!left.per_finalizer.empty()) {
    std::vector<std::string> parts;
    for (const auto& [finalizer, n] : left.per_finalizer) {
      parts.push_back(fmt::format("{} in {} resource instances", finalizer, n));
    }
    failing["NamespaceFinalizersRemaining"] = {
        "SomeFinalizersRemain",
        fmt::format("Some content in the namespace has finalizers remaining: {}",
                    fmt::join(parts.begin(), parts.end(), ", "))};
  }
  if (!status.is_object()) status = Json::object();
  Json& conditions = status["conditions"];
  if (!conditions.is_array()) conditions = Json::array();
  bool changed = false;
  for (const Condition& c : kConditions) {
    auto fail = failing.find(c.type);
    const std::string state = fail != failing.end() ? "True" : "False";
    const std::string reason = fail != failing.end() ? fail->second.first : c.ok_reason;
    const std::string message = fail != failing.end() ? fail->second.second : c.ok_message;
    auto old = std::find_if(conditions.begin(), conditions.end(), [&](const Json& existing) {
      return existing.is_object() && existing.value("type", "") == c.type;
    });
    if (old == conditions.end()) {
      conditions.push_back({{"type", c.type},
                            {"status", state},
                            {"lastTransitionTime", now},
                            {"reason", reason},
                            {"message", message}});
      changed = true;
      continue;
    }
    if (old->value("status", "") == state && old->value("reason", "") == reason &&
        old->value("message", "") == message) {
      continue;
    }
    if (old->value("status", "") != state) (*old)["lastTransitionTime"] = now;
    (*old)["status"] = state;
    (*old)["reason"] = reason;
    (*old)["message"] = message;
    changed = true;
  }
  return changed;
}

ApiError UidChanged(std::string_view name) {
  return Error{fmt::format("namespace {} was deleted and created again", name),
               ErrorCode::kConflict};
}

}  // namespace

Json PrepareNamespaceUpdate(std::string_view subresource, const Json& current, Json next) {
  if (!subresource.empty()) return next;  // status and finalize: the rest is kept already
  const Json* kept = nullptr;
  if (auto spec = current.find("spec"); spec != current.end() && spec->is_object()) {
    if (auto f = spec->find("finalizers"); f != spec->end()) kept = &*f;
  }
  Json& spec = next["spec"];
  if (!spec.is_object()) spec = Json::object();
  if (kept) {
    spec["finalizers"] = *kept;
  } else {
    spec.erase("finalizers");
  }
  return next;
}

ApiError NamespaceTerminatingError(std::string_view resource, std::string_view name,
                                   std::string_view ns) {
  ApiError e(Error{fmt::format("{} \"{}\" is forbidden: unable to create new content in "
                               "namespace {} because it is being terminated",
                               resource, name, ns),
                   ErrorCode::kForbidden});
  e.terminating_namespace = std::string(ns);
  return e;
}

std::optional<Json> NamespaceTerminatingCause(const ApiError& e) {
  if (e.code != ErrorCode::kForbidden || e.terminating_namespace.empty()) return std::nullopt;
  return Json{{"reason", "NamespaceTerminating"},
              {"message", fmt::format("namespace {} is being terminated", e.terminating_namespace)},
              {"field", "metadata.namespace"}};
}

NamespaceDeleter::NamespaceDeleter(Store& store, NamespaceDeleterOptions options)
    : store_(store), options_(std::move(options)) {
  options_.batch = std::max<size_t>(options_.batch, 1);
}

NamespaceDeleter::~NamespaceDeleter() { Stop(); }

VoidResult NamespaceDeleter::Start() {
  // From the current state: the first events are the namespaces there now, so a deletion cut
  // short by a crash is found like one asked for now. Called under the store's lock: it only
  // queues.
  auto watch = store_.Watch(Namespaces(), "", std::nullopt, nullptr, [this](const WatchEvent& ev) {
    if (ev.type != WatchEventType::kDeleted &&
        MetadataOf(*ev.object.object).contains("deletionTimestamp")) {
      Enqueue(MetadataOf(*ev.object.object).value("name", ""));
    }
    return true;
  });
  if (!watch.ok()) return watch.error();
  watch_ = std::move(watch).value();
  thread_ = std::thread([this] { Loop(); });
  return {};
}

void NamespaceDeleter::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  // Unregistering takes the store's lock, under which the callback takes mu_: not under mu_.
  watch_.reset();
}

void NamespaceDeleter::Enqueue(const std::string& name) {
  {
    std::lock_guard lock(mu_);
    queued_.insert(name);
  }
  cv_.notify_all();
}

bool NamespaceDeleter::WaitIdle(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return idle_cv_.wait_for(lock, timeout,
                           [&] { return queued_.empty() && waiting_.empty() && !busy_; });
}

void NamespaceDeleter::Loop() {
  std::unique_lock lock(mu_);
  auto next_recheck = std::chrono::steady_clock::now() + options_.recheck;
  while (!stopping_) {
    if (queued_.empty()) {
      if (waiting_.empty()) {
        idle_cv_.notify_all();
        cv_.wait(lock, [&] { return stopping_ || !queued_.empty(); });
        next_recheck = std::chrono::steady_clock::now() + options_.recheck;
        continue;
      }
      if (cv_.wait_until(lock, next_recheck, [&] { return stopping_ || !queued_.empty(); })) {
        continue;
      }
      queued_.merge(waiting_);
      waiting_.clear();
      next_recheck = std::chrono::steady_clock::now() + options_.recheck;
      continue;
    }
    const std::string name = std::move(queued_.extract(queued_.begin()).value());
    waiting_.erase(name);
    busy_ = true;
    lock.unlock();
    auto pass = Sync(name);
    if (!pass.ok() && options_.log) {
      options_.log(fmt::format("deleting namespace {}: {}", name, pass.error().message));
    }
    lock.lock();
    busy_ = false;
    if (!pass.ok() || pass->state == NamespaceSync::State::kContentRemaining) {
      waiting_.insert(name);
    }
  }
  idle_cv_.notify_all();
}

Result<NamespaceSync> NamespaceDeleter::Sync(std::string_view name) {
  NamespaceSync out;
  auto ns = store_.Get(Namespaces(), "", name);
  if (!ns.ok()) {
    if (ns.error().code == ErrorCode::kNotFound) return out;
    return ns.error();
  }
  const Json& meta = MetadataOf(*ns->object);
  if (!meta.contains("deletionTimestamp")) {
    out.state = NamespaceSync::State::kNotTerminating;
    return out;
  }
  const std::string uid = meta.value("uid", "");
  if (auto ok = DeleteContent(name, &out.deleted); !ok.ok()) return ok.error();
  // Without spec.finalizers any update of a Terminating namespace removes it: its conditions
  // are written only while a finalizer keeps it.
  const bool record = !SpecFinalizers(*ns->object).empty();
  auto left = CountRemaining(name, uid, record);
  if (!left.ok()) return left.error();
  out.remaining = *left;
  if (out.remaining > 0) {
    out.state = NamespaceSync::State::kContentRemaining;
    return out;
  }
  auto finalized = Finalize(name, uid);
  if (!finalized.ok()) return finalized.error();
  out.state = *finalized;
  return out;
}

VoidResult NamespaceDeleter::DeleteContent(std::string_view name, int64_t* deleted) {
  std::vector<Store::ObjectRef> batch;
  auto flush = [&]() -> VoidResult {
    if (batch.empty()) return {};
    // Durable in revision order: the finalize's commit, awaited, covers these.
    auto done = store_.DeleteMany(batch, Durability::kLater);
    if (!done.ok()) return done.error();
    *deleted += static_cast<int64_t>(batch.size());
    batch.clear();
    return {};
  };
  for (const ResourceInfo* kind : ContentKinds()) {
    const ResourceInfo& r = *kind;
    if (!IsContent(r)) continue;
    auto list = store_.List(r, name, nullptr, 0, "");
    if (!list.ok()) return list.error();
    for (const StoredObject& so : list->items) {
      const Json& meta = MetadataOf(*so.object);
      // Marked already: it waits for its finalizers.
      if (meta.contains("deletionTimestamp")) continue;
      batch.push_back({&r, std::string(name), meta.value("name", ""), meta.value("uid", "")});
      if (batch.size() < options_.batch) continue;
      if (auto ok = flush(); !ok.ok()) return ok;
    }
  }
  return flush();
}

Result<int64_t> NamespaceDeleter::CountRemaining(std::string_view name, const std::string& uid,
                                                 bool record) {
  Remaining left;
  for (const ResourceInfo* kind : ContentKinds()) {
    const ResourceInfo& r = *kind;
    if (!IsContent(r)) continue;
    auto list = store_.List(r, name, nullptr, 0, "");
    if (!list.ok()) return list.error();
    if (list->items.empty()) continue;
    left.total += static_cast<int64_t>(list->items.size());
    left.per_resource[r.plural + "." + r.group] += static_cast<int64_t>(list->items.size());
    for (const StoredObject& so : list->items) {
      for (const std::string& f : StringsAt(MetadataOf(*so.object), "finalizers")) {
        ++left.per_finalizer[f];
      }
    }
  }
  if (left.total == 0 || !record) return left.total;
  const std::string now = FormatTimestamp(NowUnixSeconds());
  auto updated = store_.Mutate(
      Namespaces(), "", name,
      [&](const Json* current) -> Result<Json> {
        if (MetadataOf(*current).value("uid", "") != uid) return UidChanged(name);
        Json next = *current;
        UpdateConditions(next["status"], left, now);
        return next;  // unchanged: no new revision
      },
      false, false, nullptr, Durability::kLater);
  if (!updated.ok() && updated.error().code != ErrorCode::kNotFound &&
      updated.error().code != ErrorCode::kConflict) {
    return updated.error();
  }
  return left.total;
}

Result<NamespaceSync::State> NamespaceDeleter::Finalize(std::string_view name,
                                                        const std::string& uid) {
  // The `finalize` subresource's write: without finalizers left (spec and metadata), the store
  // removes the namespace in it.
  auto finalized = store_.Mutate(
      Namespaces(), "", name,
      [&](const Json* current) -> Result<Json> {
        if (MetadataOf(*current).value("uid", "") != uid) return UidChanged(name);
        Json next = *current;
        if (auto spec = next.find("spec"); spec != next.end() && spec->is_object()) {
          std::vector<std::string> kept;
          for (const std::string& f : SpecFinalizers(next)) {
            if (f != kNamespaceFinalizer) kept.push_back(f);
          }
          if (kept.empty()) {
            spec->erase("finalizers");
          } else {
            (*spec)["finalizers"] = kept;
          }
        }
        return next;
      },
      false, false, nullptr, Durability::kAwait);
  if (!finalized.ok()) {
    const ErrorCode code = finalized.error().code;
    if (code == ErrorCode::kNotFound || code == ErrorCode::kConflict) {
      return NamespaceSync::State::kGone;
    }
    return finalized.error();
  }
  auto still = store_.Get(Namespaces(), "", name);
  if (!still.ok()) return NamespaceSync::State::kGone;
  if (MetadataOf(*still->object).value("uid", "") != uid) return NamespaceSync::State::kGone;
  return NamespaceSync::State::kHeldByOthers;
}

}  // namespace berth::apiserver
