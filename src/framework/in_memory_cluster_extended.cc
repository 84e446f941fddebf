// InMemoryCluster as an ExtendedResourceWriter: the claims DynamicResources creates for pods'
// extended resources backed by DRA, and the pods' status.extendedResourceClaimStatus.
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
