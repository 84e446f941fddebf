#include "plugins/dynamicresources/in_use_devices.h"

#include <utility>

namespace berth::dynamicresources {
namespace {

// AssumedClaims knows claims by uid; a claim without one (never from an API server) by name.
std::string KeyOf(const ResourceClaim& claim) {
  if (!claim.metadata.uid.empty()) return claim.metadata.uid;
  return claim.metadata.namespace_ + "/" + claim.metadata.name;
}

}  // namespace

void InUseDevices::ReadFeedLocked(const DraClaimFeed& feed, std::vector<std::string>& changed) {
  ClaimChanges c = feed.ClaimChangesSince(cursor_);
  cursor_ = c.cursor;
  if (c.resync) {
    // Every claim known is looked at again; those the resync lists again as the same objects
    // cost nothing in the tracker.
    for (auto& [key, claim] : listed_) changed.push_back(key);
    listed_.clear();
  }
  for (ClaimChange& change : c.changes) {
    if (change.old_claim) {
      std::string key = KeyOf(*change.old_claim);
      listed_.erase(key);
      changed.push_back(std::move(key));
    }
    if (change.new_claim) {
      std::string key = KeyOf(*change.new_claim);
      listed_[key] = std::move(change.new_claim);
      changed.push_back(std::move(key));
    }
  }
}

void InUseDevices::ReadListLocked(const DraListers& listers, std::vector<std::string>& changed) {
  std::unordered_map<std::string, Ptr<ResourceClaim>> now;
  for (Ptr<ResourceClaim>& claim : listers.ListResourceClaims()) {
    std::string key = KeyOf(*claim);
    now[std::move(key)] = std::move(claim);
  }
  for (const auto& [key, claim] : listed_) {
    auto it = now.find(key);
    if (it == now.end() || it->second != claim) changed.push_back(key);
  }
  for (const auto& [key, claim] : now)
    if (!listed_.count(key)) changed.push_back(key);
  listed_ = std::move(now);
}

std::shared_ptr<const dra::AllocatedState> InUseDevices::Sync(const DraListers& listers,
                                                              const DraClaimFeed* feed) {
  std::lock_guard lock(mu_);
  std::vector<std::string> keys;
  if (feed) {
    ReadFeedLocked(*feed, keys);
  } else {
    ReadListLocked(listers, keys);
  }
  // The assumed claims may have changed without a listed change (Reserve, Unreserve, a write),
  // and those assumed last time may be forgotten now.
  for (std::string& uid : assumed_->Uids()) keys.push_back(std::move(uid));
  keys.insert(keys.end(), overlaid_.begin(), overlaid_.end());
  last_visited_ = keys.size();
  for (const std::string& key : keys) {
    auto it = listed_.find(key);
    const Ptr<ResourceClaim> listed = it == listed_.end() ? nullptr : it->second;
    Ptr<ResourceClaim> in_use = assumed_->Overlay(key, listed);
    if (in_use != listed) {
      overlaid_.insert(key);
    } else {
      overlaid_.erase(key);
    }
    tracker_.Set(key, std::move(in_use));
  }
  return tracker_.State();
}

size_t InUseDevices::last_visited() const {
  std::lock_guard lock(mu_);
  return last_visited_;
}

}  // namespace berth::dynamicresources
