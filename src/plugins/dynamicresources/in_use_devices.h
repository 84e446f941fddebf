// InUseDevices: the devices every claim in use holds — the cluster's claims with this
// scheduler's assumed claims (AssumedClaims) over them — kept across scheduling cycles from the
// listers' claim change feed (framework/claim_feed.h), as kube-scheduler's allocated-devices
// tracker follows the claim informer. A cycle pays for the claims that changed since the
// previous one and for the few claims assumed, not for every claim of the cluster.
//
//   InUseDevices in_use(assumed);                       // one per plugin
//   auto state = in_use.Sync(listers, DraClaimFeedOf(cluster_listers));   // each PreFilter
//
// Listers without a feed are listed each cycle and compared with the previous list. Thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "berth/api/resource_claims.h"
#include "berth/framework/dra.h"
#include "dra/allocated_tracker.h"
#include "dra/allocator.h"
#include "framework/claim_feed.h"
#include "plugins/dynamicresources/assumed_claims.h"

namespace berth::dynamicresources {

class InUseDevices {
 public:
  explicit InUseDevices(const AssumedClaims& assumed) : assumed_(&assumed) {}

  // The state a cycle allocates against: never changed once handed out.
  std::shared_ptr<const dra::AllocatedState> Sync(const DraListers& listers,
                                                  const DraClaimFeed* feed);
  // How many claims hold devices (for tests).
  size_t holding() const { return tracker_.size(); }
  // How many claims the last Sync looked at (for tests: changed and assumed ones only).
  size_t last_visited() const;

 private:
  // The claims that changed since the previous Sync, by key; updates listed_.
  void ReadFeedLocked(const DraClaimFeed& feed, std::vector<std::string>& changed);
  void ReadListLocked(const DraListers& listers, std::vector<std::string>& changed);

  const AssumedClaims* assumed_;
  mutable std::mutex mu_;
  uint64_t cursor_ = 0;
  // The listers' claims by key (uid), as the feed (or the last list) shows them.
  std::unordered_map<std::string, Ptr<ResourceClaim>> listed_;
  // Keys whose assumed version was used last time: looked at again when it is forgotten.
  std::unordered_set<std::string> overlaid_;
  size_t last_visited_ = 0;
  dra::AllocatedStateTracker tracker_;
};

}  // namespace berth::dynamicresources
