// DynamicResources' side of extended resources backed by DRA (DRAExtendedResource): a pod whose
// containers request an extended resource that a DeviceClass backs gets one ResourceClaim for
// all such requests, as kube-scheduler's extendeddynamicresources.go makes it:
//
//   PreFilter  the pod's claim from an earlier cycle (annotation
//              resource.kubernetes.io/extended-resource-claim: "true", controlled by the pod),
//              or a claim kept in memory, named "<extended-resources>", without requests.
//   Filter     per node: the resources the node does not advertise in status.allocatable and a
//              class backs become the claim's requests, one device per unit
//              ("container-<i>-request-<j>", <i> the container's index among init containers
//              and containers, <j> the resource's among its sorted requests); the allocator
//              allocates them with the pod's other claims. A claim from an earlier cycle is
//              refused ("cannot schedule extended resource claim"); PostFilter deletes it.
//   PreBind    creates the claim (generateName "<pod>-extended-resources-", owned by the pod,
//              finalizer resource.kubernetes.io/delete-protection), writes its allocation with
//              the pod in reservedFor, and the pod's status.extendedResourceClaimStatus.
//   Unreserve  deletes a claim PreBind created.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/resource_claims.h"
#include "berth/api/resources.h"
#include "berth/framework/dra.h"
#include "berth/framework/status.h"
#include "plugins/dynamicresources/extended_claim_index.h"

namespace berth::dynamicresources {

// The name of the pod's extended resource claim while it exists only in memory (not a valid
// object name, so it never matches a stored claim).
inline constexpr std::string_view kSpecialClaimName = "<extended-resources>";

// One entry of status.extendedResourceClaimStatus.requestMappings.
struct ContainerRequestMapping {
  std::string container, resource, request;
  friend bool operator==(const ContainerRequestMapping&, const ContainerRequestMapping&) = default;
};

// The claim's requests for one node, and which container request each serves.
struct NodeExtendedClaim {
  Ptr<ResourceClaim> claim;  // null: nothing to allocate through DRA on that node
  std::vector<ContainerRequestMapping> mappings;
};

// An extended resource the pod requests (non-zero), and the DeviceClass backing it ("" when
// none does: only a node advertising it can provide it).
struct ExtendedRequest {
  std::string resource;
  int64_t quantity = 0;
  std::string device_class;
};

// The extended resource claim of a cycle (CycleData::extended).
struct ExtendedClaimData {
  size_t index = 0;                       // of the claim in CycleData::claims
  std::vector<ExtendedRequest> requests;  // sorted by resource
  bool has_user_claims = false;           // the pod has claims of its own as well
  std::string initial_uid;                // the claim's uid in PreFilter (in memory: made up)

  // The claim of the nodes that get every class-backed request through DRA (those that
  // advertise none of the resources: usually all), made by the first such node's Filter and
  // shared by the others, whose claims would be equal copies.
  mutable std::mutex common_mu;
  mutable std::optional<NodeExtendedClaim> common;

  mutable std::mutex mu;
  mutable std::map<std::string, NodeExtendedClaim, std::less<>> by_node;
  Ptr<ResourceClaim> created;  // set by PreBind once the claim is in the API
};

// PreFilter: the pod's extended resource claim (an earlier cycle's, or a new one in memory), or
// null when no extended resource the pod requests has a DeviceClass. `requests` receives the
// pod's extended resource requests.
// `index` (null: list every claim) finds the pod's claim from an earlier cycle, from `feed`.
Ptr<ResourceClaim> PreFilterExtendedResources(const Pod& pod, const DraListers& listers,
                                              std::vector<ExtendedRequest>* requests,
                                              ExtendedClaimIndex* index = nullptr,
                                              const DraClaimFeed* feed = nullptr);

// Filter: the variant of the claim for a node with `allocatable`. An Unschedulable status for an
// earlier cycle's claim and for a request neither the node nor a class provides.
Status FilterExtendedResources(const Pod& pod, const ResourceClaim& claim,
                               const ExtendedClaimData& data, const Resource& allocatable,
                               NodeExtendedClaim* out);

// The device requests for `resources` (those the node must get through DRA) and the container
// mappings, as createRequestsAndMappings: per resource, one request per
// long-lived container (containers and sidecars) that asks for it, and one for the largest of
// the short-lived init containers beyond what later long-lived containers' requests cover;
// requests sorted by name.
void CreateRequestsAndMappings(const Pod& pod, const std::vector<const ExtendedRequest*>& resources,
                               std::vector<DeviceRequest>* requests,
                               std::vector<ContainerRequestMapping>* mappings);

// status.extendedResourceClaimStatus for claim `claim_name`.
nlohmann::json ExtendedResourceClaimStatus(const std::string& claim_name,
                                           const std::vector<ContainerRequestMapping>& mappings);

// "extended resource example.com/gpu (container c)" for request `request` of the claim, or
// "" when no mapping names it: how diagnoses name the request.
std::string DescribeExtendedRequest(const std::vector<ContainerRequestMapping>& mappings,
                                    std::string_view request);

}  // namespace berth::dynamicresources
