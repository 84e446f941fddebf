// The AllocatedState of the claims in use, kept up to date across scheduling cycles instead of
// rebuilt from every claim each cycle: Update() compares the claims with the previous call's
// by identity (listers hand out immutable snapshots, so a changed claim is a new object) and
// applies only the allocations that appeared or went away.
//
//   dra::AllocatedStateTracker tracker;             // one per plugin
//   auto state = tracker.Update(claims_in_use);     // each cycle; equal to AllocatedStateOf()
//   dra::Allocator alloc(features, state, classes, slice_index, &cel_cache);
//
// A state handed out is never changed afterwards: when a cycle still holds it, the next
// change is made on a copy. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "berth/api/resource_claims.h"
#include "dra/allocator.h"

namespace berth::dra {

class AllocatedStateTracker {
 public:
  // `claims` may include unallocated ones (they hold nothing).
  std::shared_ptr<const AllocatedState> Update(
      const std::vector<std::shared_ptr<const ResourceClaim>>& claims);
  // How many times Update() copied a state a cycle still held (for tests).
  size_t copies() const;

 private:
  struct Known {
    std::shared_ptr<const ResourceClaim> claim;  // keeps the pointer from being reused
    uint64_t seen = 0;
  };
  void Add(const AllocationResult& a);
  void Remove(const AllocationResult& a);
  AllocatedState& Mutable();

  mutable std::mutex mu_;
  std::shared_ptr<AllocatedState> state_ = [] {
    auto s = std::make_shared<AllocatedState>();
    s->indexed = true;
    return s;
  }();
  std::unordered_map<const ResourceClaim*, Known> known_;
  // How many allocations hold each device, so that one going away frees it only when it was
  // the last (exclusive and shared allocations counted apart).
  std::map<DeviceId, int> exclusive_refs_;
  std::map<DeviceId, int> shared_refs_;
  uint64_t epoch_ = 0;
  size_t copies_ = 0;
};

}  // namespace berth::dra
