#include "plugins/volumebinding/binder.h"

#include <algorithm>
#include <array>
#include <memory>
#include <utility>

#include "plugins/volumebinding/assume_cache.h"

namespace berth::volumebinding {
namespace {

constexpr std::string_view kStorage = "storage";

// PVs already taken by earlier claims of the pod on this node. Pods rarely have more than a
// handful of claims, so the common case stays off the heap.
class ChosenSet {
 public:
  bool Contains(const PersistentVolume* pv) const {
    if (std::find(small_.begin(), small_.begin() + small_size_, pv) != small_.begin() + small_size_)
      return true;
    return std::find(large_.begin(), large_.end(), pv) != large_.end();
  }
  void Insert(const PersistentVolume* pv) {
    if (small_size_ < small_.size()) {
      small_[small_size_++] = pv;
    } else {
      large_.push_back(pv);
    }
  }

 private:
  std::array<const PersistentVolume*, 8> small_{};
  size_t small_size_ = 0;
  std::vector<const PersistentVolume*> large_;
};

Quantity StorageOf(const ResourceList& list) {
  auto it = list.find(kStorage);
  return it == list.end() ? Quantity() : it->second;
}

std::string_view VolumeModeOr(const std::string& mode) {
  return mode.empty() ? std::string_view("Filesystem") : std::string_view(mode);
}

bool AccessModesSatisfied(const PersistentVolumeClaim& pvc, const PersistentVolume& pv) {
  for (const auto& mode : pvc.spec.access_modes)
    if (std::find(pv.spec.access_modes.begin(), pv.spec.access_modes.end(), mode) ==
        pv.spec.access_modes.end())
      return false;
  return true;
}

// allowedTopologies: any term whose requirements all hold; no terms allows every node; a term
// without requirements, or with a requirement without values, selects nothing.
bool MatchesAllowedTopologies(const StorageClass& sc, const Node& node) {
  if (sc.allowed_topologies.empty()) return true;
  const Labels& labels = node.metadata.labels;
  for (const auto& term : sc.allowed_topologies) {
    if (term.empty()) continue;
    bool ok = true;
    for (const auto& req : term) {
      auto it = labels.find(req.key);
      if (req.values.empty() || it == labels.end() ||
          std::find(req.values.begin(), req.values.end(), it->second) == req.values.end()) {
        ok = false;
        break;
      }
    }
    if (ok) return true;
  }
  return false;
}

// The best static PV for `claim` on `node`: a PV pre-bound to the claim if its affinity fits,
// else the smallest free PV that satisfies the claim. Null when there is none.
const Ptr<PersistentVolume>* FindMatchingVolume(const ClaimToMatch& claim,
                                                const std::vector<Ptr<PersistentVolume>>& pvs,
                                                const Node& node, const ChosenSet& chosen) {
  const PersistentVolumeClaim& pvc = *claim.pvc;
  const std::string_view claim_class = ClaimClass(pvc);
  const Ptr<PersistentVolume>* smallest = nullptr;
  Quantity smallest_qty;
  for (const auto& pv_ptr : pvs) {
    const PersistentVolume& pv = *pv_ptr;
    if (chosen.Contains(&pv)) continue;
    const bool bound_to_claim = IsVolumeBoundToClaim(pv, pvc);
    if (pv.spec.claim_ref && !bound_to_claim) continue;
    Quantity qty = StorageOf(pv.spec.capacity);
    if (qty < claim.request) continue;
    if (VolumeModeOr(pvc.spec.volume_mode) != VolumeModeOr(pv.spec.volume_mode)) continue;
    if (pv.metadata.deletion_timestamp) continue;

    const bool affinity_ok = CheckNodeAffinity(pv, node);
    // A PV pre-bound to the claim is the only candidate: it fits here or nowhere.
    if (bound_to_claim) return affinity_ok ? &pv_ptr : nullptr;

    if (pv.status.phase != "Available") continue;
    if (claim.selector && !claim.selector->Matches(pv.metadata.labels)) continue;
    if (PersistentVolumeClass(pv) != claim_class) continue;
    if (!affinity_ok) continue;
    if (!AccessModesSatisfied(pvc, pv)) continue;
    if (!smallest || qty < smallest_qty) {
      smallest = &pv_ptr;
      smallest_qty = qty;
    }
  }
  return smallest;
}

std::string ClaimKey(const PersistentVolumeClaim& pvc) {
  return pvc.metadata.namespace_ + "/" + pvc.metadata.name;
}

}  // namespace

bool CheckNodeAffinity(const PersistentVolume& pv, const Node& node) {
  if (!pv.spec.node_affinity) return true;
  const NodeSelector& selector = *pv.spec.node_affinity;
  bool has_fields = std::any_of(selector.terms.begin(), selector.terms.end(),
                                [](const NodeSelectorTerm& t) { return !t.match_fields.empty(); });
  if (!has_fields) return NodeSelectorMatches(selector, node);
  Node labels_only;
  labels_only.metadata.labels = node.metadata.labels;
  return NodeSelectorMatches(selector, labels_only);
}

bool IsClaimFullyBound(const PersistentVolumeClaim& pvc) {
  return !pvc.spec.volume_name.empty() && pvc.metadata.annotations.count(kAnnBindCompleted) > 0;
}

bool IsVolumeBoundToClaim(const PersistentVolume& pv, const PersistentVolumeClaim& pvc) {
  if (!pv.spec.claim_ref) return false;
  const auto& ref = *pv.spec.claim_ref;
  if (ref.name != pvc.metadata.name || ref.namespace_ != pvc.metadata.namespace_) return false;
  return ref.uid.empty() || ref.uid == pvc.metadata.uid;
}

Ptr<PersistentVolume> BindVolumeToClaim(const PersistentVolume& pv,
                                        const PersistentVolumeClaim& pvc) {
  const bool set_bound_by_controller = !IsVolumeBoundToClaim(pv, pvc);
  std::shared_ptr<PersistentVolume> copy;
  const auto& ref = pv.spec.claim_ref;
  if (!ref || ref->name != pvc.metadata.name || ref->namespace_ != pvc.metadata.namespace_ ||
      ref->uid != pvc.metadata.uid) {
    copy = std::make_shared<PersistentVolume>(pv);
    copy->spec.claim_ref = PersistentVolume::Spec::ClaimRef{pvc.metadata.namespace_,
                                                            pvc.metadata.name, pvc.metadata.uid};
  }
  if (set_bound_by_controller && !pv.metadata.annotations.count(kAnnBoundByController)) {
    if (!copy) copy = std::make_shared<PersistentVolume>(pv);
    copy->metadata.annotations[std::string(kAnnBoundByController)] = "yes";
  }
  return copy;
}

Status FindPodVolumes(const PodVolumeClaims& claims, const Node& node, PodVolumes* out) {
  bool bound_satisfied = true;
  bool bound_pvs_found = true;
  bool unbound_satisfied = true;
  const bool sufficient_storage = true;  // CSIStorageCapacity is not modelled

  auto result = [&]() -> Status {
    if (bound_satisfied && unbound_satisfied && sufficient_storage && bound_pvs_found)
      return Status::Success();
    std::vector<std::string> reasons;
    if (!bound_satisfied) reasons.emplace_back(kErrReasonNodeConflict);
    if (!unbound_satisfied) reasons.emplace_back(kErrReasonBindConflict);
    if (!sufficient_storage) reasons.emplace_back(kErrReasonNotEnoughSpace);
    if (!bound_pvs_found) reasons.emplace_back(kErrReasonPVNotExist);
    return Status(Code::kUnschedulableAndUnresolvable, std::move(reasons));
  };

  // Bound claims: the first missing PV or the first affinity mismatch settles it.
  for (const auto& b : claims.bound) {
    if (!b.pv) {
      bound_pvs_found = false;
      break;
    }
    if (!CheckNodeAffinity(*b.pv, node)) {
      bound_satisfied = false;
      break;
    }
  }

  if (claims.selected.empty() && claims.to_match.empty()) return result();

  // Claims already sent for provisioning fit their selected node only.
  for (const auto& selected : claims.selected_node) {
    if (selected != node.metadata.name) {
      unbound_satisfied = false;
      return result();
    }
  }

  // Claims left to provision: the selected ones (pod order), then those without a static PV.
  std::vector<std::pair<const Ptr<PersistentVolumeClaim>*, size_t>> to_provision;
  for (size_t i = 0; i < claims.selected.size(); ++i)
    to_provision.emplace_back(&claims.selected[i], claims.selected_class[i]);

  if (!claims.to_match.empty()) {
    ChosenSet chosen;
    bool found_all = true;
    for (const auto& claim : claims.to_match) {
      if (!claim.selector_error.empty())
        return Status::Error("error creating internal label selector for claim: " +
                             ClaimKey(*claim.pvc) + ": " + claim.selector_error);
      const ClassInfo& cls = claims.classes[claim.class_index];
      const Ptr<PersistentVolume>* pv = FindMatchingVolume(claim, cls.pvs, node, chosen);
      if (!pv) {
        to_provision.emplace_back(&claim.pvc, claim.class_index);
        found_all = false;
        continue;
      }
      chosen.Insert(pv->get());
      if (out) out->static_bindings.push_back(StaticBinding{claim.pvc, *pv});
    }
    unbound_satisfied = found_all;
  }

  if (!to_provision.empty()) {
    // Provisioning decides alone: a claim without a static PV is fine if it can be provisioned.
    for (const auto& [pvc, class_index] : to_provision) {
      const ClassInfo& cls = claims.classes[class_index];
      if (cls.name.empty()) return Status::Error("no class for claim \"" + ClaimKey(**pvc) + "\"");
      if (!cls.storage_class)
        return Status::Error("failed to find storage class \"" + cls.name + "\"");
      const StorageClass& sc = *cls.storage_class;
      if (sc.provisioner.empty() || sc.provisioner == kNotSupportedProvisioner ||
          !MatchesAllowedTopologies(sc, node)) {
        unbound_satisfied = false;
        if (out) out->dynamic_provisions.clear();
        return result();
      }
      if (out) out->dynamic_provisions.push_back(*pvc);
    }
    unbound_satisfied = true;
  }
  return result();
}

}  // namespace berth::volumebinding
