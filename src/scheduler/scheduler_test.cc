#include "scheduler/scheduler.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "berth/framework/pre_bind_preflight.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "scheduler/fit_error.h"
#include "scheduler/scheduler_harness_test_util.h"
#include "testing/builders.h"

namespace berth {
namespace {

using ::testing::ElementsAre;
using testing::Harness;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::MakeNode;
using testing::MakePod;
using ::testing::StartsWith;

TEST(SchedulerTest, SchedulesAPodAndBindsIt) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(3);
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_EQ(a.profile, "default-scheduler");
  EXPECT_EQ(a.attempt, 1);
  EXPECT_EQ(a.feasible_nodes, 3);
  EXPECT_EQ(a.evaluated_nodes, 3);
  EXPECT_EQ(h.NodeOf("p"), a.node);
  EXPECT_EQ(h.cluster_.write_counts().binds, 1);
  EXPECT_EQ(h.sched_->cache().PodCount(), 1u);
  EXPECT_FALSE(h.sched_->cache().IsAssumedPod(*h.cluster_.GetPod("default", "p")));
  // The default profile's eight score plugins, with their weights (VolumeBinding's 1 is the
  // StorageCapacityScoring gate's).
  EXPECT_THAT(a.score_weights, ElementsAre(3, 2, 1, 1, 2, 2, 1, 1));
  EXPECT_EQ(a.scored_nodes.size(), 3u);
}

struct NodesToFindCase {
  int nodes;
  std::optional<int32_t> global_percentage;
  std::optional<int32_t> profile_percentage;
  int want_evaluated;
};

// numFeasibleNodesToFind: all nodes below 100; adaptive 50 - N/125 percent (at least 5%), at
// least 100 nodes; an explicit percentage (the profile's first) replaces the adaptive one.
TEST(SchedulerTest, NumberOfNodesEvaluatedWhenAllFit) {
  const std::vector<NodesToFindCase> cases = {
      {50, std::nullopt, std::nullopt, 50},
      {150, std::nullopt, std::nullopt, 100},   // 49% = 73 -> at least 100
      {1000, std::nullopt, std::nullopt, 420},  // 42%
      {5000, std::nullopt, std::nullopt, 500},  // 10%
      {1000, 100, std::nullopt, 1000},
      {1000, 100, 30, 300},
      {1000, std::nullopt, 5, 100},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(fmt::format("{} nodes, global {}, profile {}", c.nodes,
                             c.global_percentage.value_or(-1), c.profile_percentage.value_or(-1)));
    Harness h(1, [&](config::SchedulerConfiguration& cfg) {
      if (c.global_percentage) cfg.percentage_of_nodes_to_score = *c.global_percentage;
      cfg.profiles[0].percentage_of_nodes_to_score = c.profile_percentage;
    });
    ASSERT_NE(h.sched_, nullptr);
    h.AddNodes(c.nodes);
    SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
    EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled) << a.message;
    EXPECT_EQ(a.evaluated_nodes, c.want_evaluated);
    EXPECT_EQ(a.feasible_nodes, c.want_evaluated);
    EXPECT_EQ(static_cast<int>(a.scored_nodes.size()), c.want_evaluated);
  }
}

// Each cycle starts where the previous one stopped, wrapping around the node list.
TEST(SchedulerTest, SearchStartRotatesAcrossCycles) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(1000);
  auto expect_range = [&](const SchedulingAttempt& a, std::vector<std::pair<int, int>> ranges) {
    std::vector<std::string> want;
    for (auto [from, to] : ranges)
      for (int i = from; i < to; ++i) want.push_back(Harness::Name("n", i));
    EXPECT_EQ(a.scored_nodes, want);
  };
  expect_range(h.Schedule(Harness::SmallPod("p1")), {{0, 420}});
  expect_range(h.Schedule(Harness::SmallPod("p2")), {{420, 840}});
  expect_range(h.Schedule(Harness::SmallPod("p3")), {{840, 1000}, {0, 260}});
}

