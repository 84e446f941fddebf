// InMemoryCluster as a DynamicResourcesWriter: the claims DynamicResources creates for pods'
// extended resources backed by DRA, the pods' status.extendedResourceClaimStatus, and the
// delete-protection finalizer (which the in-memory cluster does not keep: nothing deletes a
// claim in simulation).
#include <fmt/format.h>

#include "framework/in_memory_cluster.h"

namespace berth {

Result<Ptr<ResourceClaim>> InMemoryCluster::CreateResourceClaim(
    const ResourceClaim& claim, std::string_view generate_name,
    const std::vector<std::string>& /*finalizers*/) {
  auto created = std::make_shared<ResourceClaim>(claim);
  {
    std::lock_guard lock(mu_);
    // A counter in place of the API server's random suffix keeps simulations reproducible.
    created->metadata.name = fmt::format("{}{}", generate_name, ++claim_version_);
    created->metadata.resource_version = std::to_string(claim_version_);
  }
  created->metadata.uid = "claim-" + created->metadata.namespace_ + "-" + created->metadata.name;
  created->status = {};
  created->raw = nullptr;
  AddResourceClaim(created);
  return Ptr<ResourceClaim>(created);
}

Result<Ptr<ResourceClaim>> InMemoryCluster::AddResourceClaimFinalizer(
    const ResourceClaim& claim, std::string_view /*finalizer*/) {
  Ptr<ResourceClaim> current = GetResourceClaim(claim.metadata.namespace_, claim.metadata.name);
  if (!current || (!claim.metadata.uid.empty() && current->metadata.uid != claim.metadata.uid)) {
    return Error{
        fmt::format("resourceclaims.resource.k8s.io \"{}\" not found", claim.metadata.name),
        ErrorCode::kNotFound};
  }
  std::lock_guard lock(mu_);
  ++claim_finalizer_writes_;
  return current;
}

VoidResult InMemoryCluster::DeleteResourceClaim(const ResourceClaim& claim) {
  RemoveResourceClaim(claim.metadata.namespace_, claim.metadata.name);
  return {};
}

VoidResult InMemoryCluster::SetPodExtendedResourceClaimStatus(const Pod& pod,
                                                              const nlohmann::json& status) {
  Ptr<Pod> current = GetPod(pod.metadata.namespace_, pod.metadata.name);
  if (!current || current->metadata.uid != pod.metadata.uid) {
    return Error{fmt::format("pods \"{}\" not found", pod.metadata.name), ErrorCode::kNotFound};
  }
  auto next = std::make_shared<Pod>(*current);
  nlohmann::json doc = current->raw ? *current->raw : nlohmann::json::object();
  doc["status"]["extendedResourceClaimStatus"] = status;
  next->raw = std::make_shared<const nlohmann::json>(std::move(doc));
  UpdatePod(std::move(next));
  return {};
}

}  // namespace berth
