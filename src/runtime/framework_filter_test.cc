#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/framework.h"
#include "runtime/framework_test_util.h"
#include "runtime/scheduler_metrics.h"
#include "testing/builders.h"

namespace berth {
namespace {

using framework_test::AloneFilter;
using framework_test::FakeFilter;
using framework_test::FakePreEnqueue;
using framework_test::FakePreFilter;
using framework_test::FrameworkTest;
using framework_test::kNeighbourKey;
using framework_test::Names;
using framework_test::NeighbourPlugin;
using framework_test::Reg;
using framework_test::Set;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::MakeNode;
using testing::MakePod;
using ::testing::UnorderedElementsAre;

// ---------------------------------------------------------------- PreEnqueue

TEST_F(FrameworkTest, PreEnqueueReturnsFirstRejectionWithPlugin) {
  Register(Reg<FakePreEnqueue>("Open", &log_, Status::Success()));
  Register(Reg<FakePreEnqueue>("Gate", &log_, Status::Unresolvable("gated")));
  Register(Reg<FakePreEnqueue>("Broken", &log_, Status::Error("boom")));
  config::Profile p = BaseProfile();
  p.plugins.pre_enqueue = Set({{"Open"}, {"Gate"}, {"Broken"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  Status s = fw->RunPreEnqueuePlugins(*pod_->pod);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "gated");
  EXPECT_EQ(s.plugin(), "Gate");

  config::Profile q = BaseProfile();
  q.plugins.pre_enqueue = Set({{"Broken"}});
  auto fw2 = Build(q);
  ASSERT_NE(fw2, nullptr);
  Status e = fw2->RunPreEnqueuePlugins(*pod_->pod);
  EXPECT_TRUE(e.IsError());
  EXPECT_EQ(e.plugin(), "Broken");
}

// ---------------------------------------------------------------- PreFilter

TEST_F(FrameworkTest, PreFilterSkipDisablesThePairedFilterOnly) {
  Register(Reg<FakePreFilter>("Skipper", &log_, Status::Skip()));
  Register(Reg<FakePreFilter>("Runner", &log_, Status::Success()));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"Skipper"}, {"Runner"}});
  p.plugins.filter = Set({{"Skipper"}, {"Runner"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  Status s = fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by);
  EXPECT_TRUE(s.IsSuccess());
  EXPECT_TRUE(result.AllNodes());
  EXPECT_THAT(rejected_by, IsEmpty());
  EXPECT_THAT(state.skipped_filters(), ElementsAre(true, false));

  // Skipper's filter (which rejects everything) is not called; Runner's is.
  log_.Clear();
  Status f = fw->RunFilterPlugins(state, *pod_, NodeNamed("n1"));
  EXPECT_EQ(f.plugin(), "Runner");
  EXPECT_EQ(f.Message(), "Runner filter");
  EXPECT_FALSE(log_.Contains("Filter:Skipper:n1"));
  EXPECT_TRUE(log_.Contains("Filter:Runner:n1"));
}

TEST_F(FrameworkTest, PreFilterUnresolvableStopsImmediately) {
  Register(Reg<FakePreFilter>("A", &log_, Status::Unresolvable("a says no")));
  Register(Reg<FakePreFilter>("B", &log_, Status::Success()));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"A"}, {"B"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  Status s = fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "a says no");
  EXPECT_EQ(s.plugin(), "A");
  EXPECT_THAT(rejected_by, ElementsAre("A"));
  EXPECT_THAT(log_.calls(), ElementsAre("PreFilter:A"));
}

// Unschedulable lets later PreFilters run (their state is needed by preemption); as in
// kube-scheduler, the status returned is the last Unschedulable one.
TEST_F(FrameworkTest, PreFilterUnschedulableRunsLaterPlugins) {
  Register(Reg<FakePreFilter>("A", &log_, Status::Unschedulable("a says no")));
  Register(Reg<FakePreFilter>("B", &log_, Status::Success()));
  Register(Reg<FakePreFilter>("C", &log_, Status::Unschedulable("c says no")));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"A"}, {"B"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  Status s = fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "a says no");
  EXPECT_EQ(s.plugin(), "A");
  EXPECT_THAT(log_.calls(), ElementsAre("PreFilter:A", "PreFilter:B"));

