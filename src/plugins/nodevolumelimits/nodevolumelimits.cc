#include "plugins/nodevolumelimits/nodevolumelimits.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "framework/csi_drivers.h"
#include "framework/volume_attachments.h"
#include "framework/volume_claims.h"

namespace berth {
namespace nodevolumelimits {
namespace {

// Handles of claims that have no volume yet start with this, so they never equal a real
// volume handle; each such claim counts as its own volume.
constexpr std::string_view kUnboundClaimHandlePrefix = "berth-unbound-claim-";

constexpr std::string_view kGcePdDriver = "pd.csi.storage.gke.io";
constexpr std::string_view kAwsEbsDriver = "ebs.csi.aws.com";

// One attachable volume of a pod.
struct AttachableVolume {
  std::string unique_name;  // "<driver>/<handle>"
  std::string driver;
  // In-tree volume translated to its CSI driver: counted only on nodes with a CSINode.
  bool migrated = false;
};

struct StateData final : berth::StateData {
  // The incoming pod's volumes, or the rejection every node gets.
  std::vector<AttachableVolume> volumes;
  std::optional<Status> error;
  // VolumeLimitScaling: the volumes' drivers (sorted) whose CSIDriver says pods must not go
  // where the driver is not registered.
  std::vector<std::string> drivers_required_on_node;

