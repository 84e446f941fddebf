#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "berth/config/plugin_args.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/testing/fake_handle.h"
#include "plugins/noderesources/noderesources.h"
#include "testing/builders.h"

namespace berth {
namespace {

using testing::MakeNode;
using testing::MakeNodeInfo;
using testing::MakePod;
using testing::PodBuilder;

using Requests = std::initializer_list<std::pair<const char*, const char*>>;

std::unique_ptr<Plugin> NewFit(const config::NodeResourcesFitArgs* args = nullptr) {
  testing::FakeHandle handle;
  auto plugin = NodeResourcesFitRegistration().factory(args, handle);
  EXPECT_TRUE(plugin.ok()) << (plugin.ok() ? "" : plugin.error().message);
  return plugin.ok() ? std::move(plugin).value() : nullptr;
}

// An existing pod bound to node "n" with one container per request list.
std::shared_ptr<const Pod> Running(std::initializer_list<Requests> containers) {
  PodBuilder b = MakePod().Name("existing").Node("n");
  for (const Requests& r : containers) b.Req(r);
  return b.Obj();
}

struct FilterCase {
  std::string name;
  PodBuilder pod;
  std::vector<std::shared_ptr<const Pod>> existing;
  std::vector<std::string> ignored_resources;
  std::vector<std::string> ignored_groups;
  Code want_code = Code::kSuccess;
  std::vector<std::string> want_reasons;
};

// Node of kube-scheduler's test table: 10m cpu, 20 bytes memory, 32 pods, 5 example.com/aaa,
// 20 bytes ephemeral storage, 5 hugepages-2Mi.
std::shared_ptr<const Node> TableNode() {
  return MakeNode()
      .Name("n")
      .Capacity({{"cpu", "10m"},
                 {"memory", "20"},
                 {"pods", "32"},
                 {"example.com/aaa", "5"},
                 {"ephemeral-storage", "20"},
                 {"hugepages-2Mi", "5"}})
      .Obj();
}

void RunFilterCases(const std::vector<FilterCase>& cases, const std::shared_ptr<const Node>& node) {
  for (const FilterCase& tc : cases) {
    SCOPED_TRACE(tc.name);
    config::NodeResourcesFitArgs args;
    args.ignored_resources = tc.ignored_resources;
    args.ignored_resource_groups = tc.ignored_groups;
    auto plugin = NewFit(&args);
    ASSERT_NE(plugin, nullptr);
    auto* pre = dynamic_cast<PreFilterPlugin*>(plugin.get());
    auto* filter = dynamic_cast<FilterPlugin*>(plugin.get());
    ASSERT_NE(pre, nullptr);
    ASSERT_NE(filter, nullptr);

    PodInfoPtr pod = tc.pod.Info();
    CycleState state;
    PreFilterResult result;
    Status pre_status = pre->PreFilter(state, *pod, {}, &result);
    ASSERT_TRUE(pre_status.IsSuccess()) << pre_status.Message();
    EXPECT_TRUE(result.AllNodes());

    NodeInfo ni = MakeNodeInfo(node, tc.existing);
    Status got = filter->Filter(state, *pod, ni);
    EXPECT_EQ(got.code(), tc.want_code) << got.Message();
    EXPECT_EQ(got.reasons(), tc.want_reasons);
  }
}

TEST(NodeResourcesFitFilter, EnoughRequests) {
  constexpr Code kOk = Code::kSuccess;
  constexpr Code kNo = Code::kUnschedulable;
  constexpr Code kNever = Code::kUnschedulableAndUnresolvable;
  std::vector<FilterCase> cases = {
      {"no resources requested always fits",
       MakePod().Name("p"),
       {Running({{{"cpu", "10m"}, {"memory", "20"}}})},
       {},
       {},
       kOk,
       {}},
      {"too many resources fails",
       MakePod().Name("p").Req({{"cpu", "1m"}, {"memory", "1"}}),
       {Running({{{"cpu", "10m"}, {"memory", "20"}}})},
       {},
       {},
       kNo,
       {"Insufficient cpu", "Insufficient memory"}},
      {"too many resources fails due to init container cpu",
       MakePod()
           .Name("p")
           .Req({{"cpu", "1m"}, {"memory", "1"}})
           .InitReq({{"cpu", "3m"}, {"memory", "1"}}),
       {Running({{{"cpu", "8m"}, {"memory", "19"}}})},
       {},
       {},
       kNo,
       {"Insufficient cpu"}},
      {"too many resources fails due to highest init container cpu",
       MakePod()
           .Name("p")
           .Req({{"cpu", "1m"}, {"memory", "1"}})
           .InitReq({{"cpu", "3m"}, {"memory", "1"}})
           .InitReq({{"cpu", "2m"}, {"memory", "1"}}),
       {Running({{{"cpu", "8m"}, {"memory", "19"}}})},
       {},
       {},
       kNo,
       {"Insufficient cpu"}},
      {"too many resources fails due to init container memory",
       MakePod()
           .Name("p")
           .Req({{"cpu", "1m"}, {"memory", "1"}})
           .InitReq({{"cpu", "1m"}, {"memory", "3"}}),
       {Running({{{"cpu", "9m"}, {"memory", "19"}}})},
       {},
       {},
       kNo,
       {"Insufficient memory"}},
      {"init container fits because it's the max, not sum, of containers and init containers",
       MakePod()
           .Name("p")
           .Req({{"cpu", "1m"}, {"memory", "1"}})
           .InitReq({{"cpu", "1m"}, {"memory", "1"}}),
       {Running({{{"cpu", "9m"}, {"memory", "19"}}})},
       {},
       {},
       kOk,
       {}},
      {"both resources fit",
       MakePod().Name("p").Req({{"cpu", "1m"}, {"memory", "1"}}),
       {Running({{{"cpu", "5m"}, {"memory", "5"}}})},
       {},
       {},
       kOk,
       {}},
      {"one resource memory fits",
       MakePod().Name("p").Req({{"cpu", "2m"}, {"memory", "1"}}),
       {Running({{{"cpu", "9m"}, {"memory", "5"}}})},
       {},
       {},
       kNo,
       {"Insufficient cpu"}},
      {"one resource cpu fits",
       MakePod().Name("p").Req({{"cpu", "1m"}, {"memory", "2"}}),
       {Running({{{"cpu", "5m"}, {"memory", "19"}}})},
       {},
       {},
       kNo,
       {"Insufficient memory"}},
      {"equal edge case",
       MakePod().Name("p").Req({{"cpu", "5m"}, {"memory", "1"}}),
       {Running({{{"cpu", "5m"}, {"memory", "19"}}})},
       {},
       {},
       kOk,
       {}},
      {"equal edge case for init container",
       MakePod()
           .Name("p")
           .Req({{"cpu", "4m"}, {"memory", "1"}})
           .InitReq({{"cpu", "5m"}, {"memory", "1"}}),
       {Running({{{"cpu", "5m"}, {"memory", "19"}}})},
       {},
       {},
       kOk,
       {}},
      {"extended resource fits",
       MakePod().Name("p").Req({{"example.com/aaa", "1"}}),
       {Running({{}})},
       {},
       {},
       kOk,
       {}},
      {"extended resource fits for init container",
       MakePod().Name("p").Req({}).InitReq({{"example.com/aaa", "1"}}),
       {Running({{}})},
       {},
       {},
       kOk,
       {}},
      {"extended resource capacity enforced",
       MakePod().Name("p").Req({{"cpu", "1m"}, {"memory", "1"}, {"example.com/aaa", "10"}}),
       {Running({{{"example.com/aaa", "0"}}})},
       {},
       {},
       kNever,
       {"Insufficient example.com/aaa"}},
      {"extended resource capacity enforced for init container",
       MakePod().Name("p").Req({}).InitReq(
           {{"cpu", "1m"}, {"memory", "1"}, {"example.com/aaa", "10"}}),
       {Running({{{"example.com/aaa", "0"}}})},
       {},
       {},
       kNever,
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced",
       MakePod().Name("p").Req({{"cpu", "1m"}, {"memory", "1"}, {"example.com/aaa", "1"}}),
       {Running({{{"example.com/aaa", "5"}}})},
       {},
       {},
       kNo,
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced for init container",
       MakePod().Name("p").Req({}).InitReq(
           {{"cpu", "1m"}, {"memory", "1"}, {"example.com/aaa", "1"}}),
       {Running({{{"example.com/aaa", "5"}}})},
       {},
       {},
       kNo,
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced for multiple containers",
       MakePod()
           .Name("p")
           .Req({{"cpu", "1m"}, {"memory", "1"}, {"example.com/aaa", "3"}})
           .Req({{"cpu", "1m"}, {"memory", "1"}, {"example.com/aaa", "3"}}),
       {Running({{{"example.com/aaa", "2"}}})},
       {},
       {},
       kNever,
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable admits multiple init containers",
       MakePod()
           .Name("p")
           .Req({})
           .InitReq({{"cpu", "1m"}, {"memory", "1"}, {"example.com/aaa", "3"}})
           .InitReq({{"cpu", "1m"}, {"memory", "1"}, {"example.com/aaa", "3"}}),
       {Running({{{"example.com/aaa", "2"}}})},
       {},
       {},
       kOk,
       {}},
      {"extended resource allocatable enforced for multiple init containers",
       MakePod()
           .Name("p")
           .Req({})
           .InitReq({{"cpu", "1m"}, {"memory", "1"}, {"example.com/aaa", "6"}})
           .InitReq({{"cpu", "1m"}, {"memory", "1"}, {"example.com/aaa", "3"}}),
       {Running({{{"example.com/aaa", "2"}}})},
       {},
       {},
       kNever,
       {"Insufficient example.com/aaa"}},
      {"extended resource allocatable enforced for unknown resource",
       MakePod().Name("p").Req({{"cpu", "1m"}, {"memory", "1"}, {"example.com/bbb", "1"}}),
       {Running({{}})},
       {},
       {},
       kNever,
       {"Insufficient example.com/bbb"}},
      {"kubernetes.io resource capacity enforced",
       MakePod().Name("p").Req({{"cpu", "1m"}, {"memory", "1"}, {"kubernetes.io/something", "10"}}),
       {Running({{}})},
       {},
       {},
       kNever,
       {"Insufficient kubernetes.io/something"}},
      {"kubernetes.io resource capacity enforced for init container",
       MakePod().Name("p").Req({}).InitReq(
           {{"cpu", "1m"}, {"memory", "1"}, {"subdomain.kubernetes.io/something", "10"}}),
       {Running({{}})},
       {},
       {},
       kNever,
       {"Insufficient subdomain.kubernetes.io/something"}},
      {"hugepages resource capacity enforced",
       MakePod().Name("p").Req({{"cpu", "1m"}, {"memory", "1"}, {"hugepages-2Mi", "10"}}),
       {Running({{{"hugepages-2Mi", "0"}}})},
       {},
       {},
       kNever,
       {"Insufficient hugepages-2Mi"}},
      {"hugepages resource allocatable enforced for multiple containers",
       MakePod()
           .Name("p")
           .Req({{"cpu", "1m"}, {"memory", "1"}, {"hugepages-2Mi", "3"}})
           .Req({{"cpu", "1m"}, {"memory", "1"}, {"hugepages-2Mi", "3"}}),
       {Running({{{"hugepages-2Mi", "2"}}})},
       {},
       {},
       kNever,
       {"Insufficient hugepages-2Mi"}},
      {"hugepages fit within free allocatable",
       MakePod().Name("p").Req({{"cpu", "1m"}, {"memory", "1"}, {"hugepages-2Mi", "3"}}),
       {Running({{{"hugepages-2Mi", "2"}}})},
       {},
       {},
       kOk,
       {}},
      {"skip checking ignored extended resource",
       MakePod().Name("p").Req({{"cpu", "1m"}, {"memory", "1"}, {"example.com/bbb", "1"}}),
       {Running({{}})},
       {"example.com/bbb"},
       {},
       kOk,
       {}},
      {"resources + pod overhead fits",
       MakePod()
           .Name("p")
           .Req({{"cpu", "1m"}, {"memory", "1"}})
           .Overhead({{"cpu", "3m"}, {"memory", "13"}}),
       {Running({{{"cpu", "5m"}, {"memory", "5"}}})},
       {},
       {},
       kOk,
       {}},
      {"requests + overhead does not fit for memory",
       MakePod()
           .Name("p")
           .Req({{"cpu", "1m"}, {"memory", "1"}})
           .Overhead({{"cpu", "1m"}, {"memory", "15"}}),
       {Running({{{"cpu", "5m"}, {"memory", "5"}}})},
       {},
       {},
       kNo,
       {"Insufficient memory"}},
      {"skip checking ignored extended resource via resource groups",
       MakePod().Name("p").Req({{"cpu", "1m"},
                                {"memory", "1"},
                                {"example.com/bbb", "1"},
                                {"kubernetes.io/something", "1"}}),
       {Running({{}})},
       {},
       {"example.com"},
       kNever,
       {"Insufficient kubernetes.io/something"}},
      {"resource groups never hide non-extended resources",
       MakePod().Name("p").Req({{"hugepages-2Mi", "6"}}),
       {Running({{}})},
       {},
       {"hugepages-2Mi"},
       kNever,
       {"Insufficient hugepages-2Mi"}},
      {"skip checking extended resource request with quantity zero",
       MakePod().Name("p").Req({{"cpu", "1m"}, {"memory", "1"}, {"example.com/aaa", "0"}}),
       {Running({{{"example.com/aaa", "6"}}})},
       {},
       {},
       kOk,
       {}},
      {"skip checking resource request with quantity zero",
       MakePod().Name("p").Req({{"example.com/aaa", "1"}}),
       {Running({{{"cpu", "20m"}, {"memory", "30"}, {"example.com/aaa", "1"}}})},
       {},
       {},
       kOk,
       {}},
      {"cpu request larger than the whole node cannot be fixed by preemption",
       MakePod().Name("p").Req({{"cpu", "11m"}, {"memory", "1"}}),
       {Running({{}})},
       {},
       {},
       kNever,
       {"Insufficient cpu"}},
      {"memory request larger than the whole node cannot be fixed by preemption",
       MakePod().Name("p").Req({{"cpu", "1m"}, {"memory", "21"}}),
       {Running({{{"cpu", "9m"}}})},
       {},
       {},
       kNever,
       {"Insufficient memory"}},
      {"one unresolvable resource makes the whole status unresolvable",
       MakePod().Name("p").Req({{"cpu", "2m"}, {"memory", "21"}}),
       {Running({{{"cpu", "9m"}}})},
       {},
       {},
       kNever,
       {"Insufficient cpu", "Insufficient memory"}},
      {"several failing resources keep their order",
       MakePod().Name("p").Req({{"cpu", "2m"},
                                {"memory", "2"},
                                {"ephemeral-storage", "2"},
                                {"example.com/aaa", "1"},
                                {"example.com/bbb", "1"}}),
       {Running({{{"cpu", "9m"},
                  {"memory", "19"},
                  {"ephemeral-storage", "19"},
                  {"example.com/aaa", "5"}}})},
       {},
       {},
       kNever,
       {"Insufficient cpu", "Insufficient memory", "Insufficient ephemeral-storage",
        "Insufficient example.com/aaa", "Insufficient example.com/bbb"}},
  };
  RunFilterCases(cases, TableNode());
}

TEST(NodeResourcesFitFilter, NotEnoughPods) {
  auto node =
      MakeNode().Name("n").Capacity({{"cpu", "10m"}, {"memory", "20"}, {"pods", "1"}}).Obj();
  std::vector<FilterCase> cases = {
      {"even without specified resources, predicate fails when there's no space for additional "
       "pod",
       MakePod().Name("p"),
       {Running({{{"cpu", "10m"}, {"memory", "20"}}})},
       {},
       {},
       Code::kUnschedulable,
       {"Too many pods"}},
      {"even if both resources fit, predicate fails when there's no space for additional pod",
       MakePod().Name("p").Req({{"cpu", "1m"}, {"memory", "1"}}),
       {Running({{{"cpu", "5m"}, {"memory", "5"}}})},
       {},
       {},
       Code::kUnschedulable,
       {"Too many pods"}},
      {"even for equal edge case, predicate fails when there's no space for additional pod",
       MakePod().Name("p").Req({{"cpu", "5m"}, {"memory", "1"}}),
       {Running({{{"cpu", "5m"}, {"memory", "19"}}})},
       {},
       {},
       Code::kUnschedulable,
       {"Too many pods"}},
      {"even for equal edge case, predicate fails when there's no space for additional pod due "
       "to init container",
       MakePod()
           .Name("p")
           .Req({{"cpu", "5m"}, {"memory", "1"}})
           .InitReq({{"cpu", "5m"}, {"memory", "1"}}),
       {Running({{{"cpu", "5m"}, {"memory", "19"}}})},
       {},
       {},
       Code::kUnschedulable,
       {"Too many pods"}},
      {"too many pods comes first and does not make the status unresolvable",
       MakePod().Name("p").Req({{"cpu", "6m"}, {"memory", "1"}}),
       {Running({{{"cpu", "5m"}, {"memory", "19"}}})},
       {},
       {},
       Code::kUnschedulable,
       {"Too many pods", "Insufficient cpu"}},
  };
  RunFilterCases(cases, node);
}

TEST(NodeResourcesFitFilter, StorageRequests) {
  std::vector<FilterCase> cases = {
      {"empty storage requested, and pod fits",
       MakePod().Name("p").Req({{"cpu", "1m"}, {"memory", "1"}}),
       {Running({{{"cpu", "2m"}, {"memory", "10"}}})},
       {},
       {},
       Code::kSuccess,
       {}},
      {"storage ephemeral local storage request exceeds allocatable",
       MakePod().Name("p").Req({{"ephemeral-storage", "25"}}),
       {Running({{{"cpu", "2m"}, {"memory", "2"}}})},
       {},
       {},
       Code::kUnschedulableAndUnresolvable,
       {"Insufficient ephemeral-storage"}},
      {"ephemeral local storage is sufficient",
       MakePod().Name("p").Req({{"ephemeral-storage", "5"}}),
       {Running({{{"cpu", "2m"}, {"memory", "2"}, {"ephemeral-storage", "10"}}})},
       {},
       {},
       Code::kSuccess,
       {}},
      {"ephemeral local storage is insufficient but preemption may help",
       MakePod().Name("p").Req({{"ephemeral-storage", "11"}}),
       {Running({{{"cpu", "2m"}, {"memory", "2"}, {"ephemeral-storage", "10"}}})},
       {},
       {},
       Code::kUnschedulable,
       {"Insufficient ephemeral-storage"}},
      {"pod fits",
       MakePod().Name("p").Req({{"ephemeral-storage", "10"}}),
       {Running({{{"cpu", "2m"}, {"memory", "2"}}})},
       {},
       {},
       Code::kSuccess,
       {}},
  };
  RunFilterCases(cases, TableNode());
}

TEST(NodeResourcesFitFilter, SidecarsCountForTheWholePodLifetime) {
  // A sidecar (restartable init container) keeps running next to the app containers, so its
  // requests add to them instead of being maxed with them.
  std::vector<FilterCase> cases = {
      {"sidecar plus app exceeds cpu",
       MakePod().Name("p").Req({{"cpu", "5m"}}).InitReq({{"cpu", "3m"}}, /*sidecar=*/true),
       {Running({{{"cpu", "3m"}}})},
       {},
       {},
       Code::kUnschedulable,
       {"Insufficient cpu"}},
      {"plain init container of the same size fits",
       MakePod().Name("p").Req({{"cpu", "5m"}}).InitReq({{"cpu", "3m"}}),
       {Running({{{"cpu", "3m"}}})},
       {},
       {},
       Code::kSuccess,
       {}},
  };
  RunFilterCases(cases, TableNode());
}

TEST(NodeResourcesFitFilter, FilterWithoutPreFilterIsAnError) {
  auto plugin = NewFit();
  ASSERT_NE(plugin, nullptr);
  auto* filter = dynamic_cast<FilterPlugin*>(plugin.get());
  ASSERT_NE(filter, nullptr);
  CycleState state;
  PodInfoPtr pod = MakePod().Name("p").Info();
  NodeInfo ni = MakeNodeInfo(TableNode());
  Status got = filter->Filter(state, *pod, ni);
  EXPECT_EQ(got.code(), Code::kError);
  EXPECT_EQ(got.Message(),
            "error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");
}

TEST(NodeResourcesFitFactory, RejectsUnknownStrategyAndMissingShape) {
  testing::FakeHandle handle;
  config::NodeResourcesFitArgs args;
  args.scoring_strategy.type = "Random";
  auto bad = NodeResourcesFitRegistration().factory(&args, handle);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "scoring strategy Random is not supported");

