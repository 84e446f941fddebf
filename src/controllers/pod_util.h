// Pod predicates and the order in which a ReplicaSet's surplus pods are deleted, as upstream's
// controller.ActivePodsWithRanks with LogarithmicScaleDown (pkg/controller/controller_utils.go).
#pragma once

#include <string>
#include <vector>

#include "berth/framework/clock.h"
#include "controllers/object_util.h"

namespace berth::controllers {

// Not Succeeded, not Failed, not being deleted.
bool IsPodActive(const Json& pod);
bool IsPodReady(const Json& pod);
// The same read from an informer's typed pod (no document lookups: syncs of large sets call
// these for every pod).
bool IsPodActive(const Pod& pod);
bool IsPodReady(const Pod& pod);
// Ready for more than minReadySeconds (any ready pod when it is 0).
bool IsPodAvailable(const Json& pod, int64_t min_ready_seconds, UnixTime now);
// The lastTransitionTime of the pod's Ready condition; 0 when absent or invalid (the pod then
// never counts as available after a minReadySeconds).
UnixTime ReadySince(const Json& pod);

// What the deletion order reads of one pod.
struct PodRankFacts {
  std::string node_name;
  std::string phase;
  bool ready = false;
  UnixTime ready_since = 0;   // the Ready condition's lastTransitionTime (0: unknown)
  int64_t deletion_cost = 0;  // controller.kubernetes.io/pod-deletion-cost
  int rank = 0;               // active related pods on the same node
  int restarts = 0;           // the most restarts of one container
  UnixTime created = 0;
  std::string uid;
  const Json* pod = nullptr;
};

PodRankFacts RankFactsOf(const Json& pod);

// True when `a` should be deleted before `b`:
//  1. unassigned < assigned;  2. Pending < Unknown < Running;  3. not ready < ready;
//  4. lower pod-deletion-cost first;  5. more related pods on its node first;
//  6. ready for less time first;  7. more container restarts first;  8. newer first.
// Times in 6 and 8 compare by the base-2 logarithm of their age at `now` (pods of about the
// same age are equal there), and equal ages order by UID, a pseudo-random pick.
bool DeleteBefore(const PodRankFacts& a, const PodRankFacts& b, TimePoint now);

// The `count` pods of `pods` to delete first; `related` are the pods of the ReplicaSet and of
// its siblings under the same owner, whose placement decides each pod's rank.
std::vector<const Json*> PodsToDelete(const std::vector<const Json*>& pods,
                                      const std::vector<const Json*>& related, size_t count,
                                      TimePoint now);

}  // namespace berth::controllers