  std::shared_ptr<berth::StateData> Clone() const override {
    return std::make_shared<StateData>(*this);
  }
};

constexpr StateKey<StateData> kStateKey{"PreFilterNodeVolumeLimits"};

bool HasCountableVolume(const Pod& pod) {
  return std::any_of(pod.spec.volumes.begin(), pod.spec.volumes.end(), [](const Volume& v) {
    return v.persistent_volume_claim || v.ephemeral || v.gce_persistent_disk ||
           v.aws_elastic_block_store;
  });
}

// In-tree provisioners that CSI migration covers, with the driver they became. nullopt: not
// an in-tree provisioner; an empty driver: migratable, but migration is off by default, so
// such volumes are not counted.
std::optional<std::string_view> MigratedDriverOfProvisioner(std::string_view provisioner) {
  if (provisioner == "kubernetes.io/gce-pd") return kGcePdDriver;
  if (provisioner == "kubernetes.io/aws-ebs") return kAwsEbsDriver;
  if (provisioner == "kubernetes.io/azure-disk") return std::string_view("disk.csi.azure.com");
  if (provisioner == "kubernetes.io/cinder") return std::string_view("cinder.csi.openstack.org");
  if (provisioner == "kubernetes.io/portworx-volume") return std::string_view("pxd.portworx.com");
  if (provisioner == "kubernetes.io/azure-file" || provisioner == "kubernetes.io/vsphere-volume")
    return std::string_view();
  return std::nullopt;
}

// "aws://<zone>/<id>" names the same EBS volume as "<id>".
std::string EbsVolumeId(std::string_view id) {
  constexpr std::string_view kScheme = "aws://";
  if (id.substr(0, kScheme.size()) != kScheme) return std::string(id);
  id.remove_prefix(kScheme.size());
  size_t slash = id.find('/');
  id = slash == std::string_view::npos ? std::string_view() : id.substr(slash);
  while (!id.empty() && id.front() == '/') id.remove_prefix(1);
  while (!id.empty() && id.back() == '/') id.remove_suffix(1);
  return std::string(id);
}

std::string GcePdHandle(std::string_view zone, std::string_view pd) {
  return "projects/UNSPECIFIED/zones/" + std::string(zone) + "/disks/" + std::string(pd);
}

// The CSI handle the GCE PD translation gives a PV: zonal, regional (several zones) or
// unspecified, from the PV's zone label.
std::string GcePdPvHandle(const PersistentVolume& pv) {
  const Labels& labels = pv.metadata.labels;
  std::string_view zones;
  if (auto it = labels.find("failure-domain.beta.kubernetes.io/zone");
      it != labels.end() && !it->second.empty()) {
    zones = it->second;
  } else if (auto ga = labels.find("topology.kubernetes.io/zone"); ga != labels.end()) {
    zones = ga->second;
  }
  const std::string& pd = pv.spec.gce_pd_name;
  size_t delim = zones.find("__");
  if (delim == std::string_view::npos)
    return GcePdHandle(zones.empty() ? std::string_view("UNSPECIFIED") : zones, pd);
  std::string_view first = zones.substr(0, delim);
  std::string_view region = first.substr(0, first.rfind('-'));
  return "projects/UNSPECIFIED/regions/" + std::string(region) + "/disks/" + pd;
}

std::string ClaimClass(const PersistentVolumeClaim& pvc) {
  auto it = pvc.metadata.annotations.find("volume.beta.kubernetes.io/storage-class");
  if (it != pvc.metadata.annotations.end()) return it->second;
  return pvc.spec.storage_class_name.value_or("");
}

void Add(std::vector<AttachableVolume>& out, std::string_view driver, std::string_view handle,
         bool migrated) {
  if (driver.empty() || handle.empty()) return;
  std::string unique;
  unique.reserve(driver.size() + 1 + handle.size());
  unique.append(driver).append("/").append(handle);
  out.push_back(AttachableVolume{std::move(unique), std::string(driver), migrated});
}

// A claim without a usable PV counts under its class's provisioner.
void AddFromStorageClass(const ClusterListers& client, const PersistentVolumeClaim& pvc,
                         std::vector<AttachableVolume>& out) {
  std::string class_name = ClaimClass(pvc);
  // Without a class the claim binds immediately and must already be bound: nothing to count.
  if (class_name.empty()) return;
  auto sc = client.GetStorageClass(class_name);
  if (!sc) return;
  std::string handle =
      std::string(kUnboundClaimHandlePrefix) + pvc.metadata.namespace_ + "/" + pvc.metadata.name;
  if (auto migrated = MigratedDriverOfProvisioner(sc->provisioner)) {
    Add(out, *migrated, handle, /*migrated=*/true);
    return;
  }
  Add(out, sc->provisioner, handle, /*migrated=*/false);
}

void AddFromClaim(const ClusterListers& client, const PersistentVolumeClaim& pvc,
                  std::vector<AttachableVolume>& out) {
  if (pvc.spec.volume_name.empty()) return AddFromStorageClass(client, pvc, out);
  auto pv = client.GetPV(pvc.spec.volume_name);
  // A missing PV (deleted, or a claim pre-bound to a PV not created yet) falls back to the class.
  if (!pv) return AddFromStorageClass(client, pvc, out);
  if (!pv->spec.csi_driver.empty())
    return Add(out, pv->spec.csi_driver, pv->spec.csi_volume_handle, /*migrated=*/false);
  if (!pv->spec.gce_pd_name.empty())
    return Add(out, kGcePdDriver, GcePdPvHandle(*pv), /*migrated=*/true);
  if (!pv->spec.aws_volume_id.empty())
    return Add(out, kAwsEbsDriver, EbsVolumeId(pv->spec.aws_volume_id), /*migrated=*/true);
}

bool IsOwnedByPod(const PersistentVolumeClaim& pvc, const Pod& pod) {
  if (pvc.metadata.namespace_ != pod.metadata.namespace_) return false;
  for (const auto& ref : pvc.metadata.owner_references)
    if (ref.controller) return ref.uid == pod.metadata.uid;
  return false;
}

// Collects the attachable volumes of `pod`. For the incoming pod (`new_pod`) a missing claim is
// a rejection; for pods already on a node it is skipped, since it cannot be attached.
Status CollectVolumes(const ClusterListers& client, const Pod& pod, bool new_pod,
                      std::vector<AttachableVolume>& out) {
  for (const auto& v : pod.spec.volumes) {
    std::string claim;
    if (v.persistent_volume_claim) {
      claim = v.persistent_volume_claim->claim_name;
    } else if (v.ephemeral) {
      claim = pod.metadata.name + "-" + v.name;
    } else {
      if (v.gce_persistent_disk)
        Add(out, kGcePdDriver, GcePdHandle("UNSPECIFIED", v.gce_persistent_disk->pd_name),
            /*migrated=*/true);
      else if (v.aws_elastic_block_store)
        Add(out, kAwsEbsDriver, EbsVolumeId(v.aws_elastic_block_store->volume_id),
            /*migrated=*/true);
      continue;
    }
    if (claim.empty()) return Status::Error("PersistentVolumeClaim had no name");

    auto pvc = client.GetPVC(pod.metadata.namespace_, claim);
    if (!pvc) {
      if (!new_pod) continue;
      return Status::Unresolvable("looking up PVC " + pod.metadata.namespace_ + "/" + claim +
                                  ": persistentvolumeclaim \"" + claim + "\" not found");
    }
    if (v.ephemeral && !IsOwnedByPod(*pvc, pod))
      return Status::Error("PVC " + pvc->metadata.namespace_ + "/" + pvc->metadata.name +
                           " was not created for pod " + pod.metadata.namespace_ + "/" +
                           pod.metadata.name + " (pod is not owner)");
    AddFromClaim(client, *pvc, out);
  }
  return Status::Success();
}

// Per-driver limits of the node: its CSINode's spec.drivers[].allocatable.count; empty when
// there is no CSINode or it declares none.
std::vector<std::pair<std::string, int64_t>> VolumeLimits(const CSINode* csi_node) {
  std::vector<std::pair<std::string, int64_t>> limits;
  if (csi_node == nullptr) return limits;
  for (const auto& d : csi_node->drivers)
    if (d.allocatable_count) limits.emplace_back(d.name, *d.allocatable_count);
  return limits;
}

// The volumes of the node's VolumeAttachments, as "<attacher>/<handle of the PV's CSI
// source>" under the attacher; attachments without attacher, without PV, or whose PV is
// missing or not a CSI volume are not counted. Sorted and unique.
std::vector<AttachableVolume> AttachedByVolumeAttachments(const ClusterListers& client,
                                                          std::string_view node_name) {
  std::vector<AttachableVolume> out;
  for (const VolumeAttachmentInfo& va : FindVolumeAttachments(client, node_name)) {
    if (va.attacher.empty() || va.persistent_volume_name.empty()) continue;
    Ptr<PersistentVolume> pv = client.GetPV(va.persistent_volume_name);
    if (!pv || pv->spec.csi_driver.empty()) continue;
    Add(out, va.attacher, pv->spec.csi_volume_handle, /*migrated=*/false);
  }
  return out;
}

// The volumes' drivers whose CSIDriver sets preventPodSchedulingIfMissing, sorted.
std::vector<std::string> DriversRequiredOnNode(const ClusterListers& client,
                                               const std::vector<AttachableVolume>& volumes) {
  std::vector<std::string> drivers;
  for (const auto& v : volumes) drivers.push_back(v.driver);
  std::sort(drivers.begin(), drivers.end());
  drivers.erase(std::unique(drivers.begin(), drivers.end()), drivers.end());
  std::erase_if(drivers, [&](const std::string& d) {
    std::optional<CSIDriverInfo> info = FindCSIDriver(client, d);
    return !info || !info->prevent_pod_scheduling_if_missing;
  });
  return drivers;
}

bool RegisteredOn(const CSINode* csi_node, std::string_view driver) {
  if (csi_node == nullptr) return false;
  return std::any_of(csi_node->drivers.begin(), csi_node->drivers.end(),
                     [&](const CSINode::Driver& d) { return d.name == driver; });
}

void SortUnique(std::vector<AttachableVolume>& v) {
  std::sort(v.begin(), v.end(),
            [](const auto& a, const auto& b) { return a.unique_name < b.unique_name; });
  v.erase(std::unique(v.begin(), v.end(),
                      [](const auto& a, const auto& b) { return a.unique_name == b.unique_name; }),
          v.end());
}

}  // namespace

Status CSILimits::PreFilter(CycleState& state, const PodInfo& pod,
                            std::span<const NodeInfo* const> /*nodes*/,
                            PreFilterResult* /*result*/) {
  if (!HasCountableVolume(*pod.pod)) return Status::Skip();
  // The incoming pod's volumes do not depend on the node (only whether migrated ones count
  // does), so they are resolved once here; a failure is reported by Filter on every node.
  auto data = std::make_shared<StateData>();
  Status s = CollectVolumes(handle_->listers(), *pod.pod, /*new_pod=*/true, data->volumes);
  if (!s.IsSuccess()) {
    data->volumes.clear();
    data->error = std::move(s);
  }
  SortUnique(data->volumes);
  // Whether a CSIDriver requires its driver on the node does not depend on the node: read
  // once per cycle.
  if (volume_limit_scaling_)
    data->drivers_required_on_node = DriversRequiredOnNode(handle_->listers(), data->volumes);
  state.Write(kStateKey, std::move(data));
  return Status::Success();
}

Status CSILimits::Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const {
  if (pod.pod->spec.volumes.empty()) return Status::Success();
  const StateData* data = state.Read(kStateKey);
  if (!data) return Status::Error("cannot read \"PreFilterNodeVolumeLimits\" from cycleState");
  if (data->error) return *data->error;

  const ClusterListers& client = handle_->listers();
  Ptr<CSINode> csi_node = client.GetCSINode(node.name());
  const bool has_csi_node = csi_node != nullptr;
  auto counts_here = [&](const AttachableVolume& v) { return !v.migrated || has_csi_node; };

  if (std::none_of(data->volumes.begin(), data->volumes.end(), counts_here))
    return Status::Success();
  for (const auto& v : data->volumes) {
    if (!counts_here(v) ||
        !std::binary_search(data->drivers_required_on_node.begin(),
                            data->drivers_required_on_node.end(), v.driver) ||
        RegisteredOn(csi_node.get(), v.driver))
      continue;
    return Status::Unschedulable(v.driver + std::string(kErrReasonDriverNotInstalled));
  }
  auto limits = VolumeLimits(csi_node.get());
  if (limits.empty()) return Status::Success();

  std::vector<AttachableVolume> attached;
  for (const auto& existing : node.pods()) {
    Status s = CollectVolumes(client, *existing->pod, /*new_pod=*/false, attached);
    if (!s.IsSuccess()) return Status::Error(s.Message());
  }
  std::erase_if(attached, [&](const AttachableVolume& v) { return !counts_here(v); });
  SortUnique(attached);

  auto used_by_pods = [&](const AttachableVolume& v) {
    return std::binary_search(
        attached.begin(), attached.end(), v,
        [](const auto& a, const auto& b) { return a.unique_name < b.unique_name; });
  };
  // Volumes attached to the node that no pod there uses (a pod gone, its volume not yet
  // detached) take a slot too. The incoming pod's volumes are matched against the pods'
  // volumes only, so one of them attached this way counts both as attached and as new.
  std::vector<AttachableVolume> by_attachments = AttachedByVolumeAttachments(client, node.name());
  SortUnique(by_attachments);
  std::erase_if(by_attachments, used_by_pods);
  for (const auto& [driver, limit] : limits) {
    int64_t fresh = 0;
    for (const auto& v : data->volumes)
      if (v.driver == driver && counts_here(v) && !used_by_pods(v)) ++fresh;
    if (fresh == 0) continue;
    auto of_driver = [&d = driver](const AttachableVolume& v) { return v.driver == d; };
    int64_t current = std::count_if(attached.begin(), attached.end(), of_driver) +
                      std::count_if(by_attachments.begin(), by_attachments.end(), of_driver);
    if (current + fresh > limit)
      return Status::Unschedulable(std::string(kErrReasonMaxVolumeCountExceeded));
  }
  return Status::Success();
}

namespace {

// An inline in-tree volume counted under a CSI driver (GCE PD, AWS EBS): its driver, or empty.
std::string_view InlineMigratedDriver(const Volume& v) {
  if (v.gce_persistent_disk) return kGcePdDriver;
  if (v.aws_elastic_block_store) return kAwsEbsDriver;
  return {};
}

// A deleted pod frees a slot only if it was on (or nominated to) a node and used a volume this
// plugin counts.
Result<QueueingHint> AfterAssignedPodDeleted(const Pod&, const EventObject& old_object,
                                             const EventObject&) {
  const Pod* deleted = ObjectAs<Pod>(old_object);
  if (!deleted) return Error{"pod deletion without the pod"};
  if (deleted->spec.node_name.empty() && deleted->status.nominated_node_name.empty())
    return QueueingHint::kQueueSkip;
  for (const Volume& v : deleted->spec.volumes)
    if (v.persistent_volume_claim || v.ephemeral || !InlineMigratedDriver(v).empty())
      return QueueingHint::kQueue;
  return QueueingHint::kQueueSkip;
}

// Only a higher count for some driver can make room: a driver added with a count counts as
// raised from zero; lower, unchanged or removed counts, and drivers without one, do not.
Result<QueueingHint> AfterCSINodeUpdated(const Pod&, const EventObject& old_object,
                                         const EventObject& new_object) {
  const CSINode* before = ObjectAs<CSINode>(old_object);
  const CSINode* after = ObjectAs<CSINode>(new_object);
  if (!before || !after) return Error{"CSINode update without both objects"};
  auto count_of = [](const CSINode::Driver& d) -> int64_t {
    return d.allocatable_count.value_or(0);
  };
  for (const auto& d : after->drivers) {
    int64_t old_count = 0;
    for (const auto& o : before->drivers)
      if (o.name == d.name) old_count = count_of(o);
    if (count_of(d) > old_count) return QueueingHint::kQueue;
  }
  return QueueingHint::kQueueSkip;
}

// A deleted attachment may free a slot for any pod with a claim (the claim's volume is not
// resolved here), or for one with an inline in-tree volume of the attachment's driver.
QueueingHint AfterVolumeAttachmentDeleted(const Pod& pod, const VolumeAttachmentInfo& deleted) {
  for (const Volume& v : pod.spec.volumes) {
    if (v.persistent_volume_claim) return QueueingHint::kQueue;
    std::string_view driver = InlineMigratedDriver(v);
    if (!driver.empty() && driver == deleted.attacher) return QueueingHint::kQueue;
  }
  return QueueingHint::kQueueSkip;
}

}  // namespace

// A new CSINode can bring limits or drivers; an updated one helps only when a limit rises; a
// deleted pod or VolumeAttachment can free a slot; a new claim can be the one the pod lacked.
std::vector<ClusterEventWithHint> CSILimits::EventsToRegister() const {
  return {
      {{EventResource::kCSINode, kAdd}, {}},
      {{EventResource::kCSINode, kUpdateOther}, AfterCSINodeUpdated},
      {{EventResource::kPod, kDelete}, AfterAssignedPodDeleted},
      {{EventResource::kPersistentVolumeClaim, kAdd}, QueueIfPodUsesClaim()},
  };
}

VolumeAttachmentHintFn CSILimits::VolumeAttachmentDeleteHint() const {
  return AfterVolumeAttachmentDeleted;
}

}  // namespace nodevolumelimits

PluginRegistration NodeVolumeLimitsRegistration(const config::FeatureGates& gates) {
  const bool scaling = gates.Enabled(config::features::kVolumeLimitScaling);
  return MakeRegistration(
      nodevolumelimits::kName,
      [scaling](const PluginArgs*, Handle& handle) -> Result<std::unique_ptr<Plugin>> {
        return std::unique_ptr<Plugin>(
            std::make_unique<nodevolumelimits::CSILimits>(handle, scaling));
      });
}

}  // namespace berth
