// Coscheduling end to end in the scheduler, over the in-memory cluster with inline binding and a
// fake clock: a gang waits at Permit for its last member and then binds whole; a gang whose
// wait times out releases what it reserved; a gang that cannot fit is rejected whole and backs
// off; a 1,000-member gang at 5,000 nodes waits while unrelated pods bind.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "config/load.h"
#include "framework/in_memory_cluster.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduler_test_util.h"
#include "testing/builders.h"

namespace berth {
namespace {

using testing::MakeNode;
using testing::MakePod;

// Coscheduling enabled as scheduler-plugins' example configuration does.
std::string CoschedulingConfig(const std::string& args) {
  return "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
         "profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
         "    multiPoint:\n      enabled: [{name: Coscheduling}]\n"
         "    queueSort:\n      enabled: [{name: Coscheduling}]\n      disabled: [{name: '*'}]\n"
         "  pluginConfig:\n  - name: Coscheduling\n    args: " +
         args + "\n";
}

Ptr<PodGroup> Group(const std::string& name, int min, std::optional<int32_t> timeout = {}) {
  auto g = std::make_shared<PodGroup>();
  g->metadata.name = name;
  g->metadata.namespace_ = "default";
  g->metadata.creation_timestamp = 100;
  g->spec.min_member = min;
  g->spec.schedule_timeout_seconds = timeout;
  return g;
}

Ptr<Pod> Member(const std::string& name, const std::string& group, const char* cpu = "1",
                int32_t priority = 0) {
  return MakePod()
      .Name(name)
      .UID(name)
      .Label(kPodGroupLabel, group)
      .Priority(priority)
      .Req({{"cpu", cpu}})
      .Obj();
}

struct Harness {
  Registry registry = InTreeRegistry();
  config::SchedulerConfiguration config;
  InMemoryCluster cluster;
  FakeClock clock{TimePoint{std::chrono::seconds(1000)}};
  std::unique_ptr<Scheduler> sched;

