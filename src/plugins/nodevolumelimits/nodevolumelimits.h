// NodeVolumeLimits: the number of CSI volumes a node can attach, per driver, as kube-scheduler's
// NodeVolumeLimits (CSILimits) plugin counts them.
//
// A volume is identified as "<driver>/<volumeHandle>" and counted once per node however many
// pods use it. Sources of volumes:
//   * persistentVolumeClaim and generic ephemeral volumes: the bound PV's spec.csi; a claim that
//     is unbound (or whose PV is missing) counts under its StorageClass's provisioner with a
//     handle private to the claim; a claim without class is not counted.
//   * in-tree GCE PD / AWS EBS (inline, or as a PV source) and StorageClasses with the in-tree
//     provisioners gce-pd, aws-ebs, azure-disk, cinder and portworx-volume count under their
//     CSI driver (pd.csi.storage.gke.io, ebs.csi.aws.com, ...) when the node has a CSINode, as
//     CSI migration is complete for them. Other in-tree types are not modelled.
// Limits: CSINode.spec.drivers[].allocatable.count, plus node allocatable entries
// "attachable-volumes-csi-<driver>". A node without any limit accepts everything.
//
// Filter: if, for some driver with a limit, (volumes already on the node) + (the pod's volumes not
// yet on the node) exceeds the limit, Unschedulable "node(s) exceed max volume count". A missing
// claim of the incoming pod makes every node UnschedulableAndUnresolvable
// ("looking up PVC <ns>/<name>: persistentvolumeclaim "<name>" not found").
// PreFilter returns Skip for pods without claim, ephemeral or in-tree GCE PD / EBS volumes.
//
// Not modelled: VolumeAttachment objects, the hashed limit key of driver names longer than the
// resource-name limit (drivers are compared by name).
#pragma once

#include <span>
#include <string_view>

#include "berth/framework/cluster_event.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"
#include "berth/framework/registry.h"
#include "config/plugin_names.h"

namespace berth {

// Registration of the "NodeVolumeLimits" plugin (no args).
PluginRegistration NodeVolumeLimitsRegistration();

namespace nodevolumelimits {

inline constexpr std::string_view kName = config::names::kNodeVolumeLimits;
inline constexpr std::string_view kErrReasonMaxVolumeCountExceeded =
    "node(s) exceed max volume count";

class CSILimits final : public PreFilterPlugin, public FilterPlugin, public EnqueueExtensions {
 public:
  explicit CSILimits(Handle& handle) : handle_(&handle) {}

  std::string_view Name() const override { return kName; }
  Status PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   PreFilterResult* result) override;
  Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;

  std::vector<ClusterEventWithHint> EventsToRegister() const override;

 private:
  Handle* handle_;
};

}  // namespace nodevolumelimits
}  // namespace berth
