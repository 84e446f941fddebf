#include "plugins/defaultpreemption/plugin.h"

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
using defaultpreemption_test::kVeryHigh;
using defaultpreemption_test::N;
using defaultpreemption_test::Pdb;
using defaultpreemption_test::Req;
using defaultpreemption_test::Running;
using defaultpreemption_test::Statuses;
using preemption::Candidate;
using preemption::CompiledPdb;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeNode;
using testing::MakePod;

// ---------------------------------------------------------------- PostFilter

// Long by design: the table of kube-scheduler's TestPostFilter, one row per case.
TEST(DefaultPreemptionTest, PostFilter) {
  const Req one_pod = {{"pods", "1"}};
  const Req node_res = {{"cpu", "200m"}, {"memory", "400"}};
  struct Case {
    std::string name;
    Ptr<Pod> pod;
    std::vector<Ptr<Pod>> pods;
    std::vector<Ptr<Node>> nodes;
    NodeStatusMap statuses;
    std::vector<Ptr<PodDisruptionBudget>> pdbs;
    bool failing_extensions = false;
    Code want_code;
    std::string want_message;
    std::optional<std::string> want_nomination;  // nullopt: no nomination at all
    std::vector<std::string> want_victims = {};
  };
  const std::vector<Case> cases = {
      {"pod with higher priority can be made schedulable",
       MakePod().Name("p").Priority(kHigh).Obj(),
       {MakePod().Name("p1").Node("node1").Obj()},
       {N("node1", one_pod)},
       Statuses({{"node1", Code::kUnschedulable}}),
       {},
       false,
       Code::kSuccess,
       "",
       "node1",
       {"default/p1"}},
      {"pod with tied priority is still unschedulable",
       MakePod().Name("p").Obj(),
       {MakePod().Name("p1").Node("node1").Obj()},
       {N("node1", one_pod)},
       Statuses({{"node1", Code::kUnschedulable}}),
       {},
       false,
       Code::kUnschedulable,
       "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
       ""},
      {"preemption respects unresolvable filter statuses",
       MakePod().Name("p").Priority(kHigh).Obj(),
       {MakePod().Name("p1").Node("node1").Obj()},
       {N("node1", one_pod)},
       Statuses({{"node1", Code::kUnschedulableAndUnresolvable}}),
       {},
       false,
       Code::kUnschedulable,
       "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
       ""},
      {"a node without a status counts as unresolvable",
       MakePod().Name("p").Priority(kHigh).Obj(),
       {MakePod().Name("p1").Node("node1").Obj()},
       {N("node1", one_pod)},
       {},
       {},
       false,
       Code::kUnschedulable,
       "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
       ""},
      {"pod can be made schedulable on one node",
       MakePod().Name("p").Priority(kMid).Obj(),
       {MakePod().Name("p1").Priority(kHigh).Node("node1").Obj(),
        MakePod().Name("p2").Priority(kLow).Node("node2").Obj()},
       {N("node1", one_pod), N("node2", one_pod)},
       Statuses({{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}}),
       {},
       false,
       Code::kSuccess,
       "",
       "node2",
       {"default/p2"}},
      {"pod can be made schedulable on minHighestPriority node",
       MakePod().Name("p").Priority(kVeryHigh).Obj(),
       {MakePod().Name("p1").Label("pdb", "non-violating").Priority(kHigh).Node("node1").Obj(),
        MakePod().Name("p2").Label("pdb", "violating").Priority(kLow).Node("node1").Obj(),
        MakePod().Name("p3").Label("pdb", "violating").Priority(kMid).Node("node2").Obj()},
       {N("node1", one_pod), N("node2", one_pod)},
       Statuses({{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}}),
       {Pdb({{"pdb", "violating"}}, 0),
        Pdb({{"pdb", "non-violating"}}, std::numeric_limits<int32_t>::max())},
       false,
       Code::kSuccess,
       "",
       "node2",
       {"default/p3"}},
      {"no candidate nodes: not enough resource after removing low priority pods",
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {MakePod().Name("p1").Node("node1").Obj(), MakePod().Name("p2").Node("node2").Obj()},
       {N("node1", node_res), N("node2", node_res)},
       Statuses({{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}}),
       {},
       false,
       Code::kUnschedulable,
       "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
       ""},
      {"no candidate nodes with mixed reasons: no lower priority pod and not enough cpu",
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {MakePod().Name("p1").Node("node1").Priority(kHigh).Obj(),
        MakePod().Name("p2").Node("node2").Obj(),
        MakePod().Name("p3").Node("node3").Priority(kHigh).Obj()},
       {N("node1", one_pod), N("node2", node_res), N("node3", one_pod)},
       Statuses({{"node1", Code::kUnschedulable},
                 {"node2", Code::kUnschedulable},
                 {"node3", Code::kUnschedulable}}),
       {},
       false,
       Code::kUnschedulable,
       "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found "
       "for incoming pod.",
       ""},
      {"no candidate nodes with mixed reasons: unresolvable nodes and not enough cpu",
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {MakePod().Name("p1").Node("node1").Obj(), MakePod().Name("p2").Node("node2").Obj()},
       {N("node1", node_res), N("node2", node_res), N("node3", node_res), N("node4", node_res)},
       Statuses({{"node1", Code::kUnschedulable},
                 {"node2", Code::kUnschedulable},
                 {"node4", Code::kUnschedulableAndUnresolvable}}),
       {},
       false,
       Code::kUnschedulable,
       "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for "
       "scheduling.",
       ""},
      {"only one node and it fails in a PreFilter extension",
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {MakePod().Name("p1").Node("node1").Obj()},
       {MakeNode().Name("node1").Capacity(kLarge).Label("error", "true").Obj()},
       Statuses({{"node1", Code::kUnschedulable}}),
       {},
       true,
       Code::kError,
       "preemption: running RemovePod on PreFilter plugin \"test-plugin\": failed to remove pod: p",
       std::nullopt},
      {"one node fails in a PreFilter extension, the other is a candidate",
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {MakePod().Name("p1").Node("node1").Obj(),
        MakePod().Name("p2").Node("node2").Req(kMedium).Obj()},
       {MakeNode().Name("node1").Capacity(kLarge).Label("error", "true").Obj(), N("node2", kLarge)},
       Statuses({{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}}),
       {},
       true,
       Code::kSuccess,
       "",
       "node2",
       {"default/p2"}},
      {"preemptionPolicy Never",
       MakePod().Name("p").Priority(kHigh).PreemptionPolicy("Never").Obj(),
       {MakePod().Name("p1").Node("node1").Obj()},
       {N("node1", one_pod)},
       Statuses({{"node1", Code::kUnschedulable}}),
       {},
       false,
       Code::kUnschedulable,
       "preemption: not eligible due to preemptionPolicy=Never.",
       std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env(c.nodes, c.pods, c.pod, c.pdbs, {}, 1, std::nullopt, c.failing_extensions);
    PostFilterResult result;
    Status s = env.plugin.PostFilter(env.state, *env.pod, c.statuses, &result);
    EXPECT_EQ(s.code(), c.want_code) << s.Message();
    EXPECT_EQ(s.Message(), c.want_message);
    if (c.want_nomination) {
      ASSERT_TRUE(result.nominating.has_value());
      EXPECT_EQ(result.nominating->node_name, *c.want_nomination);
      EXPECT_TRUE(result.nominating->override_nomination);
    } else {
      EXPECT_FALSE(result.nominating.has_value());
    }
    EXPECT_EQ(result.victims, c.want_victims);
    // Victims are gone from the cluster; nothing else is.
    for (const auto& p : c.pods) {
      const bool victim =
          std::find(c.want_victims.begin(), c.want_victims.end(), p->Key()) != c.want_victims.end();
      EXPECT_EQ(env.handle.cluster().GetPod("default", p->metadata.name) == nullptr, victim)
          << p->Key();
    }
  }
}

// ---------------------------------------------------------------- eligibility

TEST(DefaultPreemptionTest, PodEligibleToPreemptOthers) {
  auto terminating_victim = [](int32_t prio) {
    auto b = MakePod().Name("p1").Priority(prio).Node("node1").Terminating();
    b.mutable_pod().status.conditions.push_back(
        {"DisruptionTarget", "True", "PreemptionByScheduler", ""});
    return b.Obj();
  };
  struct Case {
    std::string name;
    Ptr<Pod> pod;
    std::vector<Ptr<Pod>> pods;
    NodeStatusMap statuses;
    bool want;
    std::string want_reason;
  };
  const std::vector<Case> cases = {
      {"nominated node is unresolvable now: preempt again",
       MakePod().Name("p").Priority(kHigh).NominatedNodeName("node1").Obj(),
       {terminating_victim(kLow)},
       Statuses({{"node1", Code::kUnschedulableAndUnresolvable}}),
       true,
       ""},
      {"pod without nominated node", MakePod().Name("p").Priority(kHigh).Obj(), {}, {}, true, ""},
      {"preemptionPolicy Never",
       MakePod().Name("p").Priority(kHigh).PreemptionPolicy("Never").Obj(),
       {},
       {},
       false,
       "not eligible due to preemptionPolicy=Never."},
      {"preemption victim terminating on the nominated node",
       MakePod().Name("p").Priority(kHigh).NominatedNodeName("node1").Obj(),
       {terminating_victim(kLow)},
       Statuses({{"node1", Code::kUnschedulable}}),
       false,
       "not eligible due to a terminating pod on the nominated node."},
      {"terminating pod that was not preempted does not block",
       MakePod().Name("p").Priority(kHigh).NominatedNodeName("node1").Obj(),
       {MakePod().Name("p1").Priority(kLow).Node("node1").Terminating().Obj()},
       Statuses({{"node1", Code::kUnschedulable}}),
       true,
       ""},
      {"terminating preempted pod of higher priority does not block",
       MakePod().Name("p").Priority(kHigh).NominatedNodeName("node1").Obj(),
       {terminating_victim(kVeryHigh)},
       Statuses({{"node1", Code::kUnschedulable}}),
       true,
       ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env({N("node1")}, c.pods, c.pod);
    std::string reason;
    EXPECT_EQ(env.plugin.PodEligibleToPreemptOthers(*c.pod, c.statuses, &reason), c.want);
    EXPECT_EQ(reason, c.want_reason);
  }
}

// A nominated preemptor whose victims are still terminating waits instead of preempting more.
TEST(DefaultPreemptionTest, PostFilterWaitsForTerminatingVictims) {
  auto victim = MakePod().Name("v").Priority(kLow).Node("node1").Req(kLarge).Terminating();
  victim.mutable_pod().status.conditions.push_back(
      {"DisruptionTarget", "True", "PreemptionByScheduler", ""});
  Env env({N("node1", kLarge), N("node2", kLarge)},
          {victim.Obj(), Running("other", "node2", kLow, kLarge)},
          MakePod().Name("p").Priority(kHigh).Req(kLarge).NominatedNodeName("node1").Obj());
  PostFilterResult result;
  Status s = env.plugin.PostFilter(
      env.state, *env.pod,
      Statuses({{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}}), &result);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(),
            "preemption: not eligible due to a terminating pod on the nominated node.");
  EXPECT_FALSE(result.nominating.has_value());
  EXPECT_NE(env.handle.cluster().GetPod("default", "other"), nullptr);
}

TEST(DefaultPreemptionTest, RegistrationDecodesAndValidatesArgs) {
  PluginRegistration reg = DefaultPreemptionRegistration(config::FeatureGates());
  EXPECT_EQ(reg.name, "DefaultPreemption");
  ASSERT_TRUE(static_cast<bool>(reg.decode_args));
  auto defaults = reg.decode_args(nullptr, "args");
  ASSERT_TRUE(defaults.ok());
  const auto* typed = dynamic_cast<const config::DefaultPreemptionArgs*>(defaults->get());
  ASSERT_NE(typed, nullptr);
  EXPECT_EQ(typed->min_candidate_nodes_percentage, 10);
  EXPECT_EQ(typed->min_candidate_nodes_absolute, 100);

  testing::FakeHandle handle;
  auto plugin = reg.factory(nullptr, handle);
  ASSERT_TRUE(plugin.ok());
  EXPECT_EQ((*plugin)->Name(), "DefaultPreemption");
  EXPECT_NE(dynamic_cast<PostFilterPlugin*>(plugin->get()), nullptr);

  config::DefaultPreemptionArgs bad;
  bad.min_candidate_nodes_percentage = 150;
  EXPECT_FALSE(reg.factory(&bad, handle).ok());
}

}  // namespace
}  // namespace berth
