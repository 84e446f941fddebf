#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "berth/testing/fake_handle.h"
#include "framework/async_pod_deleter.h"
#include "framework/in_memory_cluster.h"
#include "framework/parallelizer.h"
#include "plugins/defaultpreemption/plugin.h"
#include "plugins/defaultpreemption/plugin_test_util.h"
#include "testing/builders.h"

namespace berth {
namespace {

using defaultpreemption_test::Env;
using defaultpreemption_test::kHigh;
using defaultpreemption_test::kLarge;
using defaultpreemption_test::kLow;
using defaultpreemption_test::kMedium;
using defaultpreemption_test::kMid;
using defaultpreemption_test::kSmall;
using defaultpreemption_test::kVeryHigh;
using defaultpreemption_test::kVeryLarge;
using defaultpreemption_test::N;
using defaultpreemption_test::Pdb;
using defaultpreemption_test::Req;
using defaultpreemption_test::Running;
using defaultpreemption_test::VictimNames;
using preemption::Candidate;
using preemption::CompiledPdb;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeNode;
using testing::MakePod;

// ---------------------------------------------------------------- dry run

// Long by design: the table of kube-scheduler's TestDryRunPreemption, one row per case.
TEST(DefaultPreemptionTest, DryRunPreemption) {
  struct WantCandidate {
    std::string node;
    std::vector<std::string> victims;  // sorted by name
    int64_t violations = 0;
  };
  struct Case {
    std::string name;
    std::vector<std::string> node_names;
    Ptr<Pod> pod;
    std::vector<Ptr<Pod>> pods;
    std::vector<Ptr<PodDisruptionBudget>> pdbs;
    Code counting_code = Code::kSuccess;
    config::DefaultPreemptionArgs args = {};
    int32_t offset = 0;
    std::vector<WantCandidate> want;  // sorted by node
    int want_filter_calls;
  };
  auto args = [](int32_t pct, int32_t abs) {
    config::DefaultPreemptionArgs a;
    a.min_candidate_nodes_percentage = pct;
    a.min_candidate_nodes_absolute = abs;
    return a;
  };
  const Labels foo{{"app", "foo"}};
  auto foo_pod = [](const std::string& name, const std::string& node, int32_t prio, Req req) {
    return MakePod().Name(name).Node(node).Label("app", "foo").Priority(prio).Req(req).Obj();
  };
  const std::vector<std::string> five = {"node1", "node2", "node3", "node4", "node5"};
  const std::vector<Ptr<Pod>> five_mid = {
      Running("p1", "node1", kMid, kLarge), Running("p2", "node2", kMid, kLarge),
      Running("p3", "node3", kMid, kLarge), Running("p4", "node4", kMid, kLarge),
      Running("p5", "node5", kMid, kLarge)};
  const std::vector<Case> cases = {
      {"a pod that does not fit on any node",
       {"node1", "node2"},
       MakePod().Name("p").Priority(kHigh).Obj(),
       {Running("p1", "node1", kMid, {}), Running("p2", "node2", kMid, {})},
       {},
       Code::kUnschedulable,
       {},
       0,
       {},
       2},
      {"a pod that fits on both nodes when lower priority pods are preempted",
       {"node1", "node2"},
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {Running("p1", "node1", kMid, kLarge), Running("p2", "node2", kMid, kLarge)},
       {},
       Code::kSuccess,
       {},
       0,
       {{"node1", {"p1"}}, {"node2", {"p2"}}},
       4},
      {"other pods running are higher priority, no preemption would happen",
       {"node1", "node2"},
       MakePod().Name("p").Priority(kLow).Req(kLarge).Obj(),
       {Running("p1", "node1", kMid, kLarge), Running("p2", "node2", kMid, kLarge)},
       {},
       Code::kSuccess,
       {},
       0,
       {},
       0},
      {"medium priority pod is preempted, but lower priority one stays as it is small",
       {"node1", "node2"},
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {Running("p1.1", "node1", kLow, kSmall), Running("p1.2", "node1", kMid, kLarge),
        Running("p2", "node2", kMid, kLarge)},
       {},
       Code::kSuccess,
       {},
       0,
       {{"node1", {"p1.2"}}, {"node2", {"p2"}}},
       5},
      {"mixed priority pods are preempted",
       {"node1", "node2"},
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {Running("p1.1", "node1", kMid, kSmall), Running("p1.2", "node1", kLow, kSmall),
        Running("p1.3", "node1", kMid, kMedium), Running("p1.4", "node1", kHigh, kSmall),
        Running("p2", "node2", kHigh, kLarge)},
       {},
       Code::kSuccess,
       {},
       0,
       {{"node1", {"p1.2", "p1.3"}}},
       4},
      {"mixed priority pods are preempted, later start time is picked when priorities are equal",
       {"node1", "node2"},
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {Running("p1.1", "node1", kLow, kSmall, 5), Running("p1.2", "node1", kLow, kSmall, 4),
        Running("p1.3", "node1", kMid, kMedium, 3), Running("p1.4", "node1", kHigh, kSmall, 2),
        Running("p2", "node2", kHigh, kLarge, 1)},
       {},
       Code::kSuccess,
       {},
       0,
       {{"node1", {"p1.1", "p1.3"}}},
       4},
      {"a filter rejecting every node leaves no candidate",
       {"node1", "node2"},
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {Running("p1", "node1", kMid, kLarge), Running("p2", "node2", kMid, kLarge)},
       {},
       Code::kUnschedulable,
       {},
       0,
       {},
       2},
      {"preemption with violation of the same pdb",
       {"node1"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {foo_pod("p1.1", "node1", kMid, kMedium), foo_pod("p1.2", "node1", kMid, kMedium)},
       {Pdb(foo, 1)},
       Code::kSuccess,
       {},
       0,
       {{"node1", {"p1.1", "p1.2"}, 1}},
       3},
      {"pdb with a disrupted pod that is not a victim still counts the violation",
       {"node1"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {foo_pod("p1.1", "node1", kMid, kMedium), foo_pod("p1.2", "node1", kMid, kMedium)},
       {Pdb(foo, 1, {"p2"})},
       Code::kSuccess,
       {},
       0,
       {{"node1", {"p1.1", "p1.2"}, 1}},
       3},
      {"pdb with the victim among disrupted pods: no violation",
       {"node1"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {foo_pod("p1.1", "node1", kMid, kMedium), foo_pod("p1.2", "node1", kMid, kMedium)},
       {Pdb(foo, 1, {"p1.2"})},
       Code::kSuccess,
       {},
       0,
       {{"node1", {"p1.1", "p1.2"}, 0}},
       3},
      {"disrupted victim is non-violating, the others still exceed the budget",
       {"node1"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {foo_pod("p1.1", "node1", kMid, kMedium), foo_pod("p1.2", "node1", kMid, kMedium),
        foo_pod("p1.3", "node1", kMid, kMedium)},
       {Pdb(foo, 1, {"p1.3"})},
       Code::kSuccess,
       {},
       0,
       {{"node1", {"p1.1", "p1.2", "p1.3"}, 1}},
       4},
      {"all nodes are candidates, but the args limit them to 2",
       five,
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       five_mid,
       {},
       Code::kSuccess,
       args(40, 1),
       4,
       {{"node1", {"p1"}}, {"node5", {"p5"}}},
       4},
      {"offset wraps around (second cycle)",
       five,
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       five_mid,
       {},
       Code::kSuccess,
       args(40, 1),
       1,
       {{"node2", {"p2"}}, {"node3", {"p3"}}},
       4},
      {"offset wraps around (third cycle)",
       five,
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       five_mid,
       {},
       Code::kSuccess,
       args(40, 1),
       3,
       {{"node4", {"p4"}}, {"node5", {"p5"}}},
       4},
      {"some nodes are not candidates, the args limit them to 2",
       five,
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {Running("p1", "node1", kMid, kLarge), Running("p2", "node2", kVeryHigh, kLarge),
        Running("p3", "node3", kMid, kLarge), Running("p4", "node4", kMid, kLarge),
        Running("p5", "node5", kVeryHigh, kLarge)},
       {},
       Code::kSuccess,
       args(40, 1),
       4,
       {{"node1", {"p1"}}, {"node3", {"p3"}}},
       4},
      {"dry run looks past numCandidates until a node without PDB violations is found",
       five,
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {foo_pod("p1", "node1", kMid, kLarge), foo_pod("p2", "node2", kMid, kLarge),
        Running("p3", "node3", kMid, kLarge), Running("p4", "node4", kMid, kLarge),
        foo_pod("p5", "node5", kMid, kLarge)},
       {Pdb(foo, 0)},
       Code::kSuccess,
       args(40, 2),
       4,
       // node2 is a violating candidate too, but the list of those is already full.
       {{"node1", {"p1"}, 1}, {"node3", {"p3"}}, {"node5", {"p5"}, 1}},
       8},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Ptr<Node>> nodes;
    for (const auto& n : c.node_names) nodes.push_back(N(n));
    Env env(nodes, c.pods, c.pod, c.pdbs, c.args, 1, c.counting_code);
    const int32_t num = preemption::CalculateNumCandidates(static_cast<int32_t>(nodes.size()),
                                                           c.args.min_candidate_nodes_percentage,
                                                           c.args.min_candidate_nodes_absolute);
    auto got = env.DryRunAll(c.offset, num, c.pdbs);
    std::sort(got.candidates.begin(), got.candidates.end(),
              [](const Candidate& a, const Candidate& b) { return a.node_name < b.node_name; });
    ASSERT_EQ(got.candidates.size(), c.want.size());
    for (size_t i = 0; i < c.want.size(); ++i) {
      EXPECT_EQ(got.candidates[i].node_name, c.want[i].node);
      EXPECT_EQ(VictimNames(got.candidates[i].victims, true), c.want[i].victims) << c.want[i].node;
      EXPECT_EQ(got.candidates[i].victims.num_pdb_violations, c.want[i].violations)
          << c.want[i].node;
    }
    EXPECT_EQ(env.counting->calls.load(), c.want_filter_calls);
  }
}

// Victims come out most important first (priority, then earlier start); pods of at least the
// preemptor's priority are never victims.
TEST(DefaultPreemptionTest, SelectVictimsOnNode) {
  const std::vector<Ptr<Pod>> pods = {
      Running("young-low", "node1", kLow, kSmall, 9), Running("old-low", "node1", kLow, kSmall, 1),
      Running("mid", "node1", kMid, kSmall, 5), Running("high", "node1", kVeryHigh, kSmall)};
  auto preemptor = MakePod().Name("p").Priority(kHigh).Req({{"cpu", "500m"}}).Obj();
  {
    // 100m of the high-priority pod remain: the pod cannot fit even after evicting the rest.
    Env env({N("node1")}, pods, preemptor);
    NodeInfo copy = *env.handle.snapshot().Get("node1");
    CycleState state = env.state.Clone();
    preemption::Victims victims;
    Status s = env.plugin.SelectVictimsOnNode(state, *env.pod, copy, {}, &victims);
    EXPECT_EQ(s.code(), Code::kUnschedulable);
    EXPECT_EQ(s.reasons(), std::vector<std::string>{"Insufficient cpu"});
  }
  {
    Env env({N("node1", {{"cpu", "600m"}, {"memory", "500"}})}, pods, preemptor);
    const NodeInfo& original = *env.handle.snapshot().Get("node1");
    NodeInfo copy = original;
    CycleState state = env.state.Clone();
    preemption::Victims victims;
    ASSERT_TRUE(env.plugin.SelectVictimsOnNode(state, *env.pod, copy, {}, &victims).IsSuccess());
    EXPECT_EQ(VictimNames(victims), (std::vector<std::string>{"mid", "old-low", "young-low"}));
    EXPECT_EQ(victims.num_pdb_violations, 0);
    EXPECT_EQ(original.pods().size(), 4u);  // the snapshot is untouched
  }
  {
    // Only the cheapest victims go: the 300m pod must, the 100m one may stay.
    Env env({N("node1")},
            {Running("small", "node1", kLow, kSmall), Running("large", "node1", kMid, kLarge)},
            MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj());
    NodeInfo copy = *env.handle.snapshot().Get("node1");
    CycleState state = env.state.Clone();
    preemption::Victims victims;
    ASSERT_TRUE(env.plugin.SelectVictimsOnNode(state, *env.pod, copy, {}, &victims).IsSuccess());
    EXPECT_EQ(VictimNames(victims), std::vector<std::string>{"large"});
  }
  {
    // Budget-protected pods get the first chance to stay, even when a non-protected pod is more
    // important: "guarded" stays and the older "plain" goes.
    const std::vector<Ptr<PodDisruptionBudget>> pdbs = {Pdb({{"app", "foo"}}, 0)};
    Env env({N("node1")},
            {MakePod()
                 .Name("guarded")
                 .Node("node1")
                 .Label("app", "foo")
                 .Priority(kLow)
                 .Req(kMedium)
                 .StartTime(9)
                 .Obj(),
             Running("plain", "node1", kLow, kMedium, 1)},
            MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(), pdbs);
    NodeInfo copy = *env.handle.snapshot().Get("node1");
    CycleState state = env.state.Clone();
    const auto compiled = preemption::CompilePdbs(pdbs);
    preemption::Victims victims;
    ASSERT_TRUE(
        env.plugin.SelectVictimsOnNode(state, *env.pod, copy, compiled, &victims).IsSuccess());
    EXPECT_EQ(VictimNames(victims), std::vector<std::string>{"plain"});
    EXPECT_EQ(victims.num_pdb_violations, 0);
  }
}

TEST(DefaultPreemptionTest, DryRunAccountsForHigherNominatedPods) {
  Env env({N("node1"), N("node2")},
          {Running("v1", "node1", kLow, kLarge), Running("v2", "node2", kLow, kLarge)},
          MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj());
  auto nominated =
      MakePod().Name("nom").Priority(kVeryHigh).Req(kLarge).NominatedNodeName("node1").Obj();
  env.handle.fake_nominator().pods["node1"] = {PodInfo::Create(nominated)};
  auto got = env.DryRunAll(0, 2, {});
  ASSERT_EQ(got.candidates.size(), 1u);
  EXPECT_EQ(got.candidates[0].node_name, "node2");
  ASSERT_EQ(got.statuses.count("node1"), 1u);
  EXPECT_EQ(got.statuses.at("node1").reasons(),
            (std::vector<std::string>{"Insufficient cpu", "Insufficient memory"}));
}

// Parallel batches give exactly what a one-at-a-time evaluation gives.
TEST(DefaultPreemptionTest, ParallelDryRunMatchesSequential) {
  std::vector<Ptr<Node>> nodes;
  std::vector<Ptr<Pod>> pods;
  for (int i = 0; i < 60; ++i) {
    const std::string node = fmt::format("node{:02}", i);
    nodes.push_back(N(node));
    // Every third node only has a high-priority pod; every fifth node's pods are under a budget.
    const int32_t prio = i % 3 == 0 ? kVeryHigh : kLow;
    auto b = MakePod().Name(fmt::format("a{:02}", i)).Node(node).Priority(prio).Req(kLarge);
    if (i % 5 == 0) b.Label("app", "foo");
    pods.push_back(b.Obj());
    pods.push_back(Running(fmt::format("b{:02}", i), node, kLow, kSmall, i + 1));
  }
  const std::vector<Ptr<PodDisruptionBudget>> pdbs = {Pdb({{"app", "foo"}}, 0)};
  auto preemptor = MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj();
  for (int32_t num : {1, 5, 17}) {
    for (int32_t offset : {0, 7, 59}) {
      SCOPED_TRACE(fmt::format("num={} offset={}", num, offset));
      Env seq(nodes, pods, preemptor, pdbs);
      Env par(nodes, pods, preemptor, pdbs, {}, 4);
      auto a = seq.DryRunAll(offset, num, pdbs);
      auto b = par.DryRunAll(offset, num, pdbs);
      ASSERT_EQ(a.candidates.size(), b.candidates.size());
      for (size_t i = 0; i < a.candidates.size(); ++i) {
        EXPECT_EQ(a.candidates[i].node_name, b.candidates[i].node_name);
        EXPECT_EQ(VictimNames(a.candidates[i].victims), VictimNames(b.candidates[i].victims));
      }
      EXPECT_EQ(a.statuses.size(), b.statuses.size());
    }
  }
}

}  // namespace
}  // namespace berth
