#include "scheduler/equivalence.h"

#include <array>

#include "api/declared_features.h"
#include "berth/api/resource_claims.h"
#include "config/plugin_names.h"

namespace berth {

bool SameSchedulingInputs(const Pod& a, const Pod& b) {
  return a.metadata.namespace_ == b.metadata.namespace_ && a.metadata.labels == b.metadata.labels &&
         a.metadata.owner_references == b.metadata.owner_references && a.spec == b.spec &&
         // Requests of containers resized in place count (ComputePodRequests).
         a.status.container_resources == b.status.container_resources &&
         // The node features they need, read partly from their documents (not in the spec).
         declared_features::InferForScheduling(a) == declared_features::InferForScheduling(b);
}

bool UsesModeledVolumes(const Pod& pod) {
  // Devices of ResourceClaims are looked up in the cluster like volumes.
  if (pod.raw && !PodResourceClaimsOf(pod).empty()) return true;
  for (const Volume& v : pod.spec.volumes) {
    if (v.persistent_volume_claim || v.ephemeral || v.csi || v.gce_persistent_disk ||
        v.aws_elastic_block_store || v.rbd || v.iscsi)
      return true;
  }
  return false;
}

std::span<const std::string_view> NodeLocalPluginNames() {
  namespace n = config::names;
  static constexpr std::array kNames = {
      n::kNodeUnschedulable, n::kNodeName, n::kTaintToleration, n::kNodeAffinity, n::kNodePorts,
      n::kNodeResourcesFit, n::kVolumeRestrictions, n::kNodeVolumeLimits, n::kVolumeBinding,
      n::kVolumeZone, n::kPodTopologySpread, n::kInterPodAffinity,
      // Skips pods without claims; pods with claims reuse
      // nothing (UsesModeledVolumes).
      n::kDynamicResources, n::kNodeResourcesBalancedAllocation, n::kImageLocality, n::kNodeLabel,
      n::kNodePreferAvoidPods, n::kEBSLimits, n::kGCEPDLimits, n::kAzureDiskLimits,
      n::kCinderLimits, n::kNodeDeclaredFeatures};
  return kNames;
}

std::span<const std::string_view> SpreadingPluginNames() {
  namespace n = config::names;
  static constexpr std::array kNames = {n::kPodTopologySpread, n::kInterPodAffinity};
  return kNames;
}

}  // namespace berth
