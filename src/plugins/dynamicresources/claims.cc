#include "plugins/dynamicresources/claims.h"

#include <fmt/format.h>

#include "plugins/dynamicresources/dynamicresources.h"

namespace berth::dynamicresources {

Result<ClaimName> ClaimNameOf(const Pod& pod, const PodResourceClaim& entry) {
  if (entry.resource_claim_name) return ClaimName{*entry.resource_claim_name, false};
  if (entry.resource_claim_template_name) {
    for (const auto& [name, claim] : PodResourceClaimStatusesOf(pod))
      if (name == entry.name) return ClaimName{claim, true};
    return Error{fmt::format("pod \"{}/{}\": ResourceClaim not created yet",
                             pod.metadata.namespace_, pod.metadata.name)};
  }
  return Error{
      fmt::format("pod \"{}/{}\", spec.resourceClaim \"{}\": none of the supported fields "
                  "are set",
                  pod.metadata.namespace_, pod.metadata.name, entry.name)};
}

VoidResult IsForPod(const Pod& pod, const ResourceClaim& claim) {
  bool owned = false;
  for (const OwnerReference& ref : claim.metadata.owner_references)
    if (ref.controller && ref.uid == pod.metadata.uid) owned = true;
  if (claim.metadata.namespace_ != pod.metadata.namespace_ || !owned) {
    return Error{fmt::format("ResourceClaim {}/{} was not created for pod {}/{} (pod is not owner)",
                             claim.metadata.namespace_, claim.metadata.name,
                             pod.metadata.namespace_, pod.metadata.name)};
  }
  return {};
}

bool IsReservedForPod(const Pod& pod, const ResourceClaim& claim) {
  for (const auto& r : claim.status.reserved_for)
    if (r.uid == pod.metadata.uid) return true;
  return false;
}

bool CanBeReserved(const ResourceClaim& claim) {
  return claim.status.reserved_for.size() < kReservedForMaxSize;
}

ResourceClaimConsumerReference ConsumerOf(const Pod& pod) {
  return ResourceClaimConsumerReference{"", "pods", pod.metadata.name, pod.metadata.uid};
}

std::string KObj(const ResourceClaim& claim) {
  return claim.metadata.namespace_ + "/" + claim.metadata.name;
}

}  // namespace berth::dynamicresources
