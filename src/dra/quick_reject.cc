// Allocator::Allocate's shortcut for a node whose devices are all held: a request without
// admin access never takes a device another claim holds exclusively, so the search would skip
// every device of the node and fail. In a nearly full cluster that is most nodes, each of which
// would otherwise set up a search only to reject it.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "dra/allocator_impl.h"
#include "dra/internal.h"
#include "dra/pool_cache.h"

namespace berth::dra::internal {
namespace {

// Whether the search for one request (or subrequest) could neither end in an error nor succeed
// without a device nor take a held device: exact count of at least one, no admin access, a
// class that exists, and nothing the search's validation rejects.
bool RequestQualifies(const Allocator::Impl& a, const ExactDeviceRequest& req, bool subrequest) {
  const std::string& mode = req.allocation_mode;
  if (!mode.empty() && mode != kAllocationModeExactCount) return false;
  if (req.count < 1 || req.count > std::numeric_limits<int>::max()) return false;
  // The search reads admin access from requests only, not subrequests.
  if (!subrequest && req.admin_access) return false;
  if (!req.capacity_requests.empty() && !a.features.consumable_capacity) return false;
  for (const DeviceSelector& s : req.selectors)
    if (s.cel_expression.empty()) return false;
  if (req.device_class_name.empty() || !a.classes) return false;
  return a.classes(req.device_class_name) != nullptr;
}

// Whether every claim's search is as RequestQualifies describes, with at least one request.
bool ClaimsQualify(const Allocator::Impl& a,
                   const std::vector<std::shared_ptr<const ResourceClaim>>& claims) {
  bool any_request = false;
  for (const auto& claim : claims) {
    int64_t min_devices = 0;
    for (const DeviceRequest& req : claim->spec.devices.requests) {
      any_request = true;
      if (req.first_available.empty()) {
        if (!req.exactly || !RequestQualifies(a, *req.exactly, false)) return false;
        min_devices += req.exactly->count;
        continue;
      }
      if (!a.features.prioritized_list) return false;
      int64_t min_sub = std::numeric_limits<int64_t>::max();
      for (const DeviceSubRequest& sub : req.first_available) {
        if (!RequestQualifies(a, sub.request, true)) return false;
        min_sub = std::min(min_sub, sub.request.count);
      }
      min_devices += min_sub;
    }
    if (min_devices > kAllocationResultsMaxSize) return false;
    for (const DeviceConstraint& c : claim->spec.devices.constraints)
      if (!c.match_attribute && !c.distinct_attribute) return false;
  }
  return any_request;
}

// Whether claims hold every device of pool `p` the node reaches exclusively; remembered per
// version of the pool's held devices, so a pool nobody changed is not compared name by name
// again.
bool AllHeld(const Allocator::Impl& a, const NodePools& node_pools, size_t p) {
  const Pool& pool = node_pools.pools[p];
  size_t devices = 0;
  for (const ResourceSlice* s : pool.slices_targeting_node) devices += s->spec.devices.size();
  if (devices == 0) return true;
  const auto& by_pool = a.state->by_pool;
  auto it = by_pool.find(std::pair<std::string_view, std::string_view>(pool.driver, pool.name));
  if (it == by_pool.end()) return false;
  const PoolHeld& held = it->second;
  if (held.version != 0 &&
      node_pools.all_held_at[p].load(std::memory_order_relaxed) == held.version)
    return true;
  // The names held are distinct, and so are the pool's (else it is invalid).
  if (held.exclusive.size() < devices) return false;
  std::unordered_set<std::string_view> names(held.exclusive.begin(), held.exclusive.end());
  for (const ResourceSlice* s : pool.slices_targeting_node)
    for (const Device& d : s->spec.devices)
      if (!names.count(d.name)) return false;
  if (held.version != 0) node_pools.all_held_at[p].store(held.version, std::memory_order_relaxed);
  return true;
}

}  // namespace

Error InvalidPoolsError() {
  return Error{"invalid resource pools were encountered", kFailedAllocationOnNode};
}

std::optional<Result<std::optional<std::vector<AllocationResult>>>> NothingFree(
    const Allocator::Impl& a, const NodePools& node_pools,
    const std::vector<std::shared_ptr<const ResourceClaim>>& claims) {
  bool invalid = false;
  for (size_t p = 0; p < node_pools.pools.size(); ++p) {
    const Pool& pool = node_pools.pools[p];
    if (pool.invalid) {
      invalid = true;
      continue;
    }
    if (pool.incomplete) continue;  // the search skips it
    if (!AllHeld(a, node_pools, p)) return std::nullopt;
  }
  // The claims last: looking up their classes costs more than the pools.
  if (!ClaimsQualify(a, claims)) return std::nullopt;
  // What the search returns when it finds nothing.
  if (invalid) return Result<std::optional<std::vector<AllocationResult>>>(InvalidPoolsError());
  return Result<std::optional<std::vector<AllocationResult>>>(
      std::optional<std::vector<AllocationResult>>());
}

}  // namespace berth::dra::internal
