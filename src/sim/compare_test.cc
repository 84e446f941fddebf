// berth compare: the differences are those of separate simulations, explained from the
// simulator's own score records; the metrics count what the runs left.
#include "sim/compare.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/load.h"
#include "plugins/registry.h"
#include "testing/builders.h"

namespace berth::sim {
namespace {

using testing::MakeNode;
using testing::MakePod;

constexpr std::string_view kBinPacking = R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
)";

std::vector<Object> Cluster() {
  std::vector<Object> out;
  for (int i = 0; i < 4; ++i)
    out.push_back(Object(MakeNode()
                             .Name("n" + std::to_string(i))
                             .Label("topology.kubernetes.io/zone", i < 2 ? "a" : "b")
                             .Capacity({{"cpu", "4"}, {"memory", "16Gi"}, {"pods", "110"}})
                             .Obj()));
  out.push_back(Object(MakePod().Name("running").Node("n0").Req({{"cpu", "1"}}).Obj()));
  for (int i = 0; i < 6; ++i)
    out.push_back(Object(
        MakePod().Name("p" + std::to_string(i)).Req({{"cpu", "500m"}, {"memory", "1Gi"}}).Obj()));
  out.push_back(Object(MakePod().Name("huge").Req({{"cpu", "64"}}).Obj()));
  return out;
}

PodResult Placed(std::string pod, std::string node) {
  PodResult r;
  r.pod = std::move(pod);
  r.result = node.empty() ? "Unschedulable" : "Scheduled";
  r.node = std::move(node);
  return r;
}

TEST(CompareTest, FindDifferencesListsPodsWhoseNodeOrResultDiffers) {
  SimulationResult a, b;
  a.results = {Placed("ns/same", "n1"), Placed("ns/moved", "n1"), Placed("ns/lost", "n2"),
               Placed("ns/pending", "")};
  b.results = {Placed("ns/pending", ""), Placed("ns/lost", ""), Placed("ns/moved", "n3"),
               Placed("ns/same", "n1")};
  auto diffs = FindDifferences({&a, &b});
  ASSERT_EQ(diffs.size(), 2u);
  EXPECT_EQ(diffs[0].pod, "ns/moved");  // the first run's order
  EXPECT_THAT(diffs[0].candidates, ::testing::ElementsAre("n1", "n3"));
  EXPECT_EQ(diffs[0].per_config[1].node, "n3");
  EXPECT_EQ(diffs[1].pod, "ns/lost");
  EXPECT_THAT(diffs[1].candidates, ::testing::ElementsAre("n2"));
  EXPECT_EQ(diffs[1].per_config[1].result, "Unschedulable");
}

TEST(CompareTest, ViewOfReadsWeightedScoresRejectionsAndUnevaluatedNodes) {
  SchedulingAttempt a;
  a.score_plugins = {"NodeResourcesFit", "TaintToleration", "Skipped"};
  a.score_weights = {1, 3, 2};
  a.scored_nodes = {"n1", "n2"};
  a.scores.plugin_scores = {{70, 40}, {100, 100}, {5, 5}};
  a.scores.plugin_ran = {true, true, false};
  a.scores.totals = {370, 340};
  a.filter_statuses.emplace(
      "n3", Status::Unschedulable("Insufficient cpu").WithPlugin("NodeResourcesFit"));
  NodeView n1 = ViewOf(a, "n1");
  EXPECT_EQ(n1.state, NodeView::State::kScored);
  EXPECT_EQ(n1.total, 370);
  EXPECT_THAT(n1.weighted, ::testing::ElementsAre(::testing::Pair("NodeResourcesFit", 70),
                                                  ::testing::Pair("TaintToleration", 300)));
  NodeView n3 = ViewOf(a, "n3");
  EXPECT_EQ(n3.state, NodeView::State::kRejected);
  EXPECT_EQ(n3.reason, "NodeResourcesFit: Insufficient cpu");
  EXPECT_EQ(ViewOf(a, "n9").state, NodeView::State::kNotEvaluated);

  auto tipped = TippedBy({n1, ViewOf(a, "n2"), n3}, "n1");
  EXPECT_THAT(tipped, ::testing::ElementsAre(::testing::Pair("NodeResourcesFit", 30)));
  EXPECT_TRUE(TippedBy({n1, n3}, "n1").empty());  // no other scored node: nothing tipped it
}

TEST(CompareTest, SpreadAndPlacementMetrics) {
  ConfigMetrics m;
  FillPlacementMetrics({{"a1", "a"}, {"a2", "a"}, {"b1", "b"}}, {{"a1", 3}, {"b1", 1}, {"gone", 7}},
                       {{"a1", 3}, {"b1", 1}, {"gone", 7}}, &m);
  EXPECT_EQ(m.nodes, 3);
  EXPECT_EQ(m.nodes_used, 2);
  EXPECT_EQ(m.per_node.count("gone"), 0u);  // a node no longer there holds nothing
  EXPECT_EQ(m.node_spread.max, 3);
  EXPECT_EQ(m.node_spread.max_at, "a1");
  EXPECT_EQ(m.node_spread.min, 0);
  EXPECT_EQ(m.node_spread.min_at, "a2");
  EXPECT_EQ(m.zone_spread.max, 3);
  EXPECT_EQ(m.zone_spread.min, 1);
  // b1 runs only a DaemonSet's pod: among its pods per node, but not a node in use.
  FillPlacementMetrics({{"a1", "a"}, {"b1", "b"}}, {{"a1", 3}, {"b1", 1}}, {{"a1", 3}}, &m);
  EXPECT_EQ(m.nodes_used, 1);
  EXPECT_EQ(m.per_node.at("b1"), 1);
  FillPlacementMetrics({{"x", ""}}, {{"x", 1}}, {{"x", 1}}, &m);
  EXPECT_TRUE(m.per_zone.empty());  // no zone labels: no zone spread
}

TEST(CompareTest, DaemonSetAndMirrorPodsDoNotHoldANode) {
  Pod pod;
  EXPECT_TRUE(HoldsNode(pod));
  pod.metadata.owner_references.push_back({});
  pod.metadata.owner_references.back().kind = "DaemonSet";
  EXPECT_TRUE(HoldsNode(pod));  // owned, but not controlled, by a DaemonSet
  pod.metadata.owner_references.back().controller = true;
  EXPECT_FALSE(HoldsNode(pod));
  pod.metadata.owner_references.back().kind = "ReplicaSet";
  EXPECT_TRUE(HoldsNode(pod));
  pod.metadata.annotations["kubernetes.io/config.mirror"] = "abc";
  EXPECT_FALSE(HoldsNode(pod));
}

TEST(CompareTest, ShapeParsesAndDefaultsToTheMedian) {
  auto pod = ShapePod("cpu=500m,memory=1Gi");
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_EQ(ShapeText(*pod), "cpu=500m,memory=1Gi");
  EXPECT_FALSE(ShapePod("cpu").ok());
  EXPECT_FALSE(ShapePod("cpu=lots").ok());
  auto median = MedianShape({MakePod().Req({{"cpu", "100m"}, {"memory", "1Gi"}}).Obj(),
                             MakePod().Req({{"cpu", "2"}, {"memory", "2Gi"}}).Obj(),
                             MakePod().Req({{"cpu", "300m"}, {"memory", "4Gi"}}).Obj()});
  ASSERT_TRUE(median);
  EXPECT_EQ(ShapeText(*median), "cpu=300m,memory=2Gi");
  EXPECT_FALSE(MedianShape({}));
}

// Every reported difference is what two separate simulations decide, and each explanation is
// the score record of the simulation's own last attempt for that pod.
TEST(CompareTest, MatchesSeparateSimulationsAndTheirScoreRecords) {
  Registry registry = InTreeRegistry();
  auto spread = config::DefaultConfiguration(registry);
  auto packing = config::LoadConfig(kBinPacking, "binpack.yaml", registry);
  ASSERT_TRUE(packing.ok()) << packing.error().message;
  const std::vector<Object> objects = Cluster();
  auto r = Compare({{"default", &spread}, {"binpack", &*packing}}, registry, objects, {});
  ASSERT_TRUE(r.ok()) << r.error().message;

  SimulationOptions so;
  auto a = Simulate(spread, registry, objects, so);
  auto b = Simulate(*packing, registry, objects, so);
  ASSERT_TRUE(a.ok() && b.ok());
  std::map<std::string, const PodResult*> in_a, in_b;
  for (const auto& p : a->results) in_a[p.pod] = &p;
  for (const auto& p : b->results) in_b[p.pod] = &p;
  int expected = 0;
  for (const auto& [pod, pa] : in_a) expected += pa->node != in_b[pod]->node;
  ASSERT_GT(expected, 0);
  EXPECT_EQ(r->differing, expected);
  ASSERT_EQ(r->diffs.size(), static_cast<size_t>(expected));
  for (const PodDiff& d : r->diffs) {
    EXPECT_EQ(d.per_config[0].node, in_a[d.pod]->node) << d.pod;
    EXPECT_EQ(d.per_config[1].node, in_b[d.pod]->node) << d.pod;
    for (size_t c = 0; c < 2; ++c) {
      const PodResult& sim = *(c == 0 ? in_a : in_b)[d.pod];
      ASSERT_TRUE(d.per_config[c].explained) << d.pod;
      ASSERT_TRUE(sim.last);
      for (const NodeView& v : d.per_config[c].views) {
        const NodeView want = ViewOf(*sim.last, v.node);
        EXPECT_EQ(v.state, want.state) << d.pod << " " << v.node;
        EXPECT_EQ(v.total, want.total) << d.pod << " " << v.node;
        EXPECT_EQ(v.weighted, want.weighted) << d.pod << " " << v.node;
      }
      // The chosen node won on total among the candidates it scored.
      for (const NodeView& v : d.per_config[c].views) {
        if (v.state != NodeView::State::kScored || v.node == d.per_config[c].node) continue;
        for (const NodeView& mine : d.per_config[c].views) {
          if (mine.node != d.per_config[c].node) continue;
          EXPECT_GE(mine.total, v.total);
        }
      }
    }
  }
  // Bin packing uses fewer nodes; the huge pod is pending under both; the shape is the median.
  EXPECT_LT(r->configs[1].nodes_used, r->configs[0].nodes_used);
  EXPECT_EQ(r->configs[0].pending, 1);
  EXPECT_THAT(r->configs[1].pending_pods, ::testing::ElementsAre("default/huge"));
  EXPECT_EQ(r->shape, "cpu=500m,memory=1Gi");
  ASSERT_TRUE(r->configs[0].shape_fit);
  EXPECT_EQ(*r->configs[0].shape_fit, (16 - 1 - 3) * 2);  // CPU left after p0..p5 and running

  nlohmann::json j = ToJson(*r);
  EXPECT_EQ(j["differing"], expected);
  EXPECT_EQ(j["configurations"][1]["name"], "binpack");
  // What the HTML page draws its per-node and per-zone plots from.
  EXPECT_EQ(j["configurations"][0]["perNode"].size(), r->configs[0].per_node.size());
  EXPECT_TRUE(j["configurations"][1]["perZone"].is_object());
  EXPECT_EQ(j["differences"].size(), r->diffs.size());
}

TEST(CompareTest, CountsPreemptionsAndLeavesVictimsOffTheirNodes) {
  Registry registry = InTreeRegistry();
  auto config = config::DefaultConfiguration(registry);
  std::vector<Object> objects = {
      Object(MakeNode().Name("only").Capacity({{"cpu", "2"}, {"pods", "110"}}).Obj()),
      Object(MakePod().Name("low").Node("only").Priority(0).Req({{"cpu", "2"}}).Obj()),
      Object(MakePod().Name("high").Priority(1000).Req({{"cpu", "1"}}).Obj())};
  CompareOptions options;
  options.shape = "cpu=500m";
  auto r = Compare({{"a", &config}, {"b", &config}}, registry, objects, options);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->differing, 0);  // the same configuration twice decides the same
  for (const ConfigMetrics& m : r->configs) {
    EXPECT_EQ(m.preemptors, 1);
    EXPECT_EQ(m.victims, 1);
    EXPECT_EQ(m.scheduled, 1);
    EXPECT_EQ(m.per_node.at("only"), 1);  // the victim is gone, the preemptor runs there
    ASSERT_TRUE(m.shape_fit);
    EXPECT_EQ(*m.shape_fit, 2);  // 1 CPU left: two more of 500m
  }
}

TEST(CompareTest, ExplainsOnlyAsManyAsAsked) {
  Registry registry = InTreeRegistry();
  auto spread = config::DefaultConfiguration(registry);
  auto packing = config::LoadConfig(kBinPacking, "binpack.yaml", registry);
  ASSERT_TRUE(packing.ok());
  CompareOptions options;
  options.max_explained = 1;
  options.compute_shape_fit = false;
  auto r = Compare({{"default", &spread}, {"binpack", &*packing}}, registry, Cluster(), options);
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->diffs.size(), 2u);
  EXPECT_TRUE(r->diffs[0].per_config[0].explained);
  EXPECT_FALSE(r->diffs[1].per_config[0].explained);
  EXPECT_FALSE(r->configs[0].shape_fit);
}

}  // namespace
}  // namespace berth::sim
