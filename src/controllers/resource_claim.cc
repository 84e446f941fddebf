#include "controllers/resource_claim.h"

#include <fmt/format.h>

#include <algorithm>

#include "controllers/events.h"

namespace berth::controllers {
namespace {

constexpr char kPodClaimIndex[] = "pod-resource-claim-index";
constexpr char kPodPrefix[] = "pod:";
constexpr char kClaimPrefix[] = "claim:";
constexpr size_t kMaxGeneratedBaseName = 57;
// resource.k8s.io's ResourceClaimReservedForMaxSize.
constexpr size_t kReservedForMaxSize = 256;
constexpr size_t kMaxDeletedUids = 500;
constexpr std::string_view kMergePatch = "application/merge-patch+json";

std::string ClaimPath(const std::string& ns, const std::string& name) {
  return fmt::format("/apis/resource.k8s.io/v1/namespaces/{}/resourceclaims/{}", ns, name);
}

bool IsPodTerminal(const Json& pod) {
  const std::string phase = StringAt(Member(pod, "status"), "phase");
  return phase == "Succeeded" || phase == "Failed";
}

std::string NodeNameOf(const Json& pod) { return StringAt(Member(pod, "spec"), "nodeName"); }

const Json& PodClaims(const Json& pod) { return Member(Member(pod, "spec"), "resourceClaims"); }

bool HasClaims(const Json& pod) {
  const Json& claims = PodClaims(pod);
  return claims.is_array() && !claims.empty();
}

// Whether `claim` is controlled by the pod (upstream's resourceclaim.IsForPod).
bool IsForPod(const Json& pod, const Json& claim) {
  const Json* ref = ControllerRefOf(claim);
  return ref != nullptr && StringAt(*ref, "uid") == UidOf(pod);
}

const Json& ReservedFor(const Json& claim) {
  return Member(Member(claim, "status"), "reservedFor");
}

bool IsReservedForPod(const Json& pod, const Json& claim) {
  const Json& reserved = ReservedFor(claim);
  if (!reserved.is_array()) return false;
  return std::any_of(reserved.begin(), reserved.end(),
                     [&](const Json& r) { return StringAt(r, "uid") == UidOf(pod); });
}

bool IsAllocated(const Json& claim) {
  const Json& allocation = Member(Member(claim, "status"), "allocation");
  return !allocation.is_null();
}

bool CanBeReserved(const Json& claim) {
  const Json& reserved = ReservedFor(claim);
  return !reserved.is_array() || reserved.size() < kReservedForMaxSize;
}

bool HasFinalizer(const Json& claim) {
  const Json& finalizers = Member(Member(claim, "metadata"), "finalizers");
  if (!finalizers.is_array()) return false;
  return std::find(finalizers.begin(), finalizers.end(), kClaimDeleteProtectionFinalizer) !=
         finalizers.end();
}

void RemoveFinalizer(Json& claim) {
  Json& finalizers = claim["metadata"]["finalizers"];
  Json kept = Json::array();
  for (const Json& f : finalizers)
    if (f != kClaimDeleteProtectionFinalizer) kept.push_back(f);
  finalizers = std::move(kept);
}

// The pod a claim was generated for (its controller ownerReference of kind v1 Pod).
std::pair<std::string, std::string> OwningPod(const Json& claim) {
  const Json* ref = ControllerRefOf(claim);
  if (ref == nullptr || StringAt(*ref, "apiVersion") != "v1" || StringAt(*ref, "kind") != "Pod")
    return {};
  return {StringAt(*ref, "name"), StringAt(*ref, "uid")};
}

bool IsNotFound(const Error& e) { return e.code == ErrorCode::kNotFound; }

}  // namespace

std::string GeneratedClaimBaseName(const std::string& pod, const std::string& claim) {
  const std::string base = pod + "-" + claim + "-";
  if (base.size() <= kMaxGeneratedBaseName) return base;
  // Cutting only the end would lose the claim's name when the pod's is long: both are cut in
  // proportion (and, as upstream, without the trailing hyphen).
  return pod.substr(0, pod.size() * kMaxGeneratedBaseName / base.size()) + "-" +
         claim.substr(0, claim.size() * kMaxGeneratedBaseName / base.size());
}

PodClaimRef ClaimRefOf(const Json& pod, const Json& pod_claim) {
  PodClaimRef ref;
  const std::string claim_name = StringAt(pod_claim, "resourceClaimName");
  if (!claim_name.empty()) {
    ref.state = PodClaimRef::kName;
    ref.name = claim_name;
    return ref;
  }
  if (StringAt(pod_claim, "resourceClaimTemplateName").empty()) return ref;  // kUnsupported
  const std::string name = StringAt(pod_claim, "name");
  const Json& statuses = Member(Member(pod, "status"), "resourceClaimStatuses");
  if (statuses.is_array()) {
    for (const Json& s : statuses) {
      if (StringAt(s, "name") != name) continue;
      ref.name = StringAt(s, "resourceClaimName");
      // Recorded without a name: the claim was found not to be needed.
      ref.state = ref.name.empty() ? PodClaimRef::kNotNeeded : PodClaimRef::kName;
      ref.check_owner = true;
      return ref;
    }
  }
  ref.state = PodClaimRef::kNotCreated;
  return ref;
}

bool IsPodDone(const Json& pod) {
  return IsPodTerminal(pod) || (HasDeletionTimestamp(pod) && NodeNameOf(pod).empty());
}

ResourceClaimController::ResourceClaimController(client::RestClient* rest, SharedInformer* pods,
                                                 SharedInformer* claims, SharedInformer* templates,
                                                 ControllerOptions options)
    : rest_(rest),
      pods_(pods),
      claims_(claims),
      templates_(templates),
      options_(std::move(options)),
      queue_(options_.clock),
      workers_(
          &queue_, [this](const std::string& key) { return Sync(key); }, options_.log) {
  pods_->AddIndex(kPodClaimIndex, [](const Object& o) -> std::vector<std::string> {
    const Json& pod = DocOf(o);
    std::vector<std::string> keys;
    if (!HasClaims(pod)) return keys;
    for (const Json& c : PodClaims(pod)) {
      PodClaimRef ref = ClaimRefOf(pod, c);
      if (ref.state == PodClaimRef::kName) keys.push_back(NamespaceOf(pod) + "/" + ref.name);
    }
    return keys;
  });
  claims_->AddOwnerIndexes();
  client::InformerHandlers ph;
  ph.on_add = [this](const Object& o) { EnqueuePod(DocOf(o), false); };
  ph.on_update = [this](const Object&, const Object& o) { EnqueuePod(DocOf(o), false); };
  ph.on_delete = [this](const Object& o) { EnqueuePod(DocOf(o), true); };
  pods_->AddHandlers(std::move(ph));
  client::InformerHandlers ch;
  ch.on_add = [this](const Object& o) { EnqueueClaim(DocOf(o)); };
  ch.on_update = [this](const Object&, const Object& o) { EnqueueClaim(DocOf(o)); };
  // A deleted claim needs no sync of its own; its pods may need a new one.
  ch.on_delete = [this](const Object& o) {
    const Json& claim = DocOf(o);
    for (const Object& p : pods_->ByIndex(kPodClaimIndex, KeyOf(claim)))
      EnqueuePod(DocOf(p), false);
  };
  claims_->AddHandlers(std::move(ch));
}

ResourceClaimController::~ResourceClaimController() { Stop(); }

void ResourceClaimController::Start() { workers_.Start(options_.workers); }

void ResourceClaimController::Stop() { workers_.Stop(); }

void ResourceClaimController::RememberDeleted(const std::string& uid) {
  std::lock_guard lock(mu_);
  created_.erase(uid);
  if (!deleted_.insert(uid).second) return;
  deleted_order_.push_back(uid);
  if (deleted_order_.size() > kMaxDeletedUids) {
    deleted_.erase(deleted_order_.front());
    deleted_order_.pop_front();
  }
}

bool ResourceClaimController::WasDeleted(const std::string& uid) const {
  std::lock_guard lock(mu_);
  return deleted_.count(uid) > 0;
}

void ResourceClaimController::EnqueuePod(const Json& pod, bool deleted) {
  if (!HasClaims(pod)) return;
  if (deleted) RememberDeleted(UidOf(pod));
  // A pod that will not run releases its claims: each is looked at again.
  const bool needs_claims =
      !deleted && !IsPodTerminal(pod) && !(HasDeletionTimestamp(pod) && NodeNameOf(pod).empty());
  if (!needs_claims) {
    for (const Json& c : PodClaims(pod)) {
      PodClaimRef ref = ClaimRefOf(pod, c);
      if (ref.state == PodClaimRef::kName)
        queue_.Add(kClaimPrefix + NamespaceOf(pod) + "/" + ref.name);
    }
  }
  if (!deleted && PodNeedsWork(pod)) queue_.Add(kPodPrefix + KeyOf(pod));
}

void ResourceClaimController::EnqueueClaim(const Json& claim) {
  // Every claim is looked at: its reservedFor may name pods that are gone.
  queue_.Add(kClaimPrefix + KeyOf(claim));
  for (const Object& p : pods_->ByIndex(kPodClaimIndex, KeyOf(claim))) EnqueuePod(DocOf(p), false);
}

std::optional<Json> ResourceClaimController::ClaimDoc(const std::string& ns,
                                                      const std::string& name) const {
  auto obj = claims_->Get(ns + "/" + name);
  if (!obj) return std::nullopt;
  return DocOf(*obj);
}

bool ResourceClaimController::PodNeedsWork(const Json& pod) const {
  if (HasDeletionTimestamp(pod)) return false;
  for (const Json& c : PodClaims(pod)) {
    PodClaimRef ref = ClaimRefOf(pod, c);
    if (ref.state == PodClaimRef::kNotCreated || ref.state == PodClaimRef::kUnsupported)
      return true;
    if (ref.state == PodClaimRef::kNotNeeded) continue;
    auto claim = ClaimDoc(NamespaceOf(pod), ref.name);
    if (!claim) {
      // A generated claim deleted by someone is created again; a named one is the user's.
      if (!StringAt(c, "resourceClaimTemplateName").empty()) return true;
      continue;
    }
    if (ref.check_owner && !IsForPod(pod, *claim)) continue;
    if (NodeNameOf(pod).empty()) continue;  // the scheduler reserves it
    if (IsAllocated(*claim) && !IsReservedForPod(pod, *claim) && CanBeReserved(*claim)) return true;
  }
  return false;
}

VoidResult ResourceClaimController::Sync(const std::string& key) {
  const bool pod = key.rfind(kPodPrefix, 0) == 0;
  const bool claim = key.rfind(kClaimPrefix, 0) == 0;
  if (!pod && !claim) return Error{"unexpected key: " + key, ErrorCode::kInvalid};
  const auto [ns, name] = SplitKey(key.substr(key.find(':') + 1));
  return pod ? SyncPod(ns, name) : SyncClaim(ns, name);
}

VoidResult ResourceClaimController::SyncPod(const std::string& ns, const std::string& name) {
  auto obj = pods_->Get(ns + "/" + name);
  if (!obj) return {};
  const Json& pod = DocOf(*obj);
  if (HasDeletionTimestamp(pod)) return {};
  std::map<std::string, std::string> created;
  for (const Json& c : PodClaims(pod)) {
    if (auto r = HandleClaim(pod, c, &created); !r.ok()) {
      const std::string claim_name = StringAt(c, "name");
      RecordEvent(EventSource{rest_, options_.clock, "resource_claim", options_.log}, pod, "v1",
                  "Pod", "Warning", "FailedResourceClaimCreation",
                  fmt::format("PodResourceClaim {}: {}", claim_name, r.error().message));
      return Error{fmt::format("pod {}/{}, PodResourceClaim {}: {}", ns, name, claim_name,
                               r.error().message),
                   r.error().code};
    }
  }
  if (!created.empty()) {
    // The list is a map keyed by name: entries of other pod claims stay.
    Json statuses = Json::array();
    const Json& old = Member(Member(pod, "status"), "resourceClaimStatuses");
    if (old.is_array())
      for (const Json& s : old)
        if (!created.count(StringAt(s, "name"))) statuses.push_back(s);
    for (const auto& [pod_claim, claim_name] : created)
      statuses.push_back({{"name", pod_claim}, {"resourceClaimName", claim_name}});
    auto r = rest_->Send("PATCH", fmt::format("/api/v1/namespaces/{}/pods/{}/status", ns, name),
                         Json{{"status", {{"resourceClaimStatuses", statuses}}}}, kMergePatch);
    if (!r.ok()) {
      if (IsNotFound(r.error())) return {};
      return Error{
          fmt::format("update pod {}/{} ResourceClaimStatuses: {}", ns, name, r.error().message),
          r.error().code};
    }
  }
  if (NodeNameOf(pod).empty()) return {};  // the scheduler reserves the claims
  for (const Json& c : PodClaims(pod)) {
    PodClaimRef ref = ClaimRefOf(pod, c);
    if (ref.state != PodClaimRef::kName) continue;
    auto claim = ClaimDoc(ns, ref.name);
    if (!claim) return {};
    if (ref.check_owner && !IsForPod(pod, *claim)) {
      return Error{fmt::format("ResourceClaim {} was not created for pod {} (pod is not owner)",
                               ref.name, name),
                   ErrorCode::kConflict};
    }
    if (IsAllocated(*claim) && !IsReservedForPod(pod, *claim) && CanBeReserved(*claim)) {
      if (auto r = ReserveForPod(pod, *claim); !r.ok()) return r;
    }
  }
  return {};
}

std::optional<std::string> ResourceClaimController::FindPodClaim(
    const Json& pod, const std::string& pod_claim_name) {
  for (const Object& o : claims_->ControlledBy(UidOf(pod))) {
    const Json& claim = DocOf(o);
    // Only generated claims carry the annotation; the first match wins (others, which should
    // not exist, go with the pod).
    const Json& annotations = Member(Member(claim, "metadata"), "annotations");
    if (StringAt(annotations, kPodClaimNameAnnotation) == pod_claim_name) return NameOf(claim);
  }
  std::lock_guard lock(mu_);
  auto it = created_.find(UidOf(pod));
  if (it == created_.end()) return std::nullopt;
  auto c = it->second.find(pod_claim_name);
  if (c == it->second.end()) return std::nullopt;
  return c->second;
}

VoidResult ResourceClaimController::HandleClaim(const Json& pod, const Json& pod_claim,
                                                std::map<std::string, std::string>* created) {
  const std::string ns = NamespaceOf(pod);
  const std::string pod_claim_name = StringAt(pod_claim, "name");
  PodClaimRef ref = ClaimRefOf(pod, pod_claim);
  switch (ref.state) {
    case PodClaimRef::kUnsupported:
      return Error{"checking for claim before creating it: unsupported PodResourceClaim",
                   ErrorCode::kInvalid};
    case PodClaimRef::kNotNeeded:
      return {};
    case PodClaimRef::kNotCreated:
      break;
    case PodClaimRef::kName: {
      auto claim = ClaimDoc(ns, ref.name);
      // Recorded but deleted meanwhile (or taken over): a new one is made.
      if (claim && (!ref.check_owner || IsForPod(pod, *claim))) return {};
      break;
    }
  }
  const std::string template_name = StringAt(pod_claim, "resourceClaimTemplateName");
  if (template_name.empty()) return {};
  std::optional<std::string> name = FindPodClaim(pod, pod_claim_name);
  if (!name) {
    auto tmpl = templates_->Get(ns + "/" + template_name);
    if (!tmpl) {
      return Error{fmt::format("resource claim template \"{}\": resourceclaimtemplate.resource."
                               "k8s.io \"{}\" not found",
                               template_name, template_name),
                   ErrorCode::kNotFound};
    }
    const Json& spec = Member(DocOf(*tmpl), "spec");
    Json annotations = Member(Member(spec, "metadata"), "annotations");
    if (!annotations.is_object()) annotations = Json::object();
    annotations[kPodClaimNameAnnotation] = pod_claim_name;
    Json metadata = {{"generateName", GeneratedClaimBaseName(NameOf(pod), pod_claim_name)},
                     {"namespace", ns},
                     {"annotations", std::move(annotations)},
                     {"ownerReferences", Json::array({NewControllerRef("v1", "Pod", pod)})}};
    const Json& labels = Member(Member(spec, "metadata"), "labels");
    if (labels.is_object() && !labels.empty()) metadata["labels"] = labels;
    Json claim = {
        {"apiVersion", "resource.k8s.io/v1"},
        {"kind", "ResourceClaim"},
        {"metadata", std::move(metadata)},
        {"spec", Member(spec, "spec").is_object() ? Member(spec, "spec") : Json::object()}};
    auto r = rest_->Post(fmt::format("/apis/resource.k8s.io/v1/namespaces/{}/resourceclaims", ns),
                         claim);
    if (!r.ok()) {
      return Error{
          fmt::format("create ResourceClaim {}: {}",
                      GeneratedClaimBaseName(NameOf(pod), pod_claim_name), r.error().message),
          r.error().code};
    }
    name = NameOf(*r);
    std::lock_guard lock(mu_);
    created_[UidOf(pod)][pod_claim_name] = *name;
  }
  (*created)[pod_claim_name] = *name;
  return {};
}

VoidResult ResourceClaimController::ReserveForPod(const Json& pod, const Json& claim) {
  Json updated = claim;
  Json& reserved = updated["status"]["reservedFor"];
  if (!reserved.is_array()) reserved = Json::array();
  reserved.push_back({{"resource", "pods"}, {"name", NameOf(pod)}, {"uid", UidOf(pod)}});
  auto r = rest_->Put(ClaimPath(NamespaceOf(claim), NameOf(claim)) + "/status", updated);
  if (!r.ok()) {
    return Error{fmt::format("reserve claim {} for pod: {}", KeyOf(claim), r.error().message),
                 r.error().code};
  }
  return {};
}

VoidResult ResourceClaimController::SyncClaim(const std::string& ns, const std::string& name) {
  auto cached = ClaimDoc(ns, name);
  if (!cached) return {};
  const Json& claim = *cached;
  const Json& reserved = ReservedFor(claim);
  Json valid = Json::array();
  if (reserved.is_array()) {
    for (const Json& entry : reserved) {
      if (!StringAt(entry, "apiGroup").empty() || StringAt(entry, "resource") != "pods")
        return Error{"unsupported ReservedFor entry: " + entry.dump(), ErrorCode::kInvalid};
      const std::string uid = StringAt(entry, "uid");
      bool keep = true;
      if (WasDeleted(uid)) {
        keep = false;
      } else if (auto pod = pods_->Get(ns + "/" + StringAt(entry, "name")); !pod) {
        // Not in the cache yet, perhaps: only the server can tell that it is gone.
        auto fresh =
            rest_->Get(fmt::format("/api/v1/namespaces/{}/pods/{}", ns, StringAt(entry, "name")));
        if (!fresh.ok() && !IsNotFound(fresh.error())) return fresh.error();
        keep = fresh.ok() && UidOf(*fresh) == uid;
      } else {
        keep = UidOf(DocOf(*pod)) == uid && !IsPodDone(DocOf(*pod));
      }
      if (keep) valid.push_back(entry);
    }
  }
  const size_t before = reserved.is_array() ? reserved.size() : 0;
  if (valid.size() < before) {
    Json updated = claim;
    updated["status"]["reservedFor"] = valid;
    // The last consumer gone: a claim the scheduler allocated (its finalizer says so) is
    // deallocated, so a later consumer may get devices anywhere. Only on this transition: an
    // allocated claim that was never reserved stays allocated.
    if (valid.empty()) {
      updated["status"].erase("reservedFor");
      if (HasFinalizer(claim)) updated["status"].erase("allocation");
    }
    auto r = rest_->Put(ClaimPath(ns, name) + "/status", updated);
    if (!r.ok()) return IsNotFound(r.error()) ? VoidResult{} : VoidResult{r.error()};
    Json stored = *r;
    if (HasFinalizer(stored) && !IsAllocated(stored)) {
      RemoveFinalizer(stored);
      auto u = rest_->Put(ClaimPath(ns, name), stored);
      if (!u.ok() && !IsNotFound(u.error())) return u.error();
    }
  } else if (HasFinalizer(claim) && HasDeletionTimestamp(claim) && valid.empty()) {
    Json updated = claim;
    if (IsAllocated(claim)) {
      updated["status"].erase("allocation");
      auto r = rest_->Put(ClaimPath(ns, name) + "/status", updated);
      if (!r.ok()) return IsNotFound(r.error()) ? VoidResult{} : VoidResult{r.error()};
      updated = *r;
    }
    // Allocated or not, the finalizer goes so that the deletion completes.
    RemoveFinalizer(updated);
    auto u = rest_->Put(ClaimPath(ns, name), updated);
    if (!u.ok() && !IsNotFound(u.error())) return u.error();
  }
  if (!valid.empty()) return {};
  // Reserved for no one: a claim generated for a pod that will not run is deleted.
  const auto [pod_name, pod_uid] = OwningPod(claim);
  if (pod_name.empty() || HasDeletionTimestamp(claim)) return {};
  bool unused = WasDeleted(pod_uid);
  if (!unused) {
    if (auto pod = pods_->Get(ns + "/" + pod_name)) {
      unused = UidOf(DocOf(*pod)) != pod_uid || IsPodDone(DocOf(*pod));
    }
    // A pod missing from the cache may be one not seen yet: the garbage collector's case.
  }
  if (!unused) return {};
  auto r = rest_->Delete(ClaimPath(ns, name));
  if (!r.ok() && !IsNotFound(r.error()))
    return Error{fmt::format("delete claim {}/{}: {}", ns, name, r.error().message),
                 r.error().code};
  return {};
}

}  // namespace berth::controllers