  args.scoring_strategy.type = "RequestedToCapacityRatio";
  EXPECT_FALSE(NodeResourcesFitRegistration().factory(&args, handle).ok());

  config::NodeResourcesBalancedAllocationArgs wrong_kind;
  auto wrong = NodeResourcesFitRegistration().factory(&wrong_kind, handle);
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(
      wrong.error().message,
      "want args to be of type NodeResourcesFitArgs, got NodeResourcesBalancedAllocationArgs");
  EXPECT_EQ(NodeResourcesFitRegistration().name, "NodeResourcesFit");
}

// ---------------------------------------------------------------- scoring

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

namespace berth {
namespace {

// A pod whose container asks 2m cpu and whose spec.resources asks 20m: more than TableNode has.
PodInfoPtr PodLevelCpuPod() {
  Pod pod = *MakePod().Name("p").Req({{"cpu", "2m"}}).Obj();
  pod.spec.resources.emplace().requests = testing::RL({{"cpu", "20m"}});
  return PodInfo::Create(std::make_shared<const Pod>(std::move(pod)));
}

Status FilterWithGates(const config::FeatureGates& gates) {
  testing::FakeHandle handle;
  auto plugin = NodeResourcesFitRegistration(gates).factory(nullptr, handle);
  EXPECT_TRUE(plugin.ok());
  auto* pre = dynamic_cast<PreFilterPlugin*>(plugin->get());
  auto* filter = dynamic_cast<FilterPlugin*>(plugin->get());
  PodInfoPtr pod = PodLevelCpuPod();
  CycleState state;
  PreFilterResult result;
  EXPECT_TRUE(pre->PreFilter(state, *pod, {}, &result).IsSuccess());
  NodeInfo ni = MakeNodeInfo(TableNode(), {});
  return filter->Filter(state, *pod, ni);
}

TEST(NodeResourcesFitFeatureGates, PodLevelResourcesOnCountsSpecResources) {
  Status got = FilterWithGates(config::FeatureGates());
  // More than the node's whole capacity: preempting would not help.
  EXPECT_EQ(got.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(got.reasons(), std::vector<std::string>{"Insufficient cpu"});
}

TEST(NodeResourcesFitFeatureGates, PodLevelResourcesOffIgnoresSpecResources) {
  config::FeatureGates gates;
  std::vector<std::string> warnings;
  ASSERT_TRUE(
      gates.Set("PodLevelResources=false,InPlacePodLevelResourcesVerticalScaling=false", &warnings)
          .ok());
  EXPECT_TRUE(FilterWithGates(gates).IsSuccess());
}

}  // namespace
}  // namespace berth

namespace berth {
namespace {

// The node-added hint sees the requests Filter sees: a 4-cpu node cannot hold the pod-level
// 8 cpu (skip), but holds the container's 1 cpu once the gate is off (queue).
QueueingHint NodeAddHint(const config::FeatureGates& gates) {
  testing::FakeHandle handle;
  auto plugin = NodeResourcesFitRegistration(gates).factory(nullptr, handle);
  EXPECT_TRUE(plugin.ok());
  auto* ext = dynamic_cast<EnqueueExtensions*>(plugin->get());
  Pod pod = *MakePod().Name("p").Req({{"cpu", "1"}}).Obj();
  pod.spec.resources.emplace().requests = testing::RL({{"cpu", "8"}});
  std::shared_ptr<const Node> node =
      MakeNode().Name("n").Capacity({{"cpu", "4"}, {"pods", "10"}}).Obj();
  for (const ClusterEventWithHint& e : ext->EventsToRegister()) {
    if (e.event.resource != EventResource::kNode || (e.event.actions & kAdd) == 0) continue;
    auto hint = e.hint(pod, EventObject{}, EventObject{node});
    EXPECT_TRUE(hint.ok());
    return *hint;
  }
  ADD_FAILURE() << "no node-add event registered";
  return QueueingHint::kQueue;
}

TEST(NodeResourcesFitFeatureGates, NodeAddHintFollowsPodLevelResources) {
  EXPECT_EQ(NodeAddHint(config::FeatureGates()), QueueingHint::kQueueSkip);
  config::FeatureGates gates;
  std::vector<std::string> warnings;
  ASSERT_TRUE(
      gates.Set("PodLevelResources=false,InPlacePodLevelResourcesVerticalScaling=false", &warnings)
          .ok());
  EXPECT_EQ(NodeAddHint(gates), QueueingHint::kQueue);
}

}  // namespace
}  // namespace berth
