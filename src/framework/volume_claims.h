// Which claims a pod's volumes use, for the volume plugins' queueing hints.
#pragma once

#include <string>

#include "berth/api/objects.h"
#include "berth/framework/cluster_event.h"

namespace berth {

// True if `pod` mounts `claim` (by name, or as the claim of a generic ephemeral volume).
inline bool PodUsesClaim(const Pod& pod, const PersistentVolumeClaim& claim) {
  if (claim.metadata.namespace_ != pod.metadata.namespace_) return false;
  for (const Volume& v : pod.spec.volumes) {
    if (v.persistent_volume_claim && v.persistent_volume_claim->claim_name == claim.metadata.name)
      return true;
    if (v.ephemeral && pod.metadata.name + "-" + v.name == claim.metadata.name) return true;
  }
  return false;
}

// True if a deleted pod held a volume that can conflict with or count against another pod's
// (claims, in-tree disks, CSI volumes).
inline bool PodHoldsVolumes(const Pod& pod) {
  if (pod.spec.node_name.empty()) return false;
  for (const Volume& v : pod.spec.volumes) {
    if (v.persistent_volume_claim || v.ephemeral || v.gce_persistent_disk ||
        v.aws_elastic_block_store || v.rbd || v.iscsi || v.csi)
      return true;
  }
  return false;
}

// Queueing hint: a claim event helps only a pod that mounts the claim.
inline QueueingHintFn QueueIfPodUsesClaim() {
  return [](const Pod& pod, const EventObject&,
            const EventObject& new_object) -> Result<QueueingHint> {
    const auto* claim = ObjectAs<PersistentVolumeClaim>(new_object);
    if (!claim) return Error{"claim event without the claim"};
    return PodUsesClaim(pod, *claim) ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
  };
}

// Queueing hint: a pod deletion helps only if the deleted pod held volumes.
inline QueueingHintFn QueueIfDeletedPodHeldVolumes() {
  return [](const Pod&, const EventObject& old_object, const EventObject&) -> Result<QueueingHint> {
    const Pod* deleted = ObjectAs<Pod>(old_object);
    if (!deleted) return Error{"pod deletion without the pod"};
    return PodHoldsVolumes(*deleted) ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
  };
}

}  // namespace berth
