// Extended resources backed by DRA (KEP-5004, DRAExtendedResource): a container may request
// `example.com/gpu: 1` where no node advertises example.com/gpu in status.allocatable, and a
// DeviceClass with spec.extendedResourceName: example.com/gpu (or any class, by the implicit
// name deviceclass.resource.kubernetes.io/<class>) supplies it through DRA. Shared by
// NodeResourcesFit (which leaves such a request to DynamicResources) and DynamicResources
// (which allocates the devices and writes the claim); in-tree, not part of the SDK.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/resource_claims.h"
#include "berth/api/result.h"
#include "berth/framework/cluster.h"
#include "berth/framework/dra.h"

namespace berth::dra_extended {

// The implicit extended resource name of every DeviceClass: this prefix and the class's name.
inline constexpr std::string_view kDeviceClassPrefix = "deviceclass.resource.kubernetes.io/";
// Marks the ResourceClaim the scheduler creates for a pod's extended resources (value "true").
inline constexpr std::string_view kClaimAnnotation =
    "resource.kubernetes.io/extended-resource-claim";
// The finalizer the scheduler puts on claims it allocates (resourceapi.Finalizer).
inline constexpr std::string_view kDeleteProtectionFinalizer =
    "resource.kubernetes.io/delete-protection";

// An extended resource name, or an implicit one of a DeviceClass (schedutil's
// IsDRAExtendedResourceName).
bool IsDraExtendedResourceName(std::string_view name);

// The DeviceClass that backs extended resource `resource`, or null: the class named by the
// implicit name, else among the classes whose spec.extendedResourceName is `resource` the newest
// (creationTimestamp), the lower name on a tie, as kube-scheduler's ExtendedResourceCache
// arbitrates.
Ptr<DeviceClass> ResolveDeviceClass(const DraListers& listers, std::string_view resource);
Ptr<DeviceClass> ResolveDeviceClass(const std::vector<Ptr<DeviceClass>>& classes,
                                    std::string_view resource);

// The API writes DynamicResources makes beyond DraWriter's status update: the delete-protection
// finalizer on the claims it allocates, and the claim of a pod's extended resources. Implemented
// by the cluster clients (ApiClusterClient, InMemoryCluster); found with
// DynamicResourcesWriterOf.
class DynamicResourcesWriter {
 public:
  virtual ~DynamicResourcesWriter() = default;
  // Adds `finalizer` to the claim's metadata.finalizers with an update guarded by the claim's
  // resourceVersion (a Conflict when it is stale); returns the claim as stored.
  virtual Result<Ptr<ResourceClaim>> AddResourceClaimFinalizer(const ResourceClaim& claim,
                                                               std::string_view finalizer) = 0;
  // Creates `claim` (its name and uid are ignored) named from `generate_name`, with
  // `finalizers`; returns the claim as stored.
  virtual Result<Ptr<ResourceClaim>> CreateResourceClaim(
      const ResourceClaim& claim, std::string_view generate_name,
      const std::vector<std::string>& finalizers) = 0;
  // Deletes the claim (after removing the scheduler's finalizer); a missing claim is no error.
  virtual VoidResult DeleteResourceClaim(const ResourceClaim& claim) = 0;
  // Writes the pod's status.extendedResourceClaimStatus (`status`, the field's JSON).
  virtual VoidResult SetPodExtendedResourceClaimStatus(const Pod& pod,
                                                       const nlohmann::json& status) = 0;
};

DynamicResourcesWriter* DynamicResourcesWriterOf(ClusterWriter& writer);

}  // namespace berth::dra_extended
