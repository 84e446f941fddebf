// VolumeRestrictions: volumes that a node can mount for one pod only.
//
// Two checks, as kube-scheduler makes them:
//   * Disk conflicts (Filter): an inline gcePersistentDisk, awsElasticBlockStore, rbd or iscsi
//     volume of the pod that is already mounted by a pod on the node rejects the node with
//     Unschedulable "node(s) had no available disk". GCE PD, RBD and iSCSI may be shared when
//     every mount is read-only; an EBS volume never.
//   * ReadWriteOncePod claims (PreFilter computes, Filter enforces): if any of the pod's claims
//     with the ReadWriteOncePod access mode is already used by a scheduled pod anywhere in the
//     cluster, every node is rejected with Unschedulable (preemption of the user may help).
//     A claim that does not exist makes PreFilter fail with UnschedulableAndUnresolvable
//     `persistentvolumeclaim "<name>" not found`.
// PreFilter returns Skip when the pod has neither kind of volume to check.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "berth/framework/cluster_event.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"
#include "berth/framework/pod_signer.h"
#include "berth/framework/registry.h"
#include "config/plugin_names.h"
#include "framework/pod_signature.h"

namespace berth {

// Registration of the "VolumeRestrictions" plugin (no args).
PluginRegistration VolumeRestrictionsRegistration();

namespace volumerestrictions {

inline constexpr std::string_view kName = config::names::kVolumeRestrictions;
inline constexpr std::string_view kErrReasonDiskConflict = "node(s) had no available disk";
inline constexpr std::string_view kErrReasonReadWriteOncePodConflict =
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access "
    "mode";

class VolumeRestrictions final : public PreFilterPlugin,
                                 public FilterPlugin,
                                 public PreFilterExtensions,
                                 public EnqueueExtensions,
                                 public PodSigner {
 public:
  explicit VolumeRestrictions(Handle& handle) : handle_(&handle) {}

  std::string_view Name() const override { return kName; }

  // Every volume plugin reads the pod's volume sources.
  bool Signable(const Pod&) const override { return true; }
  bool SameSignature(const Pod& a, const Pod& b) const override {
    return signature::SameVolumeSources(a, b);
  }

  Status PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   PreFilterResult* result) override;
  const PreFilterExtensions* Extensions() const override { return this; }
  // Keep the count of scheduled users of the pod's ReadWriteOncePod claims in step with
  // hypothetical pod additions and removals.
  Status AddPod(CycleState& state, const PodInfo& pod_to_schedule, const PodInfoPtr& pod_to_add,
                const NodeInfo& node) const override;
  Status RemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                   const PodInfoPtr& pod_to_remove, const NodeInfo& node) const override;

  Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;

  std::vector<ClusterEventWithHint> EventsToRegister() const override;

 private:
  Handle* handle_;
};

}  // namespace volumerestrictions
}  // namespace berth
