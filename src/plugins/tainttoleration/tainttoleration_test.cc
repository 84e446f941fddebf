#include "plugins/tainttoleration/tainttoleration.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/framework/remedy.h"
#include "berth/testing/fake_handle.h"
#include "framework/node_batch_score_test_util.h"
#include "testing/builders.h"

namespace berth {
namespace {

using testing::MakeNode;
using testing::MakeNodeInfo;
using testing::MakePod;

std::unique_ptr<Plugin> NewPlugin() {
  testing::FakeHandle handle;
  auto plugin = TaintTolerationRegistration().factory(nullptr, handle);
  EXPECT_TRUE(plugin.ok());
  return std::move(plugin).value();
}

std::shared_ptr<const Pod> PodWith(std::vector<Toleration> tolerations) {
  auto b = MakePod().Name("pod1");
  for (auto& t : tolerations) b.Toleration(std::move(t));
  return b.Obj();
}

std::shared_ptr<const Node> NodeWith(const std::string& name, std::vector<Taint> taints) {
  auto b = MakeNode().Name(name);
  for (auto& t : taints) b.Taint(t.key, t.value, t.effect);
  return b.Obj();
}

TEST(TaintTolerationFilter, UpstreamCases) {
  struct Case {
    std::string name;
    std::shared_ptr<const Pod> pod;
    std::shared_ptr<const Node> node;
    bool fits;
  };
  std::vector<Case> cases = {
      {"A pod having no tolerations can't be scheduled onto a node with nonempty taints",
       PodWith({}), NodeWith("nodeA", {{"dedicated", "user1", "NoSchedule"}}), false},
      {"A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
       PodWith({{"dedicated", "", "user1", "NoSchedule"}}),
       NodeWith("nodeA", {{"dedicated", "user1", "NoSchedule"}}), true},
      {"A pod which can't be scheduled on a dedicated node assigned to user2 with effect "
       "NoSchedule",
       PodWith({{"dedicated", "Equal", "user2", "NoSchedule"}}),
       NodeWith("nodeA", {{"dedicated", "user1", "NoSchedule"}}), false},
      {"A pod can be scheduled onto the node, with a toleration uses operator Exists that "
       "tolerates the taints on the node",
       PodWith({{"foo", "Exists", "", "NoSchedule"}}),
       NodeWith("nodeA", {{"foo", "bar", "NoSchedule"}}), true},
      {"A pod has multiple tolerations, node has multiple taints, all the taints are tolerated",
       PodWith(
           {{"dedicated", "Equal", "user2", "NoSchedule"}, {"foo", "Exists", "", "NoSchedule"}}),
       NodeWith("nodeA", {{"dedicated", "user2", "NoSchedule"}, {"foo", "bar", "NoSchedule"}}),
       true},
      {"A pod has a toleration that keys and values match the taint on the node, but (non-empty) "
       "effect doesn't match",
       PodWith({{"foo", "Equal", "bar", "PreferNoSchedule"}}),
       NodeWith("nodeA", {{"foo", "bar", "NoSchedule"}}), false},
      {"The pod has a toleration that keys and values match the taint on the node, the effect of "
       "toleration is empty, and the effect of taint is NoSchedule",
       PodWith({{"foo", "Equal", "bar", ""}}), NodeWith("nodeA", {{"foo", "bar", "NoSchedule"}}),
       true},
      {"The pod has a toleration that key and value don't match the taint on the node, but the "
       "effect of taint on node is PreferNoSchedule",
       PodWith({{"dedicated", "Equal", "user2", "NoSchedule"}}),
       NodeWith("nodeA", {{"dedicated", "user1", "PreferNoSchedule"}}), true},
      {"The pod has no toleration, but the effect of taint on node is PreferNoSchedule",
       PodWith({}), NodeWith("nodeA", {{"dedicated", "user1", "PreferNoSchedule"}}), true},
      {"NoExecute taints are filtered too", PodWith({{"foo", "Exists", "", "NoSchedule"}}),
       NodeWith("nodeA", {{"foo", "bar", "NoExecute"}}), false},
      {"An empty key with Exists tolerates every taint", PodWith({{"", "Exists", "", ""}}),
       NodeWith("nodeA", {{"foo", "bar", "NoExecute"}, {"x", "y", "NoSchedule"}}), true},
      {"Only the first untolerated taint matters, the text is the same",
       PodWith({{"a", "Exists", "", ""}}),
       NodeWith("nodeA", {{"a", "1", "NoSchedule"}, {"b", "2", "NoSchedule"}}), false},
  };
  auto plugin = NewPlugin();
  auto* filter = dynamic_cast<FilterPlugin*>(plugin.get());
  ASSERT_NE(filter, nullptr);
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    CycleState state;
    auto pod = PodInfo::Create(tc.pod);
    NodeInfo ni = MakeNodeInfo(tc.node);
    Status got = filter->Filter(state, *pod, ni);
    if (tc.fits) {
      EXPECT_TRUE(got.IsSuccess()) << got.Message();
    } else {
      EXPECT_EQ(got.code(), Code::kUnschedulableAndUnresolvable);
      EXPECT_EQ(got.reasons(), std::vector<std::string>{"node(s) had untolerated taint(s)"});
    }
  }
}

TEST(TaintTolerationScore, UpstreamCases) {
  struct Case {
    std::string name;
    std::shared_ptr<const Pod> pod;
    std::vector<std::shared_ptr<const Node>> nodes;
    std::vector<int64_t> want;
  };
  std::vector<Case> cases = {
      {"node with taints tolerated by the pod, gets a higher score than those node with "
       "intolerable taints",
       PodWith({{"foo", "Equal", "bar", "PreferNoSchedule"}}),
       {NodeWith("nodeA", {{"foo", "bar", "PreferNoSchedule"}}),
        NodeWith("nodeB", {{"foo", "blah", "PreferNoSchedule"}})},
       {kMaxNodeScore, 0}},
      {"the nodes that all of their taints are tolerated by the pod, get the same score, no "
       "matter how many tolerable taints a node has",
       PodWith({{"cpu-type", "Equal", "arm64", "PreferNoSchedule"},
                {"disk-type", "Equal", "ssd", "PreferNoSchedule"}}),
       {NodeWith("nodeA", {}), NodeWith("nodeB", {{"cpu-type", "arm64", "PreferNoSchedule"}}),
        NodeWith("nodeC", {{"cpu-type", "arm64", "PreferNoSchedule"},
                           {"disk-type", "ssd", "PreferNoSchedule"}})},
       {kMaxNodeScore, kMaxNodeScore, kMaxNodeScore}},
      {"the more intolerable taints a node has, the lower score it gets",
       PodWith({{"foo", "Equal", "bar", "PreferNoSchedule"}}),
       {NodeWith("nodeA", {}), NodeWith("nodeB", {{"cpu-type", "arm64", "PreferNoSchedule"}}),
        NodeWith("nodeC", {{"cpu-type", "arm64", "PreferNoSchedule"},
                           {"disk-type", "ssd", "PreferNoSchedule"}})},
       {kMaxNodeScore, 50, 0}},
      {"only taints and tolerations that have effect PreferNoSchedule are checked",
       PodWith({{"cpu-type", "Equal", "arm64", "NoSchedule"},
                {"disk-type", "Equal", "ssd", "NoSchedule"}}),
       {NodeWith("nodeA", {}), NodeWith("nodeB", {{"cpu-type", "arm64", "NoSchedule"}}),
        NodeWith("nodeC", {{"cpu-type", "arm64", "PreferNoSchedule"},
                           {"disk-type", "ssd", "PreferNoSchedule"}})},
       {kMaxNodeScore, kMaxNodeScore, 0}},
      {"Default behaviour No taints and tolerations, lands on node with no taints",
       PodWith({}),
       {NodeWith("nodeA", {}), NodeWith("nodeB", {{"cpu-type", "arm64", "PreferNoSchedule"}})},
       {kMaxNodeScore, 0}},
      {"a toleration without effect tolerates PreferNoSchedule taints",
       PodWith({{"cpu-type", "Exists", "", ""}}),
       {NodeWith("nodeA", {{"cpu-type", "arm64", "PreferNoSchedule"}}),
        NodeWith("nodeB", {{"gpu", "yes", "PreferNoSchedule"}})},
       {kMaxNodeScore, 0}},
      {"no node has untolerated taints: everyone gets the maximum",
       PodWith({}),
       {NodeWith("nodeA", {}), NodeWith("nodeB", {{"x", "y", "NoSchedule"}})},
       {kMaxNodeScore, kMaxNodeScore}},
      {"three taint counts normalize by the maximum",
       PodWith({}),
       {NodeWith("nodeA", {{"a", "", "PreferNoSchedule"}}),
        NodeWith("nodeB", {{"a", "", "PreferNoSchedule"},
                           {"b", "", "PreferNoSchedule"},
                           {"c", "", "PreferNoSchedule"}}),
        NodeWith("nodeC", {{"a", "", "PreferNoSchedule"}, {"b", "", "PreferNoSchedule"}})},
       {67, 0, 34}},
  };
  auto plugin = NewPlugin();
  auto* pre = dynamic_cast<PreScorePlugin*>(plugin.get());
  auto* scorer = dynamic_cast<ScorePlugin*>(plugin.get());
  ASSERT_NE(pre, nullptr);
  ASSERT_NE(scorer, nullptr);
  ASSERT_TRUE(scorer->HasNormalize());
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    Snapshot snapshot = Snapshot::Build(tc.nodes, {});
    std::vector<const NodeInfo*> feasible(snapshot.nodes().begin(), snapshot.nodes().end());
    auto pod = PodInfo::Create(tc.pod);
    CycleState state;
    ASSERT_TRUE(pre->PreScore(state, *pod, feasible).IsSuccess());
    std::vector<NodeScore> scores;
    for (const auto& n : tc.nodes) {
      const NodeInfo* ni = snapshot.Get(n->metadata.name);
      NodeScore s{ni, -1};
      ASSERT_TRUE(scorer->Score(state, *pod, *ni, &s.score).IsSuccess());
      scores.push_back(s);
    }
    // Scored as one run: the same raw scores.
    auto batched = ScoreAsOneRun(plugin.get(), state, *pod, feasible);
    ASSERT_TRUE(batched.has_value());
    for (size_t i = 0; i < scores.size(); ++i) EXPECT_EQ((*batched)[i], scores[i].score);
    ASSERT_TRUE(scorer->NormalizeScore(state, *pod, scores).IsSuccess());
    std::vector<int64_t> got;
    for (const auto& s : scores) got.push_back(s.score);
    EXPECT_EQ(got, tc.want);
  }
}

