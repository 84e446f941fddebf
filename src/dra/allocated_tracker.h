// The AllocatedState of the claims in use, kept up to date across scheduling cycles instead of
// rebuilt from every claim each cycle: Update() compares the claims with the previous call's
// by identity (listers hand out immutable snapshots, so a changed claim is a new object) and
// applies only the allocations that appeared or went away.
//
//   dra::AllocatedStateTracker tracker;             // one per plugin
//   auto state = tracker.Update(claims_in_use);     // each cycle; equal to AllocatedStateOf()
//   dra::Allocator alloc(features, state, classes, slice_index, &cel_cache);
//
// Or, for a caller that learns of each change (a claim change feed), keyed by the claim:
//
//   tracker.Set(uid, claim);                         // what the claim is now (null: gone)
//   auto state = tracker.State();
//
// One tracker uses one of the two forms. A state handed out is never changed afterwards: when a
// cycle still holds it, the next change is made on a copy. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "berth/api/resource_claims.h"
#include "dra/allocator.h"

namespace berth::dra {

class AllocatedStateTracker {
 public:
  // `claims` may include unallocated ones (they hold nothing).
  std::shared_ptr<const AllocatedState> Update(
      const std::vector<std::shared_ptr<const ResourceClaim>>& claims);
  // The claim under `key` is now `claim` (null, or without an allocation: it holds nothing).
  void Set(const std::string& key, std::shared_ptr<const ResourceClaim> claim);
  // Forgets every claim Set() gave.
  void Clear();
  // For a caller that feeds Set() from a claim change feed: the feed position the claims given
  // reflect (0 before any). Advance() applies `changes` (key, claim now; null: gone), read from
  // the feed after position `from` up to `to`, forgetting every claim first on a `resync`; it
  // does nothing and returns false when another caller has moved the position from `from`
  // meanwhile (the state has those changes already).
  using KeyedClaim = std::pair<std::string, std::shared_ptr<const ResourceClaim>>;
  bool Advance(uint64_t from, uint64_t to, bool resync, std::vector<KeyedClaim> changes);
  uint64_t position() const;
  std::shared_ptr<const AllocatedState> State() const;
  // How many claims Set() gave that hold devices (for tests).
  size_t size() const;
  // How many times Update() copied a state a cycle still held (for tests).
  size_t copies() const;

 private:
  struct Known {
    std::shared_ptr<const ResourceClaim> claim;  // keeps the pointer from being reused
    uint64_t seen = 0;
  };
  void SetLocked(const std::string& key, std::shared_ptr<const ResourceClaim> claim);
  void ClearLocked();
  void Add(const AllocationResult& a);
  void Remove(const AllocationResult& a);
  AllocatedState& Mutable();
  // Adds the change of id's pool to state.changes.
  void Record(AllocatedState& state, const DeviceId& id);

  mutable std::mutex mu_;
  std::shared_ptr<AllocatedState> state_ = [] {
    auto s = std::make_shared<AllocatedState>();
    s->indexed = true;
    return s;
  }();
  std::unordered_map<const ResourceClaim*, Known> known_;
  // Set()'s claims holding devices, by key.
  std::unordered_map<std::string, std::shared_ptr<const ResourceClaim>> by_key_;
  // How many allocations hold each device, so that one going away frees it only when it was
  // the last (exclusive and shared allocations counted apart).
  std::map<DeviceId, int> exclusive_refs_;
  std::map<DeviceId, int> shared_refs_;
  uint64_t epoch_ = 0;
  uint64_t position_ = 0;  // Advance()'s
  size_t copies_ = 0;
  // Changes in state_->changes' chain; a longer chain is cut.
  static constexpr size_t kMaxChain = 256;
  size_t chain_length_ = 0;
};

}  // namespace berth::dra