// An attempt that keeps only its best scored nodes keeps them as the whole table has them:
// the selected node, then the highest totals, in scoring order; the rest are counted.
TEST(SchedulerTest, DetailNodesKeepTheBestRowsOfTheWholeTable) {
  Harness whole(7), bounded(7, nullptr, {}, {}, nullptr, /*detail_nodes=*/5);
  ASSERT_NE(whole.sched_, nullptr);
  ASSERT_NE(bounded.sched_, nullptr);
  for (Harness* h : {&whole, &bounded}) {
    for (int i = 0; i < 60; ++i) {
      const std::string cpu = std::to_string(2 + i % 7);
      h->cluster_.AddNode(MakeNode()
                              .Name(Harness::Name("n", i))
                              .Capacity({{"cpu", cpu.c_str()}, {"memory", "32Gi"}})
                              .Obj());
    }
  }
  for (int p = 0; p < 3; ++p) {
    auto pod = Harness::SmallPod(Harness::Name("p", p));
    SchedulingAttempt all = whole.Schedule(pod);
    SchedulingAttempt five = bounded.Schedule(pod);
    ASSERT_EQ(five.node, all.node);
    ASSERT_EQ(five.scored_nodes.size(), 5u);
    EXPECT_EQ(five.scored_nodes_omitted, all.scored_nodes.size() - 5);
    EXPECT_EQ(all.scored_nodes_omitted, 0u);
    // The best five of the whole table, by the same order, listed in scoring order.
    std::vector<size_t> order(all.scored_nodes.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      const bool cx = all.scored_nodes[x] == all.node, cy = all.scored_nodes[y] == all.node;
      if (cx != cy) return cx;
      return all.scores.totals[x] > all.scores.totals[y];
    });
    order.resize(5);
    std::sort(order.begin(), order.end());
    for (size_t k = 0; k < 5; ++k) {
      const size_t i = order[k];
      EXPECT_EQ(five.scored_nodes[k], all.scored_nodes[i]);
      EXPECT_EQ(five.scores.totals[k], all.scores.totals[i]);
      for (size_t pl = 0; pl < all.scores.plugin_scores.size(); ++pl) {
        if (all.scores.plugin_scores[pl].empty()) continue;
        EXPECT_EQ(five.scores.plugin_scores[pl][k], all.scores.plugin_scores[pl][i]);
      }
    }
  }
}

// Rejected nodes count as processed too.
TEST(SchedulerTest, RejectedNodesAdvanceTheStartIndex) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(200);
  // Nodes n0000..n0009 cannot host the big pod.
  for (int i = 0; i < 10; ++i) {
    h.cluster_.AddPod(MakePod()
                          .Name(Harness::Name("filler", i))
                          .Node(Harness::Name("n", i))
                          .Req({{"cpu", "3500m"}})
                          .Obj());
  }
  // 200 nodes: 49% = 98 -> 100 feasible nodes wanted; 10 rejected on the way.
  SchedulingAttempt a = h.Schedule(MakePod().Name("big").Req({{"cpu", "1"}}).Obj());
  EXPECT_EQ(a.feasible_nodes, 100);
  EXPECT_EQ(a.evaluated_nodes, 110);
  EXPECT_EQ(a.filter_statuses.size(), 10u);
  EXPECT_EQ(a.scored_nodes.front(), "n0010");
  EXPECT_EQ(a.scored_nodes.back(), "n0109");
  SchedulingAttempt b = h.Schedule(Harness::SmallPod("next"));
  EXPECT_EQ(b.scored_nodes.front(), "n0110");
}

