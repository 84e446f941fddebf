#include "controllers/volume_util.h"

#include <algorithm>

namespace berth::controllers {
namespace {

Quantity QuantityAt(const Json& list, std::string_view key) {
  const Json& v = Member(list, key);
  if (!v.is_string()) return Quantity();
  auto q = Quantity::Parse(v.get<std::string>());
  return q.ok() ? *q : Quantity();
}

std::string ModeOf(const Json& obj) {
  std::string mode = StringAt(Member(obj, "spec"), "volumeMode");
  return mode.empty() ? "Filesystem" : mode;
}

// Every access mode the claim asks for is one the volume offers.
bool HasAccessModes(const Json& pv, const Json& pvc) {
  const Json& offered = Member(Member(pv, "spec"), "accessModes");
  const Json& wanted = Member(Member(pvc, "spec"), "accessModes");
  if (!wanted.is_array()) return true;
  for (const Json& mode : wanted) {
    if (!offered.is_array() || std::find(offered.begin(), offered.end(), mode) == offered.end())
      return false;
  }
  return true;
}

bool SelectorMatches(const Json& pvc, const Json& pv) {
  const Json& selector = Member(Member(pvc, "spec"), "selector");
  if (!selector.is_object()) return true;
  auto compiled = LabelSelectorOf(selector);
  return compiled.ok() && compiled->Matches(LabelsOf(pv));
}

}  // namespace

std::string ClaimClass(const Json& pvc) {
  const Json& name = Member(Member(pvc, "spec"), "storageClassName");
  if (name.is_string()) return name.get<std::string>();
  return AnnotationOf(pvc, kAnnBetaStorageClass);
}

std::string VolumeClass(const Json& pv) {
  const Json& name = Member(Member(pv, "spec"), "storageClassName");
  if (name.is_string()) return name.get<std::string>();
  return AnnotationOf(pv, kAnnBetaStorageClass);
}

Quantity ClaimRequest(const Json& pvc) {
  return QuantityAt(Member(Member(Member(pvc, "spec"), "resources"), "requests"), "storage");
}

Quantity VolumeCapacity(const Json& pv) {
  return QuantityAt(Member(Member(pv, "spec"), "capacity"), "storage");
}

std::string AnnotationOf(const Json& obj, std::string_view key) {
  return StringAt(Member(Member(obj, "metadata"), "annotations"), key);
}

bool HasAnnotation(const Json& obj, std::string_view key) {
  return !Member(Member(Member(obj, "metadata"), "annotations"), key).is_null();
}

bool IsVolumeBoundToClaim(const Json& pv, const Json& pvc) {
  const Json& ref = Member(Member(pv, "spec"), "claimRef");
  if (!ref.is_object()) return false;
  if (StringAt(ref, "name") != NameOf(pvc) || StringAt(ref, "namespace") != NamespaceOf(pvc))
    return false;
  const std::string uid = StringAt(ref, "uid");
  return uid.empty() || uid == UidOf(pvc);
}

std::string DefaultClassName(const std::vector<Json>& classes) {
  const Json* chosen = nullptr;
  for (const Json& sc : classes) {
    if (AnnotationOf(sc, kAnnDefaultClass) != "true" &&
        AnnotationOf(sc, "storageclass.beta.kubernetes.io/is-default-class") != "true") {
      continue;
    }
    if (!chosen || CreatedAt(sc) > CreatedAt(*chosen) ||
        (CreatedAt(sc) == CreatedAt(*chosen) && NameOf(sc) < NameOf(*chosen))) {
      chosen = &sc;
    }
  }
  return chosen ? NameOf(*chosen) : std::string();
}

bool IsDelayedBinding(const Json* storage_class) {
  return storage_class && StringAt(*storage_class, "volumeBindingMode") == "WaitForFirstConsumer";
}

const Json* FindBestMatch(const Json& pvc, const std::vector<const Json*>& volumes,
                          bool delay_binding) {
  const Quantity request = ClaimRequest(pvc);
  const std::string claim_class = ClaimClass(pvc);
  const std::string claim_mode = ModeOf(pvc);
  const Json* best = nullptr;
  Quantity best_size;
  for (const Json* pv : volumes) {
    const Quantity size = VolumeCapacity(*pv);
    // Mode and size apply to pre-bound volumes too (upstream checks them first).
    if (size < request || ModeOf(*pv) != claim_mode) continue;
    if (IsVolumeBoundToClaim(*pv, pvc)) return pv;
    if (delay_binding) continue;
    if (Member(Member(*pv, "spec"), "claimRef").is_object()) continue;
    if (StringAt(Member(*pv, "status"), "phase") != "Available") continue;
    if (HasDeletionTimestamp(*pv)) continue;
    if (VolumeClass(*pv) != claim_class) continue;
    if (!SelectorMatches(pvc, *pv) || !HasAccessModes(*pv, pvc)) continue;
    if (!best || size < best_size) {
      best = pv;
      best_size = size;
    }
  }
  return best;
}

}  // namespace berth::controllers
