#include "scheduler/prometheus_metrics.h"

#include <array>
#include <atomic>
#include <chrono>

namespace berth {
namespace {

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

// Plugin latency is small and sensitive: 0.01 ms to ~22 ms in steps of 1.5.
std::vector<double> PluginBuckets() { return observe::ExponentialBuckets(0.00001, 1.5, 20); }

bool CountsEvaluations(std::string_view point) {
  return point == "PreFilter" || point == "Filter" || point == "PreScore" || point == "Score";
}

constexpr size_t kCodeCount = static_cast<size_t>(Code::kPending) + 1;

}  // namespace

SchedulerMetricFamilies::SchedulerMetricFamilies() {
  using observe::ExponentialBuckets;
  attempts = registry.Counter(
      "scheduler_schedule_attempts_total",
      "[STABLE] Number of attempts to schedule pods, by the result. 'unschedulable' means a pod "
      "could not be scheduled, while 'error' means an internal scheduler problem.",
      {"result", "profile"});
  event_handling_duration = registry.Histogram("scheduler_event_handling_duration_seconds",
                                               "[ALPHA] Event handling latency in seconds.",
                                               {"event"}, ExponentialBuckets(0.0001, 2, 12));
  attempt_duration = registry.Histogram(
      "scheduler_scheduling_attempt_duration_seconds",
      "[STABLE] Scheduling attempt latency in seconds (scheduling algorithm + binding)",
      {"result", "profile"}, ExponentialBuckets(0.001, 2, 15));
  algorithm_duration = registry.Histogram("scheduler_scheduling_algorithm_duration_seconds",
                                          "[ALPHA] Scheduling algorithm latency in seconds", {},
                                          ExponentialBuckets(0.001, 2, 15));
  pending = registry.Gauge(
      "scheduler_pending_pods",
      "[STABLE] Number of pending pods, by the queue type. 'active' means number of pods in "
      "activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods "
      "in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the "
      "number of unschedulable pods that the scheduler never attempted to schedule because they "
      "are gated.",
      {"queue"});
  sli_duration = registry.Histogram(
      "scheduler_pod_scheduling_sli_duration_seconds",
      "[BETA] E2e latency for a pod being scheduled, from the time the pod enters the scheduling "
      "queue and might involve multiple scheduling attempts.",
      {"attempts"}, ExponentialBuckets(0.01, 2, 20));
  pod_attempts = registry.Histogram("scheduler_pod_scheduling_attempts",
                                    "[STABLE] Number of attempts to successfully schedule a pod.",
                                    {}, ExponentialBuckets(1, 2, 5));
  preemption_attempts =
      registry.Counter("scheduler_preemption_attempts_total",
                       "[STABLE] Total preemption attempts in the cluster till now");
  preemption_victims = registry.Histogram("scheduler_preemption_victims",
                                          "[STABLE] Number of selected preemption victims", {},
                                          ExponentialBuckets(1, 2, 7));
  cache_size = registry.Gauge(
      "scheduler_cache_size",
      "[ALPHA] Number of nodes, pods, and assumed (bound) pods in the scheduler cache.", {"type"});
  goroutines = registry.Gauge(
      "scheduler_goroutines",
      "[ALPHA] Number of running goroutines split by the work they do such as binding.",
      {"operation"});
  extension_point_duration = registry.Histogram(
      "scheduler_framework_extension_point_duration_seconds",
      "[STABLE] Latency for running all plugins of a specific extension point.",
      {"extension_point", "status", "profile"}, ExponentialBuckets(0.0001, 2, 12));
  plugin_execution_duration =
      registry.Histogram("scheduler_plugin_execution_duration_seconds",
                         "[ALPHA] Duration for running a plugin at a specific extension point.",
                         {"plugin", "extension_point", "status"}, PluginBuckets());
  queueing_hint_duration =
      registry.Histogram("scheduler_queueing_hint_execution_duration_seconds",
                         "[ALPHA] Duration for running a queueing hint function of a plugin.",
                         {"plugin", "event", "hint"}, PluginBuckets());
  incoming_pods = registry.Counter(
      "scheduler_queue_incoming_pods_total",
      "[STABLE] Number of pods added to scheduling queues by event and queue type.",
      {"queue", "event"});
  permit_wait_duration = registry.Histogram("scheduler_permit_wait_duration_seconds",
                                            "[ALPHA] Duration of waiting on permit.", {"result"},
                                            ExponentialBuckets(0.001, 2, 15));
  unschedulable_pods = registry.Gauge(
      "scheduler_unschedulable_pods",
      "[ALPHA] The number of unschedulable pods broken down by plugin name. A pod will increment "
      "the gauge for all plugins that caused it to not schedule and so this metric have meaning "
      "only when broken down by plugin.",
      {"plugin", "profile"});
  plugin_evaluations = registry.Counter(
      "scheduler_plugin_evaluation_total",
      "[ALPHA] Number of attempts to schedule pods by each plugin and the extension point "
      "(available only in PreFilter, Filter, PreScore, and Score).",
      {"plugin", "extension_point", "profile"});
  batch_attempts = registry.Counter(
      "scheduler_batch_attempts_total",
      "[ALPHA] Opportunistic batching, by profile: pods offered no hint (no_hint), and placed "
      "pods that took the hint (hint_used) or were placed elsewhere (hint_not_used).",
      {"profile", "result"});
  batch_flushes = registry.Counter(
      "scheduler_batch_cache_flushed_total",
      "[ALPHA] Rankings kept for opportunistic batching that were dropped, by profile and reason.",
      {"profile", "reason"});
  leader = registry.Gauge(
      "leader_election_master_status",
      "[ALPHA] Gauge of if the reporting system is master of the relevant lease, 0 indicates "
      "backup, 1 indicates master. 'name' is the string used to identify the lease. Please make "
      "sure to group by name.",
      {"name"});
}

// One plugin's series. The evaluation counter exists from the start (exposed at 0, as upstream's
// cached children); a duration series per status code appears with its first observation.
class PrometheusSchedulerMetrics::Series final : public PluginSeries {
 public:
  Series(SchedulerMetricFamilies* families, std::string_view profile, std::string_view point,
         std::string_view plugin)
      : families_(families), point_(point), plugin_(plugin) {
    if (CountsEvaluations(point))
      evaluations_ = families->plugin_evaluations->Child(
          {std::string(plugin), std::string(point), std::string(profile)});
  }
  void Executed(Code code, Duration duration) override {
    const size_t c = static_cast<size_t>(code);
    if (c >= kCodeCount) return;
    observe::MetricFamily::Series* s = durations_[c].load(std::memory_order_acquire);
    if (!s) {
      // Two threads may resolve it at once: Child() returns the same series to both.
      s = families_->plugin_execution_duration->Child(
          {plugin_, point_, std::string(CodeName(code))});
      durations_[c].store(s, std::memory_order_release);
    }
    families_->plugin_execution_duration->ObserveOn(s, Seconds(duration));
  }
  void Evaluated(uint64_t n) override {
    if (evaluations_ && n > 0)
      families_->plugin_evaluations->AddTo(evaluations_, static_cast<double>(n));
  }