  explicit Harness(const std::string& args = "{permitWaitingTimeSeconds: 10}") {
    auto c = config::LoadConfig(CoschedulingConfig(args), "cosched.yaml", registry);
    EXPECT_TRUE(c.ok()) << c.error().message;
    if (c.ok()) config = std::move(c).value();
    sched = testing::SchedulerOver(config, registry, cluster, clock, /*inline_binding=*/true);
  }
  void AddNodes(int n, const char* cpu) {
    for (int i = 0; i < n; ++i)
      cluster.AddNode(MakeNode()
                          .Name(fmt::format("n{:04d}", i))
                          .Capacity({{"cpu", cpu}, {"pods", "110"}})
                          .Obj());
  }
  int Bound(const std::string& prefix) const {
    int n = 0;
    for (const auto& p : cluster.ListPods())
      n += !p->spec.node_name.empty() && p->metadata.name.rfind(prefix, 0) == 0;
    return n;
  }
  std::string Condition(const std::string& name) const {
    auto p = cluster.GetPod("default", name);
    for (const auto& c : p->status.conditions)
      if (c.type == "PodScheduled") return c.reason + ": " + c.message;
    return "";
  }
  // Runs `n` scheduling cycles (fewer if the queue empties), completing decided waits.
  void Cycles(int n) {
    for (int i = 0; i < n && sched->ScheduleOne(false); ++i) sched->CompleteWaitingBindings();
    sched->CompleteWaitingBindings();
  }
};

TEST(CoschedulingSchedulerTest, AGangWaitsForItsLastMemberThenBindsWhole) {
  Harness t;
  ASSERT_NE(t.sched, nullptr);
  t.AddNodes(2, "4");
  t.cluster.AddPodGroup(Group("pg", 3));
  for (const char* name : {"pg-a", "pg-b", "pg-c"}) t.cluster.AddPod(Member(name, "pg"));
  t.Cycles(1);  // pg-a is reserved and waits
  EXPECT_EQ(t.Bound("pg-"), 0);
  EXPECT_TRUE(t.sched->HasWaitingBindings());
  t.Cycles(1);  // pg-b too
  EXPECT_EQ(t.Bound("pg-"), 0);
  EXPECT_EQ(t.sched->cache_counts().assumed_pods, 2u);
  t.Cycles(1);  // pg-c completes the gang: all three bind
  EXPECT_EQ(t.Bound("pg-"), 3);
  EXPECT_FALSE(t.sched->HasWaitingBindings());
}

TEST(CoschedulingSchedulerTest, MembersWaitInTheQueueUntilMinMemberPodsExist) {
  Harness t;
  ASSERT_NE(t.sched, nullptr);
  t.AddNodes(1, "8");
  t.cluster.AddPodGroup(Group("pg", 3));
  t.cluster.AddPod(Member("pg-a", "pg"));
  t.cluster.AddPod(Member("pg-b", "pg"));
  t.sched->RunUntilIdle(t.clock);
  EXPECT_EQ(t.Bound("pg-"), 0);
  EXPECT_NE(t.Condition("pg-a").find("pre-filter pod pg-a cannot find enough sibling pods, "
                                     "current pods number: 2, minMember of group: 3"),
            std::string::npos)
      << t.Condition("pg-a");
  // The third member's arrival moves the others back; the gang binds.
  t.cluster.AddPod(Member("pg-c", "pg"));
  t.sched->RunUntilIdle(t.clock);
  EXPECT_EQ(t.Bound("pg-"), 3);
}

TEST(CoschedulingSchedulerTest, ATimedOutGangReleasesItsReservations) {
  // podGroupRejectPercentage 100: a member that fits nowhere does not reject the group, which
  // then waits for its timeout.
  Harness t("{permitWaitingTimeSeconds: 10, podGroupRejectPercentage: 100}");
  ASSERT_NE(t.sched, nullptr);
  t.AddNodes(1, "4");
  t.cluster.AddPodGroup(Group("pg", 3, /*timeout=*/5));
  t.cluster.AddPod(Member("pg-a", "pg"));
  t.cluster.AddPod(Member("pg-b", "pg"));
  t.cluster.AddPod(Member("pg-c", "pg", "8"));  // fits on no node
  t.Cycles(3);
  EXPECT_EQ(t.sched->cache_counts().assumed_pods, 2u)  // pg-a and pg-b hold 2 cpu
      << t.Condition("pg-a") << "\n"
      << t.Condition("pg-b") << "\n"
      << t.Condition("pg-c") << " active " << t.sched->pending_counts().active << " unsched "
      << t.sched->pending_counts().unschedulable << " gated " << t.sched->pending_counts().gated
      << " bound " << t.Bound("pg-") << " waiting " << t.sched->HasWaitingBindings();
  // The group's scheduleTimeoutSeconds (5 s) passes: the waits end, nothing stays reserved.
  t.clock.Advance(std::chrono::seconds(5));
  EXPECT_EQ(t.sched->CompleteWaitingBindings(), 2);
  EXPECT_EQ(t.Bound("pg-"), 0);
  EXPECT_EQ(t.sched->cache_counts().assumed_pods, 0u);
  EXPECT_NE(t.Condition("pg-a").find("Unschedulable"), std::string::npos) << t.Condition("pg-a");
  // The 4 cpu are free again for an unrelated pod (sorted first by its priority).
  t.cluster.AddPod(MakePod().Name("whole-node").Priority(100).Req({{"cpu", "4"}}).Obj());
  t.Cycles(1);
  EXPECT_EQ(t.Bound("whole-node"), 1);
}

TEST(CoschedulingSchedulerTest, AGangThatCannotFitIsRejectedWholeAndBacksOff) {
  Harness t("{permitWaitingTimeSeconds: 10, podGroupBackoffSeconds: 30}");
  ASSERT_NE(t.sched, nullptr);
  t.AddNodes(1, "4");
  t.cluster.AddPodGroup(Group("pg", 3));
  for (const char* name : {"pg-a", "pg-b", "pg-c"}) t.cluster.AddPod(Member(name, "pg", "2"));
  t.Cycles(3);  // a and b wait holding the node; c fits nowhere: PostFilter rejects the gang
  EXPECT_EQ(t.Bound("pg-"), 0);
  EXPECT_EQ(t.sched->cache_counts().assumed_pods, 0u);
  EXPECT_FALSE(t.sched->HasWaitingBindings());
  EXPECT_NE(t.Condition("pg-c").find("PodGroup default/pg gets rejected due to Pod pg-c is "
                                     "unschedulable even after PostFilter"),
            std::string::npos)
      << t.Condition("pg-c");
  EXPECT_NE(t.Condition("pg-a").find("optimistic rejection in PostFilter"), std::string::npos)
      << t.Condition("pg-a");
  // Within the backoff, a member that is tried again is turned away before Filter.
  t.sched->queue().MoveAllToActiveOrBackoffQueue();
  t.clock.Advance(std::chrono::seconds(20));
  t.sched->queue().FlushBackoffQCompleted();
  t.Cycles(1);
  EXPECT_NE(t.Condition("pg-a").find("podGroup default/pg failed recently"), std::string::npos)
      << t.Condition("pg-a");
  EXPECT_EQ(t.sched->cache_counts().assumed_pods, 0u);
  // A bigger node and the end of the backoff let the gang in.
  t.cluster.AddNode(MakeNode().Name("big").Capacity({{"cpu", "8"}, {"pods", "110"}}).Obj());
  t.clock.Advance(std::chrono::seconds(20));
  t.sched->RunUntilIdle(t.clock);
  EXPECT_EQ(t.Bound("pg-"), 3) << t.Condition("pg-a") << "\n"
                               << t.Condition("pg-b") << "\n"
                               << t.Condition("pg-c") << " unsched "
                               << t.sched->pending_counts().unschedulable;
}

TEST(CoschedulingSchedulerTest, AThousandMemberGangAtFiveThousandNodesWaitsWhileOthersBind) {
  Harness t("{permitWaitingTimeSeconds: 600}");
  ASSERT_NE(t.sched, nullptr);
  t.AddNodes(5000, "32");
  t.cluster.AddPodGroup(Group("big", 1000));
  // 999 members sort first (the group is older than anything queued); the last member has a
  // lower priority, so the unrelated pods come between.
  for (int i = 0; i < 999; ++i) t.cluster.AddPod(Member(fmt::format("big-{:04d}", i), "big"));
  for (int i = 0; i < 500; ++i)
    t.cluster.AddPod(MakePod().Name(fmt::format("plain-{:03d}", i)).Req({{"cpu", "1"}}).Obj());
  t.cluster.AddPod(Member("big-last", "big", "1", /*priority=*/-1));

  t.Cycles(999);
  EXPECT_EQ(t.Bound("big-"), 0);
  EXPECT_EQ(t.sched->cache_counts().assumed_pods, 999u);
  t.Cycles(500);
  EXPECT_EQ(t.Bound("plain-"), 500);  // bound while the gang waits
  EXPECT_EQ(t.Bound("big-"), 0);
  t.Cycles(1);  // the last member admits the gang
  EXPECT_EQ(t.Bound("big-"), 1000);
  EXPECT_EQ(t.sched->cache_counts().assumed_pods, 0u);
}

TEST(CoschedulingSchedulerTest, InvalidArgsFailTheConfigurationNamingTheField) {
  Registry registry = InTreeRegistry();
  auto c = config::LoadConfig(CoschedulingConfig("{podGroupBackoffSeconds: -1}"), "cosched.yaml",
                              registry);
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.error().message.find(
                "profiles[0].pluginConfig[0].args.podGroupBackoffSeconds: invalid value -1: must "
                "be greater than 0"),
            std::string::npos)
      << c.error().message;
}

}  // namespace
}  // namespace berth
