// PreFilter / Filter of InterPodAffinity on a single node, with the worked cases of
// kube-scheduler's interpodaffinity filtering tests.
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
using test::NotIn;
using test::PodPtr;
using test::Term;
using test::TestPod;

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

// Long by design: kube-scheduler's single-node filtering cases, one entry each.
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

}  // namespace
}  // namespace berth::interpodaffinity
