// The allocator's shared, read-only state (built once, read by concurrent Allocate calls) and
// its caches.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cel/dra.h"
#include "dra/allocator.h"
#include "dra/internal.h"
#include "dra/pool_cache.h"

namespace berth::dra {

inline cel::dra::AttributeValue ToCel(const DeviceAttribute& a) {
  if (a.int_value) return *a.int_value;
  if (a.bool_value) return *a.bool_value;
  if (a.version_value) return cel::dra::VersionString{*a.version_value};
  return a.string_value.value_or("");
}

struct Allocator::Impl {
  Features features;
  std::shared_ptr<const AllocatedState> state;
  DeviceClassLookup classes;
  // The slices, indexed; shared with other cycles' allocators when it comes from a PoolCache.
  std::shared_ptr<const SliceIndex> index;
  cel::dra::SelectorCache* cache;
  std::function<std::string()> share_ids;
  // Whether Allocate may decide without a search where the outcome is known (NothingFree).
  bool shortcuts = true;

  // Counters left in each pool after the allocated claims, computed on first use.
  mutable std::shared_mutex counters_mu;
  mutable std::unordered_map<std::string, std::map<std::string, Counters>> available_counters;

  std::shared_ptr<const Result<cel::dra::PreparedDevice>> Prepared(
      const Device& d, const std::string& driver) const {
    return index->Prepared(d, driver);
  }

  bool IsAllocated(const DeviceId& id) const {
    return state->allocated.count(id) > 0 || state->consumed_capacity.count(id) > 0;
  }

  // Entries are never erased, so the reference stays valid while the allocator lives.
  const std::map<std::string, Counters>& AvailableCounters(const internal::Pool& pool) const {
    const std::string key = pool.Id();
    {
      std::shared_lock lock(counters_mu);
      if (auto it = available_counters.find(key); it != available_counters.end()) return it->second;
    }
    std::map<std::string, Counters> avail;
    for (const auto& [name, set] : pool.counter_sets) avail[name] = set->counters;
    for (const auto* list : {&pool.slices_targeting_node, &pool.slices_not_targeting_node}) {
      for (const ResourceSlice* s : *list) {
        for (const Device& d : s->spec.devices) {
          if (!IsAllocated(DeviceId{s->spec.driver, s->spec.pool.name, d.name})) continue;
          for (const auto& c : d.consumes_counters) {
            auto& set = avail[c.counter_set];
            for (const auto& [name, q] : c.counters) {
              // May go negative: then nothing is left.
              if (auto it = set.find(name); it != set.end()) it->second -= q;
            }
          }
        }
      }
    }
    std::unique_lock lock(counters_mu);
    return available_counters.emplace(key, std::move(avail)).first->second;
  }
};

}  // namespace berth::dra

namespace berth::dra::internal {

// What a search that finds nothing returns when the node reaches an invalid pool.
Error InvalidPoolsError();

// Allocate's outcome for `claims` on the node of `node_pools` when it is known without a
// search: every device of the node's usable pools is held exclusively and every request asks
// for a count of devices without admin access, with nothing the search would reject as an
// error. Nullopt: a search must decide. Thread-safe.
std::optional<Result<std::optional<std::vector<AllocationResult>>>> NothingFree(
    const Allocator::Impl& a, const NodePools& node_pools,
    const std::vector<std::shared_ptr<const ResourceClaim>>& claims);

}  // namespace berth::dra::internal
