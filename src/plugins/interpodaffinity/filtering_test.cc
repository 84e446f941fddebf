// PreFilter / Filter / AddPod / RemovePod of InterPodAffinity, with the worked cases of
// kube-scheduler's interpodaffinity filtering tests.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "berth/testing/fake_handle.h"
#include "plugins/interpodaffinity/interpodaffinity.h"
#include "plugins/interpodaffinity/state.h"
#include "plugins/interpodaffinity/test_util.h"

namespace berth::interpodaffinity {
namespace {

using test::AddTeamNamespaces;
using test::And;
using test::Exists;
using test::Expr;
using test::In;
using test::MakeNamespace;
using test::MakeNode;
using test::NotIn;
using test::Term;
using test::TestPod;

using PodPtr = std::shared_ptr<const Pod>;
using NodePtr = std::shared_ptr<const Node>;

const Status kOk = Status::Success();
Status Affinity() { return Status::Unresolvable(std::string(kErrReasonAffinityRulesNotMatch)); }
Status Anti() { return Status::Unschedulable(std::string(kErrReasonAntiAffinityRulesNotMatch)); }
Status Existing() {
  return Status::Unschedulable(std::string(kErrReasonExistingAntiAffinityRulesNotMatch));
}

// Runs PreFilter and then Filter on each node, against a cluster of `nodes` and `pods`.
class Harness {
 public:
  Harness(std::vector<NodePtr> nodes, std::vector<PodPtr> pods,
          config::InterPodAffinityArgs args = {})
      : handle_(Snapshot::Build(nodes, pods), &cluster_), plugin_(args, handle_) {
    AddTeamNamespaces(cluster_);
    cluster_.AddNamespace(MakeNamespace("NS1", {}));
  }

  Status PreFilter(const PodPtr& pod) {
    info_ = PodInfo::Create(pod);
    PreFilterResult result;
    Status s = plugin_.PreFilter(state_, *info_, handle_.snapshot().nodes(), &result);
    EXPECT_TRUE(result.AllNodes());
    return s;
  }
  Status Filter(const std::string& node) const {
    const NodeInfo* ni = handle_.snapshot().Get(node);
    EXPECT_NE(ni, nullptr) << node;
    return plugin_.Filter(state_, *info_, *ni);
  }

  InterPodAffinity& plugin() { return plugin_; }
  CycleState& state() { return state_; }
  const PodInfo& pod_info() const { return *info_; }
  const Snapshot& snapshot() const { return handle_.snapshot(); }
  const PreFilterState* pre_filter_state() const { return state_.Read(kPreFilterStateKey); }

