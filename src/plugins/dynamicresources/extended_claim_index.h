// The extended resource claims (those DynamicResources makes for a pod's class-backed extended
// resources) by the uid of the pod that owns them, kept from the listers' claim feed, so that
// PreFilter finds a pod's claim from an earlier cycle without listing every claim: in a cluster
// where every running pod has one, that list is as long as the cluster.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "berth/framework/dra.h"
#include "framework/claim_feed.h"

namespace berth::dynamicresources {

class ExtendedClaimIndex {
 public:
  // The pod's extended resource claim in the listers (`matches` decides which claim is the
  // pod's), or null. Reads the feed's changes first; without a feed, lists every claim.
  // Thread-safe.
  template <class Matches>
  Ptr<ResourceClaim> Find(const Pod& pod, const DraListers& listers, const DraClaimFeed* feed,
                          Matches matches) {
    std::lock_guard lock(mu_);
    if (!feed) {
      for (const Ptr<ResourceClaim>& c : listers.ListResourceClaims())
        if (matches(*c)) return c;
      return nullptr;
    }
    SyncLocked(*feed);
    auto [first, last] = by_owner_.equal_range(pod.metadata.uid);
    for (auto it = first; it != last; ++it)
      if (matches(*it->second)) return it->second;
    return nullptr;
  }

 private:
  void SyncLocked(const DraClaimFeed& feed);

  std::mutex mu_;
  uint64_t cursor_ = 0;
  // Claims with a controller owner, by the owner's uid (the claims of other owners too: which
  // are extended resource claims is the caller's test).
  std::unordered_multimap<std::string, Ptr<ResourceClaim>> by_owner_;
};

}  // namespace berth::dynamicresources
