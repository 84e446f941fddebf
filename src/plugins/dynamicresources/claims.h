// Helpers on a pod's ResourceClaims, as k8s.io/dynamic-resource-allocation/resourceclaim.
#pragma once

#include <optional>
#include <string>

#include "berth/api/objects.h"
#include "berth/api/resource_claims.h"
#include "berth/api/result.h"

namespace berth::dynamicresources {

struct ClaimName {
  std::optional<std::string> name;  // nullopt: no claim is needed for this entry
  bool must_check_owner = false;    // generated from a template: the pod must own it
};

// The name of the claim a spec.resourceClaims entry uses (resourceclaim.Name): the named claim,
// or the one status.resourceClaimStatuses records for a template ("pod \"ns/name\":
// ResourceClaim not created yet" while there is none).
Result<ClaimName> ClaimNameOf(const Pod& pod, const PodResourceClaim& entry);
// Whether the pod is the claim's controlling owner (resourceclaim.IsForPod); the error says why.
VoidResult IsForPod(const Pod& pod, const ResourceClaim& claim);
bool IsReservedForPod(const Pod& pod, const ResourceClaim& claim);
// Whether one more consumer fits in status.reservedFor.
bool CanBeReserved(const ResourceClaim& claim);
// The pod as a claim's consumer (status.reservedFor entry).
ResourceClaimConsumerReference ConsumerOf(const Pod& pod);
// "ns/name"
std::string KObj(const ResourceClaim& claim);

}  // namespace berth::dynamicresources
