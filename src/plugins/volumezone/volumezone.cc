#include "plugins/volumezone/volumezone.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/codec.h"
#include "framework/volume_claims.h"

namespace berth {
namespace volumezone {
namespace {

constexpr std::string_view kBetaZone = "failure-domain.beta.kubernetes.io/zone";
constexpr std::string_view kBetaRegion = "failure-domain.beta.kubernetes.io/region";
constexpr std::string_view kZone = "topology.kubernetes.io/zone";
constexpr std::string_view kRegion = "topology.kubernetes.io/region";

// Checked in this order, as kube-scheduler does.
constexpr std::array<std::string_view, 4> kTopologyLabels = {kBetaZone, kBetaRegion, kZone,
                                                             kRegion};

std::string_view GaLabel(std::string_view label) {
  if (label == kBetaRegion) return kRegion;
  if (label == kBetaZone) return kZone;
  return label;
}

// One topology label of one PV: the node's value for `key` must be one of `values`.
struct PvTopology {
  std::string pv_name;
  std::string_view key;             // one of kTopologyLabels
  std::vector<std::string> values;  // sorted
};

struct StateData final : berth::StateData {
  std::vector<PvTopology> topologies;
  std::shared_ptr<berth::StateData> Clone() const override {
    return std::make_shared<StateData>(*this);
  }
};

constexpr StateKey<StateData> kStateKey{"PreFilterVolumeZone"};

std::string_view TrimSpace(std::string_view s) {
  auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Splits a multi-zone label value ("a__b"). An empty element makes the whole value invalid
// (nullopt), and such a label is ignored.
std::optional<std::vector<std::string>> LabelZonesToSet(std::string_view value) {
  constexpr std::string_view kDelimiter = "__";
  std::vector<std::string> zones;
  while (true) {
    size_t pos = value.find(kDelimiter);
    std::string_view part = TrimSpace(value.substr(0, pos));
    if (part.empty()) return std::nullopt;
    zones.emplace_back(part);
    if (pos == std::string_view::npos) break;
    value.remove_prefix(pos + kDelimiter.size());
  }
  std::sort(zones.begin(), zones.end());
  zones.erase(std::unique(zones.begin(), zones.end()), zones.end());
  return zones;
}

void AppendPvTopologies(const PersistentVolume& pv, std::vector<PvTopology>& out) {
  for (std::string_view key : kTopologyLabels) {
    auto it = pv.metadata.labels.find(key);
    if (it == pv.metadata.labels.end()) continue;
    auto zones = LabelZonesToSet(it->second);
    if (!zones) continue;
    out.push_back(PvTopology{pv.metadata.name, key, std::move(*zones)});
  }
}

// PVC class as the storage helpers read it: the beta annotation wins over the spec field.
std::string ClaimClass(const PersistentVolumeClaim& pvc) {
  auto it = pvc.metadata.annotations.find("volume.beta.kubernetes.io/storage-class");
  if (it != pvc.metadata.annotations.end()) return it->second;
  return pvc.spec.storage_class_name.value_or("");
}

// The topology labels of the PVs bound to the pod's claims, or a rejection.
Status CollectTopologies(const ClusterListers& client, const Pod& pod,
                         std::vector<PvTopology>& out) {
  for (const auto& v : pod.spec.volumes) {
    if (!v.persistent_volume_claim) continue;
    const std::string& claim = v.persistent_volume_claim->claim_name;
    if (claim.empty()) return Status::Unresolvable("PersistentVolumeClaim had no name");
    auto pvc = client.GetPVC(pod.metadata.namespace_, claim);
    if (!pvc) return Status::Unresolvable("persistentvolumeclaim \"" + claim + "\" not found");

    const std::string& pv_name = pvc->spec.volume_name;
    if (pv_name.empty()) {
      std::string class_name = ClaimClass(*pvc);
      if (class_name.empty())
        return Status::Unresolvable("PersistentVolumeClaim had no pv name and storageClass name");
      auto sc = client.GetStorageClass(class_name);
      if (!sc)
        return Status::Unresolvable("storageclass.storage.k8s.io \"" + class_name + "\" not found");
      if (!sc->volume_binding_mode)
        return Status::Unresolvable("VolumeBindingMode not set for StorageClass \"" + class_name +
                                    "\"");
      // The volume of a delayed-binding claim does not exist yet; VolumeBinding places it.
      if (*sc->volume_binding_mode == "WaitForFirstConsumer") continue;
      return Status::Unresolvable("PersistentVolume had no name");
    }

    auto pv = client.GetPV(pv_name);
    if (!pv) return Status::Unresolvable("persistentvolume \"" + pv_name + "\" not found");
    AppendPvTopologies(*pv, out);
  }
  return Status::Success();
}

Status CheckNode(const std::vector<PvTopology>& topologies, const Node& node) {
  const Labels& labels = node.metadata.labels;
  bool constrained = std::any_of(kTopologyLabels.begin(), kTopologyLabels.end(),
                                 [&](std::string_view k) { return labels.count(k) > 0; });
  // A node without topology labels is taken to be in the single zone of the cluster.
  if (!constrained) return Status::Success();

  for (const auto& t : topologies) {
    auto it = labels.find(t.key);
    if (it == labels.end()) it = labels.find(GaLabel(t.key));
    if (it == labels.end() || !std::binary_search(t.values.begin(), t.values.end(), it->second))
      return Status::Unresolvable(std::string(kErrReasonConflict));
  }
  return Status::Success();
}

}  // namespace

Status VolumeZone::PreFilter(CycleState& state, const PodInfo& pod,
                             std::span<const NodeInfo* const> /*nodes*/,
                             PreFilterResult* /*result*/) {
  auto data = std::make_shared<StateData>();
  Status s = CollectTopologies(handle_->listers(), *pod.pod, data->topologies);
  if (!s.IsSuccess()) return s;
  if (data->topologies.empty()) return Status::Skip();
  state.Write(kStateKey, std::move(data));
  return Status::Success();
}

Status VolumeZone::Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const {
  if (pod.pod->spec.volumes.empty()) return Status::Success();
  if (const StateData* data = state.Read(kStateKey))
    return CheckNode(data->topologies, *node.node());
  // Without PreFilter data (PreFilter not run for this cycle) resolve the volumes here.
  std::vector<PvTopology> topologies;
  Status s = CollectTopologies(handle_->listers(), *pod.pod, topologies);
  if (!s.IsSuccess()) return s;
  return CheckNode(topologies, *node.node());
}

RemedyProposal VolumeZone::ProposeRemedies(const Pod& pod, std::span<const RejectedNode> rejected,
                                           size_t) const {
  RemedyProposal proposal;
  std::vector<PvTopology> topologies;
  if (!CollectTopologies(handle_->listers(), pod, topologies).IsSuccess()) return proposal;
  std::map<std::string, std::string> zones;
  for (const PvTopology& t : topologies)
    if (!t.values.empty()) zones.emplace(std::string(t.key), t.values.front());
  if (zones.empty()) return proposal;
  for (const RejectedNode& r : rejected) {
    auto moved = std::make_shared<Node>(*r.node);
    std::vector<std::string> labels;
    for (const auto& [k, v] : zones) {
      auto it = moved->metadata.labels.find(k);
      if (it != moved->metadata.labels.end() && it->second == v) continue;
      moved->metadata.labels[k] = v;
      labels.push_back(k + "=" + v);
    }
    if (labels.empty()) continue;
    moved->raw = DocumentOnlyFields(moved->raw);
    const std::string where = fmt::format("{}", fmt::join(labels, ","));
    ClusterRemedy remedy;
    remedy.kind = "volume-zone";
    remedy.description = fmt::format(
        "the pod's volume is in {}: a node there would take it (node {} is not; its zone labels "
        "would have to be {})",
        where, r.node->metadata.name, where);
    remedy.node = r.node->metadata.name;
    remedy.cost = static_cast<int64_t>(labels.size());
    remedy.merge_key = "volume-zone " + where;
    remedy.nodes.push_back(std::move(moved));
    proposal.remedies.push_back(std::move(remedy));
  }
  return proposal;
}

// A claim of the pod getting bound, a volume or class appearing, or a node gaining zone labels.
std::vector<ClusterEventWithHint> VolumeZone::EventsToRegister() const {
  return {
      {{EventResource::kPersistentVolumeClaim, kAdd | kUpdateOther}, QueueIfPodUsesClaim()},
      {{EventResource::kPersistentVolume, kAdd | kUpdateOther}, {}},
      {{EventResource::kStorageClass, kAdd}, {}},
      {{EventResource::kNode, kAdd | kUpdateNodeLabel}, {}},
  };
}

}  // namespace volumezone

PluginRegistration VolumeZoneRegistration() {
  return MakeRegistration(volumezone::kName, FactoryOf<volumezone::VolumeZone>());
}

}  // namespace berth