TEST(TaintTolerationScore, FactsVector) {
  // Raw counts [0, 1, 2] normalize to [100, 50, 0].
  std::vector<NodeScore> scores = {{nullptr, 0}, {nullptr, 1}, {nullptr, 2}};
  auto plugin = NewPlugin();
  auto* scorer = dynamic_cast<ScorePlugin*>(plugin.get());
  CycleState state;
  auto pod = MakePod().Name("p").Info();
  ASSERT_TRUE(scorer->NormalizeScore(state, *pod, scores).IsSuccess());
  EXPECT_EQ(scores[0].score, 100);
  EXPECT_EQ(scores[1].score, 50);
  EXPECT_EQ(scores[2].score, 0);
}

TEST(TaintTolerationScore, ScoreWithoutPreScoreIsAnError) {
  auto plugin = NewPlugin();
  auto* scorer = dynamic_cast<ScorePlugin*>(plugin.get());
  CycleState state;
  auto pod = MakePod().Name("p").Info();
  NodeInfo ni = MakeNodeInfo(NodeWith("n", {}));
  int64_t score = -1;
  EXPECT_EQ(scorer->Score(state, *pod, ni, &score).code(), Code::kError);
}

}  // namespace
}  // namespace berth

namespace berth {
namespace {

// FilterRemedySearch: tolerations for the node's untolerated NoSchedule/NoExecute taints, all
// together, matched as Filter matches them; the changed pod then passes Filter.
TEST(TaintTolerationRemedies, TolerateEveryUntoleratedTaintOfTheNodeTogether) {
  auto plugin = NewPlugin();
  auto* remedies = dynamic_cast<const FilterRemedySearch*>(plugin.get());
  ASSERT_NE(remedies, nullptr);
  // The empty-key Equal toleration tolerates "dedicated=gpu" (any key, that value).
  auto pod = PodWith({{"", "Equal", "gpu", "", {}}});
  auto node = NodeWith("n", {{"dedicated", "gpu", "NoSchedule"},
                             {"team", "ml", "NoSchedule"},
                             {"maintenance", "", "NoExecute"},
                             {"soft", "x", "PreferNoSchedule"}});
  auto* filter = dynamic_cast<FilterPlugin*>(plugin.get());
  CycleState state;
  const NodeInfo ni = MakeNodeInfo(node);
  const Status rejected = filter->Filter(state, *PodInfo::Create(pod), ni);
  ASSERT_FALSE(rejected.IsSuccess());
  const RejectedNode asked[] = {{node.get(), &rejected}};
  auto r = remedies->ProposeRemedies(*pod, asked, 8).remedies;
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].kind, "toleration");
  EXPECT_EQ(r[0].description,
            "add a toleration for the taints team=ml:NoSchedule, maintenance:NoExecute");
  EXPECT_EQ(r[0].pod_change,
            "tolerations:\n- key: team\n  operator: Equal\n  value: ml\n  effect: NoSchedule\n"
            "- key: maintenance\n  operator: Exists\n  effect: NoExecute\n");
  ASSERT_NE(r[0].pod, nullptr);
  EXPECT_TRUE(r[0].nodes.empty());
  EXPECT_TRUE(filter->Filter(state, *PodInfo::Create(r[0].pod), ni).IsSuccess());
  EXPECT_TRUE(remedies->ProposeRemedies(*r[0].pod, asked, 8).remedies.empty());
}

}  // namespace
}  // namespace berth

