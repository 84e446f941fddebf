#include "controllers/namespace.h"

#include <fmt/format.h>

#include <algorithm>

namespace berth::controllers {
namespace {

constexpr char kFinalizer[] = "kubernetes";

bool HasVerb(const Json& resource, std::string_view verb) {
  const Json& verbs = Member(resource, "verbs");
  return verbs.is_array() && std::find(verbs.begin(), verbs.end(), verb) != verbs.end();
}

bool Ignorable(const Error& e) {
  return e.code == ErrorCode::kNotFound || e.code == ErrorCode::kConflict;
}

const Json& SpecFinalizers(const Json& ns) { return Member(Member(ns, "spec"), "finalizers"); }

bool HasSpecFinalizer(const Json& ns) {
  const Json& f = SpecFinalizers(ns);
  return f.is_array() && std::find(f.begin(), f.end(), kFinalizer) != f.end();
}

bool NoFinalizers(const Json& ns) {
  const Json& spec = SpecFinalizers(ns);
  const Json& meta = Member(Member(ns, "metadata"), "finalizers");
  return (!spec.is_array() || spec.empty()) && (!meta.is_array() || meta.empty());
}

}  // namespace

std::string NamespacedResource::CollectionPath(const std::string& ns) const {
  const std::string root = group_version.find('/') == std::string::npos ? "/api/" : "/apis/";
  return fmt::format("{}{}/namespaces/{}/{}", root, group_version, ns, plural);
}

std::vector<NamespacedResource> NamespacedResourcesOf(const std::string& group_version,
                                                      const Json& list) {
  std::vector<NamespacedResource> out;
  if (!list.is_array()) return out;
  for (const Json& r : list) {
    const std::string name = StringAt(r, "name");
    const Json& namespaced = Member(r, "namespaced");
    if (name.empty() || name.find('/') != std::string::npos) continue;
    if (!namespaced.is_boolean() || !namespaced.get<bool>()) continue;
    if (!HasVerb(r, "list") || !HasVerb(r, "delete")) continue;
    out.push_back({group_version, name, HasVerb(r, "deletecollection")});
  }
  return out;
}

NamespaceController::NamespaceController(client::RestClient* rest, SharedInformer* namespaces,
                                         ControllerOptions options,
                                         NamespaceControllerOptions ns_options)
    : rest_(rest),
      namespaces_(namespaces),
      options_(std::move(options)),
      ns_options_(ns_options),
      queue_(options_.clock),
      workers_(
          &queue_, [this](const std::string& key) { return Sync(key); }, options_.log) {
  namespaces_->AddHandlers(EnqueueOnEvents(&queue_));
}

NamespaceController::~NamespaceController() { Stop(); }

void NamespaceController::Start() { workers_.Start(options_.workers); }

void NamespaceController::Stop() { workers_.Stop(); }

Result<std::vector<NamespacedResource>> NamespaceController::Discover(bool* complete) {
  std::lock_guard lock(discovery_mu_);
  const TimePoint now = options_.clock->Now();
  if (!discovered_.empty() && discovery_complete_ &&
      now - discovered_at_ < ns_options_.discovery_ttl) {
    *complete = true;
    return discovered_;
  }
  std::vector<std::string> group_versions;
  auto core = rest_->Get("/api");
  if (!core.ok()) return core.error();
  for (const Json& v : Member(*core, "versions"))
    if (v.is_string()) group_versions.push_back(v.get<std::string>());
  auto groups = rest_->Get("/apis");
  if (!groups.ok()) return groups.error();
  for (const Json& g : Member(*groups, "groups")) {
    const std::string gv = StringAt(Member(g, "preferredVersion"), "groupVersion");
    if (!gv.empty()) group_versions.push_back(gv);
  }
  std::vector<NamespacedResource> out;
  bool all = true;
  for (const std::string& gv : group_versions) {
    const std::string root = gv.find('/') == std::string::npos ? "/api/" : "/apis/";
    auto list = rest_->Get(root + gv);
    if (!list.ok()) {
      // An aggregated API that is down: the rest is still emptied.
      all = false;
      if (options_.log)
        options_.log(fmt::format("namespace: discovery of {}: {}", gv, list.error().message));
      continue;
    }
    auto found = NamespacedResourcesOf(gv, Member(*list, "resources"));
    out.insert(out.end(), found.begin(), found.end());
  }
  discovered_ = out;
  discovered_at_ = now;
  discovery_complete_ = all;
  *complete = all;
  return out;
}

Result<int64_t> NamespaceController::DeleteContent(
    const std::string& ns, const std::vector<NamespacedResource>& resources) {
  int64_t remaining = 0;
  for (const NamespacedResource& r : resources) {
    const std::string path = r.CollectionPath(ns);
    auto list = rest_->Get(path);
    if (!list.ok()) {
      if (list.error().code == ErrorCode::kNotFound) continue;  // no longer served
      return Error{fmt::format("listing {}: {}", path, list.error().message), list.error().code};
    }
    const Json& items = Member(*list, "items");
    if (!items.is_array() || items.empty()) continue;
    bool pending = false;
    for (const Json& item : items) pending = pending || !HasDeletionTimestamp(item);
    if (pending && r.delete_collection) {
      auto d = rest_->Delete(path);
      if (!d.ok() && !Ignorable(d.error()))
        return Error{fmt::format("deleting {}: {}", path, d.error().message), d.error().code};
    } else if (pending) {
      for (const Json& item : items) {
        if (HasDeletionTimestamp(item)) continue;
        auto d = rest_->Delete(path + "/" + NameOf(item));
        if (!d.ok() && !Ignorable(d.error()))
          return Error{fmt::format("deleting {}/{}: {}", path, NameOf(item), d.error().message),
                       d.error().code};
      }
    }
    // What is left now (graceful pods, finalizers) is looked at again at the next pass.
    auto left = rest_->Get(path + "?limit=1");
    if (!left.ok()) {
      if (left.error().code == ErrorCode::kNotFound) continue;
      return left.error();
    }
    const Json& rest_items = Member(*left, "items");
    if (rest_items.is_array() && !rest_items.empty()) {
      remaining += std::max<int64_t>(static_cast<int64_t>(rest_items.size()),
                                     1 + IntAt(Member(*left, "metadata"), "remainingItemCount", 0));
    }
  }
  return remaining;
}

VoidResult NamespaceController::Finalize(Json ns) {
  const std::string name = NameOf(ns);
  if (HasSpecFinalizer(ns)) {
    Json kept = Json::array();
    for (const Json& f : SpecFinalizers(ns))
      if (f != kFinalizer) kept.push_back(f);
    ns["spec"]["finalizers"] = kept;
    auto updated = rest_->Put(fmt::format("/api/v1/namespaces/{}/finalize", name), ns);
    if (!updated.ok()) {
      if (updated.error().code == ErrorCode::kNotFound) return {};
      return updated.error();  // a conflict: the next try reads it again
    }
    ns = std::move(updated).value();
    if (options_.log) options_.log(fmt::format("namespace: finalized {}", name));
  }
  if (!NoFinalizers(ns)) return {};  // others' finalizers hold it
  const Json options = {
      {"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"preconditions", {{"uid", UidOf(ns)}}}};
  auto deleted = rest_->Delete("/api/v1/namespaces/" + name, options);
  if (!deleted.ok() && !Ignorable(deleted.error())) return deleted.error();
  return {};
}

VoidResult NamespaceController::Sync(const std::string& name) {
  auto cached = namespaces_->Get(name);
  if (!cached || !HasDeletionTimestamp(DocOf(*cached))) return {};
  // The cache may lag: finalize from what the server holds now.
  auto fresh = rest_->Get("/api/v1/namespaces/" + name);
  if (!fresh.ok()) return fresh.error().code == ErrorCode::kNotFound ? VoidResult{} : fresh.error();
  if (!HasDeletionTimestamp(*fresh)) return {};
  if (!HasSpecFinalizer(*fresh)) return NoFinalizers(*fresh) ? Finalize(*fresh) : VoidResult{};
  bool complete = true;
  auto resources = Discover(&complete);
  if (!resources.ok()) return resources.error();
  auto remaining = DeleteContent(name, *resources);
  if (!remaining.ok()) return remaining.error();
  if (*remaining > 0) {
    queue_.AddAfter(name, ns_options_.recheck);
    return {};
  }
  if (!complete) {
    return Error{fmt::format("namespace {}: not every API group could be listed", name),
                 ErrorCode::kUnavailable};
  }
  return Finalize(std::move(fresh).value());
}

}  // namespace berth::controllers