// A search that wraps past the end of the node list keeps the rejected nodes on both sides of
// the wrap and stops at the same node a sequential scan would.
TEST(SchedulerTest, SearchAcrossTheWrapKeepsStatusesAndOrder) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(200);
  std::vector<int> full;
  for (int i = 190; i < 200; ++i) full.push_back(i);
  for (int i = 0; i < 5; ++i) full.push_back(i);
  for (int i : full) {
    h.cluster_.AddPod(MakePod()
                          .Name(Harness::Name("filler", i))
                          .Node(Harness::Name("n", i))
                          .Req({{"cpu", "3500m"}})
                          .Obj());
  }
  // The first pod fits everywhere: n0000..n0099, the next search starts at n0100.
  SchedulingAttempt first = h.Schedule(Harness::SmallPod("first"));
  ASSERT_EQ(first.scored_nodes.back(), "n0099");
  SchedulingAttempt a = h.Schedule(MakePod().Name("big").Req({{"cpu", "1"}}).Obj());
  EXPECT_EQ(a.feasible_nodes, 100);
  EXPECT_EQ(a.evaluated_nodes, 115);
  ASSERT_EQ(a.filter_statuses.size(), full.size());
  for (int i : full) EXPECT_EQ(a.filter_statuses.count(Harness::Name("n", i)), 1u) << i;
  std::vector<std::string> want;
  for (int i = 100; i < 190; ++i) want.push_back(Harness::Name("n", i));
  for (int i = 5; i < 15; ++i) want.push_back(Harness::Name("n", i));
  EXPECT_EQ(a.scored_nodes, want);
  SchedulingAttempt b = h.Schedule(Harness::SmallPod("next"));
  EXPECT_EQ(b.scored_nodes.front(), "n0015");
}

// Nodes outside a PreFilterResult are rejected without being processed: they neither count as
// evaluated nor move the start of the next search (kube-scheduler keeps them as the "absent"
// status).
TEST(SchedulerTest, NodesOutsideAPreFilterResultAreNotProcessed) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(200);
  // A field requirement takes exactly one value; two terms pin two nodes.
  NodeSelectorRequirement pin5{"metadata.name", "In", {"n0005"}};
  NodeSelectorRequirement pin7{"metadata.name", "In", {"n0007"}};
  Affinity affinity;
  affinity.node_affinity =
      NodeAffinity{NodeSelector{{NodeSelectorTerm{{}, {pin5}}, NodeSelectorTerm{{}, {pin7}}}}, {}};
  SchedulingAttempt a =
      h.Schedule(MakePod().Name("pinned").Req({{"cpu", "100m"}}).Affinity(affinity).Obj());
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled) << a.message;
  EXPECT_EQ(a.feasible_nodes, 2);
  EXPECT_EQ(a.evaluated_nodes, 2);
  // The next search starts two nodes further.
  SchedulingAttempt b = h.Schedule(Harness::SmallPod("next"));
  ASSERT_FALSE(b.scored_nodes.empty());
  EXPECT_EQ(b.scored_nodes.front(), "n0002");
}

// A recorded placement lists only the nodes Filter ran on: a pod pinned to one node of 200
// (a DaemonSet's pod) does not carry 199 "outside" rejections.
TEST(SchedulerTest, APlacedPodsRecordLeavesOutNodesOutsideThePreFilterResult) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(200);
  NodeSelectorRequirement pin{"metadata.name", "In", {"n0042"}};
  Affinity affinity;
  affinity.node_affinity = NodeAffinity{NodeSelector{{NodeSelectorTerm{{}, {pin}}}}, {}};
  SchedulingAttempt a =
      h.Schedule(MakePod().Name("pinned").Req({{"cpu", "100m"}}).Affinity(affinity).Obj());
  ASSERT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled) << a.message;
  EXPECT_EQ(a.node, "n0042");
  EXPECT_TRUE(a.filter_statuses.empty());
  // The same pod that does not fit still counts the outside nodes in its FitError.
  SchedulingAttempt b =
      h.Schedule(MakePod().Name("big").Req({{"cpu", "500"}}).Affinity(affinity).Obj());
  EXPECT_EQ(b.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_EQ(b.filter_statuses.size(), 200u);
}

TEST(SchedulerTest, PreFilterResultOutsideNodesInTheFitError) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(3);
  NodeSelectorRequirement pin{"metadata.name", "In", {"n0001"}};
  Affinity affinity;
  affinity.node_affinity = NodeAffinity{NodeSelector{{NodeSelectorTerm{{}, {pin}}}}, {}};
  SchedulingAttempt a =
      h.Schedule(MakePod().Name("pinned").Req({{"cpu", "5"}}).Affinity(affinity).Obj());
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_THAT(a.message, StartsWith("0/3 nodes are available: 1 Insufficient cpu, 2 node(s) "
                                    "didn't satisfy plugin(s) [NodeAffinity]. preemption: "));
}

