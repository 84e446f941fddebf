// NodeResourcesFit scoring: the strategies (LeastAllocated, MostAllocated,
// RequestedToCapacityRatio) as kube-scheduler's score tables have them.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "berth/config/plugin_args.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/testing/fake_handle.h"
#include "framework/node_batch_score_test_util.h"
#include "plugins/noderesources/fit_test_util.h"
#include "plugins/noderesources/noderesources.h"
#include "testing/builders.h"

namespace berth {
namespace {

using fit_test::NewFit;
using fit_test::Requests;
using testing::MakeNode;
using testing::MakeNodeInfo;
using testing::MakePod;
using testing::PodBuilder;

struct ScoreCase {
  std::string name;
  PodBuilder pod;
  std::vector<std::shared_ptr<const Node>> nodes;
  std::vector<std::shared_ptr<const Pod>> existing;
  config::NodeResourcesFitArgs::ScoringStrategy strategy;
  std::vector<int64_t> want;
};

config::NodeResourcesFitArgs::ScoringStrategy Strategy(
    std::string type, std::vector<config::ResourceSpec> resources = {{"cpu", 1}, {"memory", 1}},
    std::vector<config::UtilizationShapePoint> shape = {}) {
  config::NodeResourcesFitArgs::ScoringStrategy s;
  s.type = std::move(type);
  s.resources = std::move(resources);
  s.shape = std::move(shape);
  return s;
}

std::shared_ptr<const Node> SizedNode(
    const std::string& name, std::initializer_list<std::pair<const char*, const char*>> c) {
  return MakeNode().Name(name).Capacity(c).Obj();
}

std::shared_ptr<const Pod> On(const std::string& node, Requests requests) {
  static int counter = 0;
  return MakePod().Name("existing-" + std::to_string(++counter)).Node(node).Req(requests).Obj();
}

void RunScoreCases(const std::vector<ScoreCase>& cases) {
  for (const ScoreCase& tc : cases) {
    for (bool run_pre_score : {true, false}) {
      SCOPED_TRACE(tc.name + (run_pre_score ? " (with PreScore)" : " (without PreScore)"));
      config::NodeResourcesFitArgs args;
      args.scoring_strategy = tc.strategy;
      auto plugin = NewFit(&args);
      ASSERT_NE(plugin, nullptr);
      auto* pre = dynamic_cast<PreScorePlugin*>(plugin.get());
      auto* scorer = dynamic_cast<ScorePlugin*>(plugin.get());
      ASSERT_NE(pre, nullptr);
      ASSERT_NE(scorer, nullptr);
      EXPECT_FALSE(scorer->HasNormalize());

      Snapshot snapshot = Snapshot::Build(tc.nodes, tc.existing);
      PodInfoPtr pod = tc.pod.Info();
      CycleState state;
      if (run_pre_score) {
        std::vector<const NodeInfo*> feasible(snapshot.nodes().begin(), snapshot.nodes().end());
        Status s = pre->PreScore(state, *pod, feasible);
        ASSERT_TRUE(s.IsSuccess()) << s.Message();
      }
      std::vector<int64_t> got;
      for (const auto& node : tc.nodes) {
        const NodeInfo* ni = snapshot.Get(node->metadata.name);
        ASSERT_NE(ni, nullptr);
        int64_t score = -1;
        Status s = scorer->Score(state, *pod, *ni, &score);
        EXPECT_TRUE(s.IsSuccess()) << s.Message();
        got.push_back(score);
      }
      EXPECT_EQ(got, tc.want);
      // Scoring the nodes as one run gives the same scores.
      std::vector<const NodeInfo*> run;
      for (const auto& node : tc.nodes) run.push_back(snapshot.Get(node->metadata.name));
      EXPECT_EQ(ScoreAsOneRun(plugin.get(), state, *pod, run), tc.want);
    }
  }
}

TEST(NodeResourcesFitScore, Strategies) {
  // Upstream TestFitScore, with cores scaled to millicores (ratios are unchanged).
  auto nodes = [] {
    return std::vector<std::shared_ptr<const Node>>{
        SizedNode("node1", {{"cpu", "4000m"}, {"memory", "10000"}}),
        SizedNode("node2", {{"cpu", "6000m"}, {"memory", "10000"}})};
  };
  auto existing = [] {
    return std::vector<std::shared_ptr<const Pod>>{
        On("node1", {{"cpu", "2000m"}, {"memory", "4000"}}),
        On("node2", {{"cpu", "1000m"}, {"memory", "2000"}})};
  };
  std::vector<ScoreCase> cases = {
      {"RequestedToCapacityRatio case1",
       MakePod().Name("p").Req({{"cpu", "3000m"}, {"memory", "5000"}}),
       nodes(),
       existing(),
       Strategy("RequestedToCapacityRatio", {{"cpu", 1}, {"memory", 1}}, {{0, 10}, {100, 0}}),
       {10, 32}},
      {"RequestedToCapacityRatio case2",
       MakePod().Name("p").Req({{"cpu", "3000m"}, {"memory", "5000"}}),
       nodes(),
       existing(),
       Strategy("RequestedToCapacityRatio", {{"cpu", 1}, {"memory", 1}}, {{0, 0}, {100, 10}}),
       {95, 68}},
      {"MostAllocated",
       MakePod().Name("p").Req({{"cpu", "1000m"}, {"memory", "2000"}}),
       nodes(),
       existing(),
       Strategy("MostAllocated"),
       {67, 36}},
      {"LeastAllocated",
       MakePod().Name("p").Req({{"cpu", "1000m"}, {"memory", "2000"}}),
       nodes(),
       existing(),
       Strategy("LeastAllocated"),
       {32, 63}},
  };
  RunScoreCases(cases);
}

// Long by design: kube-scheduler's LeastAllocated cases, one row each.
TEST(NodeResourcesFitScore, LeastAllocated) {
  std::vector<ScoreCase> cases = {
      // (4000-1100)*100/4000 = 72 for cpu, (32Gi-8Gi-500Mi)*100/32Gi = 73 for memory.
      {"facts worked vector",
       MakePod().Name("p").Req({{"cpu", "100m"}, {"memory", "500Mi"}}),
       {SizedNode("n1", {{"cpu", "4000m"}, {"memory", "32Gi"}})},
       {On("n1", {{"cpu", "1000m"}, {"memory", "8Gi"}})},
       Strategy("LeastAllocated"),
       {72}},
      {"nothing scheduled, nothing requested",
       MakePod().Name("p"),
       {SizedNode("node1", {{"cpu", "4000"}, {"memory", "10000"}}),
        SizedNode("node2", {{"cpu", "4000"}, {"memory", "10000"}})},
       {},
       Strategy("LeastAllocated"),
       {kMaxNodeScore, kMaxNodeScore}},
      {"nothing scheduled, resources requested, differently sized nodes",
       MakePod()
           .Name("p")
           .Req({{"cpu", "1000m"}, {"memory", "2000"}})
           .Req({{"cpu", "2000m"}, {"memory", "3000"}}),
       {SizedNode("node1", {{"cpu", "4000m"}, {"memory", "10000"}}),
        SizedNode("node2", {{"cpu", "6000m"}, {"memory", "10000"}})},
       {},
       Strategy("LeastAllocated"),
       {37, 50}},
      {"no resources requested, pods scheduled with resources",
       MakePod().Name("p"),
       {SizedNode("node1", {{"cpu", "10000"}, {"memory", "20000Mi"}}),
        SizedNode("node2", {{"cpu", "10000"}, {"memory", "20000Mi"}})},
       {On("node1", {{"cpu", "3000"}, {"memory", "0"}}),
        On("node1", {{"cpu", "3000"}, {"memory", "0"}}),
        On("node2", {{"cpu", "3000"}, {"memory", "0"}}),
        On("node2", {{"cpu", "3000"}, {"memory", "5000Mi"}})},
       Strategy("LeastAllocated"),
       {70, 57}},
      {"resources requested, pods scheduled with resources, differently sized nodes",
       MakePod()
           .Name("p")
           .Req({{"cpu", "1000m"}, {"memory", "2000"}})
           .Req({{"cpu", "2000m"}, {"memory", "3000"}}),
       {SizedNode("node1", {{"cpu", "10000m"}, {"memory", "20000"}}),
        SizedNode("node2", {{"cpu", "10000m"}, {"memory", "50000"}})},
       {On("node1", {{"cpu", "3000m"}, {"memory", "0"}}),
        On("node2", {{"cpu", "3000m"}, {"memory", "5000"}})},
       Strategy("LeastAllocated"),
       {57, 60}},
      {"requested resources exceed node capacity",
       MakePod().Name("p").Req({{"cpu", "3000m"}, {"memory", "0"}}),
       {SizedNode("node1", {{"cpu", "4000m"}, {"memory", "10000"}}),
        SizedNode("node2", {{"cpu", "4000m"}, {"memory", "10000"}})},
       {On("node1", {{"cpu", "3000m"}, {"memory", "0"}}),
        On("node2", {{"cpu", "3000m"}, {"memory", "5000"}})},
       Strategy("LeastAllocated"),
       {50, 25}},
      {"zero node resources, pods scheduled with resources",
       MakePod().Name("p"),
       {MakeNode().Name("node1").Obj(), MakeNode().Name("node2").Obj()},
       {On("node1", {{"cpu", "3000m"}, {"memory", "0"}}),
        On("node2", {{"cpu", "3000m"}, {"memory", "5000"}})},
       Strategy("LeastAllocated"),
       {0, 0}},
      {"different weight on cpu and memory",
       MakePod()
           .Name("p")
           .Req({{"cpu", "1000m"}, {"memory", "2000"}})
           .Req({{"cpu", "2000m"}, {"memory", "3000"}}),
       {SizedNode("node1", {{"cpu", "4000m"}, {"memory", "10000"}}),
        SizedNode("node2", {{"cpu", "6000m"}, {"memory", "10000"}})},
       {},
       Strategy("LeastAllocated", {{"memory", 2}, {"cpu", 1}}),
       {41, 50}},
      {"bypass extended resource if the pod does not request",
       MakePod()
           .Name("p")
           .Req({{"cpu", "1000m"}, {"memory", "2000"}})
           .Req({{"cpu", "2000m"}, {"memory", "3000"}}),
       {SizedNode("node1", {{"cpu", "6000m"}, {"memory", "10000"}}),
        SizedNode("node2", {{"cpu", "6000m"}, {"memory", "10000"}, {"example.com/xyz", "4"}})},
       {},
       Strategy("LeastAllocated", {{"cpu", 1}, {"memory", 1}, {"example.com/xyz", 1}}),
       {50, 50}},
      {"honor extended resource if the pod requests",
       MakePod().Name("p").Req({{"cpu", "3000m"}, {"memory", "5000"}, {"example.com/xyz", "2"}}),
       {SizedNode("node1", {{"cpu", "6000m"}, {"memory", "10000"}, {"example.com/xyz", "4"}}),
        SizedNode("node2", {{"cpu", "6000m"}, {"memory", "10000"}, {"example.com/xyz", "10"}})},
       {},
       Strategy("LeastAllocated", {{"cpu", 1}, {"memory", 1}, {"example.com/xyz", 1}}),
       {50, 60}},
      {"if the node doesn't have a resource",
       MakePod().Name("p").Req({{"cpu", "3000m"}, {"memory", "4000"}}),
       {SizedNode("node1", {{"cpu", "6000m"}, {"memory", "10000"}}),
        SizedNode("node2", {{"cpu", "6000m"}, {"memory", "10000"}, {"example.com/xyz", "4"}})},
       {},
       Strategy("LeastAllocated", {{"example.com/xyz", 2}, {"cpu", 1}, {"memory", 1}}),
       {55, 55}},
      {"ephemeral storage uses real requests",
       MakePod().Name("p").Req({{"ephemeral-storage", "30"}}),
       {SizedNode("node1", {{"cpu", "1000m"}, {"memory", "1Gi"}, {"ephemeral-storage", "100"}})},
       {On("node1", {{"ephemeral-storage", "20"}})},
       Strategy("LeastAllocated", {{"ephemeral-storage", 1}}),
       {50}},
  };
  RunScoreCases(cases);
}

TEST(NodeResourcesFitScore, NonZeroDefaultsApplyOnlyToAbsentKeys) {
  // Pod without requests counts as 100m / 200Mi; a pod with explicit zeros counts as zero.
  auto node = [] { return SizedNode("n", {{"cpu", "1000m"}, {"memory", "1000Mi"}}); };
  std::vector<ScoreCase> cases = {
      {"defaults for absent keys",
       MakePod().Name("p").Req({}),
       {node()},
       {},
       Strategy("LeastAllocated"),
       {(90 + 80) / 2}},
      {"explicit zero stays zero",
       MakePod().Name("p").Req({{"cpu", "0"}, {"memory", "0"}}),
       {node()},
       {},
       Strategy("LeastAllocated"),
       {100}},
      {"existing best-effort pods also count with defaults",
       MakePod().Name("p").Req({}),
       {node()},
       {On("n", {})},
       Strategy("LeastAllocated"),
       {(80 + 60) / 2}},
  };
  RunScoreCases(cases);
}

TEST(NodeResourcesFitScore, MostAllocated) {
  std::vector<ScoreCase> cases = {
      {"nothing scheduled, resources requested, differently sized nodes",
       MakePod()
           .Name("p")
           .Req({{"cpu", "1000m"}, {"memory", "2000"}})
           .Req({{"cpu", "2000m"}, {"memory", "3000"}}),
       {SizedNode("node1", {{"cpu", "4000m"}, {"memory", "10000"}}),
        SizedNode("node2", {{"cpu", "6000m"}, {"memory", "10000"}})},
       {},
       Strategy("MostAllocated"),
       {62, 50}},
      {"requested resources exceed node capacity are capped",
       MakePod().Name("p").Req({{"cpu", "3000m"}, {"memory", "0"}}),
       {SizedNode("node1", {{"cpu", "4000m"}, {"memory", "10000"}}),
        SizedNode("node2", {{"cpu", "4000m"}, {"memory", "10000"}})},
       {On("node1", {{"cpu", "3000m"}, {"memory", "0"}}),
        On("node2", {{"cpu", "3000m"}, {"memory", "5000"}})},
       Strategy("MostAllocated"),
       {50, 75}},
      {"weights",
       MakePod().Name("p").Req({{"cpu", "1000m"}, {"memory", "2000"}}),
       {SizedNode("node1", {{"cpu", "4000m"}, {"memory", "10000"}})},
       {},
       Strategy("MostAllocated", {{"cpu", 3}, {"memory", 1}}),
       {(25 * 3 + 20) / 4}},
  };
  RunScoreCases(cases);
}

TEST(NodeResourcesFitScore, RequestedToCapacityRatio) {
  const std::vector<config::UtilizationShapePoint> least = {{0, 10}, {100, 0}};
  const std::vector<config::UtilizationShapePoint> most = {{0, 0}, {100, 1}};
  auto ext_nodes = [] {
    return std::vector<std::shared_ptr<const Node>>{
        SizedNode("node1", {{"cpu", "4000m"}, {"memory", "10000Mi"}, {"intel.com/foo", "8"}}),
        SizedNode("node2", {{"cpu", "4000m"}, {"memory", "10000Mi"}, {"intel.com/foo", "4"}})};
  };
  auto multi_nodes = [] {
    return std::vector<std::shared_ptr<const Node>>{SizedNode("node1", {{"cpu", "4000m"},
                                                                        {"memory", "10000Mi"},
                                                                        {"intel.com/foo", "8"},
                                                                        {"intel.com/bar", "4"}}),
                                                    SizedNode("node2", {{"cpu", "4000m"},
                                                                        {"memory", "10000Mi"},
                                                                        {"intel.com/foo", "4"},
                                                                        {"intel.com/bar", "8"}})};
  };
  std::vector<ScoreCase> cases = {
      {"nothing requested (existing best-effort pods overflow the tiny memory)",
       MakePod().Name("p"),
       {SizedNode("node1", {{"cpu", "4000"}, {"memory", "10000"}}),
        SizedNode("node2", {{"cpu", "4000"}, {"memory", "10000"}})},
       {On("node1", {}), On("node1", {})},
       Strategy("RequestedToCapacityRatio", {{"cpu", 1}, {"memory", 1}}, least),
       {kMaxNodeScore, kMaxNodeScore}},
      {"resources requested, differently sized nodes (rounded average)",
       MakePod()
           .Name("p")
           .Req({{"cpu", "1000m"}, {"memory", "2000"}})
           .Req({{"cpu", "2000m"}, {"memory", "3000"}}),
       {SizedNode("node1", {{"cpu", "4000m"}, {"memory", "10000"}}),
        SizedNode("node2", {{"cpu", "6000m"}, {"memory", "10000"}})},
       {},
       Strategy("RequestedToCapacityRatio", {{"cpu", 1}, {"memory", 1}}, least),
       {38, 50}},
      {"single extended: nothing requested",
       MakePod().Name("p"),
       ext_nodes(),
       {},
       Strategy("RequestedToCapacityRatio", {{"intel.com/foo", 1}}, most),
       {0, 0}},
      {"single extended: less resources",
       MakePod().Name("p").Req({{"intel.com/foo", "2"}}),
       ext_nodes(),
       {},
       Strategy("RequestedToCapacityRatio", {{"intel.com/foo", 1}}, most),
       {2, 5}},
      {"single extended: existing pod",
       MakePod().Name("p").Req({{"intel.com/foo", "2"}}),
       ext_nodes(),
       {On("node2", {{"intel.com/foo", "2"}})},
       Strategy("RequestedToCapacityRatio", {{"intel.com/foo", 1}}, most),
       {2, 10}},
      {"single extended: more resources",
       MakePod().Name("p").Req({{"intel.com/foo", "4"}}),
       ext_nodes(),
       {},
       Strategy("RequestedToCapacityRatio", {{"intel.com/foo", 1}}, most),
       {5, 10}},
      {"multiple extended, weighted and rounded",
       MakePod().Name("p").Req({{"intel.com/foo", "2"}, {"intel.com/bar", "2"}}),
       multi_nodes(),
       {},
       Strategy("RequestedToCapacityRatio", {{"intel.com/foo", 3}, {"intel.com/bar", 5}}, most),
       {4, 3}},
  };
  RunScoreCases(cases);
}

TEST(NodeResourcesFitScore, EmptyResourceListIsAnError) {
  config::NodeResourcesFitArgs args;
  args.scoring_strategy.resources.clear();
  auto plugin = NewFit(&args);
  ASSERT_NE(plugin, nullptr);
  auto* scorer = dynamic_cast<ScorePlugin*>(plugin.get());
  CycleState state;
  PodInfoPtr pod = MakePod().Name("p").Req({{"cpu", "1"}}).Info();
  NodeInfo ni = MakeNodeInfo(SizedNode("n", {{"cpu", "4"}, {"memory", "1Gi"}}));
  int64_t score = -1;
  Status s = scorer->Score(state, *pod, ni, &score);
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(score, 0);
}

TEST(NodeResourcesFitFactory, DecodedArgsBuildThePlugin) {
  PluginRegistration reg = NodeResourcesFitRegistration();
  ASSERT_TRUE(static_cast<bool>(reg.decode_args));
  testing::FakeHandle handle;
  auto defaults = reg.decode_args(nullptr, "args");
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  EXPECT_TRUE(reg.factory(defaults->get(), handle).ok());

  const nlohmann::json raw = {
      {"scoringStrategy",
       {{"type", "RequestedToCapacityRatio"},
        {"resources", {{{"name", "cpu"}, {"weight", 1}}}},
        {"requestedToCapacityRatio",
         {{"shape",
           {{{"utilization", 0}, {"score", 0}}, {{"utilization", 100}, {"score", 10}}}}}}}}};
  auto decoded = reg.decode_args(&raw, "args");
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  auto plugin = reg.factory(decoded->get(), handle);
  ASSERT_TRUE(plugin.ok()) << plugin.error().message;

  // 1000m of 4000m -> utilization 25 -> shape score 25 (cpu only).
  auto* scorer = dynamic_cast<ScorePlugin*>(plugin->get());
  CycleState state;
  PodInfoPtr pod = MakePod().Name("p").Req({{"cpu", "1000m"}, {"memory", "1Gi"}}).Info();
  NodeInfo ni = MakeNodeInfo(SizedNode("n", {{"cpu", "4000m"}, {"memory", "2Gi"}}));
  int64_t score = -1;
  ASSERT_TRUE(scorer->Score(state, *pod, ni, &score).IsSuccess());
  EXPECT_EQ(score, 25);
}
}  // namespace
}  // namespace berth