 private:
  SchedulerMetricFamilies* families_;
  std::string point_, plugin_;
  observe::MetricFamily::Series* evaluations_ = nullptr;
  std::array<std::atomic<observe::MetricFamily::Series*>, kCodeCount> durations_{};
};

PrometheusSchedulerMetrics::PrometheusSchedulerMetrics() = default;
PrometheusSchedulerMetrics::~PrometheusSchedulerMetrics() = default;

void PrometheusSchedulerMetrics::ExtensionPoint(std::string_view profile, std::string_view point,
                                                const Status& status, Duration duration) {
  families_.extension_point_duration->Observe({point, CodeName(status.code()), profile},
                                              Seconds(duration));
}

void PrometheusSchedulerMetrics::IncomingPod(std::string_view queue, std::string_view event) {
  families_.incoming_pods->Add({queue, event});
}

void PrometheusSchedulerMetrics::BatchAttempt(std::string_view profile, std::string_view result) {
  families_.batch_attempts->Add({profile, result});
}

void PrometheusSchedulerMetrics::BatchFlush(std::string_view profile, std::string_view reason) {
  families_.batch_flushes->Add({profile, reason});
}

PluginSeries* PrometheusSchedulerMetrics::Plugin(std::string_view profile, std::string_view point,
                                                 std::string_view plugin) {
  auto series = std::make_unique<Series>(&families_, profile, point, plugin);
  std::lock_guard lock(mu_);
  plugin_series_.push_back(std::move(series));
  return plugin_series_.back().get();
}

void PrometheusSchedulerMetrics::PermitWait(std::string_view result, Duration duration) {
  families_.permit_wait_duration->Observe({result}, Seconds(duration));
}

void PrometheusSchedulerMetrics::EventHandling(std::string_view event, Duration duration) {
  families_.event_handling_duration->Observe({event}, Seconds(duration));
}

void PrometheusSchedulerMetrics::QueueingHint(std::string_view plugin, std::string_view event,
                                              std::string_view hint, Duration duration) {
  families_.queueing_hint_duration->Observe({plugin, event, hint}, Seconds(duration));
}

}  // namespace berth
