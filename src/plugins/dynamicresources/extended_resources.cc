#include "plugins/dynamicresources/extended_resources.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <set>

#include "berth/api/resources.h"
#include "framework/dra_extended_resources.h"

namespace berth::dynamicresources {
namespace {

// The quantity `container` requests of `resource` as a whole number; 0 when it requests none
// or a fraction (Quantity.AsInt64 fails).
int64_t ContainerRequest(const Container& container, std::string_view resource) {
  auto it = container.resources.requests.find(resource);
  if (it == container.resources.requests.end()) return 0;
  const int64_t milli = it->second.MilliValue();
  return milli % 1000 == 0 ? milli / 1000 : 0;
}

// createResourceRequestAndMappings: the request container `index` needs for `resource` beyond
// what `reusable` (later long-lived containers' requests, entries may be null) provides, and
// its mappings.
std::optional<DeviceRequest> RequestFor(size_t index, const Container& container,
                                        const ExtendedRequest& resource,
                                        std::span<const std::optional<DeviceRequest>> reusable,
                                        std::vector<ContainerRequestMapping>* mappings) {
  const int64_t wanted = ContainerRequest(container, resource.resource);
  if (wanted == 0) return std::nullopt;
  int64_t sum = 0;
  for (const auto& r : reusable) {
    if (!r) continue;
    sum += r->exactly->count;
    mappings->push_back({container.name, resource.resource, r->name});
    if (sum >= wanted) return std::nullopt;
  }
  // The resource's index among the container's requests, which are kept sorted by name.
  size_t resource_index = 0;
  for (const auto& [name, q] : container.resources.requests) {
    if (name == resource.resource) break;
    ++resource_index;
  }
  DeviceRequest request;
  request.name = fmt::format("container-{}-request-{}", index, resource_index);
  request.exactly.emplace();
  request.exactly->device_class_name = resource.device_class;
  request.exactly->allocation_mode = kAllocationModeExactCount;
  request.exactly->count = wanted - sum;
  mappings->push_back({container.name, resource.resource, request.name});
  return request;
}

std::string MadeUpUid() {
  static std::atomic<uint64_t> next{0};
  return fmt::format("extended-resources-{}", next.fetch_add(1));
}

bool IsExtendedResourceClaimOf(const ResourceClaim& claim, const Pod& pod) {
  // The owner first: PreFilter asks this of every claim, and few are the pod's.
  const auto& refs = claim.metadata.owner_references;
  if (std::none_of(refs.begin(), refs.end(), [&](const OwnerReference& ref) {
        return ref.uid == pod.metadata.uid && ref.controller && ref.name == pod.metadata.name;
      }))
    return false;
  auto a = claim.metadata.annotations.find(dra_extended::kClaimAnnotation);
  return a != claim.metadata.annotations.end() && a->second == "true";
}

}  // namespace

Ptr<ResourceClaim> PreFilterExtendedResources(const Pod& pod, const DraListers& listers,
                                              std::vector<ExtendedRequest>* requests,
                                              ExtendedClaimIndex* index, const DraClaimFeed* feed) {
  requests->clear();
  bool backed = false;
  for (const auto& [name, quantity] : ComputePodRequests(pod).requests.scalar) {
    if (quantity == 0 || !dra_extended::IsDraExtendedResourceName(name)) continue;
    Ptr<DeviceClass> cls = dra_extended::ResolveDeviceClass(listers, name);
    backed |= cls != nullptr;
    requests->push_back({name, quantity, cls ? cls->metadata.name : ""});
  }
  if (!backed) {
    requests->clear();
    return nullptr;
  }
  std::sort(requests->begin(), requests->end(),
            [](const auto& a, const auto& b) { return a.resource < b.resource; });
  // A claim an earlier cycle created (its binding failed): Filter refuses it, PostFilter
  // deletes it, and the next attempt starts anew.
  auto is_the_pods = [&](const ResourceClaim& c) {
    return c.metadata.namespace_ == pod.metadata.namespace_ && IsExtendedResourceClaimOf(c, pod);
  };
  if (index) {
    if (Ptr<ResourceClaim> earlier = index->Find(pod, listers, feed, is_the_pods)) return earlier;
  } else {
    for (const Ptr<ResourceClaim>& c : listers.ListResourceClaims())
      if (is_the_pods(*c)) return c;
  }
  auto claim = std::make_shared<ResourceClaim>();
  claim->metadata.namespace_ = pod.metadata.namespace_;
  claim->metadata.name = std::string(kSpecialClaimName);
  claim->metadata.uid = MadeUpUid();  // for the in-flight bookkeeping until PreBind
  claim->metadata.owner_references.push_back(
      OwnerReference{"v1", "Pod", pod.metadata.name, pod.metadata.uid, true});
  claim->metadata.annotations[std::string(dra_extended::kClaimAnnotation)] = "true";
  return claim;
}

Status FilterExtendedResources(const Pod& pod, const ResourceClaim& claim,
                               const ExtendedClaimData& data, const Resource& allocatable,
                               NodeExtendedClaim* out) {
  *out = {};
  if (!claim.spec.devices.requests.empty())
    return Status::Unresolvable("cannot schedule extended resource claim");
  std::vector<const ExtendedRequest*> through_dra;
  size_t backed = 0;
  for (const ExtendedRequest& r : data.requests) {
    if (!r.device_class.empty()) ++backed;
    const bool advertised =
        std::any_of(allocatable.scalar.begin(), allocatable.scalar.end(),
                    [&](const auto& entry) { return entry.first == r.resource; });
    if (!r.device_class.empty() && allocatable.Scalar(r.resource) == 0) {
      through_dra.push_back(&r);
    } else if (!advertised) {
      return Status::Unresolvable("cannot fit resource");
    }
  }
  // Everything comes from the node's device plugins: NodeResourcesFit has checked it.
  if (through_dra.empty() && !data.has_user_claims) return Status::Success();
  if (claim.status.allocation || through_dra.empty()) return Status::Success();
  const bool common = through_dra.size() == backed;
  std::unique_lock lock(data.common_mu, std::defer_lock);
  if (common) {
    lock.lock();
    if (data.common) {
      *out = *data.common;
      return Status::Success();
    }
  }
  auto node_claim = std::make_shared<ResourceClaim>(claim);
  CreateRequestsAndMappings(pod, through_dra, &node_claim->spec.devices.requests, &out->mappings);
  out->claim = std::move(node_claim);
  if (common) data.common = *out;
  return Status::Success();
}

void CreateRequestsAndMappings(const Pod& pod, const std::vector<const ExtendedRequest*>& resources,
                               std::vector<DeviceRequest>* requests,
                               std::vector<ContainerRequestMapping>* mappings) {
  std::vector<const Container*> containers;
  for (const Container& c : pod.spec.init_containers) containers.push_back(&c);
  for (const Container& c : pod.spec.containers) containers.push_back(&c);
  const size_t num_init = pod.spec.init_containers.size();
  auto short_lived = [&](size_t i) {
    return i < num_init &&
           !(containers[i]->restart_policy && *containers[i]->restart_policy == "Always");
  };
  for (const ExtendedRequest* resource : resources) {
    if (resource->device_class.empty()) continue;  // no class backs it
    std::vector<ContainerRequestMapping> long_mappings, short_mappings;
    // Per container index: the long-lived container's request (init containers before it may
    // reuse it).
    std::vector<std::optional<DeviceRequest>> long_requests(containers.size());
    for (size_t i = 0; i < containers.size(); ++i)
      if (!short_lived(i))
        long_requests[i] = RequestFor(i, *containers[i], *resource, {}, &long_mappings);
    std::optional<DeviceRequest> max_short;
    std::set<std::string> short_names;
    for (size_t i = 0; i < containers.size(); ++i) {
      if (!short_lived(i)) continue;
      auto r = RequestFor(i, *containers[i], *resource,
                          std::span<const std::optional<DeviceRequest>>(long_requests).subspan(i),
                          &short_mappings);
      if (!r) continue;
      short_names.insert(r->name);
      if (!max_short || max_short->exactly->count < r->exactly->count) max_short = std::move(r);
    }
    // Init containers run one at a time: the largest of their requests serves them all.
    if (max_short && short_names.size() > 1) {
      for (ContainerRequestMapping& m : short_mappings)
        if (short_names.count(m.request)) m.request = max_short->name;
    }
    if (max_short) requests->push_back(std::move(*max_short));
    for (auto& r : long_requests)
      if (r) requests->push_back(std::move(*r));
    mappings->insert(mappings->end(), long_mappings.begin(), long_mappings.end());
    mappings->insert(mappings->end(), short_mappings.begin(), short_mappings.end());
  }
  std::stable_sort(requests->begin(), requests->end(),
                   [](const auto& a, const auto& b) { return a.name < b.name; });
}

nlohmann::json ExtendedResourceClaimStatus(const std::string& claim_name,
                                           const std::vector<ContainerRequestMapping>& mappings) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& m : mappings)
    list.push_back(
        {{"containerName", m.container}, {"resourceName", m.resource}, {"requestName", m.request}});
  return {{"requestMappings", std::move(list)}, {"resourceClaimName", claim_name}};
}

std::string DescribeExtendedRequest(const std::vector<ContainerRequestMapping>& mappings,
                                    std::string_view request) {
  std::string resource;
  std::vector<std::string> containers;
  for (const auto& m : mappings) {
    if (m.request != request) continue;
    resource = m.resource;
    containers.push_back(m.container);
  }
  if (resource.empty()) return "";
  std::string out = fmt::format("extended resource {} (container", resource);
  out += containers.size() == 1 ? " " : "s ";
  for (size_t i = 0; i < containers.size(); ++i) out += (i ? ", " : "") + containers[i];
  return out + ")";
}

}  // namespace berth::dynamicresources
