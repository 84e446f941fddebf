// The allocator's shared, read-only state (built once, read by concurrent Allocate calls) and
// its caches.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cel/dra.h"
#include "dra/allocator.h"
#include "dra/internal.h"

namespace berth::dra {

inline cel::dra::AttributeValue ToCel(const DeviceAttribute& a) {
  if (a.int_value) return *a.int_value;
  if (a.bool_value) return *a.bool_value;
  if (a.version_value) return cel::dra::VersionString{*a.version_value};
  return a.string_value.value_or("");
}

struct Allocator::Impl {
  Features features;
  AllocatedState state;
  DeviceClassLookup classes;
  std::vector<std::shared_ptr<const ResourceSlice>> owned;
  std::vector<const ResourceSlice*> all_slices;
  // Each slice's position in all_slices, so that a node's search orders its few candidates
  // without indexing every slice again.
  std::unordered_map<const ResourceSlice*, size_t> slice_order;
  std::unordered_map<std::string, std::vector<const ResourceSlice*>> slices_on_node;
  std::vector<const ResourceSlice*> slices_shared;  // without a node name
  cel::dra::SelectorCache* cache;
  std::function<std::string()> share_ids;

  // Devices in the form CEL selectors read, prepared on first use by any Allocate call.
  mutable std::shared_mutex prepared_mu;
  mutable std::unordered_map<const Device*, std::shared_ptr<const Result<cel::dra::PreparedDevice>>>
      prepared;
  // Counters left in each pool after the allocated claims, computed on first use.
  mutable std::shared_mutex counters_mu;
  mutable std::unordered_map<std::string, std::map<std::string, Counters>> available_counters;

  std::shared_ptr<const Result<cel::dra::PreparedDevice>> Prepared(
      const Device& d, const std::string& driver) const {
    {
      std::shared_lock lock(prepared_mu);
      if (auto it = prepared.find(&d); it != prepared.end()) return it->second;
    }
    cel::dra::Device cd;
    cd.driver = driver;
    for (const auto& [name, v] : d.attributes) cd.attributes.emplace_back(name, ToCel(v));
    for (const auto& [name, c] : d.capacity) cd.capacity.emplace_back(name, c.value);
    cd.allow_multiple_allocations = d.allow_multiple_allocations;
    auto p = std::make_shared<const Result<cel::dra::PreparedDevice>>(
        cel::dra::PreparedDevice::Prepare(cd));
    std::unique_lock lock(prepared_mu);
    return prepared.emplace(&d, std::move(p)).first->second;
  }

  bool IsAllocated(const DeviceId& id) const {
    return state.allocated.count(id) > 0 || state.consumed_capacity.count(id) > 0;
  }

  std::map<std::string, Counters> AvailableCounters(const internal::Pool& pool) const {
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
