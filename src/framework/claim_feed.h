// DraClaimFeed: the ResourceClaim changes a cluster client's listers went through, in order, for
// plugins that keep state derived from every claim (DynamicResources' allocated devices) and
// would otherwise list every claim each scheduling cycle, as kube-scheduler's allocated-devices
// tracker is fed by the claim informer's events instead of listing.
//
//   const DraClaimFeed* feed = DraClaimFeedOf(handle.listers());   // null: no feed
//   ClaimChanges c = feed->ClaimChangesSince(cursor_);            // each cycle
//   if (c.resync) forget everything derived;                       // c.changes: every claim
//   for (const ClaimChange& ch : c.changes) apply ch;              // in the listers' order
//   cursor_ = c.cursor;
//
// Pull-based: the reader keeps its cursor, so a reader created later (a scheduler reload makes
// new plugins) starts with a resync and a reader that goes away needs no unsubscribing. Both
// cluster clients provide one: InMemoryCluster records its own writes, ApiClusterClient the
// claim informer's events (after its store has them, so the feed may trail the listers by the
// event being delivered, as an informer's handlers do).
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "berth/api/resource_claims.h"
#include "berth/framework/cluster.h"

namespace berth {

// One change of one claim: `old_claim` null for an add, `new_claim` null for a delete.
struct ClaimChange {
  Ptr<ResourceClaim> old_claim;
  Ptr<ResourceClaim> new_claim;
};

struct ClaimChanges {
  uint64_t cursor = 0;  // to pass to the next call
  // The changes since the cursor were not kept (or the cursor was 0): `changes` holds every
  // current claim as an add, and whatever was derived from earlier changes must be dropped.
  bool resync = false;
  std::vector<ClaimChange> changes;
};

class DraClaimFeed {
 public:
  virtual ~DraClaimFeed() = default;
  // The changes after `cursor`; 0 (nothing read yet) always resyncs. Thread-safe.
  virtual ClaimChanges ClaimChangesSince(uint64_t cursor) const = 0;
};

// The listers' claim feed, or null when they have none (listers of one's own).
const DraClaimFeed* DraClaimFeedOf(const ClusterListers& listers);

// How many times the listers' ResourceSlices changed (added, updated or deleted), for a plugin
// that keeps what it derived from every slice (DynamicResources' index of the slices by node)
// and would otherwise list the slices each cycle to find out whether any changed. As the claim
// feed, it may trail the listers by an event being delivered. Thread-safe.
class DraSliceGeneration {
 public:
  virtual ~DraSliceGeneration() = default;
  virtual uint64_t ResourceSliceGeneration() const = 0;
};

// The listers' slice generation, or null when they have none.
const DraSliceGeneration* DraSliceGenerationOf(const ClusterListers& listers);

// A feed's store, kept by a cluster client beside its claims: the current claims by
// "namespace/name" and the recent changes. The client calls Put/Erase for every change of its
// claim store, in the store's order. Thread-safe.
class ClaimChangeLog final : public DraClaimFeed {
 public:
  // The claim was added or replaced (matched by namespace and name).
  void Put(Ptr<ResourceClaim> claim);
  // The claim was deleted; nothing when it is not known.
  void Erase(std::string_view ns, std::string_view name);
  ClaimChanges ClaimChangesSince(uint64_t cursor) const override;
  // How many changes are kept (for tests of the bound).
  size_t kept() const;

 private:
  void AppendLocked(ClaimChange change);

  mutable std::mutex mu_;
  std::unordered_map<std::string, Ptr<ResourceClaim>> current_;
  std::deque<ClaimChange> journal_;
  uint64_t first_ = 1;  // the number of journal_.front(); changes are numbered from 1
  uint64_t next_ = 1;   // the number the next change gets
};

}  // namespace berth