// A PreBind plugin that notes the nomination the cluster holds for the pod while it runs, and
// says in PreBindPreFlight whether it has work.
class SeesNomination final : public PreBindPlugin, public PreBindPreFlight {
 public:
  SeesNomination(Handle& handle, std::map<std::string, std::string>* seen)
      : handle_(&handle), seen_(seen) {}
  std::string_view Name() const override { return "SeesNomination"; }
  Status PreBindPreFlightCheck(CycleState&, const PodInfo& pod, const std::string&) override {
    return pod->metadata.labels.count("work") ? Status::Success() : Status::Skip();
  }
  Status PreBind(CycleState&, const PodInfo& pod, const std::string&) override {
    Ptr<Pod> live = handle_->listers().GetPod(pod->metadata.namespace_, pod->metadata.name);
    (*seen_)[pod->metadata.name] = live ? live->status.nominated_node_name : "?";
    return Status::Success();
  }

 private:
  Handle* handle_;
  std::map<std::string, std::string>* seen_;
};

// NominatedNodeNameForExpectation: a pod whose PreBind has work shows its node as
// nominatedNodeName before PreBind runs, and binding clears it; a pod with nothing to do in
// PreBind is bound without the extra write.
TEST(SchedulerTest, APodWhosePreBindHasWorkIsNominatedBeforeBinding) {
  std::map<std::string, std::string> seen;
  PluginRegistration reg;
  reg.name = "SeesNomination";
  reg.factory = [&seen](const PluginArgs*, Handle& h) -> Result<std::unique_ptr<Plugin>> {
    return std::unique_ptr<Plugin>(std::make_unique<SeesNomination>(h, &seen));
  };
  std::vector<PluginRegistration> extra;
  extra.push_back(std::move(reg));
  Harness h(
      1,
      [](config::SchedulerConfiguration& c) {
        c.profiles[0].plugins.pre_bind.enabled.push_back({"SeesNomination", 0});
      },
      std::move(extra));
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(3);
  SchedulingAttempt a = h.Schedule(MakePod().Name("slow").Label("work", "y").Obj());
  ASSERT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled) << a.message;
  EXPECT_EQ(seen["slow"], a.node);
  EXPECT_EQ(h.cluster_.GetPod("default", "slow")->status.nominated_node_name, "");
  SchedulingAttempt b = h.Schedule(MakePod().Name("quick").Obj());
  ASSERT_EQ(b.outcome, SchedulingAttempt::Outcome::kScheduled) << b.message;
  EXPECT_EQ(seen["quick"], "");
}

TEST(SchedulerTest, SeededTieBreakIsReproducible) {
  auto run = [](uint64_t seed) {
    Harness h(seed);
    h.AddNodes(20);
    std::vector<std::string> placed;
    for (int i = 0; i < 12; ++i) {
      SchedulingAttempt a = h.Schedule(Harness::SmallPod("p" + std::to_string(i)));
      EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled);
      placed.push_back(a.node);
    }
    return placed;
  };
  const auto first = run(7);
  EXPECT_EQ(run(7), first);
  // Equal nodes tie: another seed breaks the ties differently.
  EXPECT_NE(run(8), first);
  // Every pod went to a node no other pod had (an empty node always scores higher).
  EXPECT_EQ(std::set<std::string>(first.begin(), first.end()).size(), first.size());
}

TEST(SchedulerTest, PodOfAnotherSchedulerIsNeverAttempted) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(2);
  h.cluster_.AddPod(MakePod().Name("theirs").SchedulerName("other-scheduler").Obj());
  EXPECT_FALSE(h.sched_->ScheduleOne(false));
  EXPECT_EQ(h.recorder_.size(), 0u);
  auto c = h.sched_->queue().counts();
  EXPECT_EQ(c.active + c.backoff + c.unschedulable + c.gated, 0u);
  EXPECT_EQ(h.NodeOf("theirs"), "");

  // Even if such a pod reaches the queue, ScheduleOne drops it without an attempt.
  h.sched_->queue().Add(PodInfo::Create(h.cluster_.GetPod("default", "theirs")));
  EXPECT_TRUE(h.sched_->ScheduleOne(false));
  EXPECT_EQ(h.recorder_.size(), 0u);
  EXPECT_EQ(h.NodeOf("theirs"), "");
  EXPECT_EQ(h.cluster_.write_counts().binds, 0);
}

