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
// Limits: CSINode.spec.drivers[].allocatable.count only (a node's status.allocatable is not
// read). A node without any limit accepts everything.
//
// Volumes on the node: those of its pods, plus those of VolumeAttachments naming the node
// (spec.nodeName) that no pod there uses, counted as "<spec.attacher>/<volumeHandle of the PV
// named by spec.source.persistentVolumeName>" under the attacher (attachments without
// attacher or PV, or whose PV is missing or not CSI, do not count; status.attached is not
// read). The incoming pod's volumes are compared with the pods' volumes only, so one that is
// attached but used by no pod counts twice.
//
// Filter: if, for some driver with a limit, (volumes on the node) + (the pod's volumes not used
// by a pod on the node) exceeds the limit, Unschedulable "node(s) exceed max volume count". A
// missing claim of the incoming pod makes every node UnschedulableAndUnresolvable
// ("looking up PVC <ns>/<name>: persistentvolumeclaim "<name>" not found").
// PreFilter returns Skip for pods without claim, ephemeral or in-tree GCE PD / EBS volumes.
//
// VolumeLimitScaling (gate, on by default in v1.37): a volume's driver whose CSIDriver object
// sets spec.preventPodSchedulingIfMissing must be registered in the node's CSINode
// (spec.drivers) for the pod to go there, whether or not the node has limits; otherwise
// Unschedulable "<driver> CSI driver is not installed on the node" (a node without CSINode
// has no driver). Drivers without a CSIDriver object, or with the field false or unset, are
// not checked. When several drivers are missing, the first in volume order is named.
//
// Queueing: a CSINode added; a CSINode updated with some driver's count higher than before; an
// assigned pod deleted that used a claim, a generic ephemeral volume or an inline GCE PD / EBS
// disk; a claim added that the pod uses; a VolumeAttachment deleted when the pod uses a claim or
// an inline disk of the attachment's driver.
#pragma once

#include <span>
#include <string_view>

#include "berth/framework/cluster_event.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"
#include "berth/framework/pod_signer.h"
#include "berth/framework/registry.h"
#include "config/feature_gates.h"
#include "config/plugin_names.h"
#include "framework/pod_signature.h"
#include "framework/volume_attachments.h"

namespace berth {

// Registration of the "NodeVolumeLimits" plugin (no args). `gates`: VolumeLimitScaling.
PluginRegistration NodeVolumeLimitsRegistration(const config::FeatureGates& gates);

namespace nodevolumelimits {

inline constexpr std::string_view kName = config::names::kNodeVolumeLimits;
inline constexpr std::string_view kErrReasonMaxVolumeCountExceeded =
    "node(s) exceed max volume count";
inline constexpr std::string_view kErrReasonDriverNotInstalled =
    " CSI driver is not installed on the node";  // after the driver's name

class CSILimits final : public PreFilterPlugin,
                        public FilterPlugin,
                        public EnqueueExtensions,
                        public VolumeAttachmentEnqueueExtensions,
                        public PodSigner {
 public:
  explicit CSILimits(Handle& handle, bool volume_limit_scaling = true)
      : handle_(&handle), volume_limit_scaling_(volume_limit_scaling) {}

  std::string_view Name() const override { return kName; }

  // Every volume plugin reads the pod's volume sources.
  bool Signable(const Pod&) const override { return true; }
  bool SameSignature(const Pod& a, const Pod& b) const override {
    return signature::SameVolumeSources(a, b);
  }
  Status PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   PreFilterResult* result) override;
  Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;

  std::vector<ClusterEventWithHint> EventsToRegister() const override;
  VolumeAttachmentHintFn VolumeAttachmentDeleteHint() const override;

 private:
  Handle* handle_;
  const bool volume_limit_scaling_;
};

}  // namespace nodevolumelimits
}  // namespace berth
