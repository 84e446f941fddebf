// What the scheduler reports for kube-scheduler's framework and queue metrics
// (scheduler_framework_extension_point_duration_seconds, scheduler_queue_incoming_pods_total).
// Implemented by the daemon on Prometheus families; absent in simulation and benchmarks.
//
// Called from the scheduling thread (the scheduling cycle's points), binding threads (PreBind,
// Bind, PostBind, Unreserve after a failed binding) and event threads (pods entering queues,
// with the queue locked): implementations must be thread-safe, cheap and must not call back
// into the scheduler.
#pragma once

#include <string_view>

#include "berth/framework/clock.h"
#include "berth/framework/status.h"

namespace berth {

class SchedulerMetricsSink {
 public:
  virtual ~SchedulerMetricsSink() = default;
  // One run of an extension point's plugins ("PreFilter", "PostFilter", "PreScore", "Score",
  // "Reserve", "Unreserve", "Permit", "PreBind", "Bind", "PostBind") for a pod of `profile`.
  virtual void ExtensionPoint(std::string_view profile, std::string_view point,
                              const Status& status, Duration duration) = 0;
  // A pod entered `queue` because of `event` (see SchedulingQueue::IncomingPodHook).
  virtual void IncomingPod(std::string_view queue, std::string_view event) = 0;
};

}  // namespace berth
