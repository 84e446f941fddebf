// PodCensus: the active pods (not Succeeded, not Failed, not being deleted) of each controller
// and namespace, counted by label set, kept in step with the pod informer by its handlers.
//
// A ReplicaSet sync needs how many of its pods match its selector and its template's labels
// and how many are ready. Pods of one ReplicaSet almost always share one label set (the
// template's), so these counts answer that with a few selector matches instead of a walk
// over every pod; a sync that must pick pods (to adopt, release or delete) still walks them.
//
// Exactness: the counts are a pure function of the stored pods. Every change of the informer's
// store reaches the handlers as an add, an update (with the object that was stored) or a
// delete, including the differences a relist delivers, so adding a pod's share on add,
// moving it on update and taking it back on delete keeps the counts equal to a recount.
//
// Threads: the handlers run on the informer's thread; reads may come from any thread.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "controllers/object_util.h"
#include "controllers/shared_informer.h"

namespace berth::controllers {

class PodCensus {
 public:
  struct Group {
    Labels labels;
    int64_t active = 0;  // active pods with these labels
    int64_t ready = 0;   // ... of which Ready
    // The ready ones by their Ready condition's lastTransitionTime (0: absent or invalid).
    std::map<UnixTime, int64_t> ready_since;
    // The ready pods Ready for more than `min_ready_seconds` at `now` (IsPodAvailable).
    int64_t Available(int64_t min_ready_seconds, UnixTime now) const;
    friend bool operator==(const Group&, const Group&) = default;
  };

  PodCensus() = default;
  PodCensus(const PodCensus&) = delete;
  PodCensus& operator=(const PodCensus&) = delete;

  // Registers the handlers that keep the counts (before the informer starts; before any
  // handler that reads the counts, so those see each event counted).
  void Watch(SharedInformer* pods);

  // What the handlers do.
  void Add(const Object& obj);
  void Update(const Object& old_obj, const Object& new_obj);
  void Delete(const Object& obj);

  // The label groups of the active pods of namespace `ns` whose controller ownerReference has
  // `controller_uid` ("" : the pods without a controller), in label order.
  std::vector<Group> Groups(const std::string& controller_uid, const std::string& ns) const;

  // The same groups, counted from scratch from `pods` (what the counts must equal).
  static std::vector<Group> Recount(const std::vector<Object>& pods,
                                    const std::string& controller_uid, const std::string& ns);

 private:
  struct Counts {
    int64_t active = 0, ready = 0;
    std::map<UnixTime, int64_t> ready_since;
  };
  // A pod's share: +1 active (and ready, at its Ready time) in its owner's group of its
  // labels; none when it is not an active pod.
  void Apply(const Object& obj, int sign);

  mutable std::mutex mu_;
  // "<controller uid>/<namespace>" -> labels -> counts (no empty entries).
  std::unordered_map<std::string, std::map<Labels, Counts>> owners_;
};

}  // namespace berth::controllers