  log_.Clear();
  config::Profile q = BaseProfile();
  q.plugins.pre_filter = Set({{"A"}, {"B"}, {"C"}});
  auto fw2 = Build(q);
  ASSERT_NE(fw2, nullptr);
  UseNodes(*fw2, 2);
  CycleState state2;
  rejected_by.clear();
  Status s2 = fw2->RunPreFilterPlugins(state2, *pod_, &result, &rejected_by);
  EXPECT_EQ(s2.code(), Code::kUnschedulable);
  EXPECT_EQ(s2.Message(), "c says no");
  EXPECT_EQ(s2.plugin(), "C");
  EXPECT_THAT(log_.calls(), ElementsAre("PreFilter:A", "PreFilter:B", "PreFilter:C"));
}

TEST_F(FrameworkTest, PreFilterErrorIsWrapped) {
  Register(Reg<FakePreFilter>("A", &log_, Status::Error("disk on fire")));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"A"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 1);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  Status s = fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by);
  EXPECT_TRUE(s.IsError());
  EXPECT_EQ(s.Message(), "running PreFilter plugin \"A\": disk on fire");
  EXPECT_EQ(s.plugin(), "A");
}

TEST_F(FrameworkTest, PreFilterResultsIntersect) {
  Register(Reg<FakePreFilter>("A", &log_, Status::Success(), Names({"n1", "n2"})));
  Register(Reg<FakePreFilter>("All", &log_, Status::Success()));
  Register(Reg<FakePreFilter>("B", &log_, Status::Success(), Names({"n2", "n3"})));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"A"}, {"All"}, {"B"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 3);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  Status s = fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by);
  EXPECT_TRUE(s.IsSuccess());
  ASSERT_FALSE(result.AllNodes());
  EXPECT_THAT(*result.node_names, ElementsAre("n2"));
  EXPECT_THAT(rejected_by, ElementsAre("A", "B"));
}

TEST_F(FrameworkTest, EmptyPreFilterIntersectionFromOnePlugin) {
  Register(Reg<FakePreFilter>("A", &log_, Status::Success(), Names({})));
  Register(Reg<FakePreFilter>("Later", &log_, Status::Success()));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"A"}, {"Later"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  Status s = fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "node(s) didn't satisfy plugin A");
  EXPECT_THAT(rejected_by, ElementsAre("A"));
  EXPECT_THAT(log_.calls(), ElementsAre("PreFilter:A"));
}

// The plugin names are listed sorted, whatever their order in the profile.
TEST_F(FrameworkTest, EmptyPreFilterIntersectionFromSeveralPlugins) {
  Register(Reg<FakePreFilter>("Zeta", &log_, Status::Success(), Names({"n1"})));
  Register(Reg<FakePreFilter>("Alpha", &log_, Status::Success(), Names({"n2"})));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"Zeta"}, {"Alpha"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  Status s = fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "node(s) didn't satisfy plugin(s) [Alpha Zeta] simultaneously");
  EXPECT_THAT(rejected_by, ElementsAre("Alpha", "Zeta"));
}

TEST_F(FrameworkTest, UnschedulableThenEmptyIntersectionIsUnresolvable) {
  Register(Reg<FakePreFilter>("A", &log_, Status::Unschedulable("a says no")));
  Register(Reg<FakePreFilter>("B", &log_, Status::Success(), Names({})));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"A"}, {"B"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  Status s = fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "node(s) didn't satisfy plugin B");
}

// ---------------------------------------------------------------- Filter

