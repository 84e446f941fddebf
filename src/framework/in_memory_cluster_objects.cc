// Loading decoded objects (api/codec.h's Object) into the in-memory cluster, by kind: one place
// for `berth simulate`'s input and the cluster `berth explain` hands the plugins it asks.
#include "api/codec.h"
#include "api/device_taint_rule.h"
#include "framework/in_memory_cluster.h"

namespace berth {

// A rule that does not decode is skipped: the API server validated what a live cluster holds,
// and `berth simulate` reports a malformed rule of its input before loading it.
void InMemoryCluster::AddDeviceTaintRuleDocument(const UnknownObject& o) {
  auto rule = DecodeDeviceTaintRule(*o.raw, "DeviceTaintRule " + o.name);
  if (rule.ok()) AddDeviceTaintRule(*rule);
}

void InMemoryCluster::AddObject(const Object& object) {
  std::visit(
      [&](const auto& o) {
        using T = std::remove_const_t<typename std::decay_t<decltype(o)>::element_type>;
        if constexpr (std::is_same_v<T, UnknownObject>) {
          // NodeVolumeLimits reads CSIDrivers (VolumeLimitScaling) and VolumeAttachments (the
          // volumes attached to a node count against its limits) from their documents.
          if (o->kind == "CSIDriver" && o->raw)
            AddCSIDriver(o->name, CSIDriverInfoOf(*o->raw));
          else if (o->kind == "VolumeAttachment" && o->raw)
            AddVolumeAttachment(VolumeAttachmentInfoOf(*o->raw));
          else if (o->kind == "DeviceTaintRule" && o->raw)
            AddDeviceTaintRuleDocument(*o);
        } else if constexpr (std::is_same_v<T, Pod>) {
          AddPod(o);
        } else if constexpr (std::is_same_v<T, Node>) {
          AddNode(o);
        } else if constexpr (std::is_same_v<T, Namespace>) {
          AddNamespace(o);
        } else if constexpr (std::is_same_v<T, Service>) {
          AddService(o);
        } else if constexpr (std::is_same_v<T, ReplicationController>) {
          AddReplicationController(o);
        } else if constexpr (std::is_same_v<T, ReplicaSet>) {
          AddReplicaSet(o);
        } else if constexpr (std::is_same_v<T, StatefulSet>) {
          AddStatefulSet(o);
        } else if constexpr (std::is_same_v<T, PersistentVolume>) {
          AddPV(o);
        } else if constexpr (std::is_same_v<T, PersistentVolumeClaim>) {
          AddPVC(o);
        } else if constexpr (std::is_same_v<T, StorageClass>) {
          AddStorageClass(o);
        } else if constexpr (std::is_same_v<T, CSINode>) {
          AddCSINode(o);
        } else if constexpr (std::is_same_v<T, PodDisruptionBudget>) {
          AddPDB(o);
        } else if constexpr (std::is_same_v<T, PriorityClass>) {
          AddPriorityClass(o);
        } else if constexpr (std::is_same_v<T, PodGroup>) {
          AddPodGroup(o);
        } else if constexpr (std::is_same_v<T, SchedulingPodGroup>) {
          AddSchedulingPodGroup(o);
        } else if constexpr (std::is_same_v<T, DeviceClass>) {
          AddDeviceClass(o);
        } else if constexpr (std::is_same_v<T, ResourceSlice>) {
          AddResourceSlice(o);
        } else if constexpr (std::is_same_v<T, ResourceClaim>) {
          AddResourceClaim(o);
        } else if constexpr (std::is_same_v<T, ResourceClaimTemplate>) {
          AddResourceClaimTemplate(o);
        } else {
          static_assert(sizeof(T) == 0, "an Object kind InMemoryCluster does not load");
        }
      },
      object);
}

}  // namespace berth