TEST(SchedulerTest, NoNodes) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_EQ(a.message, "no nodes available to schedule pods");
}

// The node vanished between the cycle and the bind: the bind fails, the assumed pod is
// forgotten and the pod is retried after its backoff.
TEST(SchedulerTest, BindingFailureForgetsTheAssumedPodAndRequeues) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  auto ghost = Harness::NodeObj("ghost");
  h.sched_->OnNodeAdd(ghost);  // known to the scheduler's cache only
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kError);
  EXPECT_EQ(a.message, "running Bind plugin \"DefaultBinder\": nodes \"ghost\" not found");
  EXPECT_EQ(h.NodeOf("p"), "");
  EXPECT_EQ(h.sched_->cache().PodCount(), 0u);
  EXPECT_FALSE(h.sched_->cache().IsAssumedPod(*h.cluster_.GetPod("default", "p")));
  auto c = h.sched_->queue().counts();
  EXPECT_EQ(c.backoff, 1u);
  EXPECT_EQ(c.active, 0u);
  // The failure is recorded on the pod.
  auto live = h.cluster_.GetPod("default", "p");
  ASSERT_FALSE(live->status.conditions.empty());
  EXPECT_EQ(live->status.conditions.back().type, "PodScheduled");
  EXPECT_EQ(live->status.conditions.back().status, "False");
  EXPECT_EQ(live->status.conditions.back().reason, "SchedulerError");

  // A real node appears, the ghost goes; after the backoff the pod binds.
  h.sched_->OnNodeDelete(ghost);
  h.cluster_.AddNode(Harness::NodeObj("real"));
  EXPECT_FALSE(h.sched_->ScheduleOne(false));  // still backing off
  auto expiry = h.sched_->queue().NextBackoffExpiry();
  ASSERT_TRUE(expiry.has_value());
  EXPECT_EQ(*expiry - h.clock_.Now(), std::chrono::seconds(1));
  h.clock_.Set(*expiry);
  h.sched_->queue().FlushBackoffQCompleted();
  ASSERT_TRUE(h.sched_->ScheduleOne(false));
  SchedulingAttempt b = h.recorder_.Last();
  EXPECT_EQ(b.outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_EQ(b.attempt, 2);
  EXPECT_EQ(h.NodeOf("p"), "real");
}

// Pod-level resources (spec.resources) count in preemption as in Filter: the preemptor's
// pod-level 1500m needs the victim whose pod-level 1500m frees it (its containers ask nothing),
// and the pod asking 500m through its container is reprieved.
TEST(SchedulerTest, PreemptionCountsPodLevelResources) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.cluster_.AddNode(MakeNode().Name("n1").Capacity({{"cpu", "2"}, {"memory", "4Gi"}}).Obj());
  h.cluster_.AddPod(
      MakePod().Name("small").Node("n1").Priority(0).StartTime(1000).Req({{"cpu", "500m"}}).Obj());
  Pod big = *MakePod().Name("big").Node("n1").Priority(0).StartTime(2000).Obj();
  big.spec.resources.emplace().requests = testing::RL({{"cpu", "1500m"}});
  h.cluster_.AddPod(std::make_shared<const Pod>(std::move(big)));
  h.clock_.Advance(std::chrono::seconds(5));
  Pod boss = *MakePod().Name("boss").Priority(100).Obj();
  boss.spec.resources.emplace().requests = testing::RL({{"cpu", "1500m"}});
  SchedulingAttempt a = h.Schedule(std::make_shared<const Pod>(std::move(boss)));
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_EQ(a.message, "0/1 nodes are available: 1 Insufficient cpu.");
  ASSERT_TRUE(a.nominating.has_value());
  EXPECT_EQ(a.nominating->node_name, "n1");
  EXPECT_THAT(a.victims, ElementsAre("default/big"));
  EXPECT_NE(h.cluster_.GetPod("default", "small"), nullptr);
}

