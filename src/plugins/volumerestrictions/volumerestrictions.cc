#include "plugins/volumerestrictions/volumerestrictions.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "framework/volume_claims.h"

namespace berth {
namespace volumerestrictions {
namespace {

// Cycle data: the pod's ReadWriteOncePod claim names and how many scheduled pods use them.
struct PreFilterState final : StateData {
  std::vector<std::string> rwop_claims;  // sorted, unique
  int conflicting_ref_count = 0;

  std::shared_ptr<StateData> Clone() const override {
    return std::make_shared<PreFilterState>(*this);
  }

  // Volumes of `pod` that name one of the claims. Like kube-scheduler, the claim name alone
  // is compared (the namespace is not), which only matters for pods of other namespaces on
  // hypothetical add/remove.
  int RefsOf(const Pod& pod) const {
    int refs = 0;
    for (const auto& v : pod.spec.volumes) {
      if (!v.persistent_volume_claim) continue;
      if (std::binary_search(rwop_claims.begin(), rwop_claims.end(),
                             v.persistent_volume_claim->claim_name))
        ++refs;
    }
    return refs;
  }
};

constexpr StateKey<PreFilterState> kStateKey{"PreFilterVolumeRestrictions"};

bool NeedsDiskCheck(const Volume& v) {
  return v.gce_persistent_disk || v.aws_elastic_block_store || v.rbd || v.iscsi;
}

bool HaveOverlap(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  for (const auto& x : a)
    if (std::find(b.begin(), b.end(), x) != b.end()) return true;
  return false;
}

// True if `v` (of the incoming pod) and `other` (of a pod on the node) are the same disk and
// the sharing rules of its type forbid mounting it twice.
bool DisksConflict(const Volume& v, const Volume& other) {
  if (v.gce_persistent_disk && other.gce_persistent_disk) {
    const auto& d = *v.gce_persistent_disk;
    const auto& e = *other.gce_persistent_disk;
    if (d.pd_name == e.pd_name && !(d.read_only && e.read_only)) return true;
  }
  if (v.aws_elastic_block_store && other.aws_elastic_block_store) {
    if (v.aws_elastic_block_store->volume_id == other.aws_elastic_block_store->volume_id)
      return true;
  }
  if (v.iscsi && other.iscsi) {
    if (v.iscsi->iqn == other.iscsi->iqn && !(v.iscsi->read_only && other.iscsi->read_only))
      return true;
  }
  if (v.rbd && other.rbd) {
    const auto& r = *v.rbd;
    const auto& e = *other.rbd;
    if (HaveOverlap(r.monitors, e.monitors) && r.pool == e.pool && r.image == e.image &&
        !(r.read_only && e.read_only))
      return true;
  }
  return false;
}

bool SatisfiesDiskConflicts(const Pod& pod, const NodeInfo& node) {
  for (const auto& v : pod.spec.volumes) {
    if (!NeedsDiskCheck(v)) continue;
    for (const auto& existing : node.pods()) {
      for (const auto& ev : existing->pod->spec.volumes)
        if (DisksConflict(v, ev)) return false;
    }
  }
  return true;
}

}  // namespace

Status VolumeRestrictions::PreFilter(CycleState& state, const PodInfo& pod,
                                     std::span<const NodeInfo* const> /*nodes*/,
                                     PreFilterResult* /*result*/) {
  const Pod& p = *pod.pod;
  bool needs_disk_check = std::any_of(p.spec.volumes.begin(), p.spec.volumes.end(),
                                      [](const Volume& v) { return NeedsDiskCheck(v); });

  auto s = std::make_shared<PreFilterState>();
  const ClusterListers& client = handle_->listers();
  for (const auto& v : p.spec.volumes) {
    if (!v.persistent_volume_claim) continue;
    const std::string& claim = v.persistent_volume_claim->claim_name;
    auto pvc = client.GetPVC(p.metadata.namespace_, claim);
    if (!pvc) return Status::Unresolvable("persistentvolumeclaim \"" + claim + "\" not found");
    const auto& modes = pvc->spec.access_modes;
    if (std::find(modes.begin(), modes.end(), "ReadWriteOncePod") == modes.end()) continue;
    s->rwop_claims.push_back(pvc->metadata.name);
  }
  std::sort(s->rwop_claims.begin(), s->rwop_claims.end());
  s->rwop_claims.erase(std::unique(s->rwop_claims.begin(), s->rwop_claims.end()),
                       s->rwop_claims.end());

  const Snapshot& snapshot = handle_->snapshot();
  for (const auto& claim : s->rwop_claims) {
    // At most one pod can hold a ReadWriteOncePod claim, so one use is one conflict.
    if (snapshot.IsPVCUsedByPods(p.metadata.namespace_ + "/" + claim)) ++s->conflicting_ref_count;
  }

  if (!needs_disk_check && s->conflicting_ref_count == 0) return Status::Skip();
  state.Write(kStateKey, std::move(s));
  return Status::Success();
}

Status VolumeRestrictions::AddPod(CycleState& state, const PodInfo& /*pod_to_schedule*/,
                                  const PodInfoPtr& pod_to_add, const NodeInfo& /*node*/) const {
  PreFilterState* s = state.ReadMutable(kStateKey);
  if (!s) return Status::Error("cannot read \"PreFilterVolumeRestrictions\" from cycleState");
  s->conflicting_ref_count += s->RefsOf(*pod_to_add->pod);
  return Status::Success();
}

Status VolumeRestrictions::RemovePod(CycleState& state, const PodInfo& /*pod_to_schedule*/,
                                     const PodInfoPtr& pod_to_remove,
                                     const NodeInfo& /*node*/) const {
  PreFilterState* s = state.ReadMutable(kStateKey);
  if (!s) return Status::Error("cannot read \"PreFilterVolumeRestrictions\" from cycleState");
  s->conflicting_ref_count -= s->RefsOf(*pod_to_remove->pod);
  return Status::Success();
}

Status VolumeRestrictions::Filter(const CycleState& state, const PodInfo& pod,
                                  const NodeInfo& node) const {
  if (!SatisfiesDiskConflicts(*pod.pod, node))
    return Status::Unschedulable(std::string(kErrReasonDiskConflict));
  const PreFilterState* s = state.Read(kStateKey);
  if (!s) return Status::Error("cannot read \"PreFilterVolumeRestrictions\" from cycleState");
  if (s->conflicting_ref_count > 0)
    return Status::Unschedulable(std::string(kErrReasonReadWriteOncePodConflict));
  return Status::Success();
}

// A pod holding a conflicting volume going away, the pod's claim appearing, or a new node.
std::vector<ClusterEventWithHint> VolumeRestrictions::EventsToRegister() const {
  return {
      {{EventResource::kPod, kDelete}, QueueIfDeletedPodHeldVolumes()},
      {{EventResource::kPersistentVolumeClaim, kAdd | kUpdateOther}, QueueIfPodUsesClaim()},
      {{EventResource::kNode, kAdd}, {}},
  };
}

}  // namespace volumerestrictions

PluginRegistration VolumeRestrictionsRegistration() {
  return MakeRegistration(volumerestrictions::kName,
                          FactoryOf<volumerestrictions::VolumeRestrictions>());
}

}  // namespace berth