 private:
  InMemoryCluster cluster_;
  testing::FakeHandle handle_;
  InterPodAffinity plugin_;
  CycleState state_;
  PodInfoPtr info_;
};

std::string Describe(const Status& s) {
  std::string out(CodeName(s.code()));
  for (const auto& r : s.reasons()) out += " | " + r;
  return out;
}

// ---------------------------------------------------------------- single node

struct SingleNodeCase {
  std::string name;
  PodPtr pod;
  std::vector<PodPtr> pods;
  std::optional<Code> want_pre_filter;  // unset: Success
  Status want_filter;
};

class RequiredAffinitySingleNodeTest : public ::testing::TestWithParam<SingleNodeCase> {};

TEST_P(RequiredAffinitySingleNodeTest, Filter) {
  const auto& c = GetParam();
  Harness h({MakeNode("node1", {{"region", "r1"}, {"zone", "z11"}})}, c.pods);
  Status pre = h.PreFilter(c.pod);
  ASSERT_EQ(pre.code(), c.want_pre_filter.value_or(Code::kSuccess)) << Describe(pre);
  if (!pre.IsSuccess()) return;
  Status got = h.Filter("node1");
  EXPECT_EQ(got, c.want_filter) << "got " << Describe(got) << ", want " << Describe(c.want_filter);
}

// Labels of kube-scheduler's test table: podLabel = {service: securityscan}, podLabel2 = {security:
// S1}.
TestPod WithPodLabel() { return TestPod().Label("service", "securityscan"); }
TestPod WithPodLabel2() { return TestPod().Label("security", "S1"); }
PodPtr ExistingPod() { return WithPodLabel().Name("existing").Node("node1").Obj(); }

std::vector<SingleNodeCase> SingleNodeCases() {
  const auto svc_in = In("service", {"securityscan", "value2"}, "region");
  const auto anti_node = In("service", {"antivirusscan", "value2"}, "node");
  return {
      {"no required pod affinity rules, no existing pods", TestPod().Obj(), {}, Code::kSkip, kOk},
      {"satisfies required affinity with In matching the existing pod",
       WithPodLabel2().Affinity(svc_in).Obj(),
       {ExistingPod()},
       {},
       kOk},
      {"satisfies required affinity with NotIn matching the existing pod",
       WithPodLabel2().Affinity(NotIn("service", {"securityscan3", "value3"}, "region")).Obj(),
       {ExistingPod()},
       {},
       kOk},
      {"does not satisfy affinity because of a different namespace",
       WithPodLabel2()
           .Affinity(Term(Expr("service", "In", {"securityscan", "value2"}), "", {"DiffNameSpace"}))
           .Obj(),
       {WithPodLabel().Name("e").Namespace("ns").Node("node1").Obj()},
       {},
       Affinity()},
      {"does not satisfy affinity because the selector does not match the existing pod",
       WithPodLabel().Affinity(In("service", {"antivirusscan", "value2"}, "")).Obj(),
       {ExistingPod()},
       {},
       Affinity()},
      {"satisfies affinity with different operators in several terms",
       WithPodLabel2()
           .Affinity(Term(And(Expr("service", "Exists"), "wrongkey", "DoesNotExist"), "region"))
           .Affinity(Term(
               And(Expr("service", "In", {"securityscan"}), "service", "NotIn", {"WrongValue"}),
               "region"))
           .Obj(),
       {ExistingPod()},
       {},
       kOk},
      {"match expressions are ANDed: one failing expression fails the term",
       WithPodLabel2()
           .Affinity(Term(And(Expr("service", "Exists"), "wrongkey", "DoesNotExist"), "region"))
           .Affinity(Term(
               And(Expr("service", "In", {"securityscan2"}), "service", "NotIn", {"WrongValue"}),
               "region"))
           .Obj(),
       {ExistingPod()},
       {},
       Affinity()},
      {"satisfies affinity and anti-affinity with the existing pod",
       WithPodLabel2().Affinity(svc_in).AntiAffinity(anti_node).Obj(),
       {ExistingPod()},
       {},
       kOk},
      {"satisfies affinity, anti-affinity and anti-affinity symmetry",
       WithPodLabel2().Affinity(svc_in).AntiAffinity(anti_node).Obj(),
       {WithPodLabel().Name("e").Node("node1").AntiAffinity(anti_node).Obj()},
       {},
       kOk},
      {"satisfies affinity but not anti-affinity with the existing pod",
       WithPodLabel2()
           .Affinity(svc_in)
           .AntiAffinity(In("service", {"securityscan", "value2"}, "zone"))
           .Obj(),
       {ExistingPod()},
       {},
       Anti()},
      {"satisfies affinity and anti-affinity but not anti-affinity symmetry",
       WithPodLabel().Affinity(svc_in).AntiAffinity(anti_node).Obj(),
       {WithPodLabel()
            .Name("e")
            .Node("node1")
            .AntiAffinity(In("service", {"securityscan", "value2"}, "zone"))
            .Obj()},
       {},
       Existing()},
      {"pod matches its own affinity but the only other matching pod is elsewhere",
       WithPodLabel().Affinity(NotIn("service", {"securityscan", "value2"}, "region")).Obj(),
       {WithPodLabel().Name("e").Node("node2").Obj()},
       {},
       Affinity()},
      {"existing pod's anti-affinity is respected when the pod has none (violated)",
       WithPodLabel().Obj(),
       {WithPodLabel()
            .Name("e")
            .Node("node1")
            .AntiAffinity(In("service", {"securityscan", "value2"}, "zone"))
            .Obj()},
       {},
       Existing()},
      {"existing pod's anti-affinity is respected when the pod has none (satisfied)",
       WithPodLabel().Obj(),
       {WithPodLabel()
            .Name("e")
            .Node("node1")
            .AntiAffinity(NotIn("service", {"securityscan", "value2"}, "zone"))
            .Obj()},
       Code::kSkip,
       kOk},
      {"satisfies anti-affinity with the existing pod but not its symmetry",
       WithPodLabel()
           .AntiAffinity(Exists("service", "region"))
           .AntiAffinity(Exists("security", "region"))
           .Obj(),
       {WithPodLabel2().Name("e").Node("node1").AntiAffinity(Exists("security", "zone")).Obj()},
       {},
       Anti()},
      {"symmetry a1: pods partially match each other's terms",
       WithPodLabel()
           .AntiAffinity(Exists("service", "zone"))
           .AntiAffinity(Exists("security", "zone"))
           .Obj(),
       {WithPodLabel2().Name("e").Node("node1").AntiAffinity(Exists("security", "zone")).Obj()},
       {},
       Anti()},
      {"symmetry a2: pods partially match each other's terms",
       WithPodLabel2().AntiAffinity(Exists("security", "zone")).Obj(),
       {WithPodLabel()
            .Name("e")
            .Node("node1")
            .AntiAffinity(Exists("service", "zone"))
            .AntiAffinity(Exists("security", "zone"))
            .Obj()},
       {},
       Existing()},
      {"symmetry b1: pods partially match each other's terms",
       TestPod()
           .Label("abc")
           .Label("xyz")
           .AntiAffinity(Exists("abc", "zone"))
           .AntiAffinity(Exists("def", "zone"))
           .Obj(),
       {TestPod()
            .Label("def")
            .Label("xyz")
            .Name("e")
            .Node("node1")
            .AntiAffinity(Exists("abc", "zone"))
            .AntiAffinity(Exists("def", "zone"))
            .Obj()},
       {},
       Anti()},
      {"symmetry b2: pods partially match each other's terms",
       TestPod()
           .Label("def")
           .Label("xyz")
           .AntiAffinity(Exists("abc", "zone"))
           .AntiAffinity(Exists("def", "zone"))
           .Obj(),
       {TestPod()
            .Label("abc")
            .Label("xyz")
            .Name("e")
            .Node("node1")
            .AntiAffinity(Exists("abc", "zone"))
            .AntiAffinity(Exists("def", "zone"))
            .Obj()},
       {},
       Anti()},
      {"affinity with a matching namespaceSelector",
       WithPodLabel2()
           .Affinity(Term(Expr("service", "In", {"securityscan", "value2"}), "region", {},
                          Expr("team", "In", {"team1"})))
           .Obj(),
       {WithPodLabel().Name("e").Namespace("subteam1.team1").Node("node1").Obj()},
       {},
       kOk},
      {"affinity with a non-matching namespaceSelector",
       WithPodLabel2()
           .Affinity(Term(Expr("service", "In", {"securityscan", "value2"}), "region", {},
                          Expr("team", "In", {"team1"})))
           .Obj(),
       {WithPodLabel().Name("e").Namespace("subteam1.team2").Node("node1").Obj()},
       {},
       Affinity()},
      {"anti-affinity with a matching namespaceSelector",
       WithPodLabel2()
           .Namespace("subteam1.team1")
           .AntiAffinity(Term(Expr("service", "In", {"securityscan", "value2"}), "zone", {},
                              Expr("team", "In", {"team1"})))
           .Obj(),
       {WithPodLabel().Name("e").Namespace("subteam2.team1").Node("node1").Obj()},
       {},
       Anti()},
      {"anti-affinity with an empty namespaceSelector matches all namespaces",
       WithPodLabel2()
           .Namespace("subteam1.team1")
           .AntiAffinity(
               Term(Expr("service", "In", {"securityscan", "value2"}), "zone", {}, LabelSelector{}))
           .Obj(),
       {WithPodLabel().Name("e").Namespace("subteam2.team1").Node("node1").Obj()},
       {},
       Anti()},
      {"anti-affinity with a non-matching namespaceSelector",
       WithPodLabel2()
           .Namespace("subteam1.team1")
           .AntiAffinity(Term(Expr("service", "In", {"securityscan", "value2"}), "zone", {},
                              Expr("team", "In", {"team1"})))
           .Obj(),
       {WithPodLabel().Name("e").Namespace("subteam1.team2").Node("node1").Obj()},
       {},
       kOk},
  };
}

INSTANTIATE_TEST_SUITE_P(Upstream, RequiredAffinitySingleNodeTest,
                         ::testing::ValuesIn(SingleNodeCases()));

TEST(InterPodAffinityPreFilterTest, InvalidAffinityLabelSyntaxFailsPreFilter) {
  Harness h({MakeNode("node1", {{"region", "r1"}})}, {});
  Status s = h.PreFilter(WithPodLabel()
                             .Affinity(In("service", {"{{.bad-value.}}"}, "region"))
                             .Affinity(In("service", {"antivirusscan", "value2"}, "node"))
                             .Obj());
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_THAT(s.Message(), ::testing::StartsWith("parsing pod: requiredAffinityTerms: "));
  // The selector error's own wording belongs to CompiledSelector::Compile.
  EXPECT_THAT(s.Message(), ::testing::HasSubstr("{{.bad-value.}}"));
}

TEST(InterPodAffinityPreFilterTest, InvalidTermsOfSeveralListsAreAggregated) {
  Harness h({MakeNode("node1", {{"region", "r1"}})}, {});
  Status s = h.PreFilter(WithPodLabel()
                             .AntiAffinity(In("service", {"{{.bad-value.}}"}, "region"))
                             .PreferredAffinity(1, In("service", {"{{.bad}}"}, "region"))
                             .Obj());
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_THAT(s.Message(), ::testing::StartsWith("parsing pod: [requiredAntiAffinityTerms: "));
  EXPECT_THAT(s.Message(), ::testing::HasSubstr(", preferredAffinityTerms: "));
}

TEST(InterPodAffinityPreFilterTest, FilterWithoutPreFilterStateIsAnError) {
  Harness h({MakeNode("node1", {})}, {});
  PodInfoPtr info = PodInfo::Create(TestPod().Obj());
  CycleState state;
  Status s = h.plugin().Filter(state, *info, *h.snapshot().Get("node1"));
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.Message(), "error reading \"PreFilterInterPodAffinity\" from cycleState: not found");
}

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

// ---------------------------------------------------------------- AddPod / RemovePod

using Counts = std::map<std::pair<std::string, std::string>, int64_t>;

Counts ToMap(const TopologyCounter& c) {
  Counts out;
  c.ForEach([&](std::string_view k, std::string_view v, int64_t n) {
    out[{std::string(k), std::string(v)}] = n;
  });
  return out;
}

struct AddRemoveCase {
  std::string name;
  PodPtr pending;
  std::vector<PodPtr> existing;
  PodPtr added;
  Counts want_anti_affinity;
  Counts want_affinity;
};

class PreFilterStateAddRemovePodTest : public ::testing::TestWithParam<AddRemoveCase> {};

TEST_P(PreFilterStateAddRemovePodTest, MatchesRecomputation) {
  const auto& c = GetParam();
  std::vector<NodePtr> nodes = {MakeNode("nodeA", {{"region", "r1"}, {"zone", "z11"}}),
                                MakeNode("nodeB", {{"region", "r1"}, {"zone", "z12"}}),
                                MakeNode("nodeC", {{"region", "r2"}, {"zone", "z21"}})};

  // The state PreFilter computes when the added pod already exists.
  std::vector<PodPtr> all = c.existing;
  all.push_back(c.added);
  Harness with_added(nodes, all);
  ASSERT_TRUE(with_added.PreFilter(c.pending).IsSuccess());

  Harness h(nodes, c.existing);
  ASSERT_TRUE(h.PreFilter(c.pending).IsSuccess());
  const PreFilterState before = *h.pre_filter_state();

  CycleState cloned = h.state().Clone();
  const NodeInfo& node = *h.snapshot().Get(c.added->spec.node_name);
  PodInfoPtr added = PodInfo::Create(c.added);
  ASSERT_TRUE(h.plugin().AddPod(cloned, h.pod_info(), added, node).IsSuccess());
  const PreFilterState* after_add = cloned.Read(kPreFilterStateKey);
  EXPECT_EQ(ToMap(*after_add->anti_affinity_counts), c.want_anti_affinity);
  EXPECT_EQ(ToMap(*after_add->affinity_counts), c.want_affinity);
  const PreFilterState* recomputed = with_added.pre_filter_state();
  EXPECT_EQ(ToMap(*after_add->anti_affinity_counts), ToMap(*recomputed->anti_affinity_counts));
  EXPECT_EQ(ToMap(*after_add->affinity_counts), ToMap(*recomputed->affinity_counts));
  EXPECT_EQ(ToMap(*after_add->existing_anti_affinity_counts),
            ToMap(*recomputed->existing_anti_affinity_counts));
  // The original state is untouched by updates to its clone.
  EXPECT_EQ(ToMap(*h.pre_filter_state()->anti_affinity_counts),
            ToMap(*before.anti_affinity_counts));

  ASSERT_TRUE(h.plugin().RemovePod(cloned, h.pod_info(), added, node).IsSuccess());
  const PreFilterState* after_remove = cloned.Read(kPreFilterStateKey);
  EXPECT_EQ(ToMap(*after_remove->anti_affinity_counts), ToMap(*before.anti_affinity_counts));
  EXPECT_EQ(ToMap(*after_remove->affinity_counts), ToMap(*before.affinity_counts));
  EXPECT_EQ(ToMap(*after_remove->existing_anti_affinity_counts),
            ToMap(*before.existing_anti_affinity_counts));
  EXPECT_EQ(after_remove->affinity_counts->size(), before.affinity_counts->size());
  EXPECT_EQ(after_remove->anti_affinity_counts->size(), before.anti_affinity_counts->size());
}

std::vector<AddRemoveCase> AddRemoveCases() {
  const auto foo_bar_region = In("foo", {"bar"}, "region");
  const auto complex1 = In("foo", {"bar", "buzz"}, "region");
  const auto complex2 = NotIn("service", {"bar", "security", "test"}, "zone");
  return {
      {"anti-affinity counts follow an added and removed pod",
       TestPod().Name("pending").Label("foo", "bar").AntiAffinity(foo_bar_region).Obj(),
       {TestPod().Name("p1").Label("foo", "bar").Node("nodeA").Obj(),
        TestPod().Name("p2").Node("nodeC").AntiAffinity(foo_bar_region).Obj()},
       TestPod()
           .Name("addedPod")
           .Label("foo", "bar")
           .Node("nodeB")
           .AntiAffinity(foo_bar_region)
           .Obj(),
       {{{"region", "r1"}, 2}},
       {}},
      {"anti-affinity counts with several terms follow an added and removed pod",
       TestPod()
           .Name("pending")
           .Label("foo", "bar")
           .AntiAffinity(complex1)
           .AntiAffinity(complex2)
           .Obj(),
       {TestPod().Name("p1").Label("foo", "bar").Node("nodeA").Obj(),
        TestPod().Name("p2").Node("nodeC").AntiAffinity(foo_bar_region).Obj()},
       TestPod()
           .Name("addedPod")
           .Label("foo", "bar")
           .Node("nodeA")
           .AntiAffinity(complex1)
           .AntiAffinity(complex2)
           .Obj(),
       {{{"region", "r1"}, 2}, {{"zone", "z11"}, 2}, {{"zone", "z21"}, 1}},
       {}},
      {"affinity and anti-affinity counts follow an added and removed pod",
       TestPod().Name("pending").Label("foo", "bar").Affinity(complex1).Affinity(complex2).Obj(),
       {TestPod().Name("p1").Label("foo", "bar").Node("nodeA").Obj(),
        TestPod()
            .Name("p2")
            .Node("nodeC")
            .AntiAffinity(foo_bar_region)
            .Affinity(complex1)
            .Affinity(complex2)
            .Obj()},
       TestPod()
           .Name("addedPod")
           .Label("foo", "bar")
           .Node("nodeA")
           .AntiAffinity(complex1)
           .AntiAffinity(complex2)
           .Obj(),
       {},
       {{{"region", "r1"}, 2}, {{"zone", "z11"}, 2}}},
  };
}

INSTANTIATE_TEST_SUITE_P(Upstream, PreFilterStateAddRemovePodTest,
                         ::testing::ValuesIn(AddRemoveCases()));

// Removing the only pod that matched the affinity terms brings the first-pod exception back.
TEST(InterPodAffinityAddRemoveTest, RemovingTheLastMatchRestoresTheFirstPodException) {
  auto nodes =
      std::vector<NodePtr>{MakeNode("a", {{"zone", "z1"}}), MakeNode("b", {{"zone", "z2"}})};
  auto group = TestPod().Label("app", "g").Affinity(In("app", {"g"}, "zone"));
  auto member = TestPod().Name("m").Label("app", "g").Node("a").Obj();
  Harness h(nodes, {member});
  ASSERT_TRUE(h.PreFilter(group.Name("new").Obj()).IsSuccess());
  EXPECT_EQ(h.Filter("a"), kOk);
  EXPECT_EQ(h.Filter("b"), Affinity());

  CycleState cloned = h.state().Clone();
  ASSERT_TRUE(h.plugin()
                  .RemovePod(cloned, h.pod_info(), PodInfo::Create(member), *h.snapshot().Get("a"))
                  .IsSuccess());
  EXPECT_EQ(h.plugin().Filter(cloned, h.pod_info(), *h.snapshot().Get("b")), kOk);
  // The original state still sees the member.
  EXPECT_EQ(h.Filter("b"), Affinity());
}

// Adding a pod whose required anti-affinity matches the incoming pod makes its domain infeasible.
TEST(InterPodAffinityAddRemoveTest, AddedPodsAntiAffinityRejectsItsDomain) {
  auto nodes =
      std::vector<NodePtr>{MakeNode("a", {{"zone", "z1"}}), MakeNode("b", {{"zone", "z1"}}),
                           MakeNode("c", {{"zone", "z2"}})};
  Harness h(nodes, {});
  // Give the incoming pod a (never matching) term so PreFilter does not skip.
  ASSERT_TRUE(h.PreFilter(TestPod().Label("app", "web").AntiAffinity(In("x", {"y"}, "zone")).Obj())
                  .IsSuccess());
  CycleState cloned = h.state().Clone();
  auto repeller =
      PodInfo::Create(TestPod().Name("r").Node("a").AntiAffinity(In("app", {"web"}, "zone")).Obj());
  ASSERT_TRUE(
      h.plugin().AddPod(cloned, h.pod_info(), repeller, *h.snapshot().Get("a")).IsSuccess());
  EXPECT_EQ(h.plugin().Filter(cloned, h.pod_info(), *h.snapshot().Get("a")), Existing());
  EXPECT_EQ(h.plugin().Filter(cloned, h.pod_info(), *h.snapshot().Get("b")), Existing());
  EXPECT_EQ(h.plugin().Filter(cloned, h.pod_info(), *h.snapshot().Get("c")), kOk);
  EXPECT_EQ(h.Filter("a"), kOk);
}

// ---------------------------------------------------------------- incoming counts

struct IncomingCountsCase {
  std::string name;
  std::vector<PodPtr> existing;
  PodPtr pod;
  Counts want_affinity;
  Counts want_anti_affinity;
};

class IncomingAffinityCountsTest : public ::testing::TestWithParam<IncomingCountsCase> {};

TEST_P(IncomingAffinityCountsTest, Counts) {
  const auto& c = GetParam();
  Harness h({MakeNode("nodeA", {{"hostname", "nodeA"}})}, c.existing);
  Status s = h.PreFilter(c.pod);
  if (s.IsSkip()) {
    EXPECT_TRUE(c.want_affinity.empty() && c.want_anti_affinity.empty());
    return;
  }
  ASSERT_TRUE(s.IsSuccess()) << Describe(s);
  EXPECT_EQ(ToMap(*h.pre_filter_state()->affinity_counts), c.want_affinity);
  EXPECT_EQ(ToMap(*h.pre_filter_state()->anti_affinity_counts), c.want_anti_affinity);
}

PodPtr Normal(std::vector<std::string> labels) {
  TestPod p;
  p.Name("normal").Node("nodeA");
  for (auto& l : labels) p.Label(l);
  return p.Obj();
}

std::vector<IncomingCountsCase> IncomingCountsCases() {
  const Counts one = {{{"hostname", "nodeA"}, 1}};
  return {
      {"nil test", {}, TestPod().Name("aaa-normal").Obj(), {}, {}},
      {"incoming pod without affinity/anti-affinity causes a no-op",
       {Normal({"aaa"})},
       TestPod().Name("aaa-normal").Obj(),
       {},
       {}},
      {"no pod has a label that violates the incoming pod's affinity and anti-affinity",
       {Normal({"bbb"})},
       TestPod()
           .Name("aaa-anti")
           .Affinity(Exists("aaa", "hostname"))
           .AntiAffinity(Exists("aaa", "hostname"))
           .Obj(),
       {},
       {}},
      {"existing pod matches the incoming pod's affinity and anti-affinity - single term",
       {Normal({"aaa"})},
       TestPod()
           .Name("affi-antiaffi")
           .Affinity(Exists("aaa", "hostname"))
           .AntiAffinity(Exists("aaa", "hostname"))
           .Obj(),
       one,
       one},
      {"existing pod matches the incoming pod's affinity and anti-affinity - multiple terms",
       {Normal({"aaa", "bbb"})},
       TestPod()
           .Name("affi-antiaffi")
           .Affinity(Exists("aaa", "hostname"))
           .Affinity(Exists("bbb", "hostname"))
           .AntiAffinity(Exists("aaa", "hostname"))
           .Obj(),
       {{{"hostname", "nodeA"}, 2}},  // one for each term
       one},
      {"existing pod does not match the incoming pod's affinity but matches anti-affinity",
       {Normal({"aaa"})},
       TestPod()
           .Name("affi-antiaffi")
           .Affinity(Exists("aaa", "hostname"))
           .Affinity(Exists("bbb", "hostname"))
           .AntiAffinity(Exists("aaa", "hostname"))
           .AntiAffinity(Exists("bbb", "hostname"))
           .Obj(),
       {},
       one},
      {"anti-affinity with several terms, existing pod violates some - case 1",
       {Normal({"aaa", "bbb"})},
       TestPod()
           .Name("anaffi-antiaffiti")
           .Affinity(Exists("aaa", "hostname"))
           .Affinity(Exists("ccc", "hostname"))
           .AntiAffinity(Exists("aaa", "hostname"))
           .AntiAffinity(Exists("ccc", "hostname"))
           .Obj(),
       {},
       one},
      {"anti-affinity with several terms, existing pod violates some - case 2",
       {Normal({"bbb"})},
       TestPod()
           .Name("affi-antiaffi")
           .Affinity(Exists("aaa", "hostname"))
           .Affinity(Exists("bbb", "hostname"))
           .AntiAffinity(Exists("aaa", "hostname"))
           .AntiAffinity(Exists("bbb", "hostname"))
           .Obj(),
       {},
       one},
  };
}

INSTANTIATE_TEST_SUITE_P(Upstream, IncomingAffinityCountsTest,
                         ::testing::ValuesIn(IncomingCountsCases()));

// Many nodes exercise the parallel counting; the result must equal a direct count.
TEST(InterPodAffinityPreFilterTest, ManyNodesCountsEqualDirectCounts) {
  std::vector<NodePtr> nodes;
  std::vector<PodPtr> pods;
  Counts want_affinity, want_anti, want_existing;
  for (int i = 0; i < 500; ++i) {
    std::string name = "n" + std::to_string(i);
    std::string zone = "z" + std::to_string(i % 7);
    nodes.push_back(MakeNode(name, {{"zone", zone}, {"hostname", name}}));
    if (i % 3 == 0) {
      pods.push_back(TestPod().Name("db" + name).Node(name).Label("app", "db").Obj());
      want_affinity[{"zone", zone}] += 1;
    }
    if (i % 5 == 0) {
      pods.push_back(TestPod().Name("web" + name).Node(name).Label("app", "web").Obj());
      want_anti[{"hostname", name}] += 1;
    }
    if (i % 11 == 0) {
      pods.push_back(TestPod()
                         .Name("cache" + name)
                         .Node(name)
                         .Label("app", "cache")
                         .AntiAffinity(In("app", {"web"}, "zone"))
                         .Obj());
      want_existing[{"zone", zone}] += 1;
    }
  }
  Harness h(nodes, pods);
  ASSERT_TRUE(h.PreFilter(TestPod()
                              .Label("app", "web")
                              .Affinity(In("app", {"db"}, "zone"))
                              .AntiAffinity(In("app", {"web"}, "hostname"))
                              .Obj())
                  .IsSuccess());
  const PreFilterState& s = *h.pre_filter_state();
  EXPECT_EQ(ToMap(*s.affinity_counts), want_affinity);
  EXPECT_EQ(ToMap(*s.anti_affinity_counts), want_anti);
  EXPECT_EQ(ToMap(*s.existing_anti_affinity_counts), want_existing);
}

}  // namespace
}  // namespace berth::interpodaffinity
