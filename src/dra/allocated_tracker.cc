#include "dra/allocated_tracker.h"

#include <algorithm>
#include <utility>

#include "dra/internal.h"

namespace berth::dra {
namespace {

void Unindex(AllocatedState& state, const DeviceId& id, std::vector<std::string> PoolHeld::*list) {
  auto it = state.by_pool.find(std::pair<std::string_view, std::string_view>(id.driver, id.pool));
  if (it == state.by_pool.end()) return;
  auto& names = it->second.*list;
  if (auto n = std::find(names.begin(), names.end(), id.device); n != names.end()) names.erase(n);
  if (it->second.exclusive.empty() && it->second.shared.empty()) state.by_pool.erase(it);
}

}  // namespace

std::shared_ptr<const AllocatedState> AllocatedStateTracker::Update(
    const std::vector<std::shared_ptr<const ResourceClaim>>& claims) {
  std::lock_guard lock(mu_);
  const uint64_t epoch = ++epoch_;
  size_t seen = 0;
  for (const auto& c : claims) {
    if (!c) continue;
    // A claim seen before is not read again: with thousands of claims, reading each one's
    // status every cycle would cost more than the rest of the update.
    auto [it, added] = known_.try_emplace(c.get());
    if (it->second.seen == epoch) continue;  // listed twice: counted once
    it->second.seen = epoch;
    ++seen;
    if (!added) continue;
    it->second.claim = c;
    if (c->status.allocation) Add(*c->status.allocation);
  }
  if (seen != known_.size()) {
    for (auto it = known_.begin(); it != known_.end();) {
      if (it->second.seen == epoch) {
        ++it;
        continue;
      }
      if (const auto& a = it->second.claim->status.allocation) Remove(*a);
      it = known_.erase(it);
    }
  }
  return state_;
}

void AllocatedStateTracker::Set(const std::string& key,
                                std::shared_ptr<const ResourceClaim> claim) {
  std::lock_guard lock(mu_);
  SetLocked(key, std::move(claim));
}

bool AllocatedStateTracker::Advance(uint64_t from, uint64_t to, bool resync,
                                    std::vector<KeyedClaim> changes) {
  std::lock_guard lock(mu_);
  if (position_ != from) return false;
  if (resync) ClearLocked();
  for (auto& [key, claim] : changes) SetLocked(key, std::move(claim));
  position_ = to;
  return true;
}

uint64_t AllocatedStateTracker::position() const {
  std::lock_guard lock(mu_);
  return position_;
}

void AllocatedStateTracker::SetLocked(const std::string& key,
                                      std::shared_ptr<const ResourceClaim> claim) {
  if (claim && !claim->status.allocation) claim = nullptr;
  auto it = by_key_.find(key);
  if (it == by_key_.end()) {
    if (!claim) return;
    Add(*claim->status.allocation);
    by_key_.emplace(key, std::move(claim));
    return;
  }
  if (it->second == claim) return;
  Remove(*it->second->status.allocation);
  if (!claim) {
    by_key_.erase(it);
    return;
  }
  Add(*claim->status.allocation);
  it->second = std::move(claim);
}

void AllocatedStateTracker::Clear() {
  std::lock_guard lock(mu_);
  ClearLocked();
}

void AllocatedStateTracker::ClearLocked() {
  by_key_.clear();
  known_.clear();
  exclusive_refs_.clear();
  shared_refs_.clear();
  state_ = std::make_shared<AllocatedState>();
  state_->indexed = true;
  chain_length_ = 0;
}

std::shared_ptr<const AllocatedState> AllocatedStateTracker::State() const {
  std::lock_guard lock(mu_);
  return state_;
}

size_t AllocatedStateTracker::size() const {
  std::lock_guard lock(mu_);
  return by_key_.size();
}

size_t AllocatedStateTracker::copies() const {
  std::lock_guard lock(mu_);
  return copies_;
}

AllocatedState& AllocatedStateTracker::Mutable() {
  if (state_.use_count() > 1) {
    // A cycle still reads the state handed out: change a copy.
    state_ = std::make_shared<AllocatedState>(*state_);
    ++copies_;
  }
  return *state_;
}

void AllocatedStateTracker::Record(AllocatedState& state, const DeviceId& id) {
  auto change = std::make_shared<HeldChange>();
  change->seq = NextHeldChangeSeq();
  change->pool_hash =
      PoolKeyHash{}(std::pair<std::string_view, std::string_view>(id.driver, id.pool));
  change->driver = id.driver;
  change->pool = id.pool;
  // A bounded chain: a reader that is further behind learns the pool again.
  if (++chain_length_ > kMaxChain) {
    chain_length_ = 1;
  } else {
    change->older = std::move(state.changes);
  }
  state.changes = std::move(change);
}

void AllocatedStateTracker::Add(const AllocationResult& allocation) {
  for (const DeviceRequestAllocationResult& r : allocation.results) {
    if (r.admin_access.value_or(false)) continue;  // as AddAllocation
    DeviceId id{r.driver, r.pool, r.device};
    if (!r.share_id) {
      if (exclusive_refs_[id]++ > 0) continue;
      AllocatedState& state = Mutable();
      state.by_pool[{id.driver, id.pool}].exclusive.push_back(id.device);
      Record(state, id);
      state.allocated.insert(std::move(id));
      continue;
    }
    AllocatedState& state = Mutable();
    if (shared_refs_[id]++ == 0) {
      state.by_pool[{id.driver, id.pool}].shared.push_back(id.device);
      Record(state, id);
    }
    state.allocated_shared.insert(SharedDeviceId{id, *r.share_id});
    CapacityAmounts& sum = state.consumed_capacity[id];
    for (const auto& [name, q] : r.consumed_capacity)
      sum[internal::QualifiedCapacityName(name, r.driver)] += q;
  }
}

void AllocatedStateTracker::Remove(const AllocationResult& allocation) {
  for (const DeviceRequestAllocationResult& r : allocation.results) {
    if (r.admin_access.value_or(false)) continue;
    DeviceId id{r.driver, r.pool, r.device};
    if (!r.share_id) {
      auto it = exclusive_refs_.find(id);
      if (it == exclusive_refs_.end() || --it->second > 0) continue;
      exclusive_refs_.erase(it);
      AllocatedState& state = Mutable();
      Unindex(state, id, &PoolHeld::exclusive);
      Record(state, id);
      state.allocated.erase(id);
      continue;
    }
    AllocatedState& state = Mutable();
    state.allocated_shared.erase(SharedDeviceId{id, *r.share_id});
    auto refs = shared_refs_.find(id);
    if (refs != shared_refs_.end() && --refs->second == 0) {
      shared_refs_.erase(refs);
      Unindex(state, id, &PoolHeld::shared);
      Record(state, id);
      state.consumed_capacity.erase(id);
      continue;
    }
    CapacityAmounts& sum = state.consumed_capacity[id];
    for (const auto& [name, q] : r.consumed_capacity)
      sum[internal::QualifiedCapacityName(name, r.driver)] -= q;
  }
}

}  // namespace berth::dra
