// Internals of the allocator shared by its translation units: pools, node matching and
// consumable capacity.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "berth/api/objects.h"
#include "berth/api/resource_claims.h"
#include "berth/api/result.h"
#include "dra/allocator.h"

namespace berth::dra::internal {

// Whether a node is selected by a nodeName / allNodes / nodeSelector triple (one of the three
// is set; none set selects nothing).
bool NodeMatches(const Node& node, const std::optional<std::string>& node_name, bool all_nodes,
                 const std::optional<NodeSelector>& selector);

// One resource pool (driver + pool name) as seen from a node: its newest generation's slices.
struct Pool {
  std::string driver, name;
  bool incomplete = false;
  bool invalid = false;
  std::string invalid_reason;
  // Slices with devices that the node can reach, in the order of the input.
  std::vector<const ResourceSlice*> slices_targeting_node;
  // The pool's other slices with devices (they may consume the pool's counters).
  std::vector<const ResourceSlice*> slices_not_targeting_node;
  // Counter set name -> its counters (from the slices with sharedCounters).
  std::map<std::string, const CounterSet*> counter_sets;
  // Per slice of slices_targeting_node: the position of its first device among all the
  // devices of the node's pools (SliceIndex numbers them), so a search can keep per-device
  // facts in a flat array.
  std::vector<uint32_t> device_base;
  // Per slice of slices_targeting_node: its position among all the SliceIndex's slices, and
  // the number of its first device among all their devices (SliceIndex::device_total), under
  // which what is learned of a device is shared by every node's search.
  std::vector<uint32_t> slice_ordinal, global_base;
  size_t key_hash = 0;  // PoolKeyHash of (driver, name); set by SliceIndex
  std::string Id() const { return driver + "/" + name; }
};

// The pools with devices reachable from `node`, in the order their first slice has in
// `slices` (the slices that may reach the node: those of the node and those without a node
// name). Outdated slices are dropped; a pool with slices missing from `all_slices` is
// incomplete; one with duplicate device names or counters that do not exist is invalid.
std::vector<Pool> GatherPools(const std::vector<const ResourceSlice*>& slices,
                              const std::vector<const ResourceSlice*>& all_slices, const Node& node,
                              const Features& features);

// Capacity names are compared fully qualified: "memory" of driver d is "d/memory".
std::string QualifiedCapacityName(const std::string& name, const std::string& driver);

// The capacity one allocation of `requests` takes from `device` (one entry per capacity of
// the device, keyed by the device's own spelling of the name): nullopt when the device cannot
// satisfy the request (a capacity it lacks, a request its policy rejects, or not enough left
// after `consumed` and `allocating`, both keyed by qualified name).
std::optional<CapacityAmounts> ConsumedCapacityFor(const Device& device, const std::string& driver,
                                                   const CapacityAmounts& requests,
                                                   const CapacityAmounts* consumed,
                                                   const CapacityAmounts* allocating);

}  // namespace berth::dra::internal

namespace berth::dra::internal {

// One allocated device of a claim while the search runs.
struct DeviceResult {
  const Device* device = nullptr;
  const ResourceSlice* slice = nullptr;
  DeviceId id;
  std::string request;         // request or subrequest name
  std::string parent_request;  // the request of a subrequest, else empty
  const ExactDeviceRequest* spec = nullptr;
  bool admin_access = false;
  std::optional<std::string> share_id;
  CapacityAmounts consumed_capacity;  // shared devices only
  std::string RequestName() const {
    return parent_request.empty() ? request : parent_request + "/" + request;
  }
};

// The request or subrequest chosen for each request of a claim, with its class (null when
// the class was not needed).
struct ChosenRequest {
  const DeviceRequest* request = nullptr;
  int subrequest = -1;  // index into firstAvailable, -1 for exactly
  const DeviceClass* device_class = nullptr;
  std::string Name() const;  // "req" or "req/sub"
};

// Builds a claim's status.allocation from the devices found (upstream's result assembly:
// results, configuration from classes and the claim, and the node selector).
Result<AllocationResult> BuildAllocation(const ResourceClaim& claim,
                                         const std::vector<DeviceResult>& devices,
                                         const std::vector<ChosenRequest>& chosen, const Node& node,
                                         bool binding_conditions);

}  // namespace berth::dra::internal