TEST(SchedulerTest, PreemptionNominatesAndThePodBindsNextTime) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.cluster_.AddNode(MakeNode().Name("n1").Capacity({{"cpu", "2"}, {"memory", "4Gi"}}).Obj());
  h.cluster_.AddPod(
      MakePod().Name("victim").Node("n1").Priority(0).StartTime(1000).Req({{"cpu", "2"}}).Obj());
  h.clock_.Advance(std::chrono::seconds(5));
  SchedulingAttempt a = h.Schedule(MakePod().Name("boss").Priority(100).Req({{"cpu", "2"}}).Obj());
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  // Preemption succeeded, so the message carries no "preemption:" part.
  EXPECT_EQ(a.message, "0/1 nodes are available: 1 Insufficient cpu.");
  ASSERT_TRUE(a.nominating.has_value());
  EXPECT_EQ(a.nominating->node_name, "n1");
  EXPECT_THAT(a.victims, ElementsAre("default/victim"));

  // The victim is gone, the preemptor is nominated (in the cluster and in the queue).
  EXPECT_EQ(h.cluster_.GetPod("default", "victim"), nullptr);
  EXPECT_EQ(h.cluster_.write_counts().deletes, 1);
  EXPECT_EQ(h.cluster_.GetPod("default", "boss")->status.nominated_node_name, "n1");
  ASSERT_EQ(h.sched_->queue().NominatedPodsForNode("n1").size(), 1u);
  EXPECT_EQ(h.sched_->queue().NominatedPodsForNode("n1")[0]->pod->metadata.name, "boss");
  EXPECT_EQ(h.sched_->cache().PodCount(), 0u);

  // The victim's deletion happened during the cycle, so the pod waits out its backoff only.
  auto c = h.sched_->queue().counts();
  EXPECT_EQ(c.backoff, 1u);
  EXPECT_EQ(c.unschedulable, 0u);
  EXPECT_FALSE(h.sched_->ScheduleOne(false));
  h.clock_.Advance(std::chrono::seconds(1));
  h.sched_->queue().FlushBackoffQCompleted();
  ASSERT_TRUE(h.sched_->ScheduleOne(false));
  SchedulingAttempt b = h.recorder_.Last();
  EXPECT_EQ(b.outcome, SchedulingAttempt::Outcome::kScheduled) << b.message;
  EXPECT_EQ(b.node, "n1");
  EXPECT_EQ(b.attempt, 2);
  EXPECT_EQ(h.NodeOf("boss"), "n1");
  EXPECT_EQ(h.cluster_.GetPod("default", "boss")->status.nominated_node_name, "");
  EXPECT_THAT(h.sched_->queue().NominatedPodsForNode("n1"), IsEmpty());
  EXPECT_FALSE(h.sched_->queue().HasNominatedPods());
}

// A lower-priority pod must not take the room a nominated preemptor is waiting for.
TEST(SchedulerTest, NominatedRoomIsKeptFromLowerPriorityPods) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.cluster_.AddNode(MakeNode().Name("n1").Capacity({{"cpu", "2"}, {"memory", "4Gi"}}).Obj());
  h.cluster_.AddPod(MakePod().Name("victim").Node("n1").StartTime(1).Req({{"cpu", "2"}}).Obj());
  SchedulingAttempt a = h.Schedule(MakePod().Name("boss").Priority(100).Req({{"cpu", "2"}}).Obj());
  ASSERT_TRUE(a.nominating.has_value());
  // The room is free now, but nominated to "boss".
  SchedulingAttempt b = h.Schedule(MakePod().Name("small").Priority(1).Req({{"cpu", "1"}}).Obj());
  EXPECT_EQ(b.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_THAT(b.message, StartsWith("0/1 nodes are available: 1 Insufficient cpu."));
  EXPECT_EQ(h.NodeOf("small"), "");
}