namespace berth {
namespace {

// TaintTolerationComparisonOperators: Lt and Gt tolerations in Filter, Score and the queueing
// hint, with the gate on; with it off (the default) they tolerate nothing.
std::unique_ptr<Plugin> NewPluginWithComparisonOperators(bool on) {
  config::FeatureGates gates;
  std::vector<std::string> warnings;
  EXPECT_TRUE(gates
                  .Set(on ? "TaintTolerationComparisonOperators=true"
                          : "TaintTolerationComparisonOperators=false",
                       &warnings)
                  .ok());
  testing::FakeHandle handle;
  auto plugin = TaintTolerationRegistration(gates).factory(nullptr, handle);
  EXPECT_TRUE(plugin.ok());
  return std::move(plugin).value();
}

TEST(TaintTolerationComparisonOperators, Filter) {
  struct Case {
    std::string name;
    std::shared_ptr<const Pod> pod;
    std::shared_ptr<const Node> node;
    bool fits_with_gate;
  };
  const std::string sla = "node.kubernetes.io/sla";
  const std::vector<Case> cases = {
      {"pod with Gt toleration, taint value above it", PodWith({{sla, "Gt", "950", "NoSchedule"}}),
       NodeWith("nodeA", {{sla, "999", "NoSchedule"}}), true},
      {"pod with Gt toleration, taint value below it", PodWith({{sla, "Gt", "950", "NoSchedule"}}),
       NodeWith("nodeA", {{sla, "800", "NoSchedule"}}), false},
      {"pod with Lt toleration, taint value below it", PodWith({{sla, "Lt", "950", "NoSchedule"}}),
       NodeWith("nodeA", {{sla, "800", "NoSchedule"}}), true},
      {"pod with Lt toleration, equal taint value", PodWith({{sla, "Lt", "950", ""}}),
       NodeWith("nodeA", {{sla, "950", "NoExecute"}}), false},
      {"pod with Gt toleration, non-numeric taint value",
       PodWith({{sla, "Gt", "950", "NoSchedule"}}),
       NodeWith("nodeA", {{sla, "high", "NoSchedule"}}), false},
  };
  auto on = NewPluginWithComparisonOperators(true);
  auto off = NewPluginWithComparisonOperators(false);
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    CycleState state;
    auto pod = PodInfo::Create(tc.pod);
    NodeInfo ni = MakeNodeInfo(tc.node);
    EXPECT_EQ(dynamic_cast<FilterPlugin*>(on.get())->Filter(state, *pod, ni).IsSuccess(),
              tc.fits_with_gate);
    EXPECT_EQ(dynamic_cast<FilterPlugin*>(off.get())->Filter(state, *pod, ni).code(),
              Code::kUnschedulableAndUnresolvable);
  }
}

TEST(TaintTolerationComparisonOperators, ScoreCountsOnlyUntoleratedPreferNoScheduleTaints) {
  auto plugin = NewPluginWithComparisonOperators(true);
  auto* pre = dynamic_cast<PreScorePlugin*>(plugin.get());
  auto* scorer = dynamic_cast<ScorePlugin*>(plugin.get());
  auto pod = PodInfo::Create(PodWith({{"sla", "Gt", "950", "PreferNoSchedule"}}));
  auto high = NodeWith("high", {{"sla", "999", "PreferNoSchedule"}});
  auto low = NodeWith("low", {{"sla", "800", "PreferNoSchedule"}});
  Snapshot snapshot = Snapshot::Build({high, low}, {});
  std::vector<const NodeInfo*> feasible(snapshot.nodes().begin(), snapshot.nodes().end());
  CycleState state;
  ASSERT_TRUE(pre->PreScore(state, *pod, feasible).IsSuccess());
  int64_t raw_high = -1, raw_low = -1;
  ASSERT_TRUE(scorer->Score(state, *pod, *snapshot.Get("high"), &raw_high).IsSuccess());
  ASSERT_TRUE(scorer->Score(state, *pod, *snapshot.Get("low"), &raw_low).IsSuccess());
  EXPECT_EQ(raw_high, 0);
  EXPECT_EQ(raw_low, 1);
}

TEST(TaintTolerationComparisonOperators, NodeTaintHintFollowsTheGate) {
  auto pod = PodWith({{"sla", "Gt", "950", "NoSchedule"}});
  auto old_node = NodeWith("n", {{"sla", "800", "NoSchedule"}});
  auto new_node = NodeWith("n", {{"sla", "999", "NoSchedule"}});
  for (bool on : {true, false}) {
    auto plugin = NewPluginWithComparisonOperators(on);
    auto events = dynamic_cast<EnqueueExtensions*>(plugin.get())->EventsToRegister();
    ASSERT_EQ(events.size(), 1u);
    auto hint = events[0].hint(*pod, old_node, new_node);
    ASSERT_TRUE(hint.ok());
    EXPECT_EQ(*hint, on ? QueueingHint::kQueue : QueueingHint::kQueueSkip) << on;
  }
}

}  // namespace
}  // namespace berth
