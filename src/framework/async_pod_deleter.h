// Deletions that report when they are over, for asynchronous preemption (kube-scheduler's
// SchedulerAsyncPreemption): the cycle that chose the victims starts their deletions and goes
// on; the next step is chained on each answer instead of a thread waiting for it.
//
// Internal to Berth, not part of the plugin SDK: the cluster clients that queue their writes
// (ApiClusterClient) implement it beside ClusterWriter, found with a dynamic_cast, so the SDK's
// ClusterWriter keeps its layout.
#pragma once

#include <functional>

#include "berth/framework/cluster.h"

namespace berth {

class AsyncPodDeleter {
 public:
  virtual ~AsyncPodDeleter() = default;
  // Deletes a preemption victim as ClusterWriter::DeletePod does and calls `done` exactly once
  // when the deletion is over: null on success (kNotFound included), else the error. `done`
  // runs on the writer thread that finished the deletion, before the scheduler that asked is
  // destroyed.
  virtual void DeletePodThen(const Pod& pod, std::function<void(const Error*)> done) = 0;
};

// Deletes through `writer`'s AsyncPodDeleter when it has one; otherwise with
// ClusterWriter::DeletePod, calling `done` before returning (a synchronous writer).
void DeletePodThen(ClusterWriter& writer, const Pod& pod, std::function<void(const Error*)> done);

}  // namespace berth
