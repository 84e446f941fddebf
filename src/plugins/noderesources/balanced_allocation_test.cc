#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "berth/config/plugin_args.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/testing/fake_handle.h"
#include "framework/node_batch_score_test_util.h"
#include "plugins/noderesources/noderesources.h"
#include "testing/builders.h"

namespace berth {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::PodBuilder;

using Requests = std::initializer_list<std::pair<const char*, const char*>>;

std::unique_ptr<Plugin> NewBalanced(const config::NodeResourcesBalancedAllocationArgs* args) {
  testing::FakeHandle handle;
  auto plugin = NodeResourcesBalancedAllocationRegistration().factory(args, handle);
  EXPECT_TRUE(plugin.ok()) << (plugin.ok() ? "" : plugin.error().message);
  return plugin.ok() ? std::move(plugin).value() : nullptr;
}

std::shared_ptr<const Node> SizedNode(const std::string& name, Requests capacity) {
  return MakeNode().Name(name).Capacity(capacity).Obj();
}

struct Case {
  std::string name;
  PodBuilder pod;
  std::vector<std::shared_ptr<const Node>> nodes;
  std::vector<std::shared_ptr<const Pod>> existing;
  std::vector<config::ResourceSpec> resources = {{"cpu", 1}, {"memory", 1}};
  std::vector<int64_t> want;
};

// Upstream's pod specs: cpuOnly asks 1000m+2000m cpu with explicit zero memory, cpuAndMemory
// asks 1000m/2000 + 2000m/3000.
PodBuilder CpuOnly(const std::string& name) {
  return MakePod()
      .Name(name)
      .Req({{"cpu", "1000m"}, {"memory", "0"}})
      .Req({{"cpu", "2000m"}, {"memory", "0"}});
}
PodBuilder CpuAndMemory(const std::string& name) {
  return MakePod()
      .Name(name)
      .Req({{"cpu", "1000m"}, {"memory", "2000"}})
      .Req({{"cpu", "2000m"}, {"memory", "3000"}});
}

TEST(NodeResourcesBalancedAllocation, Scores) {
  std::vector<Case> cases = {
      {"facts worked vector",
       MakePod().Name("p").Req({{"cpu", "100m"}, {"memory", "500Mi"}}),
       {SizedNode("n1", {{"cpu", "4000m"}, {"memory", "32Gi"}})},
       {MakePod().Name("e").Node("n1").Req({{"cpu", "1000m"}, {"memory", "8Gi"}}).Obj()},
       {{"cpu", 1}, {"memory", 1}},
       {99}},
      {"nothing scheduled, resources requested, differently sized machines",
       CpuAndMemory("p"),
       {SizedNode("machine1", {{"cpu", "4000m"}, {"memory", "10000"}}),
        SizedNode("machine2", {{"cpu", "6000m"}, {"memory", "10000"}})},
       {},
       {{"cpu", 1}, {"memory", 1}},
       {87, 100}},
      {"resources requested, pods scheduled with resources",
       CpuAndMemory("p"),
       {SizedNode("machine1", {{"cpu", "10000m"}, {"memory", "20000"}}),
        SizedNode("machine2", {{"cpu", "10000m"}, {"memory", "20000"}})},
       {CpuOnly("e1").Node("machine1").Obj(), CpuAndMemory("e2").Node("machine2").Obj()},
       {{"cpu", 1}, {"memory", 1}},
       {82, 95}},
      {"resources requested, pods scheduled with resources, differently sized machines",
       CpuAndMemory("p"),
       {SizedNode("machine1", {{"cpu", "10000m"}, {"memory", "20000"}}),
        SizedNode("machine2", {{"cpu", "10000m"}, {"memory", "50000"}})},
       {CpuOnly("e1").Node("machine1").Obj(), CpuAndMemory("e2").Node("machine2").Obj()},
       {{"cpu", 1}, {"memory", 1}},
       {82, 80}},
      {"requested resources at node capacity",
       CpuOnly("p"),
       {SizedNode("machine1", {{"cpu", "4000m"}, {"memory", "10000"}}),
        SizedNode("machine2", {{"cpu", "4000m"}, {"memory", "10000"}})},
       {CpuOnly("e1").Node("machine1").Obj(), CpuAndMemory("e2").Node("machine2").Obj()},
       {{"cpu", 1}, {"memory", 1}},
       {50, 75}},
      {"real requests: no scoring defaults for absent keys",
       MakePod().Name("p").Req({{"cpu", "1000m"}}),
       {SizedNode("n1", {{"cpu", "4000m"}, {"memory", "1Gi"}})},
       {MakePod().Name("e").Node("n1").Req({}).Obj()},
       {{"cpu", 1}, {"memory", 1}},
       {87}},
      {"extended resource joins when requested",
       MakePod().Name("p").Req({{"cpu", "2000m"}, {"memory", "2500"}, {"example.com/gpu", "1"}}),
       {SizedNode("n1", {{"cpu", "4000m"}, {"memory", "10000"}, {"example.com/gpu", "4"}})},
       {},
       {{"cpu", 1}, {"memory", 1}, {"example.com/gpu", 1}},
       {88}},
      {"extended resource the pod does not request is skipped",
       MakePod().Name("p").Req({{"cpu", "2000m"}, {"memory", "2500"}}),
       {SizedNode("n1", {{"cpu", "4000m"}, {"memory", "10000"}, {"example.com/gpu", "4"}})},
       {MakePod().Name("e").Node("n1").Req({{"example.com/gpu", "4"}}).Obj()},
       {{"cpu", 1}, {"memory", 1}, {"example.com/gpu", 1}},
       {87}},
  };
  for (const Case& tc : cases) {
    for (bool run_pre_score : {true, false}) {
      SCOPED_TRACE(tc.name + (run_pre_score ? " (with PreScore)" : " (without PreScore)"));
      config::NodeResourcesBalancedAllocationArgs args;
      args.resources = tc.resources;
      auto plugin = NewBalanced(&args);
      ASSERT_NE(plugin, nullptr);
      auto* pre = dynamic_cast<PreScorePlugin*>(plugin.get());
      auto* scorer = dynamic_cast<ScorePlugin*>(plugin.get());
      ASSERT_NE(pre, nullptr);
      ASSERT_NE(scorer, nullptr);
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
        int64_t score = -1;
        Status s = scorer->Score(state, *pod, *snapshot.Get(node->metadata.name), &score);
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

TEST(NodeResourcesBalancedAllocation, BestEffortPodsAreSkipped) {
  auto plugin = NewBalanced(nullptr);
  ASSERT_NE(plugin, nullptr);
  auto* pre = dynamic_cast<PreScorePlugin*>(plugin.get());
  auto* scorer = dynamic_cast<ScorePlugin*>(plugin.get());
  Snapshot snapshot = Snapshot::Build({SizedNode("n1", {{"cpu", "4000m"}, {"memory", "10000"}})},
                                      {CpuAndMemory("e").Node("n1").Obj()});
  std::vector<const NodeInfo*> feasible(snapshot.nodes().begin(), snapshot.nodes().end());

  for (const PodBuilder& best_effort :
       {MakePod().Name("none"), MakePod().Name("empty").Req({}),
        MakePod().Name("zeros").Req({{"cpu", "0"}, {"memory", "0"}}),
        MakePod().Name("other").Req({{"ephemeral-storage", "1Gi"}})}) {
    PodInfoPtr pod = best_effort.Info();
    CycleState state;
    EXPECT_TRUE(pre->PreScore(state, *pod, feasible).IsSkip()) << pod->pod->metadata.name;
    int64_t score = -1;
    EXPECT_TRUE(scorer->Score(state, *pod, *snapshot.Get("n1"), &score).IsSuccess());
    EXPECT_EQ(score, 0);
  }
  PodInfoPtr burstable = MakePod().Name("p").Req({{"memory", "1"}}).Info();
  CycleState state;
  EXPECT_TRUE(pre->PreScore(state, *burstable, feasible).IsSuccess());
}

TEST(NodeResourcesBalancedAllocation, NameAndArgsType) {
  EXPECT_EQ(NodeResourcesBalancedAllocationRegistration().name, "NodeResourcesBalancedAllocation");
  testing::FakeHandle handle;
  config::NodeResourcesFitArgs wrong;
  auto plugin = NodeResourcesBalancedAllocationRegistration().factory(&wrong, handle);
  EXPECT_FALSE(plugin.ok());
}

TEST(NodeResourcesBalancedAllocation, DecodedDefaultsBuildThePlugin) {
  PluginRegistration reg = NodeResourcesBalancedAllocationRegistration();
  ASSERT_TRUE(static_cast<bool>(reg.decode_args));
  testing::FakeHandle handle;
  auto defaults = reg.decode_args(nullptr, "args");
  ASSERT_TRUE(defaults.ok()) << defaults.error().message;
  EXPECT_TRUE(reg.factory(defaults->get(), handle).ok());
}
}  // namespace
}  // namespace berth
