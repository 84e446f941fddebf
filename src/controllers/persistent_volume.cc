#include "controllers/persistent_volume.h"

#include <fmt/format.h>

namespace berth::controllers {
namespace {

constexpr std::string_view kMergePatch = "application/merge-patch+json";
constexpr std::string_view kVolumePrefix = "pv:";
constexpr std::string_view kClaimPrefix = "pvc:";

std::string VolumePath(const std::string& name) {
  return fmt::format("/api/v1/persistentvolumes/{}", name);
}

std::string ClaimPath(const std::string& ns, const std::string& name) {
  return fmt::format("/api/v1/namespaces/{}/persistentvolumeclaims/{}", ns, name);
}

std::string ClaimPath(const Json& pvc) { return ClaimPath(NamespaceOf(pvc), NameOf(pvc)); }

std::string PhaseOf(const Json& obj) { return StringAt(Member(obj, "status"), "phase"); }

std::string VolumeNameOf(const Json& pvc) { return StringAt(Member(pvc, "spec"), "volumeName"); }

const Json& ClaimRefOf(const Json& pv) { return Member(Member(pv, "spec"), "claimRef"); }

std::string ClaimKeyOfRef(const Json& ref) {
  return StringAt(ref, "namespace") + "/" + StringAt(ref, "name");
}

}  // namespace

PersistentVolumeController::PersistentVolumeController(client::RestClient* rest,
                                                       SharedInformer* volumes,
                                                       SharedInformer* claims,
                                                       SharedInformer* classes,
                                                       ControllerOptions options)
    : rest_(rest),
      volumes_(volumes),
      claims_(claims),
      classes_(classes),
      options_(std::move(options)),
      queue_(options_.clock),
      workers_(
          &queue_, [this](const std::string& key) { return Sync(key); }, options_.log) {
  client::InformerHandlers volume_handlers;
  volume_handlers.on_add = [this](const Object& o) { OnVolume(o); };
  volume_handlers.on_update = [this](const Object&, const Object& o) { OnVolume(o); };
  volume_handlers.on_delete = [this](const Object& o) { OnVolume(o); };
  volumes_->AddHandlers(std::move(volume_handlers));
  client::InformerHandlers claim_handlers;
  claim_handlers.on_add = [this](const Object& o) { OnClaim(o, false); };
  claim_handlers.on_update = [this](const Object&, const Object& o) { OnClaim(o, false); };
  claim_handlers.on_delete = [this](const Object& o) { OnClaim(o, true); };
  claims_->AddHandlers(std::move(claim_handlers));
  // A class created after its claims lets them bind or provision.
  client::InformerHandlers class_handlers;
  class_handlers.on_add = [this](const Object&) {
    for (const Object& c : claims_->List())
      if (VolumeNameOf(DocOf(c)).empty()) queue_.Add(std::string(kClaimPrefix) + KeyOf(DocOf(c)));
  };
  classes_->AddHandlers(std::move(class_handlers));
}

PersistentVolumeController::~PersistentVolumeController() { Stop(); }

void PersistentVolumeController::Start() { workers_.Start(options_.workers); }

void PersistentVolumeController::Stop() { workers_.Stop(); }

void PersistentVolumeController::OnVolume(const Object& obj) {
  const Json& pv = DocOf(obj);
  queue_.Add(std::string(kVolumePrefix) + NameOf(pv));
  const Json& ref = ClaimRefOf(pv);
  if (ref.is_object()) {
    queue_.Add(std::string(kClaimPrefix) + ClaimKeyOfRef(ref));
    return;
  }
  // A volume that became Available may be what pending claims wait for (upstream finds it on
  // its periodic resync of claims).
  if (PhaseOf(pv) != "Available") return;
  for (const Object& c : claims_->List()) {
    if (VolumeNameOf(DocOf(c)).empty()) queue_.Add(std::string(kClaimPrefix) + KeyOf(DocOf(c)));
  }
}

void PersistentVolumeController::OnClaim(const Object& obj, bool deleted) {
  const Json& pvc = DocOf(obj);
  if (!deleted) {
    queue_.Add(std::string(kClaimPrefix) + KeyOf(pvc));
    return;
  }
  // The claim's volume is released: sync it (and any volume whose claimRef names the claim).
  if (const std::string v = VolumeNameOf(pvc); !v.empty())
    queue_.Add(std::string(kVolumePrefix) + v);
  for (const Object& o : volumes_->List()) {
    if (IsVolumeBoundToClaim(DocOf(o), pvc))
      queue_.Add(std::string(kVolumePrefix) + NameOf(DocOf(o)));
  }
}

VoidResult PersistentVolumeController::Sync(const std::string& key) {
  if (key.starts_with(kVolumePrefix)) {
    auto pv = volumes_->Get(key.substr(kVolumePrefix.size()));
    if (!pv) return {};  // deleted: nothing to do
    return SyncVolume(DocOf(*pv));
  }
  if (key.starts_with(kClaimPrefix)) {
    auto pvc = claims_->Get(key.substr(kClaimPrefix.size()));
    if (!pvc) return {};  // deleted: its volume's sync releases it
    return SyncClaim(DocOf(*pvc));
  }
  return {};
}

std::vector<const Json*> PersistentVolumeController::Volumes(std::vector<Object>* keep) const {
  *keep = volumes_->List();
  std::vector<const Json*> out;
  out.reserve(keep->size());
  for (const Object& o : *keep) out.push_back(&DocOf(o));
  return out;
}

std::optional<Object> PersistentVolumeController::ClassOf(const std::string& name) const {
  if (name.empty()) return std::nullopt;
  return classes_->Get(name);
}

VoidResult PersistentVolumeController::SyncClaim(const Json& pvc) {
  if (HasDeletionTimestamp(pvc)) return {};
  return VolumeNameOf(pvc).empty() ? SyncUnboundClaim(pvc) : SyncBoundClaim(pvc);
}

VoidResult PersistentVolumeController::SyncUnboundClaim(const Json& pvc) {
  const std::string class_name = ClaimClass(pvc);
  const std::optional<Object> storage_class = ClassOf(class_name);
  const Json* sc = storage_class ? &DocOf(*storage_class) : nullptr;
  const bool delayed = IsDelayedBinding(sc);
  std::vector<Object> keep;
  if (const Json* pv = FindBestMatch(pvc, Volumes(&keep), delayed)) {
    // A volume pre-bound to the claim keeps its claimRef as the user wrote it.
    return Bind(*pv, pvc, !ClaimRefOf(*pv).is_object());
  }
  if (auto assigned = AssignDefaultClass(pvc); !assigned.ok() || *assigned) {
    // The claim's update brings it back with its class.
    return assigned.ok() ? VoidResult{} : VoidResult(assigned.error());
  }
  // Events are recorded once, when the claim is first seen (upstream repeats them each sync).
  const bool first_seen = PhaseOf(pvc).empty();
  if (delayed && !HasAnnotation(pvc, kAnnSelectedNode)) {
    // WaitForFirstConsumer: the scheduler picks a volume or a node for it.
    if (auto r = SetClaimPhase(pvc, "Pending", nullptr); !r.ok()) return r;
    if (first_seen) {
      ClaimEvent(pvc, "WaitForFirstConsumer",
                 "waiting for first consumer to be created before binding");
    }
    return {};
  }
  const std::string provisioner = sc ? StringAt(*sc, "provisioner") : std::string();
  if (!provisioner.empty() && provisioner != kNoProvisioner &&
      AnnotationOf(pvc, kAnnStorageProvisioner) != provisioner) {
    // Handed to the class's provisioner, which watches for its name here (as upstream does
    // for every out-of-tree provisioner).
    Json patch = {{"metadata",
                   {{"annotations",
                     {{std::string(kAnnStorageProvisioner), provisioner},
                      {std::string(kAnnBetaStorageProvisioner), provisioner}}}}}};
    auto r = rest_->Patch(ClaimPath(pvc), patch, kMergePatch);
    if (!r.ok()) return r.error();
    ClaimEvent(pvc, "ExternalProvisioning",
               fmt::format("Waiting for a volume to be created either by the external "
                           "provisioner '{}' or manually by the system administrator. If volume "
                           "creation is delayed, please verify that the provisioner is running "
                           "and correctly registered.",
                           provisioner));
  } else if (class_name.empty() && first_seen) {
    ClaimEvent(pvc, "FailedBinding",
               "no persistent volumes available for this claim and no storage class is set");
  }
  return SetClaimPhase(pvc, "Pending", nullptr);
}

void PersistentVolumeController::ClaimEvent(const Json& pvc, std::string_view reason,
                                            std::string_view message) {
  RecordEvent(EventSource{rest_, options_.clock, "persistentvolume-controller", options_.log}, pvc,
              "v1", "PersistentVolumeClaim", "Normal", reason, message);
}

Result<bool> PersistentVolumeController::AssignDefaultClass(const Json& pvc) {
  if (Member(Member(pvc, "spec"), "storageClassName").is_string() ||
      HasAnnotation(pvc, kAnnBetaStorageClass)) {
    return false;
  }
  std::vector<Json> classes;
  for (const Object& o : classes_->List()) classes.push_back(DocOf(o));
  const std::string name = DefaultClassName(classes);
  if (name.empty()) return false;
  auto r = rest_->Patch(ClaimPath(pvc), {{"spec", {{"storageClassName", name}}}}, kMergePatch);
  if (!r.ok()) return r.error();
  return true;
}

VoidResult PersistentVolumeController::SyncBoundClaim(const Json& pvc) {
  auto found = volumes_->Get(VolumeNameOf(pvc));
  if (!found) {
    // Bound to a volume that does not exist (yet, when the user named it): Pending until it
    // appears; Lost when the binding had completed.
    return SetClaimPhase(pvc, HasAnnotation(pvc, kAnnBindCompleted) ? "Lost" : "Pending", nullptr);
  }
  const Json& pv = DocOf(*found);
  const Json& ref = ClaimRefOf(pv);
  if (!ref.is_object() || IsVolumeBoundToClaim(pv, pvc)) {
    // The user named the volume (or a binding is half written): complete it.
    return Bind(pv, pvc, !ref.is_object());
  }
  // The volume belongs to another claim.
  return SetClaimPhase(pvc, HasAnnotation(pvc, kAnnBindCompleted) ? "Lost" : "Pending", nullptr);
}

VoidResult PersistentVolumeController::SyncVolume(const Json& pv) {
  const Json& ref = ClaimRefOf(pv);
  if (!ref.is_object() || StringAt(ref, "uid").empty()) {
    // Free, or pre-bound to a claim that has not been bound to it yet (its sync will).
    if (ref.is_object()) queue_.Add(std::string(kClaimPrefix) + ClaimKeyOfRef(ref));
    if (PhaseOf(pv) == "Available") return {};
    return SetVolumePhase(pv, "Available", "");
  }
  const std::string claim_key = ClaimKeyOfRef(ref);
  std::optional<Json> pvc;
  if (auto cached = claims_->Get(claim_key)) {
    pvc = DocOf(*cached);
  } else {
    // The cache may lag behind a claim just created: ask the server before releasing.
    auto live = rest_->Get(ClaimPath(StringAt(ref, "namespace"), StringAt(ref, "name")));
    if (live.ok()) {
      pvc = std::move(*live);
    } else if (live.error().code != ErrorCode::kNotFound) {
      return live.error();
    }
  }
  if (pvc && UidOf(*pvc) != StringAt(ref, "uid")) pvc.reset();  // deleted and made again
  if (!pvc) {
    if (PhaseOf(pv) != "Released" && PhaseOf(pv) != "Failed") {
      if (auto r = SetVolumePhase(pv, "Released", ""); !r.ok()) return r;
    }
    return ReclaimVolume(pv);
  }
  const std::string bound_to = VolumeNameOf(*pvc);
  if (bound_to.empty()) {
    // The claim's sync completes the binding.
    queue_.Add(std::string(kClaimPrefix) + claim_key);
    return {};
  }
  if (bound_to == NameOf(pv)) {
    if (PhaseOf(pv) == "Bound") return {};
    return SetVolumePhase(pv, "Bound", "");
  }
  // The claim went to another volume: free this one. A volume the user pre-bound keeps its
  // claimRef without the uid, as upstream's unbindVolume.
  Json patch;
  if (HasAnnotation(pv, kAnnBoundByController)) {
    patch = {{"spec", {{"claimRef", nullptr}}},
             {"metadata", {{"annotations", {{std::string(kAnnBoundByController), nullptr}}}}}};
  } else {
    patch = {{"spec", {{"claimRef", {{"uid", nullptr}}}}}};
  }
  auto r = rest_->Patch(VolumePath(NameOf(pv)), patch, kMergePatch);
  if (!r.ok()) return r.error();
  return SetVolumePhase(*r, "Available", "");
}

VoidResult PersistentVolumeController::ReclaimVolume(const Json& pv) {
  const std::string policy = StringAt(Member(pv, "spec"), "persistentVolumeReclaimPolicy");
  if (policy == "Retain" || policy.empty()) return {};
  if (policy == "Delete" && HasAnnotation(pv, kAnnProvisionedBy)) {
    return {};  // the provisioner that made the volume deletes it
  }
  if (PhaseOf(pv) == "Failed") return {};
  // No in-process plugin can delete or recycle a volume nobody provisioned.
  const std::string message =
      policy == "Delete"
          ? fmt::format(
                "error getting deleter volume plugin for volume \"{}\": no deletable "
                "volume plugin matched",
                NameOf(pv))
          : fmt::format("no volume plugin matched name: recycle for volume \"{}\"", NameOf(pv));
  return SetVolumePhase(pv, "Failed", message);
}

VoidResult PersistentVolumeController::Bind(const Json& pv, const Json& pvc, bool by_controller) {
  if (auto r = BindVolumeSide(pv, pvc, by_controller); !r.ok()) return r;
  return BindClaimSide(pv, pvc, VolumeNameOf(pvc).empty());
}

VoidResult PersistentVolumeController::BindVolumeSide(const Json& pv, const Json& pvc,
                                                      bool by_controller) {
  const Json& ref = ClaimRefOf(pv);
  if (!ref.is_object() || StringAt(ref, "uid") != UidOf(pvc)) {
    Json patch = {
        {"spec",
         {{"claimRef",
           {{"kind", "PersistentVolumeClaim"},
            {"apiVersion", "v1"},
            {"namespace", NamespaceOf(pvc)},
            {"name", NameOf(pvc)},
            {"uid", UidOf(pvc)},
            {"resourceVersion", StringAt(Member(pvc, "metadata"), "resourceVersion")}}}}}};
    if (by_controller) patch["metadata"]["annotations"][std::string(kAnnBoundByController)] = "yes";
    auto r = rest_->Patch(VolumePath(NameOf(pv)), patch, kMergePatch);
    if (!r.ok()) return r.error();
    return SetVolumePhase(*r, "Bound", "");
  }
  if (PhaseOf(pv) == "Bound") return {};
  return SetVolumePhase(pv, "Bound", "");
}

VoidResult PersistentVolumeController::BindClaimSide(const Json& pv, const Json& pvc,
                                                     bool by_controller) {
  const Json* current = &pvc;
  Json patched;
  if (VolumeNameOf(pvc) != NameOf(pv) || !HasAnnotation(pvc, kAnnBindCompleted)) {
    Json patch = {{"spec", {{"volumeName", NameOf(pv)}}},
                  {"metadata", {{"annotations", {{std::string(kAnnBindCompleted), "yes"}}}}}};
    if (by_controller) patch["metadata"]["annotations"][std::string(kAnnBoundByController)] = "yes";
    auto r = rest_->Patch(ClaimPath(pvc), patch, kMergePatch);
    if (!r.ok()) return r.error();
    patched = std::move(*r);
    current = &patched;
  }
  return SetClaimPhase(*current, "Bound", &pv);
}

VoidResult PersistentVolumeController::SetVolumePhase(const Json& pv, std::string_view phase,
                                                      std::string_view message) {
  const Json& status = Member(pv, "status");
  if (StringAt(status, "phase") == phase && StringAt(status, "message") == message) return {};
  Json patch = {{"status", {{"phase", phase}}}};
  patch["status"]["message"] = message.empty() ? Json(nullptr) : Json(message);
  return rest_->Send("PATCH", VolumePath(NameOf(pv)) + "/status", patch, kMergePatch);
}

VoidResult PersistentVolumeController::SetClaimPhase(const Json& pvc, std::string_view phase,
                                                     const Json* pv) {
  const Json& status = Member(pvc, "status");
  Json want = {{"phase", phase}};
  if (pv) {
    // A bound claim reports what it got, as upstream's updateClaimStatus.
    want["capacity"] = Member(Member(*pv, "spec"), "capacity");
    want["accessModes"] = Member(Member(*pv, "spec"), "accessModes");
  }
  bool same = true;
  for (auto it = want.begin(); it != want.end(); ++it)
    same = same && Member(status, it.key()) == *it;
  if (same) return {};
  return rest_->Send("PATCH", ClaimPath(pvc) + "/status", {{"status", want}}, kMergePatch);
}

}  // namespace berth::controllers
