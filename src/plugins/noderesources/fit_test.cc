#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "berth/config/plugin_args.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/testing/fake_handle.h"
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

// Long by design: kube-scheduler's TestEnoughRequests cases, one row each.
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

}  // namespace
}  // namespace berth
