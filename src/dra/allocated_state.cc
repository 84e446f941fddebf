// The devices that allocated claims hold (upstream's GatherAllocatedState).
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "dra/allocator.h"
#include "dra/internal.h"

namespace berth::dra {

void AddAllocation(AllocatedState& state, const AllocationResult& allocation) {
  for (const DeviceRequestAllocationResult& r : allocation.results) {
    // Admin access does not take the device from anyone.
    if (r.admin_access.value_or(false)) continue;
    DeviceId id{r.driver, r.pool, r.device};
    if (!r.share_id) {
      state.allocated.insert(std::move(id));
      continue;
    }
    state.allocated_shared.insert(SharedDeviceId{id, *r.share_id});
    CapacityAmounts& sum = state.consumed_capacity[id];
    for (const auto& [name, q] : r.consumed_capacity) {
      sum[internal::QualifiedCapacityName(name, r.driver)] += q;
    }
  }
}

uint64_t NextHeldChangeSeq() {
  static std::atomic<uint64_t> next{0};
  return next.fetch_add(1, std::memory_order_relaxed) + 1;
}

void IndexByPool(AllocatedState& state) {
  state.by_pool.clear();
  for (const DeviceId& id : state.allocated)
    state.by_pool[{id.driver, id.pool}].exclusive.push_back(id.device);
  for (const auto& [id, amounts] : state.consumed_capacity)
    state.by_pool[{id.driver, id.pool}].shared.push_back(id.device);
  state.changes = nullptr;  // rebuilt whole: no change to follow
  state.indexed = true;
}

AllocatedState AllocatedStateOf(const std::vector<std::shared_ptr<const ResourceClaim>>& claims) {
  AllocatedState state;
  for (const auto& c : claims) {
    if (c && c->status.allocation) AddAllocation(state, *c->status.allocation);
  }
  return state;
}

}  // namespace berth::dra