TEST(SchedulerTest, UnschedulablePodWaitsForAClusterChange) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(2);
  for (int i = 0; i < 2; ++i)
    h.cluster_.AddPod(MakePod()
                          .Name(Harness::Name("filler", i))
                          .Node(Harness::Name("n", i))
                          .Req({{"cpu", "2"}})
                          .Obj());
  SchedulingAttempt a = h.Schedule(MakePod().Name("huge").Req({{"cpu", "3"}}).Obj());
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_EQ(a.message,
            "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 "
            "No preemption victims found for incoming pod.");
  EXPECT_EQ(a.filter_statuses.size(), 2u);
  EXPECT_EQ(a.filter_statuses.at("n0000").plugin(), "NodeResourcesFit");
  auto c = h.sched_->queue().counts();
  EXPECT_EQ(c.unschedulable, 1u);
  // Time alone does not bring it back; a new node does.
  h.clock_.Advance(std::chrono::seconds(30));
  h.sched_->queue().FlushBackoffQCompleted();
  EXPECT_FALSE(h.sched_->ScheduleOne(false));
  h.cluster_.AddNode(MakeNode().Name("big").Capacity({{"cpu", "128"}, {"memory", "1Ti"}}).Obj());
  ASSERT_TRUE(h.sched_->ScheduleOne(false));
  EXPECT_EQ(h.NodeOf("huge"), "big");
}

TEST(SchedulerTest, QueueingHintsMoveOnlyPodsAChangeCanHelp) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(1);
  h.cluster_.AddPod(MakePod().Name("filler").Node("n0000").Req({{"cpu", "2"}}).Obj());
  h.cluster_.AddPod(MakePod().Name("other-pending").SchedulerName("elsewhere").Obj());
  SchedulingAttempt a = h.Schedule(MakePod().Name("huge").Req({{"cpu", "3"}}).Obj());
  ASSERT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  auto unschedulable = [&] { return h.sched_->queue().counts().unschedulable; };
  ASSERT_EQ(unschedulable(), 1u);

  // A node too small for the pod, a relabelled node, a heartbeat, the deletion of a pod that
  // held nothing: none can help NodeResourcesFit's rejection.
  h.cluster_.AddNode(MakeNode().Name("tiny").Capacity({{"cpu", "2"}, {"memory", "8Gi"}}).Obj());
  h.cluster_.AddNode(MakeNode()
                         .Name("n0000")
                         .Label("team", "x")
                         .Capacity({{"cpu", "4"}, {"memory", "32Gi"}})
                         .Obj());
  h.cluster_.AddNode(MakeNode()
                         .Name("n0000")
                         .Label("team", "x")
                         .Capacity({{"cpu", "4"}, {"memory", "32Gi"}})
                         .Obj());
  h.cluster_.RemovePod("default", "other-pending");
  EXPECT_EQ(unschedulable(), 1u);

  // The assigned filler going away frees room: the pod moves and binds where it was.
  h.cluster_.RemovePod("default", "filler");
  EXPECT_EQ(unschedulable(), 0u);
  h.clock_.Advance(std::chrono::seconds(30));
  h.sched_->queue().FlushBackoffQCompleted();
  ASSERT_TRUE(h.sched_->ScheduleOne(false));
  EXPECT_EQ(h.NodeOf("huge"), "n0000");
}

TEST(SchedulerTest, TaintRejectionWaitsForATolerableNode) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  auto tainted = [](bool with_taint, bool labelled) {
    auto b = MakeNode().Name("t").Capacity({{"cpu", "4"}, {"memory", "32Gi"}});
    if (with_taint) b.Taint("dedicated", "db", "NoSchedule");
    if (labelled) b.Label("disk", "ssd");
    return b.Obj();
  };
  h.cluster_.AddNode(tainted(true, false));
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  ASSERT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_EQ(a.filter_statuses.at("t").plugin(), "TaintToleration");
  h.cluster_.AddNode(tainted(true, true));  // relabelled, still tainted
  EXPECT_EQ(h.sched_->queue().counts().unschedulable, 1u);
  h.cluster_.AddNode(
      MakeNode().Name("also-tainted").Taint("x", "y", "NoExecute").Capacity({{"cpu", "4"}}).Obj());
  EXPECT_EQ(h.sched_->queue().counts().unschedulable, 1u);
  h.cluster_.AddNode(tainted(false, true));  // the taint is removed
  EXPECT_EQ(h.sched_->queue().counts().unschedulable, 0u);
}

