// The preemptions whose API calls are still under way (kube-scheduler's
// SchedulerAsyncPreemption, KEP-4832): the scheduling cycle that chose the victims returns at
// once, and their deletions go on as continuations of the writer's answers, with no thread
// waiting for them. While a preemptor's victims are being deleted, DefaultPreemption's
// PreEnqueue keeps the preemptor out of the active queue, so it is not tried (and does not
// preempt again) before the room it made exists.
//
// As upstream: all victims but the last are deleted at once; the last only after they are gone
// (and not at all if one of them failed). While the last one's deletion is under way, the
// preemption counts as over as soon as the victim has left the listers or carries a deletion
// timestamp: its deletion event may reach the queue before the writer's answer, and must let
// the preemptor through then, or the preemptor would wait in the pool for an event already
// spent.
//
// One table per scheduler, shared by its profiles and outliving them (DetachedServices): a
// configuration reload builds new DefaultPreemption instances while deletions asked for by the
// old ones are still under way, and the new instances must keep gating those preemptors.
//
// Threads: Start on the scheduling thread; the continuations on the writer's threads (or
// inside Start, for a synchronous writer); IsRunning from PreEnqueue on any thread feeding the
// queue. No lock is held while calling the writer or `on_failure`.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "berth/framework/cluster.h"
#include "berth/framework/node_info.h"

namespace berth::preemption {

class PreemptionsInFlight : public std::enable_shared_from_this<PreemptionsInFlight> {
 public:
  // `listers` must outlive the object (the cluster client outlives the scheduler).
  explicit PreemptionsInFlight(const ClusterListers* listers) : listers_(listers) {}

  // The key of a pod in the table: its UID, or namespace/name without one.
  static std::string KeyOf(const Pod& pod);

  // Starts deleting `victims` (non-empty) for `preemptor` through `writer`. `on_failure` runs
  // once, after the preemptor has left the table, if a deletion failed.
  void Start(ClusterWriter& writer, const Pod& preemptor, std::vector<PodInfoPtr> victims,
             std::function<void(const Error&)> on_failure);

  // True while `preemptor_key`'s victims are being deleted (see the file comment).
  bool IsRunning(const std::string& preemptor_key) const;

  size_t size() const;

 private:
  struct Running {
    // Set once only the last victim's deletion is left: (namespace, name).
    std::optional<std::pair<std::string, std::string>> last_victim;
  };
  void DeleteLast(ClusterWriter& writer, const std::string& key, const PodInfoPtr& last,
                  std::shared_ptr<std::function<void(const Error&)>> on_failure);
  void Finish(const std::string& key);

  const ClusterListers* listers_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Running> running_;
};

}  // namespace berth::preemption
