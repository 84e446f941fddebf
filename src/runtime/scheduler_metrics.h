// What the scheduler reports for kube-scheduler's framework, plugin and queue metrics
// (scheduler_framework_extension_point_duration_seconds,
// scheduler_plugin_execution_duration_seconds, scheduler_plugin_evaluation_total,
// scheduler_permit_wait_duration_seconds, scheduler_queue_incoming_pods_total,
// scheduler_event_handling_duration_seconds, scheduler_queueing_hint_execution_duration_seconds).
// Implemented on Prometheus families by PrometheusSchedulerMetrics
// (scheduler/prometheus_metrics.h); absent in simulation and benchmarks unless asked for.
//
// Called from the scheduling thread (the scheduling cycle's points), Filter/Score workers
// (plugin series), binding threads (WaitOnPermit, PreBind, Bind, PostBind, Unreserve after a
// failed binding) and event threads (event handling, queueing hints, pods entering queues, with
// the queue locked): implementations must be thread-safe, cheap and must not call back into the
// scheduler.
#pragma once

#include <cstdint>
#include <string_view>

#include "berth/framework/clock.h"
#include "berth/framework/status.h"

namespace berth {

// As kube-scheduler, per-plugin durations are taken in a sample of scheduling cycles only
// (pluginMetricsSamplePercent): timing every plugin call would cost more than the calls.
inline constexpr int kPluginMetricsSamplePercent = 10;
// Filter and Score run once per node: within a sampled cycle, their plugins are timed on every
// kPerNodeTimingStride-th node examined, an even sample of the per-call distribution at a
// fraction of the clock reads (upstream times every node of a sampled cycle).
inline constexpr int kPerNodeTimingStride = 16;

// One plugin at one extension point of one profile: its series, resolved once when the profile
// is built (as kube-scheduler caches them), so the hot path does no label lookups.
class PluginSeries {
 public:
  virtual ~PluginSeries() = default;
  // scheduler_plugin_execution_duration_seconds{plugin, extension_point, status}.
  virtual void Executed(Code code, Duration duration) = 0;
  // scheduler_plugin_evaluation_total{plugin, extension_point, profile} += n (PreFilter,
  // Filter, PreScore and Score only; every evaluation counts, sampled or not).
  virtual void Evaluated(uint64_t n) = 0;
};

class SchedulerMetricsSink {
 public:
  virtual ~SchedulerMetricsSink() = default;
  // One run of an extension point's plugins ("PreFilter", "PostFilter", "PreScore", "Score",
  // "Reserve", "Unreserve", "Permit", "PreBind", "Bind", "PostBind") for a pod of `profile`.
  virtual void ExtensionPoint(std::string_view profile, std::string_view point,
                              const Status& status, Duration duration) = 0;
  // A pod entered `queue` because of `event` (see SchedulingQueue::IncomingPodHook).
  virtual void IncomingPod(std::string_view queue, std::string_view event) = 0;

  // The series of `plugin` at `point` ("PreFilter", "Filter", "ScoreExtensionNormalize", ...)
  // in `profile`; owned by the sink, alive as long as it. Called when a profile is built. Null:
  // the plugin is not measured.
  virtual PluginSeries* Plugin(std::string_view /*profile*/, std::string_view /*point*/,
                               std::string_view /*plugin*/) {
    return nullptr;
  }
  // A pod waited at Permit for `duration` and then was allowed ("Success") or rejected
  // ("Unschedulable", ...): scheduler_permit_wait_duration_seconds{result}.
  virtual void PermitWait(std::string_view /*result*/, Duration /*duration*/) {}
  // The scheduler handled one informer event ("UnscheduledPodAdd", "AssignedPodUpdate",
  // "NodeAdd", "PersistentVolumeClaimAdd", ...): scheduler_event_handling_duration_seconds.
  virtual void EventHandling(std::string_view /*event*/, Duration /*duration*/) {}
  // One queueing hint call: hint is "Queue", "QueueSkip" or "Error".
  virtual void QueueingHint(std::string_view /*plugin*/, std::string_view /*event*/,
                            std::string_view /*hint*/, Duration /*duration*/) {}
  // Opportunistic batching: a pod of `profile` was offered no hint ("no_hint"), or a placed
  // pod took the hint ("hint_used") or not ("hint_not_used"):
  // scheduler_batch_attempts_total{profile,result}.
  virtual void BatchAttempt(std::string_view /*profile*/, std::string_view /*result*/) {}
  // A kept ranking of `profile` was dropped, and why ("pod_skipped", "expired", ...):
  // scheduler_batch_cache_flushed_total{profile,reason}.
  virtual void BatchFlush(std::string_view /*profile*/, std::string_view /*reason*/) {}
};

}  // namespace berth
