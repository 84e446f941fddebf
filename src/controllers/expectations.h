// Expectations: what a controller is waiting to see from its own writes, as upstream's
// UIDTrackingControllerExpectations (pkg/controller/controller_utils.go). After creating N pods
// for a ReplicaSet the controller expects N additions; it does not manage that ReplicaSet's
// replicas again until the informer has shown them all (or five minutes have passed), so pods
// in flight are never created twice. Deletions are tracked by pod key, so a pod seen first with
// a deletionTimestamp and then deleted counts once.
//
// Nothing is stored: after a restart no key has expectations, which are satisfied, and the
// first sync counts from the informers' caches, which have synced before any worker starts.
//
// Threads: every method is thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "berth/framework/clock.h"

namespace berth::controllers {

class Expectations {
 public:
  explicit Expectations(const Clock* clock) : clock_(clock) {}

  // True when the controller may act on `key`: nothing expected, everything expected seen,
  // or the expectations older than the TTL (a lost watch event must not block it forever).
  bool Satisfied(const std::string& key) const;
  void ExpectCreations(const std::string& key, int adds);
  void ExpectDeletions(const std::string& key, const std::vector<std::string>& pod_keys);
  void CreationObserved(const std::string& key);
  // Counts the deletion of `pod_key` if it was expected (once).
  void DeletionObserved(const std::string& key, const std::string& pod_key);
  void Delete(const std::string& key);
  // Pending adds and deletes (tests, logs).
  std::pair<int, int> Pending(const std::string& key) const;

  static constexpr Duration kTtl = std::chrono::minutes(5);

 private:
  struct Entry {
    int adds = 0, dels = 0;
    TimePoint timestamp;
    std::set<std::string> deleting;
  };
  const Clock* clock_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;
};

}  // namespace berth::controllers
