#include <gtest/gtest.h>

#include "observe/log.h"
#include "observe/metrics.h"

namespace berth::observe {
namespace {

TEST(MetricsTest, TextExpositionOfCountersGaugesAndHistograms) {
  MetricsRegistry r;
  auto* c = r.Counter("scheduler_schedule_attempts_total", "attempts", {"result", "profile"});
  auto* h = r.Histogram("scheduler_pod_scheduling_attempts", "attempts per pod", {},
                        ExponentialBuckets(1, 2, 3));
  auto* g = r.Gauge("scheduler_pending_pods", "pending", {"queue"});
  c->Add({"scheduled", "default-scheduler"});
  c->Add({"scheduled", "default-scheduler"});
  h->Observe({}, 1);
  h->Observe({}, 3);
  h->Observe({}, 9);
  g->Set({"active"}, 4);
  std::string text = r.Expose();
  EXPECT_NE(text.find("# TYPE scheduler_schedule_attempts_total counter\n"), std::string::npos);
  EXPECT_NE(text.find("scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"default-"
                      "scheduler\"} 2\n"),
            std::string::npos);
  // Buckets are cumulative; 9 falls only into +Inf.
  EXPECT_NE(text.find("scheduler_pod_scheduling_attempts_bucket{le=\"1\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("scheduler_pod_scheduling_attempts_bucket{le=\"2\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("scheduler_pod_scheduling_attempts_bucket{le=\"4\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("scheduler_pod_scheduling_attempts_bucket{le=\"+Inf\"} 3\n"),
            std::string::npos);
  EXPECT_NE(text.find("scheduler_pod_scheduling_attempts_sum 13\n"), std::string::npos);
  EXPECT_NE(text.find("scheduler_pending_pods{queue=\"active\"} 4\n"), std::string::npos);
  EXPECT_EQ(ExponentialBuckets(0.001, 2, 15).back(), 0.001 * 16384);
}

TEST(MetricsTest, CachedChildrenUpdateTheSameSeriesAsLabelValues) {
  MetricsRegistry r;
  auto* c = r.Counter("scheduler_plugin_evaluation_total", "evaluations",
                      {"plugin", "extension_point", "profile"});
  auto* h = r.Histogram("scheduler_plugin_execution_duration_seconds", "duration",
                        {"plugin", "extension_point", "status"}, ExponentialBuckets(1, 2, 2));
  MetricFamily::Series* fit = c->Child({"NodeResourcesFit", "Filter", "default-scheduler"});
  // A resolved child is exposed at zero before its first update (as a cached child upstream).
  EXPECT_NE(r.Expose().find("scheduler_plugin_evaluation_total{plugin=\"NodeResourcesFit\","
                            "extension_point=\"Filter\",profile=\"default-scheduler\"} 0\n"),
            std::string::npos);
  c->AddTo(fit, 5);
  c->Add({"NodeResourcesFit", "Filter", "default-scheduler"});
  EXPECT_EQ(c->Child({"NodeResourcesFit", "Filter", "default-scheduler"}), fit);
  MetricFamily::Series* ok = h->Child({"TaintToleration", "Filter", "Success"});
  h->ObserveOn(ok, 1.5);
  h->Observe({"TaintToleration", "Filter", "Success"}, 0.5);
  const std::string text = r.Expose();
  EXPECT_NE(text.find("extension_point=\"Filter\",profile=\"default-scheduler\"} 6\n"),
            std::string::npos);
  EXPECT_NE(
      text.find("scheduler_plugin_execution_duration_seconds_bucket{plugin=\"TaintToleration\","
                "extension_point=\"Filter\",status=\"Success\",le=\"1\"} 1\n"),
      std::string::npos);
  EXPECT_NE(
      text.find("scheduler_plugin_execution_duration_seconds_count{plugin=\"TaintToleration\","
                "extension_point=\"Filter\",status=\"Success\"} 2\n"),
      std::string::npos);
}

TEST(LoggerTest, KlogTextFormat) {
  CapturingLogger log(2);
  log.Info("Successfully bound pod to node",
           {KV::Str("pod", "default/x"), KV::Str("node", "n1"), KV::Int("evaluatedNodes", 4)});
  EXPECT_TRUE(log.V(2));
  EXPECT_FALSE(log.V(3));
  auto lines = log.lines();
  ASSERT_EQ(lines.size(), 1u);
  const std::string& l = lines[0];
  // I0622 14:15:38.638508      15 observe_test.cc:41] "..." pod="default/x" ...
  ASSERT_GT(l.size(), 30u);
  EXPECT_EQ(l[0], 'I');
  EXPECT_EQ(l[5], ' ');
  EXPECT_EQ(l[8], ':');
  EXPECT_EQ(l[14], '.');
  EXPECT_NE(l.find(" observe_test.cc:"), std::string::npos);
  EXPECT_NE(l.find("] \"Successfully bound pod to node\" pod=\"default/x\" node=\"n1\" "
                   "evaluatedNodes=4"),
            std::string::npos);
}

}  // namespace
}  // namespace berth::observe
