#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "scheduler/scheduler.h"
#include "scheduler/scheduler_harness_test_util.h"

namespace berth {
namespace {

using testing::Harness;

class HoldAll final : public PermitPlugin {
 public:
  std::string_view Name() const override { return "HoldAll"; }
  PermitDecision Permit(CycleState&, const PodInfo&, const std::string&) override {
    return {Status::Wait(), std::chrono::seconds(30)};
  }
};

class PermitHarness : public Harness {
 public:
  PermitHarness()
      : Harness(
            1,
            [](config::SchedulerConfiguration& cfg) {
              cfg.profiles[0].plugins.permit.enabled.push_back({"HoldAll"});
            },
            {PluginRegistration{"HoldAll",
                                [](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
                                  return std::unique_ptr<Plugin>(std::make_unique<HoldAll>());
                                },
                                {}}}) {}

  // Schedules "p" onto the only node; its binding waits at Permit.
  void StartWaiting() {
    ASSERT_NE(sched_, nullptr);
    cluster_.AddNode(NodeObj("n1"));
    cluster_.AddPod(SmallPod("p"));
    ASSERT_TRUE(sched_->ScheduleOne(false));
    EXPECT_EQ(recorder_.size(), 0u);  // not decided yet
    EXPECT_TRUE(sched_->HasWaitingBindings());
    EXPECT_TRUE(sched_->cache().IsAssumedPod(*cluster_.GetPod("default", "p")));
    EXPECT_EQ(sched_->CompleteWaitingBindings(), 0);
  }
  Framework& fw() { return *sched_->profiles()[0]; }
};

TEST(SchedulerPermitTest, AllowedPodIsBound) {
  PermitHarness h;
  h.StartWaiting();
  std::shared_ptr<WaitingPod> wp = h.fw().GetWaitingPod("uid-p");
  ASSERT_NE(wp, nullptr);
  wp->Allow("HoldAll");
  EXPECT_EQ(h.sched_->CompleteWaitingBindings(), 1);
  EXPECT_FALSE(h.sched_->HasWaitingBindings());
  EXPECT_EQ(h.recorder_.Last().outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_EQ(h.NodeOf("p"), "n1");
}

TEST(SchedulerPermitTest, TimedOutPodIsUnschedulable) {
  PermitHarness h;
  h.StartWaiting();
  h.clock_.Advance(std::chrono::seconds(30));
  EXPECT_EQ(h.sched_->CompleteWaitingBindings(), 1);
  SchedulingAttempt a = h.recorder_.Last();
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_EQ(a.message,
            "0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin "
            "HoldAll.");
  EXPECT_EQ(h.NodeOf("p"), "");
  EXPECT_EQ(h.sched_->cache().PodCount(), 0u);
}

// A pod rejected while waiting goes to the unschedulable pool: the freeing of its own assumed
// resources is a cluster change for the other pods, not for itself.
TEST(SchedulerPermitTest, RejectedPodWaitsForAClusterChange) {
  PermitHarness h;
  h.StartWaiting();
  EXPECT_TRUE(h.fw().RejectWaitingPod("uid-p"));
  EXPECT_EQ(h.sched_->CompleteWaitingBindings(), 1);
  SchedulingAttempt a = h.recorder_.Last();
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_EQ(a.message, "0/1 nodes are available: 1 removed.");
  EXPECT_FALSE(h.sched_->cache().IsAssumedPod(*h.cluster_.GetPod("default", "p")));
  auto c = h.sched_->queue().counts();
  EXPECT_EQ(c.unschedulable, 1u);
  EXPECT_EQ(c.backoff, 0u);
}

}  // namespace
}  // namespace berth
