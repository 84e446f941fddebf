#include "apiserver/namespace_deleter.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "api/codec.h"
#include "apiserver/crd_registry.h"
#include "apiserver/namespace_conditions.h"
#include "apiserver/pod_deletion.h"
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

// The longest grace period of pods in `pods` that have not finished: how long after the
// namespace's deletion their kubelets may still be stopping them.
int64_t LongestPodGrace(const std::vector<StoredObject>& pods) {
  int64_t longest = 0;
  for (const StoredObject& so : pods) {
    const Json& pod = *so.object;
    const std::string phase =
        pod.contains("status") && pod["status"].is_object() ? pod["status"].value("phase", "") : "";
    if (phase == "Succeeded" || phase == "Failed") continue;
    auto spec = pod.find("spec");
    if (spec == pod.end() || !spec->is_object()) continue;
    auto grace = spec->find("terminationGracePeriodSeconds");
    if (grace != spec->end() && grace->is_number_integer()) {
      longest = std::max(longest, grace->get<int64_t>());
    }
  }
  return longest;
}

bool IsPods(const ResourceInfo& r) { return r.group.empty() && r.plural == "pods"; }

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
  // From now on only: pods deleted before are no news to a namespace not yet looked at.
  auto pods = store_.Watch(*FindResource("", "v1", "pods"), "", store_.revision(), nullptr,
                           [this](const WatchEvent& ev) {
                             if (ev.type == WatchEventType::kDeleted) {
                               Wake(MetadataOf(*ev.object.object).value("namespace", ""));
                             }
                             return true;
                           });
  if (!pods.ok()) return pods.error();
  pod_watch_ = std::move(pods).value();
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
  // Unregistering takes the store's lock, under which the callbacks take mu_: not under mu_.
  watch_.reset();
  pod_watch_.reset();
}

void NamespaceDeleter::Enqueue(const std::string& name) {
  {
    std::lock_guard lock(mu_);
    queued_.insert(name);
  }
  cv_.notify_all();
}

void NamespaceDeleter::Wake(const std::string& name) {
  {
    std::lock_guard lock(mu_);
    if (waiting_.erase(name) == 0) return;
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
  int64_t pod_grace = 0;
  if (auto ok = DeleteContent(name, &out.deleted, &pod_grace); !ok.ok()) return ok.error();
  // Pods left once the longest grace period of those found has run since the namespace was
  // deleted are not waiting for their kubelets any more.
  auto deleted_at = ParseTimestamp(meta.value("deletionTimestamp", ""));
  const bool grace_running = deleted_at.ok() && NowUnixSeconds() - *deleted_at < pod_grace;
  auto left = Survey(name, grace_running);
  if (!left.ok()) return left.error();
  // Without spec.finalizers any update of a Terminating namespace removes it: its conditions
  // are written only while a finalizer keeps it. They are written on every pass, the last one
  // too, so they say when what held the deletion up has gone.
  if (!SpecFinalizers(*ns->object).empty()) {
    if (auto ok = RecordConditions(name, uid, *left); !ok.ok()) return ok.error();
  }
  out.remaining = left->Total();
  if (out.remaining > 0) {
    out.state = NamespaceSync::State::kContentRemaining;
    return out;
  }
  auto finalized = Finalize(name, uid);
  if (!finalized.ok()) return finalized.error();
  out.state = *finalized;
  return out;
}

VoidResult NamespaceDeleter::DeleteContent(std::string_view name, int64_t* deleted,
                                           int64_t* pod_grace) {
  // Pods go as a DELETE without options takes them (pod_deletion.h): one on a node that has
  // not finished is only marked, for its terminationGracePeriodSeconds, and stays Terminating
  // until its kubelet confirms; one on no node, or finished, goes at once.
  const GraceFn pod_deletion = [](const Json& pod) {
    return PodGraceDecision(pod, std::nullopt, NowUnixSeconds());
  };
  const GraceFn at_once;
  std::vector<Store::ObjectRef> batch;
  // A batch holds one kind's objects when that kind is pods, so that `grace` fits them all.
  auto flush = [&](const GraceFn& grace) -> VoidResult {
    if (batch.empty()) return {};
    // Durable in revision order: the finalize's commit, awaited, covers these.
    auto done = store_.DeleteMany(batch, Durability::kLater, grace);
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
    const bool pods = IsPods(r);
    if (pods) {
      *pod_grace = std::max(*pod_grace, LongestPodGrace(list->items));
      if (auto ok = flush(at_once); !ok.ok()) return ok;
    }
    const GraceFn& grace = pods ? pod_deletion : at_once;
    for (const StoredObject& so : list->items) {
      const Json& meta = MetadataOf(*so.object);
      // Marked already: it waits for its finalizers or its kubelet.
      if (meta.contains("deletionTimestamp")) continue;
      batch.push_back({&r, std::string(name), meta.value("name", ""), meta.value("uid", "")});
      if (batch.size() < options_.batch) continue;
      if (auto ok = flush(grace); !ok.ok()) return ok;
    }
    if (pods) {
      if (auto ok = flush(grace); !ok.ok()) return ok;
    }
  }
  return flush(at_once);
}

Result<NamespaceContentLeft> NamespaceDeleter::Survey(std::string_view name, bool grace_running) {
  NamespaceContentLeft left;
  for (const ResourceInfo* kind : ContentKinds()) {
    const ResourceInfo& r = *kind;
    auto list = store_.List(r, name, nullptr, 0, "");
    if (!list.ok()) return list.error();
    if (list->items.empty()) continue;
    left.per_resource[r.plural + "." + r.group] += static_cast<int64_t>(list->items.size());
    bool held = false;
    for (const StoredObject& so : list->items) {
      for (const std::string& f : StringsAt(MetadataOf(*so.object), "finalizers")) {
        ++left.per_finalizer[f];
        held = true;
      }
    }
    // Objects a finalizer holds, and pods within their grace period, are on their way; any
    // other kind's objects left after their deletion are a failure to say.
    if (!held && !(IsPods(r) && grace_running)) {
      left.failures.push_back(UnexpectedContentMessage(name, r.group, r.version, r.plural));
    }
  }
  return left;
}

VoidResult NamespaceDeleter::RecordConditions(std::string_view name, const std::string& uid,
                                              const NamespaceContentLeft& left) {
  const std::string now = FormatTimestamp(NowUnixSeconds());
  auto updated = store_.Mutate(
      Namespaces(), "", name,
      [&](const Json* current) -> Result<Json> {
        if (MetadataOf(*current).value("uid", "") != uid) return UidChanged(name);
        Json next = *current;
        UpdateNamespaceDeletionConditions(next["status"], left, now);
        return next;  // unchanged: no new revision
      },
      false, false, nullptr, Durability::kLater);
  // Gone, or another namespace of that name now: nothing to say about this one.
  if (!updated.ok() && updated.error().code != ErrorCode::kNotFound &&
      updated.error().code != ErrorCode::kConflict) {
    return updated.error();
  }
  return {};
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
