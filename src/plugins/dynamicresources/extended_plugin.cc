// DynamicResources' points for the extended resource claim (extended_resources.h): the hooks
// PreFilter, Filter, PostFilter, Unreserve, PreBind and Diagnose call.
#include <fmt/format.h>

#include "framework/dra_extended_resources.h"
#include "plugins/dynamicresources/claims.h"
#include "plugins/dynamicresources/dynamicresources.h"

namespace berth::dynamicresources {

void DynamicResources::PreFilterExtended(const Pod& pod, CycleData& data,
                                         std::vector<Ptr<ResourceClaim>>& claims) const {
  const DraListers* dra = listers();
  if (!extended_resources_ || !dra) return;
  auto extended = std::make_shared<ExtendedClaimData>();
  Ptr<ResourceClaim> claim = PreFilterExtendedResources(
      pod, *dra, &extended->requests, &extended_claims_, DraClaimFeedOf(handle_->listers()));
  if (!claim) return;
  extended->has_user_claims = !claims.empty();
  extended->index = claims.size();
  extended->initial_uid = claim->metadata.uid;
  claims.push_back(assumed_.Resolve(claim));
  data.extended = std::move(extended);
}

Status DynamicResources::FilterExtended(const CycleData& data, const Pod& pod, const NodeInfo& node,
                                        NodeExtendedClaim* out) const {
  return FilterExtendedResources(pod, *data.claims[data.extended->index], *data.extended,
                                 node.allocatable(), out);
}

void DynamicResources::RecordExtended(const CycleData& data, const std::string& node,
                                      NodeExtendedClaim node_claim) const {
  std::lock_guard lock(data.extended->mu);
  data.extended->by_node[node] = std::move(node_claim);
}

Status DynamicResources::PreBindExtended(CycleData& data, const Pod& pod, const std::string& node) {
  ExtendedClaimData& extended = *data.extended;
  const size_t index = extended.index;
  const std::optional<AllocationResult> allocation =
      index < data.allocations.size() ? data.allocations[index] : std::nullopt;
  NodeExtendedClaim node_claim;
  {
    std::lock_guard lock(extended.mu);
    if (auto it = extended.by_node.find(node); it != extended.by_node.end())
      node_claim = it->second;
  }
  if (!node_claim.claim) {
    // The node's device plugins provide everything: no claim to write.
    assumed_.Forget(extended.initial_uid);
    return Status::Success();
  }
  if (!allocation)
    return Status::Error(fmt::format("extended resource claim not found for node {}", node));
  auto* creator = dra_extended::DynamicResourcesWriterOf(handle_->writer());
  DraWriter* writer = DraWriterOf(handle_->writer());
  if (!creator || !writer) return Status::Error("the cluster client cannot create ResourceClaims");

  ResourceClaim to_create = *node_claim.claim;
  to_create.status = {};
  to_create.raw = nullptr;
  auto created =
      creator->CreateResourceClaim(to_create, pod.metadata.name + "-extended-resources-",
                                   {std::string(dra_extended::kDeleteProtectionFinalizer)});
  if (!created.ok()) {
    assumed_.Forget(extended.initial_uid);
    return Status::Error(fmt::format("create claim for extended resources {}/{}: {}",
                                     pod.metadata.namespace_, kSpecialClaimName,
                                     created.error().message));
  }
  {
    std::lock_guard lock(extended.mu);
    extended.created = *created;
  }
  ResourceClaim copy = **created;
  copy.status.allocation = allocation;
  copy.status.reserved_for = {ConsumerOf(pod)};
  auto stored = writer->UpdateResourceClaimStatus(copy);
  // Unreserve deletes the created claim when this fails.
  if (!stored.ok()) return Status::Error(stored.error().message);
  // The allocation moves from the in-memory claim to the stored one, which holds the devices
  // until the listers show it.
  assumed_.Created(*stored);
  assumed_.Forget(extended.initial_uid);
  data.claims[index] = *stored;
  auto status = creator->SetPodExtendedResourceClaimStatus(
      pod, ExtendedResourceClaimStatus((*stored)->metadata.name, node_claim.mappings));
  if (!status.ok())
    return Status::Error(fmt::format("update pod {}/{} ExtendedResourceClaimStatus: {}",
                                     pod.metadata.namespace_, pod.metadata.name,
                                     status.error().message));
  return Status::Success();
}

void DynamicResources::UnreserveExtended(CycleData& data) {
  ExtendedClaimData& extended = *data.extended;
  assumed_.Forget(extended.initial_uid);
  Ptr<ResourceClaim> created;
  {
    std::lock_guard lock(extended.mu);
    created = std::exchange(extended.created, nullptr);
  }
  if (!created) return;
  assumed_.Forget(created->metadata.uid);
  // Unreserve's own loop must not write the deleted claim's status.
  auto unallocated = std::make_shared<ResourceClaim>(*created);
  unallocated->status = {};
  data.claims[extended.index] = std::move(unallocated);
  auto* creator = dra_extended::DynamicResourcesWriterOf(handle_->writer());
  if (!creator) return;
  if (auto r = creator->DeleteResourceClaim(*created); !r.ok())
    handle_->LogError(kName, fmt::format("delete {}: {}", KObj(*created), r.error().message));
}

std::optional<Status> DynamicResources::PostFilterExtended(const CycleData& data) {
  if (!data.extended) return std::nullopt;
  const ResourceClaim& claim = *data.claims[data.extended->index];
  if (claim.metadata.name == kSpecialClaimName) return std::nullopt;
  // A claim of an earlier attempt: deleted, so that the next one allocates anew.
  auto* creator = dra_extended::DynamicResourcesWriterOf(handle_->writer());
  if (!creator) return Status::Error("the cluster client cannot delete ResourceClaims");
  if (auto r = creator->DeleteResourceClaim(claim); !r.ok())
    return Status::Error(r.error().message);
  return Status::Unschedulable("deletion of ResourceClaim completed");
}

std::vector<std::string> DynamicResources::DiagnoseExtended(
    const Pod& pod, const Node& node, std::vector<Ptr<ResourceClaim>>& to_allocate,
    std::vector<ContainerRequestMapping>* mappings) const {
  const DraListers* dra = listers();
  if (!extended_resources_ || !dra) return {};
  ExtendedClaimData extended;
  Ptr<ResourceClaim> claim = PreFilterExtendedResources(pod, *dra, &extended.requests);
  if (!claim) return {};
  extended.has_user_claims = !to_allocate.empty();
  const Resource allocatable = Resource::FromList(node.status.allocatable);
  NodeExtendedClaim node_claim;
  if (Status s = FilterExtendedResources(pod, *claim, extended, allocatable, &node_claim);
      !s.IsSuccess()) {
    if (!claim->spec.devices.requests.empty())
      return {
          fmt::format("claim {} for the pod's extended resources is left from an earlier "
                      "attempt; it is deleted before the next one",
                      KObj(*claim))};
    std::vector<std::string> out;
    for (const ExtendedRequest& r : extended.requests)
      if (r.device_class.empty() && allocatable.Scalar(r.resource) == 0)
        out.push_back(fmt::format(
            "extended resource {}: the node does not advertise it and no DeviceClass backs it",
            r.resource));
    return out;
  }
  if (node_claim.claim) {
    to_allocate.push_back(node_claim.claim);
    *mappings = std::move(node_claim.mappings);
  }
  return {};
}

}  // namespace berth::dynamicresources
