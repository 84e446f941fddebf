// Why a pod's claims are not bound, for `berth explain` (VolumeBinding's FilterRemedySearch
// notes): the claim by name and the reason (no such claim, no StorageClass of that name, no
// PersistentVolume that matches it, a missing pre-bound volume). Bound means what Filter takes
// it to mean (IsClaimFullyBound), and a claim's class is read as Filter reads it (ClaimClass,
// the beta annotation first).
#include "plugins/volumebinding/claim_notes.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/resource_amount.h"
#include "framework/storage_classes.h"
#include "plugins/volumebinding/assume_cache.h"
#include "plugins/volumebinding/binder.h"

namespace berth::volumebinding {
namespace {

int64_t StorageOf(const ResourceList& list) {
  auto it = list.find(std::string_view("storage"));
  return it == list.end() ? 0 : it->second.Value();
}

// The available PersistentVolumes a claim could bind to: its class, no other claim's, with
// the access modes and the storage it asks for.
int MatchingVolumes(const ClusterListers& c, const PersistentVolumeClaim& pvc,
                    std::string_view cls) {
  int n = 0;
  for (const auto& pv : c.ListPVs()) {
    if (pv->spec.storage_class_name != cls) continue;
    if (pv->spec.claim_ref && !IsVolumeBoundToClaim(*pv, pvc)) continue;
    if (StorageOf(pv->spec.capacity) < StorageOf(pvc.spec.requests)) continue;
    const auto& modes = pv->spec.access_modes;
    if (!std::all_of(pvc.spec.access_modes.begin(), pvc.spec.access_modes.end(),
                     [&](const std::string& m) {
                       return std::find(modes.begin(), modes.end(), m) != modes.end();
                     }))
      continue;
    ++n;
  }
  return n;
}

// " (there are a, b)", or nothing when the classes cannot be listed.
std::string ClassNames(const ClusterListers& c) {
  auto classes = ListStorageClasses(c);
  if (!classes) return "";
  std::vector<std::string> names;
  for (const auto& sc : *classes) names.push_back(sc->metadata.name);
  std::sort(names.begin(), names.end());
  if (names.empty()) return " (there are none)";
  return fmt::format(" (there are {})", fmt::join(names, ", "));
}

// Why a claim that is not bound is so; empty when waiting is all it needs (a
// WaitForFirstConsumer class whose volumes are bound once the pod is placed).
std::string WhyUnbound(const ClusterListers& c, const PersistentVolumeClaim& pvc) {
  const std::string name = pvc.metadata.namespace_ + "/" + pvc.metadata.name;
  if (!pvc.spec.volume_name.empty()) {
    if (c.GetPV(pvc.spec.volume_name))
      return fmt::format("claim {} names PersistentVolume {}, which is not bound to it yet", name,
                         pvc.spec.volume_name);
    return fmt::format("claim {} names PersistentVolume {}, which does not exist", name,
                       pvc.spec.volume_name);
  }
  const std::string cls(ClaimClass(pvc));
  Ptr<StorageClass> sc = cls.empty() ? nullptr : c.GetStorageClass(cls);
  const int matching = MatchingVolumes(c, pvc, cls);
  if (!cls.empty() && !sc)
    return fmt::format(
        "claim {} is unbound: it asks for StorageClass \"{}\", and no StorageClass of that name "
        "exists{}{}",
        name, cls, ClassNames(c),
        matching > 0 ? "" : "; nor is there a PersistentVolume of that class to bind it to");
  if (sc && sc->volume_binding_mode.value_or("") == "WaitForFirstConsumer") return "";
  if (matching > 0)
    return fmt::format(
        "claim {} is unbound: {} PersistentVolume(s) of class \"{}\" match it, waiting for the "
        "volume controller to bind one",
        name, matching, cls);
  if (!sc)
    return fmt::format(
        "claim {} is unbound: it names no StorageClass, and no PersistentVolume without a class "
        "has its access modes and {} of storage",
        name, FormatAmount("storage", StorageOf(pvc.spec.requests)));
  return fmt::format(
      "claim {} is unbound: StorageClass \"{}\" binds immediately, no PersistentVolume of the "
      "class matches it, and its provisioner {} has not provisioned one",
      name, cls, sc->provisioner.empty() ? "(none)" : sc->provisioner);
}

}  // namespace

std::vector<std::string> ClaimNotes(const ClusterListers& c, const Pod& pod) {
  std::vector<std::string> notes;
  for (const Volume& v : pod.spec.volumes) {
    std::string claim;
    if (v.persistent_volume_claim) claim = v.persistent_volume_claim->claim_name;
    if (v.ephemeral) claim = pod.metadata.name + "-" + v.name;
    if (claim.empty()) continue;
    Ptr<PersistentVolumeClaim> pvc = c.GetPVC(pod.metadata.namespace_, claim);
    if (!pvc) {
      notes.push_back(fmt::format("claim {}/{} does not exist", pod.metadata.namespace_, claim));
      continue;
    }
    if (IsClaimFullyBound(*pvc)) continue;
    if (std::string why = WhyUnbound(c, *pvc); !why.empty()) notes.push_back(std::move(why));
  }
  return notes;
}

}  // namespace berth::volumebinding
