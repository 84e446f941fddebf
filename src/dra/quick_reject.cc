// Allocator::Allocate's shortcut for a node whose devices are all held: a request without
// admin access never takes a device another claim holds exclusively, so the search would skip
// every device of the node and fail. In a nearly full cluster that is most nodes, each of which
// would otherwise set up a search only to reject it.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
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

// Whether no change after the one numbered `seq` in the chain from `newest` is of `pool`
// (false also when `seq` is not in the chain).
bool UnchangedSince(const HeldChange* newest, uint64_t seq, const Pool& pool) {
  for (const HeldChange* c = newest; c != nullptr; c = c->older.get()) {
    if (c->seq == seq) return true;
    if (c->seq < seq) return false;
    if (c->pool_hash == pool.key_hash && c->pool == pool.name && c->driver == pool.driver)
      return false;
  }
  return false;
}

// Whether claims hold every device of pool `p` the node reaches exclusively. What was found is
// remembered with the state's newest change and reused while no newer change is of the pool,
// so an unchanged pool is neither looked up nor compared name by name again.
bool AllHeld(const Allocator::Impl& a, const NodePools& node_pools, size_t p) {
  const Pool& pool = node_pools.pools[p];
  const HeldChange* newest = a.state->changes.get();
  std::atomic<uint64_t>& known = node_pools.all_held_at[p];
  if (newest != nullptr) {
    const uint64_t seq = known.load(std::memory_order_relaxed);
    if (seq != 0 && UnchangedSince(newest, seq, pool)) return true;
  }
  size_t devices = 0;
  for (const ResourceSlice* s : pool.slices_targeting_node) devices += s->spec.devices.size();
  if (devices > 0) {
    const auto& by_pool = a.state->by_pool;
    auto it = by_pool.find(std::pair<std::string_view, std::string_view>(pool.driver, pool.name));
    if (it == by_pool.end()) return false;
    // The names held are distinct, and so are the pool's (else it is invalid).
    const std::vector<std::string>& held = it->second.exclusive;
    if (held.size() < devices) return false;
    std::unordered_set<std::string_view> names(held.begin(), held.end());
    for (const ResourceSlice* s : pool.slices_targeting_node)
      for (const Device& d : s->spec.devices)
        if (!names.count(d.name)) return false;
  }
  if (newest != nullptr) known.store(newest->seq, std::memory_order_relaxed);
  return true;
}

// Whether no change after the one numbered `seq` in the chain from `newest` may be of one of
// the node's pools (compared by hash: a collision only costs a check of the pools).
bool NodeUnchangedSince(const HeldChange* newest, uint64_t seq, const NodePools& node_pools) {
  const auto hashes =
      std::span(node_pools.quick_hashes).first(static_cast<size_t>(node_pools.quick_pools));
  for (const HeldChange* c = newest; c != nullptr; c = c->older.get()) {
    if (c->seq == seq) return true;
    if (c->seq < seq) return false;
    if (std::find(hashes.begin(), hashes.end(), c->pool_hash) != hashes.end()) return false;
  }
  return false;
}

// Whether claims hold every device of every usable pool of the node exclusively; remembered
// for the whole node too when it has few pools, so that an unchanged node costs a look at the
// changes since it was checked.
bool NodeAllHeld(const Allocator::Impl& a, const NodePools& node_pools) {
  const HeldChange* newest = a.state->changes.get();
  const bool whole = newest != nullptr && node_pools.quick_pools >= 0;
  if (whole) {
    const uint64_t seq = node_pools.all_held_seq.load(std::memory_order_relaxed);
    if (seq != 0 && NodeUnchangedSince(newest, seq, node_pools)) return true;
  }
  for (size_t p = 0; p < node_pools.pools.size(); ++p) {
    const Pool& pool = node_pools.pools[p];
    if (pool.invalid || pool.incomplete) continue;  // the search skips them
    if (!AllHeld(a, node_pools, p)) return false;
  }
  if (whole) node_pools.all_held_seq.store(newest->seq, std::memory_order_relaxed);
  return true;
}

}  // namespace

Error InvalidPoolsError() {
  return Error{"invalid resource pools were encountered", kFailedAllocationOnNode};
}

std::optional<Result<std::optional<std::vector<AllocationResult>>>> NothingFree(
    const Allocator::Impl& a, const NodePools& node_pools,
    const std::vector<std::shared_ptr<const ResourceClaim>>& claims) {
  if (!NodeAllHeld(a, node_pools)) return std::nullopt;
  // The claims last: looking up their classes costs more than the pools.
  if (!ClaimsQualify(a, claims)) return std::nullopt;
  // What the search returns when it finds nothing.
  if (node_pools.has_invalid)
    return Result<std::optional<std::vector<AllocationResult>>>(InvalidPoolsError());
  return Result<std::optional<std::vector<AllocationResult>>>(
      std::optional<std::vector<AllocationResult>>());
}

}  // namespace berth::dra::internal
