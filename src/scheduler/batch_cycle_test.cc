// Opportunistic batching in the scheduling cycle: which profiles and pods are signed, a
// batched pod placed on the next node of the previous pod's ranking (where a full cycle scans
// other nodes), a hint that fails Filter, and the gate.
#include <gtest/gtest.h>

#include <string>

#include "config/load.h"
#include "plugins/registry.h"
#include "scheduler/prometheus_metrics.h"
#include "scheduler/scheduler_harness_test_util.h"
#include "testing/builders.h"

namespace berth {
namespace {

using testing::Harness;
using testing::MakeNode;
using testing::MakePod;

// The default profile without the system default spreading (defaultingType: List, no
// defaultConstraints): every other default plugin signs pods without claims.
void SignedProfile(config::SchedulerConfiguration& cfg) {
  Registry registry = InTreeRegistry();
  auto c = config::LoadConfig(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: PodTopologySpread
    args: {apiVersion: kubescheduler.config.k8s.io/v1, kind: PodTopologySpreadArgs,
           defaultingType: List}
)",
                              "batching.yaml", registry);
  ASSERT_TRUE(c.ok()) << c.error().message;
  cfg = std::move(c).value();
}

// 200 nodes: n0000-n0099 with 4 CPUs, n0100-n0199 with 64 (these score higher). A cycle
// finds 100 feasible nodes from where the last one stopped: the first pod's cycle sees only
// the small nodes.
void AddSmallThenLargeNodes(Harness& h) {
  for (int i = 0; i < 200; ++i) {
    h.cluster_.AddNode(MakeNode()
                           .Name(Harness::Name("n", i))
                           .Capacity({{"cpu", i < 100 ? "4" : "64"}, {"memory", "64Gi"}})
                           .Obj());
  }
}

// One per node: host port 8080.
std::shared_ptr<const Pod> WebPod(const std::string& name) {
  return MakePod().Name(name).Req({{"cpu", "1"}}).HostPort(8080).Obj();
}

bool Small(const std::string& node) { return node < "n0100"; }

TEST(BatchCycleTest, BatchedPodTakesTheNextNodeOfTheRanking) {
  Harness h(1, SignedProfile);
  ASSERT_NE(h.sched_, nullptr);
  AddSmallThenLargeNodes(h);
  SchedulingAttempt first = h.Schedule(WebPod("web-0"));
  EXPECT_EQ(first.feasible_nodes, 100);
  EXPECT_TRUE(Small(first.node));
  // The first pod's node holds port 8080 now: the second pod gets the next ranked node, one of
  // the small ones its cycle scored, checked alone.
  SchedulingAttempt second = h.Schedule(WebPod("web-1"));
  EXPECT_EQ(second.feasible_nodes, 1);
  EXPECT_EQ(second.evaluated_nodes, 1);
  EXPECT_TRUE(Small(second.node)) << second.node;
  SchedulingAttempt third = h.Schedule(WebPod("web-2"));
  EXPECT_TRUE(Small(third.node)) << third.node;
  EXPECT_EQ(h.sched_->batch_counts().hint_used, 2u);
  EXPECT_EQ(h.sched_->batch_counts().no_hint, 1u);
}

TEST(BatchCycleTest, AttemptsAndDroppedRankingsAreCounted) {
  PrometheusSchedulerMetrics metrics;
  Harness h(1, SignedProfile, {}, {}, &metrics);
  ASSERT_NE(h.sched_, nullptr);
  AddSmallThenLargeNodes(h);
  h.Schedule(WebPod("web-0"));
  h.Schedule(WebPod("web-1"));
  // Another signature: no hint, and the ranking is dropped.
  h.Schedule(MakePod().Name("other").Req({{"cpu", "2"}}).HostPort(8080).Obj());
  const std::string text = metrics.Expose();
  auto has = [&](const std::string& line) { return text.find(line) != std::string::npos; };
  EXPECT_TRUE(
      has("scheduler_batch_attempts_total{profile=\"default-scheduler\",result=\"no_hint\"} 2"))
      << text;
  EXPECT_TRUE(
      has("scheduler_batch_attempts_total{profile=\"default-scheduler\",result=\"hint_used\"} 1"));
  EXPECT_TRUE(
      has("scheduler_batch_cache_flushed_total{profile=\"default-scheduler\","
          "reason=\"pod_incompatible\"} 1"));
}

TEST(BatchCycleTest, WithoutTheGateEveryPodGetsAFullCycle) {
  Harness h(1, SignedProfile, {}, {}, nullptr, 0, /*opportunistic_batching=*/false);
  ASSERT_NE(h.sched_, nullptr);
  AddSmallThenLargeNodes(h);
  EXPECT_TRUE(Small(h.Schedule(WebPod("web-0")).node));
  // The second full cycle scans from where the first stopped: the large nodes.
  SchedulingAttempt second = h.Schedule(WebPod("web-1"));
  EXPECT_EQ(second.feasible_nodes, 100);
  EXPECT_FALSE(Small(second.node)) << second.node;
  EXPECT_EQ(h.sched_->batch_counts().hint_used + h.sched_->batch_counts().no_hint, 0u);
}

TEST(BatchCycleTest, DefaultProfileSignsNoPod) {
  // The system default spreading constraints make every pod unsignable: the default profile
  // never batches.
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  AddSmallThenLargeNodes(h);
  EXPECT_TRUE(Small(h.Schedule(WebPod("web-0")).node));
  EXPECT_FALSE(Small(h.Schedule(WebPod("web-1")).node));
  EXPECT_EQ(h.sched_->batch_counts().hint_used, 0u);
  EXPECT_EQ(h.sched_->batch_counts().no_hint, 2u);  // asked, and unsigned
}

TEST(BatchCycleTest, PodsWithSpreadingOrPodAffinityAreNotBatched) {
  TopologySpreadConstraint spread;
  spread.max_skew = 1;
  spread.topology_key = "kubernetes.io/hostname";
  spread.when_unsatisfiable = "ScheduleAnyway";
  spread.label_selector = LabelSelector{};
  Affinity anti;
  anti.pod_anti_affinity = PodAffinity{};
  anti.pod_anti_affinity->preferred.push_back({1, PodAffinityTerm{LabelSelector{}, {}, "zone"}});
  for (const Pod& shape : {*MakePod().Req({{"cpu", "1"}}).HostPort(8080).Spread(spread).Obj(),
                           *MakePod().Req({{"cpu", "1"}}).HostPort(8080).Affinity(anti).Obj()}) {
    Harness h(1, SignedProfile);
    ASSERT_NE(h.sched_, nullptr);
    AddSmallThenLargeNodes(h);
    for (const char* name : {"a", "b"}) {
      auto pod = std::make_shared<Pod>(shape);
      pod->metadata.name = name;
      pod->metadata.namespace_ = "default";
      pod->metadata.uid = name;
      h.Schedule(pod);
    }
    EXPECT_EQ(h.sched_->batch_counts().hint_used, 0u);
    EXPECT_EQ(h.sched_->batch_counts().no_hint, 2u);
    EXPECT_FALSE(Small(h.NodeOf("b")));  // a full cycle over the next window
  }
}

TEST(BatchCycleTest, HintRejectedByFilterFallsBackToAFullCycle) {
  Harness h(1, SignedProfile);
  ASSERT_NE(h.sched_, nullptr);
  AddSmallThenLargeNodes(h);
  h.Schedule(WebPod("web-0"));
  // Every small node takes a pod holding port 8080: the kept ranking's next node fails Filter.
  for (int i = 0; i < 100; ++i) {
    const std::string node = Harness::Name("n", i);
    if (node == h.NodeOf("web-0")) continue;
    h.cluster_.AddPod(MakePod().Name("holder-" + node).Node(node).HostPort(8080).Obj());
  }
  SchedulingAttempt second = h.Schedule(WebPod("web-1"));
  EXPECT_FALSE(Small(second.node)) << second.node;
  EXPECT_EQ(second.feasible_nodes, 100);
  EXPECT_EQ(h.sched_->batch_counts().hint_not_used, 1u);
}

TEST(BatchCycleTest, StillFittingNodeIsRescoredAgainstTheKeptRanking) {
  Harness h(1, SignedProfile);
  ASSERT_NE(h.sched_, nullptr);
  // Few nodes, all scored: without host ports the previous pod's node still takes the next
  // pod, so it is scored again and competes with the kept nodes; the result is the node a
  // full cycle would choose (all nodes were scored, and the others did not change).
  for (int i = 0; i < 3; ++i)
    h.cluster_.AddNode(MakeNode()
                           .Name(Harness::Name("n", i))
                           .Capacity({{"cpu", i == 0 ? "64" : "8"}, {"memory", "64Gi"}})
                           .Obj());
  auto pod = [](const std::string& name) { return MakePod().Name(name).Req({{"cpu", "1"}}).Obj(); };
  EXPECT_EQ(h.Schedule(pod("a")).node, "n0000");
  SchedulingAttempt b = h.Schedule(pod("b"));
  EXPECT_EQ(b.node, "n0000");  // still the emptiest by far
  EXPECT_EQ(b.feasible_nodes, 1);
  EXPECT_EQ(h.sched_->batch_counts().hint_used, 1u);
}

// When the previous pod's node still fits, only it is scored again: the kept nodes compete with
// the raw scores of the cycle that ranked them, even when one changed since (kube-scheduler's
// rescoring). A full cycle sees the change.
TEST(BatchCycleTest, KeptNodesCompeteWithTheirEarlierScores) {
  for (bool batching : {true, false}) {
    SCOPED_TRACE(batching ? "batching" : "full cycles");
    Harness h(1, SignedProfile, {}, {}, nullptr, 0, batching);
    ASSERT_NE(h.sched_, nullptr);
    for (int i = 0; i < 3; ++i)
      h.cluster_.AddNode(MakeNode()
                             .Name(Harness::Name("n", i))
                             .Capacity({{"cpu", i == 0 ? "10" : "8"}, {"memory", "64Gi"}})
                             .Obj());
    auto pod = [](const std::string& name) {
      return MakePod().Name(name).Req({{"cpu", "1"}}).Obj();
    };
    EXPECT_EQ(h.Schedule(pod("a")).node, "n0000");
    // n0001 fills up after the first cycle ranked it level with n0002.
    h.cluster_.AddPod(MakePod().Name("busy").Node("n0001").Req({{"cpu", "4"}}).Obj());
    SchedulingAttempt b = h.Schedule(pod("b"));
    EXPECT_EQ(b.node, batching ? "n0001" : "n0002");
    EXPECT_EQ(h.sched_->batch_counts().hint_used, batching ? 1u : 0u);
  }
}

}  // namespace
}  // namespace berth
