// AssumedClaims: the claims this scheduler allocated before the cluster's listers show it, as
// kube-scheduler's assume cache and in-flight allocations do. Between Reserve and PreBind's
// write a claim's allocation exists only here (in flight); after the write, the stored claim
// stays here until the listers catch up with its resourceVersion, so parallel and following
// cycles never hand the same devices out twice. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "berth/api/resource_claims.h"
#include "berth/framework/cluster_event.h"

namespace berth::dynamicresources {

class AssumedClaims {
 public:
  // Reserve: `claim` (with its new status.allocation) is being allocated by a cycle.
  void AssumeInFlight(Ptr<ResourceClaim> claim);
  // Unreserve: the allocation of the claim with this uid is dropped.
  void Forget(const std::string& uid);
  // PreBind wrote the claim: `stored` is what the API returned; kept until the listers show it.
  void Written(Ptr<ResourceClaim> stored);
  // PreBind created the claim and wrote it: as Written, and kept (holding its devices) while the
  // listers do not show it yet.
  void Created(Ptr<ResourceClaim> stored);
  // Whether an allocation of this claim is in flight (between Reserve and the end of PreBind).
  bool InFlight(const std::string& uid) const;
  // The claim as this scheduler wrote it when the listers' copy is older (allocations still in
  // flight are not applied: InFlight() tells).
  Ptr<ResourceClaim> Resolve(const Ptr<ResourceClaim>& listed) const;
  // `listed` (the listers' claims) with the assumed versions in place of older ones and the
  // claims in flight the listers do not show; forgets what the listers have caught up with.
  std::vector<Ptr<ResourceClaim>> Merge(std::vector<Ptr<ResourceClaim>> listed) const;
  // Merge for one claim: what holds devices under `uid` when the listers show `listed` (null:
  // not listed), i.e. the assumed version while it is newer or in flight; forgets what the
  // listers have caught up with, as Merge does.
  Ptr<ResourceClaim> Overlay(const std::string& uid, const Ptr<ResourceClaim>& listed) const;
  // The uids of the claims assumed now.
  std::vector<std::string> Uids() const;
  size_t size() const;

 private:
  struct Entry {
    Ptr<ResourceClaim> claim;
    bool in_flight = false;
    bool created = false;  // by this scheduler: not listed yet is no sign of deletion
  };
  // Whether the listers' `listed` is at least as new as the assumed `assumed`.
  static bool CaughtUp(const ResourceClaim& listed, const Entry& assumed);

  mutable std::mutex mu_;
  mutable std::map<std::string, Entry> by_uid_;  // Merge prunes it
};

}  // namespace berth::dynamicresources