TEST_F(FrameworkTest, FirstFailingFilterWinsAndIsStamped) {
  Register(Reg<FakeFilter>("F1", &log_, Names({"n1"})));
  Register(Reg<FakeFilter>("F2", &log_, Names({"n1", "n2"}), Code::kUnschedulableAndUnresolvable));
  config::Profile p = BaseProfile();
  p.plugins.filter = Set({{"F1"}, {"F2"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 3);
  CycleState state;

  Status s1 = fw->RunFilterPlugins(state, *pod_, NodeNamed("n1"));
  EXPECT_EQ(s1.code(), Code::kUnschedulable);
  EXPECT_EQ(s1.plugin(), "F1");
  EXPECT_EQ(s1.Message(), "F1 rejects n1");
  EXPECT_FALSE(log_.Contains("Filter:F2:n1"));

  Status s2 = fw->RunFilterPlugins(state, *pod_, NodeNamed("n2"));
  EXPECT_EQ(s2.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s2.plugin(), "F2");
  EXPECT_EQ(s2.Message(), "F2 rejects n2");

  EXPECT_TRUE(fw->RunFilterPlugins(state, *pod_, NodeNamed("n3")).IsSuccess());
}

TEST_F(FrameworkTest, FilterErrorIsWrapped) {
  Register(Reg<FakeFilter>("F", &log_, Names({"n1"}), Code::kError));
  Register(Reg<FakeFilter>("Wait", &log_, Names({"n2"}), Code::kWait));
  config::Profile p = BaseProfile();
  p.plugins.filter = Set({{"F"}, {"Wait"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  Status s = fw->RunFilterPlugins(state, *pod_, NodeNamed("n1"));
  EXPECT_TRUE(s.IsError());
  EXPECT_EQ(s.Message(), "running \"F\" filter plugin: F rejects n1");
  EXPECT_EQ(s.plugin(), "F");

  // Any status a filter may not return becomes an error too.
  Status w = fw->RunFilterPlugins(state, *pod_, NodeNamed("n2"));
  EXPECT_TRUE(w.IsError());
  EXPECT_EQ(w.Message(), "running \"Wait\" filter plugin: Wait rejects n2");
  EXPECT_EQ(w.plugin(), "Wait");
}

// ---------------------------------------------------------------- Filter with nominated pods

TEST_F(FrameworkTest, NominatedPodsOfHigherOrEqualPriorityAreAddedFirst) {
  Register(Reg<AloneFilter>("Alone", &log_));
  config::Profile p = BaseProfile();
  p.plugins.filter = Set({{"Alone"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;

  struct Case {
    std::string name;
    PodInfoPtr nominated;
    bool fits;
  };
  const std::vector<Case> cases = {
      {"none", nullptr, true},
      {"higher priority", MakePod().Name("hi").Priority(20).Info(), false},
      {"equal priority", MakePod().Name("eq").Priority(10).Info(), false},
      {"lower priority is ignored", MakePod().Name("lo").Priority(5).Info(), true},
      {"the pod itself is ignored", MakePod().Name("p").Priority(10).Info(), true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    nominator_.pods.clear();
    if (c.nominated) nominator_.pods["n1"] = {c.nominated};
    fw->SetSnapshot(&snapshot_);
    Status s = fw->RunFilterPluginsWithNominatedPods(state, *pod_, NodeNamed("n1"));
    EXPECT_EQ(s.IsSuccess(), c.fits) << s.Message();
    if (!c.fits) {
      EXPECT_EQ(s.plugin(), "Alone");
      EXPECT_EQ(s.Message(), "node has pods");
    }
    // Pods nominated elsewhere never matter.
    EXPECT_TRUE(fw->RunFilterPluginsWithNominatedPods(state, *pod_, NodeNamed("n2")).IsSuccess());
  }
  // The snapshot node itself is untouched.
  EXPECT_THAT(NodeNamed("n1").pods(), IsEmpty());
}

// The second pass runs without the nominated pods: a filter that passes only because of them
// (like pod affinity) must pass on its own too.
TEST_F(FrameworkTest, SecondPassRunsWithoutNominatedPods) {
  Register(Reg<NeighbourPlugin>("Neighbour", &log_));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"Neighbour"}});
  p.plugins.filter = Set({{"Neighbour"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 1);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  ASSERT_TRUE(fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by).IsSuccess());

  nominator_.pods["n1"] = {MakePod().Name("friend").Priority(100).Info()};
  fw->SetSnapshot(&snapshot_);
  log_.Clear();
  Status s = fw->RunFilterPluginsWithNominatedPods(state, *pod_, NodeNamed("n1"));
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "no neighbour");
  EXPECT_EQ(s.plugin(), "Neighbour");
  // AddPod ran once, on a clone: the cycle's state still counts no neighbour.
  EXPECT_THAT(log_.calls(), ElementsAre("AddPod:Neighbour:friend@n1"));
  EXPECT_EQ(state.Read(kNeighbourKey)->added, 0);

  // The first pass alone (state with the nominated pod) would have passed.
  CycleState with = state.Clone();
  with.ReadMutable(kNeighbourKey)->added = 1;
  EXPECT_TRUE(fw->RunFilterPlugins(with, *pod_, NodeNamed("n1")).IsSuccess());
}

}  // namespace
}  // namespace berth
