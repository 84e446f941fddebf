#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "scheduler/scheduler.h"
#include "scheduler/scheduler_harness_test_util.h"
#include "testing/builders.h"

namespace berth {
namespace {

using ::testing::ElementsAre;
using testing::Harness;
using testing::MakeNode;
using testing::MakePod;

class RecordingSink final : public SchedulerMetricsSink {
 public:
  void ExtensionPoint(std::string_view profile, std::string_view point, const Status& status,
                      Duration) override {
    std::lock_guard lock(mu);
    points.push_back(fmt::format("{}/{}/{}", profile, point, CodeName(status.code())));
  }
  void IncomingPod(std::string_view queue, std::string_view event) override {
    std::lock_guard lock(mu);
    incoming.push_back(fmt::format("{}/{}", queue, event));
  }
  std::mutex mu;
  std::vector<std::string> points, incoming;
};

TEST(SchedulerTest, ExtensionPointsAndIncomingPodsReachTheMetricsSink) {
  RecordingSink sink;
  Harness h(1, nullptr, {}, {}, &sink);
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(2);
  ASSERT_EQ(h.Schedule(Harness::SmallPod("p")).outcome, SchedulingAttempt::Outcome::kScheduled);
  const std::string d = "default-scheduler/";
  EXPECT_THAT(sink.points,
              ElementsAre(d + "PreFilter/Success", d + "PreScore/Success", d + "Score/Success",
                          d + "Reserve/Success", d + "Permit/Success", d + "PreBind/Success",
                          d + "Bind/Success", d + "PostBind/Success"));
  EXPECT_THAT(sink.incoming, ElementsAre("active/PodAdd"));

  sink.points.clear();
  ASSERT_EQ(h.Schedule(MakePod().Name("huge").Req({{"cpu", "64"}}).Obj()).outcome,
            SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_THAT(sink.points, ElementsAre(d + "PreFilter/Success", d + "PostFilter/Unschedulable"));
  EXPECT_THAT(sink.incoming, ElementsAre("active/PodAdd", "active/PodAdd",
                                         "unschedulable/ScheduleAttemptFailure"));
}

// Records the plugin, event and hint measurements (keys without the profile).
class PluginSink final : public SchedulerMetricsSink {
 public:
  class Series final : public PluginSeries {
   public:
    Series(PluginSink* sink, std::string key) : sink_(sink), key_(std::move(key)) {}
    void Executed(Code, Duration) override {
      std::lock_guard lock(sink_->mu);
      ++sink_->executions[key_];
    }
    void Evaluated(uint64_t n) override {
      std::lock_guard lock(sink_->mu);
      sink_->evaluations[key_] += n;
    }

   private:
    PluginSink* sink_;
    std::string key_;
  };
  void ExtensionPoint(std::string_view, std::string_view, const Status&, Duration) override {}
  void IncomingPod(std::string_view, std::string_view) override {}
  PluginSeries* Plugin(std::string_view, std::string_view point, std::string_view plugin) override {
    std::lock_guard lock(mu);
    series.push_back(std::make_unique<Series>(this, fmt::format("{}/{}", point, plugin)));
    return series.back().get();
  }
  void EventHandling(std::string_view event, Duration) override {
    std::lock_guard lock(mu);
    ++events[std::string(event)];
  }
  void QueueingHint(std::string_view plugin, std::string_view event, std::string_view hint,
                    Duration) override {
    std::lock_guard lock(mu);
    hints.push_back(fmt::format("{}/{}/{}", plugin, event, hint));
  }
  std::mutex mu;
  std::vector<std::unique_ptr<Series>> series;
  std::map<std::string, uint64_t> evaluations, executions, events;
  std::vector<std::string> hints;
};

TEST(SchedulerTest, PluginEvaluationsCountWhereEachNodeStopped) {
  PluginSink sink;
  Harness h(1, nullptr, {}, {}, &sink);
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(20);
  EXPECT_EQ(sink.events["NodeAdd"], 20u);
  ASSERT_EQ(h.Schedule(Harness::SmallPod("p")).outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_EQ(sink.events["UnscheduledPodAdd"], 1u);
  EXPECT_EQ(sink.events["AssignedPodAdd"], 1u);  // the binding, as the informer reports it
  // Every node passed: each Filter plugin not skipped ran on all 20; each Score plugin that ran
  // scored all 20.
  EXPECT_EQ(sink.evaluations["Filter/NodeResourcesFit"], 20u);
  EXPECT_EQ(sink.evaluations["PreFilter/NodeResourcesFit"], 1u);
  int scored = 0;
  for (const auto& [key, n] : sink.evaluations) {
    if (key.rfind("Score/", 0) != 0 || n == 0) continue;
    ++scored;
    EXPECT_EQ(n, 20u) << key;
  }
  EXPECT_GT(scored, 0);

  // NodeResourcesFit rejects every node: the plugins before it ran on all 20 (unless skipped),
  // those after it on none.
  const std::vector<std::string> filters = h.sched_->profiles()[0]->ListPlugins("Filter");
  const auto fit = std::find(filters.begin(), filters.end(), "NodeResourcesFit") - filters.begin();
  ASSERT_LT(fit, static_cast<long>(filters.size()));
  auto before = sink.evaluations;
  ASSERT_EQ(h.Schedule(MakePod().Name("huge").Req({{"cpu", "64"}}).Obj()).outcome,
            SchedulingAttempt::Outcome::kUnschedulable);
  for (long i = 0; i < static_cast<long>(filters.size()); ++i) {
    const std::string key = "Filter/" + filters[i];
    const uint64_t delta = sink.evaluations[key] - before[key];
    if (i > fit) {
      EXPECT_EQ(delta, 0u) << key;
    } else if (i == fit) {
      EXPECT_EQ(delta, 20u) << key;
    } else {
      EXPECT_TRUE(delta == 0 || delta == 20) << key << " " << delta;
    }
  }
  // Its hint is asked about new nodes: one too small is skipped, one big enough queues it.
  h.cluster_.AddNode(MakeNode().Name("tiny").Capacity({{"cpu", "1"}, {"memory", "1Gi"}}).Obj());
  h.cluster_.AddNode(MakeNode().Name("big").Capacity({{"cpu", "128"}, {"memory", "1Ti"}}).Obj());
  EXPECT_THAT(sink.hints,
              ElementsAre("NodeResourcesFit/NodeAdd/QueueSkip", "NodeResourcesFit/NodeAdd/Queue"));
}

TEST(SchedulerTest, PluginDurationsAreSampledInAFractionOfCycles) {
  PluginSink sink;
  Harness h(7, nullptr, {}, {}, &sink);
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(20);
  constexpr int kPods = 200;
  // Each pod carries a label of its own, so no node result is reused from the pod before and
  // Filter runs on every examined node.
  for (int i = 0; i < kPods; ++i)
    ASSERT_EQ(h.Schedule(MakePod()
                             .Name(fmt::format("p{}", i))
                             .Label("replica", std::to_string(i))
                             .Req({{"cpu", "100m"}, {"memory", "100Mi"}})
                             .Obj())
                  .outcome,
              SchedulingAttempt::Outcome::kScheduled);
  // NodeResourcesFit's PreFilter runs once per cycle: its timed calls are the sampled cycles,
  // about kPluginMetricsSamplePercent of them (a binomial draw: mean 20, sd 4.2 here).
  const uint64_t sampled = sink.executions["PreFilter/NodeResourcesFit"];
  EXPECT_GE(sampled, 5u);
  EXPECT_LE(sampled, 40u);
  // Within a sampled cycle, Filter is timed on nodes 0 and 16 of the 20 examined.
  EXPECT_EQ(sink.executions["Filter/NodeResourcesFit"], 2 * sampled);
  // The binding cycle's plugins are timed in the same cycles.
  EXPECT_EQ(sink.executions["Bind/DefaultBinder"], sampled);
  // Evaluations are counted in every cycle.
  EXPECT_EQ(sink.evaluations["PreFilter/NodeResourcesFit"], static_cast<uint64_t>(kPods));
}

// Queueing hints: only a change the rejecting plugin says can help moves the pod.

}  // namespace
}  // namespace berth
