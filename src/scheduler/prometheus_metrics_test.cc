#include "scheduler/prometheus_metrics.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

namespace berth {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

bool Has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

TEST(PrometheusSchedulerMetricsTest, PluginSeriesUseKubeSchedulersNamesLabelsAndBuckets) {
  PrometheusSchedulerMetrics m;
  PluginSeries* fit = m.Plugin("default-scheduler", "Filter", "NodeResourcesFit");
  PluginSeries* reserve = m.Plugin("default-scheduler", "Reserve", "VolumeBinding");
  ASSERT_NE(fit, nullptr);
  ASSERT_NE(reserve, nullptr);
  // The evaluation counter of a PreFilter/Filter/PreScore/Score plugin is there from the start.
  const std::string evaluations =
      "scheduler_plugin_evaluation_total{plugin=\"NodeResourcesFit\",extension_point=\"Filter\","
      "profile=\"default-scheduler\"}";
  EXPECT_TRUE(Has(m.Expose(), evaluations + " 0\n"));
  fit->Evaluated(500);
  fit->Evaluated(20);
  reserve->Evaluated(3);  // Reserve is not counted upstream
  fit->Executed(Code::kSuccess, microseconds(12));
  fit->Executed(Code::kUnschedulable, microseconds(5));
  fit->Executed(Code::kSuccess, milliseconds(30));  // past the last bucket
  reserve->Executed(Code::kSuccess, microseconds(40));

  const std::string text = m.Expose();
  EXPECT_TRUE(Has(text, "# TYPE scheduler_plugin_evaluation_total counter\n"));
  EXPECT_TRUE(Has(text, evaluations + " 520\n"));
  EXPECT_FALSE(Has(text, "scheduler_plugin_evaluation_total{plugin=\"VolumeBinding\""));
  EXPECT_TRUE(Has(text, "# TYPE scheduler_plugin_execution_duration_seconds histogram\n"));
  const std::string fit_ok =
      "scheduler_plugin_execution_duration_seconds_bucket{plugin=\"NodeResourcesFit\","
      "extension_point=\"Filter\",status=\"Success\",le=";
  // Twenty buckets from 10 us by 1.5 (and +Inf): 12 us falls into the second, 30 ms only into
  // +Inf (the last finite bucket is ~22 ms).
  std::vector<std::string> lines;
  for (size_t at = text.find(fit_ok); at != std::string::npos; at = text.find(fit_ok, at + 1))
    lines.push_back(text.substr(at, text.find('\n', at) - at));
  ASSERT_EQ(lines.size(), 21u);
  EXPECT_EQ(lines[0], fit_ok + "\"1e-05\"} 0");
  EXPECT_TRUE(lines[1].ends_with("} 1")) << lines[1];
  EXPECT_TRUE(lines[19].ends_with("} 1")) << lines[19];
  EXPECT_EQ(lines[20], fit_ok + "\"+Inf\"} 2");
  EXPECT_TRUE(Has(text,
                  "scheduler_plugin_execution_duration_seconds_count{plugin=\"NodeResourcesFit\","
                  "extension_point=\"Filter\",status=\"Unschedulable\"} 1\n"));
  EXPECT_TRUE(Has(text,
                  "scheduler_plugin_execution_duration_seconds_count{plugin=\"VolumeBinding\","
                  "extension_point=\"Reserve\",status=\"Success\"} 1\n"));
}

TEST(PrometheusSchedulerMetricsTest, PermitEventAndHintDurations) {
  PrometheusSchedulerMetrics m;
  m.PermitWait("Success", milliseconds(3));
  m.PermitWait("Unschedulable", milliseconds(20));
  m.EventHandling("NodeAdd", microseconds(50));
  m.EventHandling("NodeAdd", microseconds(300));
  m.QueueingHint("NodeResourcesFit", "NodeAdd", "QueueSkip", microseconds(8));
  const std::string text = m.Expose();
  EXPECT_TRUE(Has(text, "# TYPE scheduler_permit_wait_duration_seconds histogram\n"));
  // Buckets from 1 ms by 2.
  EXPECT_TRUE(Has(text,
                  "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"0.002\"} "
                  "0\n"));
  EXPECT_TRUE(Has(text,
                  "scheduler_permit_wait_duration_seconds_bucket{result=\"Success\",le=\"0.004\"} "
                  "1\n"));
  EXPECT_TRUE(
      Has(text, "scheduler_permit_wait_duration_seconds_count{result=\"Unschedulable\"} 1\n"));
  // Buckets from 0.1 ms by 2.
  EXPECT_TRUE(Has(text,
                  "scheduler_event_handling_duration_seconds_bucket{event=\"NodeAdd\","
                  "le=\"0.0001\"} 1\n"));
  EXPECT_TRUE(Has(text,
                  "scheduler_event_handling_duration_seconds_bucket{event=\"NodeAdd\","
                  "le=\"0.0004\"} 2\n"));
  EXPECT_TRUE(Has(text,
                  "scheduler_queueing_hint_execution_duration_seconds_bucket{plugin="
                  "\"NodeResourcesFit\",event=\"NodeAdd\",hint=\"QueueSkip\",le=\"1e-05\"} 1\n"));
}

}  // namespace
}  // namespace berth
