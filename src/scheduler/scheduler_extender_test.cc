#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/scheduler.h"
#include "scheduler/scheduler_harness_test_util.h"
#include "testing/builders.h"
#include "testing/fake_extender.h"

namespace berth {
namespace {

using ::testing::ElementsAre;
using testing::FakeExtender;
using testing::Harness;
using ::testing::HasSubstr;
using testing::MakeNode;
using testing::MakePod;

std::shared_ptr<FakeExtender> FilterExt(std::string name, std::map<std::string, std::string> reject,
                                        std::map<std::string, std::string> unresolvable = {}) {
  auto e = std::make_shared<FakeExtender>(std::move(name));
  e->filter = true;
  e->reject = std::move(reject);
  e->reject_unresolvable = std::move(unresolvable);
  return e;
}

TEST(SchedulerExtenderTest, FilterRunsInOrderOnTheSurvivors) {
  auto e1 = FilterExt("http://e1", {{"n0000", "e1 says no"}});
  auto e2 = FilterExt("http://e2", {{"n0001", "e2 says no"}});
  Harness h(1, nullptr, {}, {e1, e2});
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(3);
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_EQ(a.node, "n0002");
  EXPECT_EQ(a.feasible_nodes, 1);
  EXPECT_EQ(a.evaluated_nodes, 3);
  EXPECT_EQ(e1->filter_calls, 1);
  EXPECT_EQ(e2->filter_calls, 1);
  EXPECT_EQ(a.filter_statuses.at("n0000").plugin(), "http://e1");
}

TEST(SchedulerExtenderTest, RejectionsReachTheMessageAndPreemptionSkipsUnresolvable) {
  auto e = FilterExt("http://e", {{"n0000", "busy"}}, {{"n0001", "wrong rack"}});
  Harness h(1, nullptr, {}, {e});
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(2);
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  // n0000 failed as plainly Unschedulable: a preemption candidate, with nothing to evict there.
  EXPECT_EQ(a.message,
            "0/2 nodes are available: 1 busy, 1 wrong rack. preemption: 0/2 nodes are available: "
            "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for "
            "scheduling.");
  EXPECT_EQ(a.filter_statuses.at("n0001").code(), Code::kUnschedulableAndUnresolvable);
  // Extender rejections register for no event: any change brings the pod back.
  EXPECT_EQ(h.sched_->queue().counts().unschedulable, 1u);
  e->reject.clear();
  e->reject_unresolvable.clear();
  h.cluster_.AddPod(MakePod().Name("elsewhere").Node("n0000").Obj());
  h.clock_.Advance(std::chrono::seconds(2));
  h.sched_->queue().FlushBackoffQCompleted();
  ASSERT_TRUE(h.sched_->ScheduleOne(false));
  EXPECT_EQ(h.recorder_.Last().outcome, SchedulingAttempt::Outcome::kScheduled);
}

TEST(SchedulerExtenderTest, FilterErrorFailsTheAttemptUnlessIgnorable) {
  auto broken = FilterExt("http://broken", {});
  broken->fail = true;
  {
    Harness h(1, nullptr, {}, {broken});
    ASSERT_NE(h.sched_, nullptr);
    h.AddNodes(2);
    SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
    EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kError);
    EXPECT_THAT(a.message, HasSubstr("http://broken failed"));
    EXPECT_EQ(h.NodeOf("p"), "");
  }
  broken->ignorable = true;
  auto after = FilterExt("http://after", {{"n0000", "no"}});
  Harness h(1, nullptr, {}, {broken, after});
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(2);
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_EQ(a.node, "n0001");
}

TEST(SchedulerExtenderTest, UninterestedExtenderIsNotAsked) {
  auto e = FilterExt("http://e", {{"n0000", "no"}, {"n0001", "no"}});
  e->interested = false;
  Harness h(1, nullptr, {}, {e});
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(2);
  EXPECT_EQ(h.Schedule(Harness::SmallPod("p")).outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_EQ(e->filter_calls, 0);
}

TEST(SchedulerExtenderTest, PrioritizeWeightDecidesAndErrorsAreIgnored) {
  auto pick = std::make_shared<FakeExtender>("http://pick");
  pick->prioritize = true;
  pick->weight = 5;
  pick->scores = {{"n0002", 10}};
  auto broken = std::make_shared<FakeExtender>("http://broken");
  broken->prioritize = true;
  broken->fail = true;
  Harness h(1, nullptr, {}, {pick, broken});
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(3);
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  ASSERT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled) << a.message;
  EXPECT_EQ(a.node, "n0002");
  // 10 x weight 5 x (100 / 10) on top of the plugins' totals.
  const auto& contrib = a.scores.extender_scores.at("http://pick");
  for (size_t i = 0; i < a.scored_nodes.size(); ++i)
    EXPECT_EQ(contrib[i], a.scored_nodes[i] == "n0002" ? 500 : 0) << a.scored_nodes[i];
  EXPECT_EQ(a.scores.extender_scores.count("http://broken"), 0u);
  EXPECT_EQ(broken->prioritize_calls, 1);
}

TEST(SchedulerExtenderTest, BinderExtenderBindsInsteadOfThePlugins) {
  auto binder = std::make_shared<FakeExtender>("http://binder");
  binder->bind = true;
  Harness h(1, nullptr, {}, {binder});
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(1);
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_THAT(binder->bound, ElementsAre("default/p@n0000"));
  // The DefaultBinder did not write the binding: the extender owns it.
  EXPECT_EQ(h.cluster_.write_counts().binds, 0);
  binder->fail = true;
  SchedulingAttempt b = h.Schedule(Harness::SmallPod("q"));
  EXPECT_EQ(b.outcome, SchedulingAttempt::Outcome::kError);
  EXPECT_THAT(b.message, HasSubstr("http://binder failed"));
  // An ignorable binder that fails hands the pod to the Bind plugins.
  binder->ignorable = true;
  SchedulingAttempt c = h.Schedule(Harness::SmallPod("r"));
  EXPECT_EQ(c.outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_EQ(h.cluster_.write_counts().binds, 1);
}

TEST(SchedulerExtenderTest, PreemptVerbNarrowsTheCandidates) {
  auto e = std::make_shared<FakeExtender>("http://preempt");
  e->preempt = true;
  e->preempt_allowed = {"n2"};
  Harness h(1, nullptr, {}, {e});
  ASSERT_NE(h.sched_, nullptr);
  for (std::string n : {"n1", "n2"}) {
    h.cluster_.AddNode(MakeNode().Name(n).Capacity({{"cpu", "2"}, {"memory", "4Gi"}}).Obj());
    h.cluster_.AddPod(
        MakePod().Name("v-" + n).Node(n).Priority(0).StartTime(1000).Req({{"cpu", "2"}}).Obj());
  }
  SchedulingAttempt a = h.Schedule(MakePod().Name("boss").Priority(100).Req({{"cpu", "2"}}).Obj());
  ASSERT_TRUE(a.nominating.has_value());
  EXPECT_EQ(a.nominating->node_name, "n2");
  EXPECT_THAT(a.victims, ElementsAre("default/v-n2"));
  EXPECT_EQ(e->preempt_calls, 1);
}

}  // namespace
}  // namespace berth
