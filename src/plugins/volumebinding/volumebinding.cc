#include "plugins/volumebinding/volumebinding.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "berth/config/plugin_args.h"
#include "config/plugin_args_codec.h"
#include "framework/volume_claims.h"
#include "plugins/volumebinding/claim_notes.h"

namespace berth {
namespace volumebinding {
namespace {

// PreFilter's view of the pod's claims; read-only afterwards, so clones share it.
struct StateData final : berth::StateData, std::enable_shared_from_this<StateData> {
  bool skip = false;  // the pod has no claims
  PodVolumeClaims claims;

  std::shared_ptr<berth::StateData> Clone() const override {
    return std::const_pointer_cast<StateData>(shared_from_this());
  }
};

// What Reserve assumed for the chosen node, for Unreserve and PreBind.
struct ReservedData final : berth::StateData {
  bool all_bound = false;
  PodVolumes volumes;

  std::shared_ptr<berth::StateData> Clone() const override {
    return std::make_shared<ReservedData>(*this);
  }
};

constexpr StateKey<StateData> kStateKey{"VolumeBinding"};
constexpr StateKey<ReservedData> kReservedKey{"ReservedVolumeBinding"};

// A volume of the pod that uses a claim.
struct PodClaim {
  std::string name;
  bool ephemeral = false;
};

std::vector<PodClaim> PodClaims(const Pod& pod) {
  std::vector<PodClaim> out;
  for (const auto& v : pod.spec.volumes) {
    if (v.persistent_volume_claim) {
      out.push_back({v.persistent_volume_claim->claim_name, false});
    } else if (v.ephemeral) {
      out.push_back({pod.metadata.name + "-" + v.name, true});
    }
  }
  return out;
}

Status CheckEphemeralOwner(const PersistentVolumeClaim& pvc, const Pod& pod, Code code) {
  bool owned = false;
  if (pvc.metadata.namespace_ == pod.metadata.namespace_) {
    for (const auto& ref : pvc.metadata.owner_references) {
      if (!ref.controller) continue;
      owned = ref.uid == pod.metadata.uid;
      break;
    }
  }
  if (owned) return Status::Success();
  return Status(code, "PVC " + pvc.metadata.namespace_ + "/" + pvc.metadata.name +
                          " was not created for pod " + pod.metadata.namespace_ + "/" +
                          pod.metadata.name + " (pod is not owner)");
}

Quantity StorageRequest(const PersistentVolumeClaim& pvc) {
  auto it = pvc.spec.requests.find(std::string_view("storage"));
  return it == pvc.spec.requests.end() ? Quantity() : it->second;
}

}  // namespace

// The checks that reject the pod outright, made on the API objects (not assumed versions).
Status VolumeBinding::CheckPodClaims(const Pod& pod) const {
  const ClusterListers& client = handle_->listers();
  for (const auto& claim : PodClaims(pod)) {
    auto pvc = client.GetPVC(pod.metadata.namespace_, claim.name);
    if (!pvc) {
      if (claim.ephemeral)
        return Status::Unresolvable(
            "waiting for ephemeral volume controller to create the persistentvolumeclaim \"" +
            claim.name + "\"");
      return Status::Unresolvable("persistentvolumeclaim \"" + claim.name + "\" not found");
    }
    if (pvc->status.phase == "Lost")
      return Status::Unresolvable("persistentvolumeclaim \"" + pvc->metadata.name +
                                  "\" bound to non-existent persistentvolume \"" +
                                  pvc->spec.volume_name + "\"");
    if (pvc->metadata.deletion_timestamp)
      return Status::Unresolvable("persistentvolumeclaim \"" + pvc->metadata.name +
                                  "\" is being deleted");
    if (claim.ephemeral) {
      Status s = CheckEphemeralOwner(*pvc, pod, Code::kUnschedulableAndUnresolvable);
      if (!s.IsSuccess()) return s;
    }
  }
  return Status::Success();
}

// Sorts the pod's claims into bound and delayed-binding ones and gathers what Filter needs.
Status VolumeBinding::CollectClaims(const Pod& pod, PodVolumeClaims& out) const {
  const ClusterListers& client = handle_->listers();
  std::vector<Ptr<PersistentVolumeClaim>> delayed;
  bool unbound_immediate = false;
  for (const auto& claim : PodClaims(pod)) {
    auto pvc = cache_.GetPVC(pod.metadata.namespace_, claim.name);
    if (!pvc)
      return Status::Error("error getting PVC \"" + pod.metadata.namespace_ + "/" + claim.name +
                           "\": not found");
    if (claim.ephemeral) {
      Status s = CheckEphemeralOwner(*pvc, pod, Code::kError);
      if (!s.IsSuccess()) return s;
    }
    if (IsClaimFullyBound(*pvc)) {
      out.bound.push_back(BoundClaim{pvc, cache_.GetPV(pvc->spec.volume_name)});
      continue;
    }
    bool delay_binding = false;
    if (std::string class_name(ClaimClass(*pvc)); !class_name.empty()) {
      if (auto sc = client.GetStorageClass(class_name)) {
        if (!sc->volume_binding_mode)
          return Status::Error("VolumeBindingMode not set for StorageClass \"" + class_name + "\"");
        delay_binding = *sc->volume_binding_mode == "WaitForFirstConsumer";
      }
    }
    // A claim pre-bound to a PV (volumeName set) is the PV controller's to finish, like an
    // Immediate one.
    if (delay_binding && pvc->spec.volume_name.empty()) {
      delayed.push_back(std::move(pvc));
    } else {
      unbound_immediate = true;
    }
  }
  if (unbound_immediate) return Status::Unresolvable(std::string(kErrReasonUnboundImmediate));

  auto class_index = [&](const std::string& name) {
    for (size_t i = 0; i < out.classes.size(); ++i)
      if (out.classes[i].name == name) return i;
    out.classes.push_back(ClassInfo{name, client.GetStorageClass(name), cache_.ListPVs(name)});
    return out.classes.size() - 1;
  };
  for (auto& pvc : delayed) {
    size_t index = class_index(std::string(ClaimClass(*pvc)));
    auto selected = pvc->metadata.annotations.find(kAnnSelectedNode);
    if (selected != pvc->metadata.annotations.end()) {
      out.selected_node.push_back(selected->second);
      out.selected_class.push_back(index);
      out.selected.push_back(std::move(pvc));
      continue;
    }
    ClaimToMatch m{pvc, StorageRequest(*pvc), index, std::nullopt, {}};
    if (pvc->spec.selector) {
      auto compiled = CompiledSelector::Compile(*pvc->spec.selector);
      if (compiled.ok()) {
        m.selector = std::move(compiled).value();
      } else {
        m.selector_error = compiled.error().message;
      }
    }
    out.to_match.push_back(std::move(m));
  }
  // Smallest requests choose first, so they get the smallest fitting PVs.
  std::stable_sort(
      out.to_match.begin(), out.to_match.end(),
      [](const ClaimToMatch& a, const ClaimToMatch& b) { return a.request < b.request; });
  return Status::Success();
}

Status VolumeBinding::PreFilter(CycleState& state, const PodInfo& pod,
                                std::span<const NodeInfo* const> /*nodes*/,
                                PreFilterResult* /*result*/) {
  const Pod& p = *pod.pod;
  Status checked = CheckPodClaims(p);
  if (!checked.IsSuccess()) return checked;
  auto data = std::make_shared<StateData>();
  if (PodClaims(p).empty()) {
    data->skip = true;
    state.Write(kStateKey, std::move(data));
    return Status::Skip();
  }
  Status collected = CollectClaims(p, data->claims);
  if (!collected.IsSuccess()) return collected;
  state.Write(kStateKey, std::move(data));
  return Status::Success();
}

Status VolumeBinding::Filter(const CycleState& state, const PodInfo& /*pod*/,
                             const NodeInfo& node) const {
  const StateData* data = state.Read(kStateKey);
  if (!data) return Status::Error("reading \"VolumeBinding\" from cycleState: not found");
  if (data->skip) return Status::Success();
  return FindPodVolumes(data->claims, *node.node(), nullptr);
}

Status VolumeBinding::PreScore(CycleState& state, const PodInfo& /*pod*/,
                               std::span<const NodeInfo* const> /*feasible*/) {
  if (!scorer_) return Status::Skip();
  const StateData* data = state.Read(kStateKey);
  if (!data) return Status::Error("reading \"VolumeBinding\" from cycleState: not found");
  // Only claims matched to existing PVs can score (see the header).
  return data->skip || data->claims.to_match.empty() ? Status::Skip() : Status::Success();
}

namespace {

// Requested storage and capacity of one storage class's volumes on a node.
struct ClassUsage {
  std::string_view class_name;
  int64_t requested = 0;
  int64_t capacity = 0;
};

int64_t StorageBytes(const ResourceList& list) {
  auto it = list.find(std::string_view("storage"));
  return it == list.end() ? 0 : it->second.Value();
}

}  // namespace

Status VolumeBinding::Score(const CycleState& state, const PodInfo& /*pod*/, const NodeInfo& node,
                            int64_t* score) const {
  *score = 0;
  const StateData* data = state.Read(kStateKey);
  if (!data) return Status::Error("reading \"VolumeBinding\" from cycleState: not found");
  PodVolumes decided;
  // Filter accepted the node with these claims; this repeats its decisions to see the PVs.
  if (!FindPodVolumes(data->claims, *node.node(), &decided).IsSuccess()) return Status::Success();
  std::vector<ClassUsage> classes;
  for (const StaticBinding& b : decided.static_bindings) {
    std::string_view name = b.pv->spec.storage_class_name;
    auto it = std::find_if(classes.begin(), classes.end(),
                           [&](const ClassUsage& c) { return c.class_name == name; });
    if (it == classes.end()) it = classes.insert(classes.end(), ClassUsage{name});
    it->requested += StorageBytes(b.pvc->spec.requests);
    it->capacity += StorageBytes(b.pv->spec.capacity);
  }
  if (classes.empty()) return Status::Success();
  int64_t sum = 0;
  for (const ClassUsage& c : classes) {
    const bool full = c.capacity == 0 || c.requested > c.capacity;
    sum += (*scorer_)(full ? kMaxUtilization : c.requested * kMaxUtilization / c.capacity);
  }
  // Every class weighs the same; rounded half away from zero.
  *score = std::llround(static_cast<double>(sum) / static_cast<double>(classes.size()));
  return Status::Success();
}

bool VolumeBinding::ArePodVolumesBound(const Pod& pod) const {
  for (const auto& claim : PodClaims(pod)) {
    auto pvc = cache_.GetPVC(pod.metadata.namespace_, claim.name);
    if (!pvc || !IsClaimFullyBound(*pvc)) return false;
  }
  return true;
}

void VolumeBinding::Revert(const PodVolumes& volumes) {
  for (const auto& b : volumes.static_bindings) cache_.RestorePV(b.pv->metadata.name);
  for (const auto& pvc : volumes.dynamic_provisions)
    cache_.RestorePVC(pvc->metadata.namespace_, pvc->metadata.name);
}

Status VolumeBinding::Reserve(CycleState& state, const PodInfo& pod, const std::string& node) {
  const StateData* data = state.Read(kStateKey);
  if (!data) return Status::Error("reading \"VolumeBinding\" from cycleState: not found");
  auto reserved = std::make_shared<ReservedData>();
  if (data->skip || ArePodVolumesBound(*pod.pod)) {
    reserved->all_bound = true;
    state.Write(kReservedKey, std::move(reserved));
    return Status::Success();
  }

  const NodeInfo* info = handle_->snapshot().Get(node);
  if (!info || !info->node()) return Status::Error("node \"" + node + "\" not found");
  // Filter accepted this node with the same PreFilter data, so this repeats its decisions.
  PodVolumes decided;
  Status s = FindPodVolumes(data->claims, *info->node(), &decided);
  if (!s.IsSuccess())
    return Status::Error("volumes of the pod no longer fit node \"" + node + "\": " + s.Message());

  PodVolumes& assumed = reserved->volumes;
  for (const auto& b : decided.static_bindings) {
    Ptr<PersistentVolume> pv = BindVolumeToClaim(*b.pv, *b.pvc);
    if (pv) {
      VoidResult r = cache_.AssumePV(pv);
      if (!r.ok()) {
        Revert(assumed);
        return Status::Error(r.error().message);
      }
    } else {
      pv = b.pv;
    }
    assumed.static_bindings.push_back(StaticBinding{b.pvc, std::move(pv)});
  }
  for (const auto& pvc : decided.dynamic_provisions) {
    auto annotated = std::make_shared<PersistentVolumeClaim>(*pvc);
    annotated->metadata.annotations[std::string(kAnnSelectedNode)] = node;
    VoidResult r = cache_.AssumePVC(annotated);
    if (!r.ok()) {
      Revert(assumed);
      return Status::Error(r.error().message);
    }
    assumed.dynamic_provisions.push_back(std::move(annotated));
  }
  state.Write(kReservedKey, std::move(reserved));
  return Status::Success();
}

void VolumeBinding::Unreserve(CycleState& state, const PodInfo& /*pod*/,
                              const std::string& /*node*/) {
  const ReservedData* reserved = state.Read(kReservedKey);
  if (!reserved) return;
  Revert(reserved->volumes);
  state.Delete(kReservedKey);
}

Status VolumeBinding::PreBindPreFlightCheck(CycleState& state, const PodInfo& /*pod*/,
                                            const std::string& /*node*/) {
  const ReservedData* reserved = state.Read(kReservedKey);
  return !reserved || reserved->all_bound ? Status::Skip() : Status::Success();
}

Status VolumeBinding::PreBind(CycleState& state, const PodInfo& /*pod*/, const std::string& node) {
  const ReservedData* reserved = state.Read(kReservedKey);
  if (!reserved) return Status::Error("no pod volumes found for node \"" + node + "\"");
  if (reserved->all_bound) return Status::Success();

  ClusterWriter& client = handle_->writer();
  const auto& bindings = reserved->volumes.static_bindings;
  const auto& provisions = reserved->volumes.dynamic_provisions;
  // On failure, assumptions not yet written are dropped; written ones are the API's now.
  auto revert_from = [&](size_t binding, size_t provision) {
    for (size_t i = binding; i < bindings.size(); ++i)
      cache_.RestorePV(bindings[i].pv->metadata.name);
    for (size_t i = provision; i < provisions.size(); ++i)
      cache_.RestorePVC(provisions[i]->metadata.namespace_, provisions[i]->metadata.name);
  };
  for (size_t i = 0; i < bindings.size(); ++i) {
    VoidResult r = client.BindVolume(*bindings[i].pvc, bindings[i].pv->metadata.name);
    if (!r.ok()) {
      revert_from(i, 0);
      return Status::Error(r.error().message);
    }
  }
  for (size_t i = 0; i < provisions.size(); ++i) {
    VoidResult r = client.RequestProvisioning(*provisions[i], node);
    if (!r.ok()) {
      revert_from(bindings.size(), i);
      return Status::Error(r.error().message);
    }
  }
  return Status::Success();
}

// Claims of the pod being created or bound, volumes and classes appearing, and nodes whose
// labels (topology) or CSI drivers change can each make a volume fit.
std::vector<ClusterEventWithHint> VolumeBinding::EventsToRegister() const {
  return {
      {{EventResource::kPersistentVolumeClaim, kAdd | kUpdateOther}, QueueIfPodUsesClaim()},
      {{EventResource::kPersistentVolume, kAdd | kUpdateOther}, {}},
      {{EventResource::kStorageClass, kAdd | kUpdateOther}, {}},
      {{EventResource::kNode, kAdd | kUpdateNodeLabel | kUpdateNodeAllocatable}, {}},
      {{EventResource::kCSINode, kAdd | kUpdateOther}, {}},
      {{EventResource::kCSIDriver, kAdd | kUpdateOther}, {}},
      {{EventResource::kCSIStorageCapacity, kAdd | kUpdateOther}, {}},
  };
}

RemedyProposal VolumeBinding::ProposeRemedies(const Pod& pod, std::span<const RejectedNode>,
                                              size_t) const {
  RemedyProposal proposal;
  proposal.notes = ClaimNotes(handle_->listers(), pod);
  return proposal;
}

}  // namespace volumebinding

PluginRegistration VolumeBindingRegistration(const config::FeatureGates& gates) {
  const bool scoring = gates.Enabled(config::features::kStorageCapacityScoring);
  auto factory = [scoring](const PluginArgs* args,
                           Handle& handle) -> Result<std::unique_ptr<Plugin>> {
    // Without args (a plugin built outside a configuration) the gate's defaults apply.
    auto defaults = config::VolumeBindingArgsDecoder(scoring)(nullptr, "args");
    if (!defaults.ok()) return defaults.error();
    auto typed = ArgsAs(args, static_cast<const config::VolumeBindingArgs*>(defaults->get()),
                        "VolumeBindingArgs");
    if (!typed.ok()) return typed.error();
    const config::VolumeBindingArgs& a = **typed;
    return std::unique_ptr<Plugin>(std::make_unique<volumebinding::VolumeBinding>(
        handle, a.bind_timeout_seconds,
        scoring ? std::span<const config::UtilizationShapePoint>(a.shape)
                : std::span<const config::UtilizationShapePoint>()));
  };
  return MakeRegistration(volumebinding::kName, factory, config::VolumeBindingArgsDecoder(scoring));
}

}  // namespace berth
