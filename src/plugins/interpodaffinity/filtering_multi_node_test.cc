// Filter of InterPodAffinity over several nodes, with the worked cases of kube-scheduler's
// interpodaffinity filtering tests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "berth/testing/fake_handle.h"
#include "plugins/interpodaffinity/filtering_test_util.h"
#include "plugins/interpodaffinity/interpodaffinity.h"
#include "plugins/interpodaffinity/state.h"
#include "plugins/interpodaffinity/test_util.h"

namespace berth::interpodaffinity {
namespace {

using test::AddTeamNamespaces;
using test::Affinity;
using test::And;
using test::Anti;
using test::Describe;
using test::Existing;
using test::Exists;
using test::Expr;
using test::Harness;
using test::In;
using test::kOk;
using test::MakeNamespace;
using test::MakeNode;
using test::NodePtr;
using test::NotIn;
using test::PodPtr;
using test::Term;
using test::TestPod;

// ---------------------------------------------------------------- multiple nodes

struct MultiNodeCase {
  std::string name;
  PodPtr pod;
  std::vector<PodPtr> pods;
  std::vector<NodePtr> nodes;
  std::vector<Status> want;  // per node; ignored when PreFilter skips
  std::optional<Code> want_pre_filter = std::nullopt;
};

class RequiredAffinityMultipleNodesTest : public ::testing::TestWithParam<MultiNodeCase> {};

TEST_P(RequiredAffinityMultipleNodesTest, Filter) {
  const auto& c = GetParam();
  Harness h(c.nodes, c.pods);
  Status pre = h.PreFilter(c.pod);
  ASSERT_EQ(pre.code(), c.want_pre_filter.value_or(Code::kSuccess)) << Describe(pre);
  if (!pre.IsSuccess()) return;
  ASSERT_EQ(c.want.size(), c.nodes.size());
  for (size_t i = 0; i < c.nodes.size(); ++i) {
    Status got = h.Filter(c.nodes[i]->metadata.name);
    EXPECT_EQ(got, c.want[i]) << c.nodes[i]->metadata.name << ": got " << Describe(got) << ", want "
                              << Describe(c.want[i]);
  }
}

// Long by design: kube-scheduler's multiple-node filtering cases, one entry each.
std::vector<MultiNodeCase> MultiNodeCases() {
  const std::map<std::string, std::string> china = {{"region", "China"}};
  const std::map<std::string, std::string> china_az1 = {{"region", "China"}, {"az", "az1"}};
  const std::map<std::string, std::string> india = {{"region", "India"}};
  auto rz = [](std::string name, std::string zone) {
    return MakeNode(name, {{"region", "r1"}, {"zone", zone}, {"hostname", name}});
  };
  return {
      {"nodes sharing the topology value of a node with a matching pod all fit",
       TestPod().Affinity(In("foo", {"bar"}, "region")).Obj(),
       {TestPod().Name("p1").Node("node1").Label("foo", "bar").Obj()},
       {MakeNode("node1", china), MakeNode("node2", china_az1), MakeNode("node3", india)},
       {kOk, kOk, Affinity()}},
      {"the first pod of a group may go to any node with the topology keys",
       TestPod()
           .Label("foo", "bar")
           .Label("service", "securityscan")
           .Affinity(In("foo", {"bar"}, "zone"))
           .Affinity(In("service", {"securityscan"}, "zone"))
           .Obj(),
       {TestPod().Name("p1").Node("nodeA").Label("foo", "bar").Obj()},
       {MakeNode("nodeA", {{"zone", "az1"}, {"hostname", "h1"}}),
        MakeNode("nodeB", {{"zone", "az2"}, {"hostname", "h2"}})},
       {kOk, kOk}},
      {"the first pod of a group still needs nodes labelled with the topology keys",
       TestPod()
           .Label("foo", "bar")
           .Label("service", "securityscan")
           .Affinity(In("foo", {"bar"}, "zone"))
           .Affinity(In("service", {"securityscan"}, "zone"))
           .Obj(),
       {TestPod().Name("p1").Node("nodeA").Label("foo", "bar").Obj()},
       {MakeNode("nodeA", {{"zoneLabel", "az1"}, {"hostname", "h1"}}),
        MakeNode("nodeB", {{"zoneLabel", "az2"}, {"hostname", "h2"}})},
       {Affinity(), Affinity()}},
      {"anti-affinity rejects every node of the matching pod's topology domain",
       TestPod().AntiAffinity(In("foo", {"abc"}, "region")).Obj(),
       {TestPod().Name("p").Node("nodeA").Label("foo", "abc").Obj()},
       {MakeNode("nodeA", {{"region", "r1"}, {"hostname", "nodeA"}}),
        MakeNode("nodeB", {{"region", "r1"}, {"hostname", "nodeB"}})},
       {Anti(), Anti()}},
      {"anti-affinity matches a pod when any of its terms matches",
       TestPod()
           .AntiAffinity(In("foo", {"abc"}, "region"))
           .AntiAffinity(In("service", {"securityscan"}, "zone"))
           .Obj(),
       {TestPod()
            .Name("p")
            .Node("nodeA")
            .Label("foo", "abc")
            .Label("service", "securityscan")
            .Obj()},
       {MakeNode("nodeA", {{"region", "r1"}, {"zone", "z1"}, {"hostname", "nodeA"}}),
        MakeNode("nodeB", {{"region", "r1"}, {"zone", "z2"}, {"hostname", "nodeB"}})},
       {Anti(), Anti()}},
      {"anti-affinity leaves nodes of other topology values",
       TestPod().AntiAffinity(In("foo", {"abc"}, "region")).Obj(),
       {TestPod().Name("p").Node("nodeA").Label("foo", "abc").Obj()},
       {MakeNode("nodeA", china), MakeNode("nodeB", china_az1), MakeNode("nodeC", india)},
       {Anti(), Anti(), kOk}},
      {"anti-affinity only counts pods of the term's namespaces",
       TestPod()
           .Namespace("NS1")
           .Label("foo", "123")
           .AntiAffinity(In("foo", {"bar"}, "region"))
           .Obj(),
       {TestPod().Name("a").Node("nodeA").Namespace("NS1").Label("foo", "bar").Obj(),
        TestPod()
            .Name("c")
            .Node("nodeC")
            .Namespace("NS2")
            .AntiAffinity(In("foo", {"123"}, "region"))
            .Obj()},
       {MakeNode("nodeA", china), MakeNode("nodeB", china_az1), MakeNode("nodeC", india)},
       {Anti(), Anti(), kOk}},
      {"existing pod's term with a topology key no node has is ignored",
       TestPod().Label("foo").Obj(),
       {TestPod().Name("a").Node("nodeA").AntiAffinity(Exists("foo", "invalid-node-label")).Obj()},
       {rz("nodeA", "z1"), rz("nodeB", "z1")},
       {kOk, kOk},
       Code::kSkip},
      {"incoming pod's anti-affinity also needs the topology key on the node",
       TestPod().Node("nodeA").AntiAffinity(Exists("foo", "invalid-node-label")).Obj(),
       {TestPod().Name("a").Node("nodeA").Label("foo").Obj()},
       {rz("nodeA", "z1"), rz("nodeB", "z1")},
       {kOk, kOk}},
      {"the pod violates each existing pod's anti-affinity on all nodes",
       TestPod().Label("foo").Label("bar").Obj(),
       {TestPod().Name("a").Node("nodeA").AntiAffinity(Exists("foo", "zone")).Obj(),
        TestPod().Name("b").Node("nodeA").AntiAffinity(Exists("bar", "region")).Obj()},
       {rz("nodeA", "z1"), rz("nodeB", "z2")},
       {Existing(), Existing()}},
      {"the pod's anti-affinity is violated by at least one existing pod on every node",
       TestPod().AntiAffinity(Exists("foo", "zone")).AntiAffinity(Exists("bar", "region")).Obj(),
       {TestPod().Name("a").Node("nodeA").Label("foo").Obj(),
        TestPod().Name("b").Node("nodeB").Label("bar").Obj()},
       {rz("nodeA", "z1"), rz("nodeB", "z2")},
       {Anti(), Anti()}},
      {"existing anti-affinity: selector and topology key must both match (one key invalid)",
       TestPod().Label("foo").Label("bar").Obj(),
       {TestPod()
            .Name("a")
            .Node("nodeA")
            .AntiAffinity(Exists("foo", "invalid-node-label"))
            .AntiAffinity(Exists("bar", "zone"))
            .Obj()},
       {rz("nodeA", "z1"), rz("nodeB", "z2")},
       {Existing(), kOk}},
      {"incoming anti-affinity: selector and topology key must both match (one key invalid)",
       TestPod()
           .AntiAffinity(Exists("foo", "invalid-node-label"))
           .AntiAffinity(Exists("bar", "zone"))
           .Obj(),
       {TestPod().Name("podA").Node("nodeA").Label("foo").Label("bar").Obj()},
       {rz("nodeA", "z1"), rz("nodeB", "z2")},
       {Anti(), kOk}},
      {"existing anti-affinity: selector and topology key must both match (all keys valid)",
       TestPod().Label("foo").Label("bar").Obj(),
       {TestPod()
            .Name("a")
            .Node("nodeA")
            .AntiAffinity(Exists("foo", "region"))
            .AntiAffinity(Exists("bar", "zone"))
            .Obj()},
       {rz("nodeA", "z1"), rz("nodeB", "z2")},
       {Existing(), Existing()}},
      {"incoming anti-affinity: selector and topology key must both match (all keys valid)",
       TestPod().AntiAffinity(Exists("foo", "region")).AntiAffinity(Exists("bar", "zone")).Obj(),
       {TestPod().Name("a").Node("nodeA").Label("foo").Label("bar").Obj()},
       {rz("nodeA", "z1"), rz("nodeB", "z2")},
       {Anti(), Anti()}},
      {"existing pods on nodeA and nodeB repel the pod, which only fits nodeC",
       TestPod().Label("foo").Label("bar").Obj(),
       {TestPod()
            .Name("a")
            .Node("nodeA")
            .AntiAffinity(Exists("foo", "zone"))
            .AntiAffinity(Exists("labelA", "zone"))
            .Obj(),
        TestPod()
            .Name("b")
            .Node("nodeB")
            .AntiAffinity(Exists("bar", "zone"))
            .AntiAffinity(Exists("labelB", "zone"))
            .Obj()},
       {rz("nodeA", "z1"), rz("nodeB", "z2"), rz("nodeC", "z3")},
       {Existing(), Existing(), kOk}},
      {"affinity: all terms match one pod, then all topology keys are checked",
       TestPod().Affinity(Exists("foo", "region")).Affinity(Exists("bar", "zone")).Obj(),
       {TestPod().Name("pod1").Node("nodeA").Label("foo").Label("bar").Obj()},
       {rz("nodeA", "z1"), rz("nodeB", "z1")},
       {kOk, kOk}},
      {"affinity: the terms must be satisfied by the same pod",
       TestPod().Affinity(Exists("foo", "region")).Affinity(Exists("bar", "zone")).Obj(),
       {TestPod().Name("pod1").Node("nodeA").Label("foo").Obj(),
        TestPod().Name("pod2").Node("nodeB").Label("bar").Obj()},
       {rz("nodeA", "z1"), rz("nodeB", "z2")},
       {Affinity(), Affinity()}},
  };
}

INSTANTIATE_TEST_SUITE_P(Upstream, RequiredAffinityMultipleNodesTest,
                         ::testing::ValuesIn(MultiNodeCases()));

// The pod's own failures come first: affinity, then its anti-affinity, then existing pods'.
TEST(InterPodAffinityFilterTest, ReportsTheFirstViolatedRuleOnly) {
  auto node = MakeNode("n", {{"zone", "z1"}});
  auto pod = TestPod()
                 .Label("app", "web")
                 .Affinity(In("app", {"db"}, "zone"))
                 .AntiAffinity(In("app", {"web"}, "zone"))
                 .Obj();
  // Node m hosts the only "db" pod (so n fails affinity without the first-pod exception) and a
  // "web" pod that both matches the pod's anti-affinity and repels "web" pods itself.
  Harness h({node, MakeNode("m", {{"zone", "z2"}})},
            {TestPod().Name("db").Node("m").Label("app", "db").Obj(),
             TestPod()
                 .Name("w")
                 .Node("m")
                 .Label("app", "web")
                 .AntiAffinity(In("app", {"web"}, "zone"))
                 .Obj()});
  ASSERT_TRUE(h.PreFilter(pod).IsSuccess());
  EXPECT_EQ(h.Filter("n"), Affinity());
  EXPECT_EQ(h.Filter("m"), Anti());
}

}  // namespace
}  // namespace berth::interpodaffinity
