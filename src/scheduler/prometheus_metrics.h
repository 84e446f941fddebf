// The scheduler's metrics with kube-scheduler's names, labels, types and buckets (so existing
// dashboards and alerts work), and the SchedulerMetricsSink that fills them. The daemon exposes
// `registry` on /metrics; `berth bench --metrics` attaches the sink to measure its cost.
//
// Threads: as SchedulerMetricsSink (every method thread-safe); the families may be updated
// directly from any thread (the daemon's attempt observer and /metrics handler do).
#pragma once

#include <array>
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "observe/metrics.h"
#include "runtime/scheduler_metrics.h"

namespace berth {

struct SchedulerMetricFamilies {
  observe::MetricsRegistry registry;
  observe::MetricFamily* attempts;
  observe::MetricFamily* attempt_duration;
  observe::MetricFamily* algorithm_duration;
  observe::MetricFamily* event_handling_duration;
  observe::MetricFamily* pending;
  observe::MetricFamily* sli_duration;
  observe::MetricFamily* pod_attempts;
  observe::MetricFamily* preemption_attempts;
  observe::MetricFamily* preemption_victims;
  observe::MetricFamily* cache_size;
  observe::MetricFamily* goroutines;
  observe::MetricFamily* extension_point_duration;
  observe::MetricFamily* plugin_execution_duration;
  observe::MetricFamily* queueing_hint_duration;
  observe::MetricFamily* incoming_pods;
  observe::MetricFamily* permit_wait_duration;
  observe::MetricFamily* unschedulable_pods;
  observe::MetricFamily* plugin_evaluations;
  observe::MetricFamily* batch_attempts;
  observe::MetricFamily* batch_flushes;
  observe::MetricFamily* leader;

  SchedulerMetricFamilies();
};

class PrometheusSchedulerMetrics final : public SchedulerMetricsSink {
 public:
  PrometheusSchedulerMetrics();
  ~PrometheusSchedulerMetrics() override;

  SchedulerMetricFamilies& families() { return families_; }
  std::string Expose() const { return families_.registry.Expose(); }

  void ExtensionPoint(std::string_view profile, std::string_view point, const Status& status,
                      Duration duration) override;
  void IncomingPod(std::string_view queue, std::string_view event) override;
  PluginSeries* Plugin(std::string_view profile, std::string_view point,
                       std::string_view plugin) override;
  void PermitWait(std::string_view result, Duration duration) override;
  void EventHandling(std::string_view event, Duration duration) override;
  void QueueingHint(std::string_view plugin, std::string_view event, std::string_view hint,
                    Duration duration) override;
  void BatchAttempt(std::string_view profile, std::string_view result) override;
  void BatchFlush(std::string_view profile, std::string_view reason) override;

 private:
  class Series;
  SchedulerMetricFamilies families_;
  std::mutex mu_;
  std::deque<std::unique_ptr<Series>> plugin_series_;  // handed out by Plugin(); never freed
};

}  // namespace berth