// With informer lag the scheduler acts on what it has seen: a pod it has not seen is not
// scheduled, and a bound pod stays assumed (holding its room) until the bind is seen.
TEST(SchedulerTest, InformerLagKeepsTheAssumedPodUntilTheBindIsSeen) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.cluster_.AddNode(
      MakeNode().Name("only").Capacity({{"cpu", "1"}, {"memory", "1Gi"}, {"pods", "110"}}).Obj());
  h.cluster_.SetDelayedDelivery(true);
  h.cluster_.AddPod(MakePod().Name("first").Req({{"cpu", "600m"}}).Obj());
  h.cluster_.AddPod(MakePod().Name("second").Req({{"cpu", "600m"}}).Obj());
  EXPECT_FALSE(h.sched_->ScheduleOne(false));  // nothing seen yet
  EXPECT_EQ(h.cluster_.DeliverPendingEvents(), 2u);

  ASSERT_TRUE(h.sched_->ScheduleOne(false));
  EXPECT_EQ(h.NodeOf("first"), "only");
  Ptr<Pod> bound = h.cluster_.GetPod("default", "first");
  EXPECT_TRUE(h.sched_->cache().IsAssumedPod(*bound));
  EXPECT_EQ(h.cluster_.pending_events(), 1u);  // the bind, not yet seen

  // The assumed pod holds its room: the second does not fit beside it.
  ASSERT_TRUE(h.sched_->ScheduleOne(false));
  EXPECT_EQ(h.recorder_.Last().outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_EQ(h.NodeOf("second"), "");

  h.cluster_.DeliverPendingEvents();
  EXPECT_FALSE(h.sched_->cache().IsAssumedPod(*bound));
  EXPECT_EQ(h.sched_->cache().PodCount(), 1u);
}

// ---------------------------------------------------------------- misbehaving plugins

// Throws from Filter for pods named "boom-filter" and from Score for "boom-score".
class Thrower final : public FilterPlugin, public ScorePlugin {
 public:
  std::string_view Name() const override { return "Thrower"; }
  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo&) const override {
    if (pod->metadata.name == "boom-filter") throw std::runtime_error("filter exploded");
    return Status::Success();
  }
  Status Score(const CycleState&, const PodInfo& pod, const NodeInfo&,
               int64_t* score) const override {
    if (pod->metadata.name == "boom-score") throw 42;
    *score = 1;
    return Status::Success();
  }
};

TEST(SchedulerTest, APluginThatThrowsFailsOnlyThatPodsAttempt) {
  Harness h(1,
            [](config::SchedulerConfiguration& cfg) {
              cfg.profiles[0].plugins.multi_point.enabled.push_back({"Thrower", 1});
            },
            {PluginRegistration{"Thrower",
                                [](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
                                  return std::unique_ptr<Plugin>(std::make_unique<Thrower>());
                                },
                                {}}});
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(40);  // enough for the parallel filter and score loops
  SchedulingAttempt f = h.Schedule(Harness::SmallPod("boom-filter"));
  EXPECT_EQ(f.outcome, SchedulingAttempt::Outcome::kError);
  EXPECT_THAT(f.message, HasSubstr("a plugin threw: filter exploded"));
  SchedulingAttempt s = h.Schedule(Harness::SmallPod("boom-score"));
  EXPECT_EQ(s.outcome, SchedulingAttempt::Outcome::kError);
  EXPECT_THAT(s.message, HasSubstr("a plugin threw"));
  // The scheduler goes on with everyone else.
  EXPECT_EQ(h.Schedule(Harness::SmallPod("fine")).outcome, SchedulingAttempt::Outcome::kScheduled);
}

// Holds every pod at Permit for 30 s.

}  // namespace
}  // namespace berth
