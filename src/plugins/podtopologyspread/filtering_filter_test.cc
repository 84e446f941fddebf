// Filter, table-driven with the cases of kube-scheduler's podtopologyspread filtering tests
// (expected filter codes).
#include <gtest/gtest.h>

#include <climits>
#include <map>
#include <string>
#include <vector>

// Cases name only the fields they set.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include "plugins/podtopologyspread/filtering_test_util.h"
#include "plugins/podtopologyspread/podtopologyspread.h"
#include "plugins/podtopologyspread/state.h"
#include "plugins/podtopologyspread/test_util.h"

namespace berth::podtopologyspread {
namespace {

using namespace testutil;  // NOLINT

// ---------------------------------------------------------------- Filter

struct FilterCase {
  std::string name;
  std::shared_ptr<const Pod> pod;
  NodeList nodes;
  PodList existing;
  std::map<std::string, Code> want;
};

void PrintTo(const FilterCase& c, std::ostream* os) { *os << c.name; }

class FilterTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(FilterTest, Codes) {
  const FilterCase& tc = GetParam();
  Fixture fx(tc.nodes, tc.existing);
  CycleState state;
  ASSERT_TRUE(fx.PreFilter(state, tc.pod).IsSuccess());
  auto pi = PodInfo::Create(tc.pod);
  for (const auto& [node, code] : tc.want) {
    Status s = fx.plugin.Filter(state, *pi, fx.Node(node));
    EXPECT_EQ(s.code(), code) << node << ": " << s.Message();
    if (code == Code::kUnschedulable) {
      EXPECT_EQ(s.reasons(), std::vector<std::string>{std::string(kErrReasonConstraintsNotMatch)});
    } else if (code == Code::kUnschedulableAndUnresolvable) {
      EXPECT_EQ(s.reasons(), std::vector<std::string>{std::string(kErrReasonNodeLabelNotMatch)});
    }
  }
}

constexpr Code kOk = Code::kSuccess;
constexpr Code kNo = Code::kUnschedulable;
constexpr Code kNever = Code::kUnschedulableAndUnresolvable;

// Long by design: kube-scheduler's single-constraint Filter cases, one entry each.
std::vector<FilterCase> SingleConstraintCases() {
  const PodList spread_2_1_0_3 = {
      P("p-a1", "node-a", {{"foo", ""}}), P("p-a2", "node-a", {{"foo", ""}}),
      P("p-b1", "node-b", {{"foo", ""}}), P("p-y1", "node-y", {{"foo", ""}}),
      P("p-y2", "node-y", {{"foo", ""}}), P("p-y3", "node-y", {{"foo", ""}})};
  const NodeList abc = {N("node-a", {{"node", "node-a"}}), N("node-b", {{"node", "node-b"}}),
                        N("node-c", {{"node", "node-c"}})};
  const PodList spread_2_2_1 = {
      P("p-a1", "node-a", {{"foo", ""}}), P("p-a2", "node-a", {{"foo", ""}}),
      P("p-b1", "node-b", {{"foo", ""}}), P("p-b2", "node-b", {{"foo", ""}}),
      P("p-c1", "node-c", {{"foo", ""}})};
  const PodList zone_2_1 = {P("p-b1", "node-a", {{"foo", ""}}), P("p-b2", "node-b", {{"foo", ""}}),
                            P("p-y1", "node-y", {{"foo", ""}})};
  const NodeList foo_abx = {N("node-a", {{"node", "node-a"}, {"foo", ""}}),
                            N("node-b", {{"node", "node-b"}, {"foo", ""}}),
                            N("node-x", {{"node", "node-x"}, {"foo", ""}}),
                            N("node-y", {{"node", "node-y"}})};
  const NodeList tainted_y = {N("node-a", {{"node", "node-a"}, {"foo", ""}}),
                              N("node-b", {{"node", "node-b"}, {"foo", ""}}),
                              N("node-x", {{"node", "node-x"}, {"foo", ""}}),
                              N("node-y", {{"node", "node-y"}}, true)};
  return {
      {"no existing pods",
       MakePod().Name("p").Label("foo", "").Spread(Hard(1, "zone", kFoo)).Obj(),
       FourNodesTwoZones(),
       {},
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
      {"no existing pods, incoming pod doesn't match itself",
       MakePod().Name("p").Label("foo", "").Spread(Hard(1, "zone", kBar)).Obj(),
       FourNodesTwoZones(),
       {},
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
      {"existing pods in a different namespace do not count",
       MakePod().Name("p").Label("foo", "").Spread(Hard(1, "zone", kFoo)).Obj(),
       FourNodesTwoZones(),
       {P("p-a1", "node-a", {{"foo", ""}}, "ns1"), P("p-b1", "node-a", {{"foo", ""}}, "ns2"),
        P("p-x1", "node-x", {{"foo", ""}}), P("p-y1", "node-y", {{"foo", ""}})},
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kNo}, {"node-y", kNo}}},
      {"existing pods do not match null selector",
       MakePod().Name("p").Label("foo", "").Spread(Hard(1, "zone", std::nullopt)).Obj(),
       FourNodesTwoZones(),
       {P("p-x1", "node-x", {{"foo", ""}}), P("p-y1", "node-y", {{"foo", ""}})},
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
      {"pods spread across zones as 3/3, all nodes fit",
       MakePod().Name("p").Label("foo", "").Spread(Hard(1, "zone", kFoo)).Obj(),
       FourNodesTwoZones(),
       spread_2_1_0_3,
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
      {"pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
       MakePod().Name("p").Label("foo", "").Spread(Hard(1, "zone", kFoo)).Obj(),
       {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
        N("node-b", {{"zon", "zone1"}, {"node", "node-b"}}),
        N("node-x", {{"zone", "zone2"}, {"node", "node-x"}}),
        N("node-y", {{"zone", "zone2"}, {"node", "node-y"}})},
       {P("p-a1", "node-a", {{"foo", ""}}), P("p-b1", "node-b", {{"foo", ""}}),
        P("p-x1", "node-x", {{"foo", ""}}), P("p-y1", "node-y", {{"foo", ""}})},
       {{"node-a", kOk}, {"node-b", kNever}, {"node-x", kNo}, {"node-y", kNo}}},
      {"pod cannot be scheduled as all nodes don't have label 'rack'",
       MakePod().Name("p").Label("foo", "").Spread(Hard(1, "rack", kFoo)).Obj(),
       {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
        N("node-x", {{"zone", "zone2"}, {"node", "node-x"}})},
       {},
       {{"node-a", kNever}, {"node-x", kNever}}},
      {"pods spread across nodes as 2/1/0/3, only node-x fits",
       MakePod().Name("p").Label("foo", "").Spread(Hard(1, "node", kFoo)).Obj(),
       FourNodesTwoZones(),
       spread_2_1_0_3,
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}}},
      {"pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
       MakePod().Name("p").Label("foo", "").Spread(Hard(2, "node", kFoo)).Obj(),
       FourNodesTwoZones(),
       spread_2_1_0_3,
       {{"node-a", kNo}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kNo}}},
      {"pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
       MakePod().Name("p").Label("bar", "").Spread(Hard(1, "node", kFoo)).Obj(),
       FourNodesTwoZones(),
       spread_2_1_0_3,
       {{"node-a", kNo}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kNo}}},
      {"incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .Affinity(NodeAffinity("node", "In", {"node-a", "node-y"}))
           .Spread(Hard(1, "node", kFoo))
           .Obj(),
       FourNodesTwoZones(),
       spread_2_1_0_3,
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kNo}}},
      {"terminating Pods should be excluded",
       MakePod().Name("p").Label("foo", "").Spread(Hard(1, "node", kFoo)).Obj(),
       {N("node-a", {{"node", "node-a"}}), N("node-b", {{"node", "node-b"}})},
       {MakePod().Name("p-a").Node("node-a").Label("foo", "").Terminating().Obj(),
        P("p-b", "node-b", {{"foo", ""}})},
       {{"node-a", kOk}, {"node-b", kNo}}},
      {"incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .Affinity(NodeAffinity("node", "NotIn", {"node-b"}))
           .Spread(Hard(1, "zone", kFoo))
           .Obj(),
       FourNodesTwoZones(),
       {P("p-b1", "node-b", {{"foo", ""}}), P("p-b2", "node-b", {{"foo", ""}}),
        P("p-y1", "node-y", {{"foo", ""}})},
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kNo}, {"node-y", kNo}}},
      {"pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, "
       "then the third node fits",
       MakePod().Name("p").Label("foo", "").Spread(Hard(2, "node", kFoo, {.min_domains = 4})).Obj(),
       abc,
       spread_2_2_1,
       {{"node-a", kNo}, {"node-b", kNo}, {"node-c", kOk}}},
      {"pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, "
       "then the all nodes fit",
       MakePod().Name("p").Label("foo", "").Spread(Hard(2, "node", kFoo, {.min_domains = 2})).Obj(),
       abc,
       spread_2_2_1,
       {{"node-a", kOk}, {"node-b", kOk}, {"node-c", kOk}}},
      {"pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then "
       "the third and fourth nodes fit",
       MakePod().Name("p").Label("foo", "").Spread(Hard(2, "zone", kFoo, {.min_domains = 3})).Obj(),
       FourNodesTwoZones(),
       zone_2_1,
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kOk}}},
      {"pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then "
       "the all nodes fit",
       MakePod().Name("p").Label("foo", "").Spread(Hard(2, "zone", kFoo, {.min_domains = 1})).Obj(),
       FourNodesTwoZones(),
       zone_2_1,
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}}},
      {"NodeAffinityPolicy honored with labelSelectors",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .NodeSelector("foo", "")
           .Spread(Hard(1, "node", kFoo))
           .Obj(),
       foo_abx,
       zone_2_1,
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kOk}}},
      {"NodeAffinityPolicy ignored with labelSelectors",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .NodeSelector("foo", "")
           .Spread(Hard(1, "node", kFoo, kIgnoreAffinity))
           .Obj(),
       foo_abx,
       zone_2_1,
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}}},
      {"NodeAffinityPolicy honored with nodeAffinity",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .Affinity(NodeAffinity("foo", "In", {""}))
           .Spread(Hard(1, "node", kFoo))
           .Obj(),
       foo_abx,
       zone_2_1,
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kOk}}},
      {"NodeAffinityPolicy ignored with nodeAffinity",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .Affinity(NodeAffinity("foo", "In", {""}))
           .Spread(Hard(1, "node", kFoo, kIgnoreAffinity))
           .Obj(),
       foo_abx,
       zone_2_1,
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}}},
      {"NodeTaintsPolicy honored",
       MakePod().Name("p").Label("foo", "").Spread(Hard(1, "node", kFoo, kHonorTaints)).Obj(),
       tainted_y,
       zone_2_1,
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kOk}}},
      {"NodeTaintsPolicy ignored",
       MakePod().Name("p").Label("foo", "").Spread(Hard(1, "node", kFoo)).Obj(),
       tainted_y,
       zone_2_1,
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}}},
  };
}

INSTANTIATE_TEST_SUITE_P(SingleConstraint, FilterTest, ::testing::ValuesIn(SingleConstraintCases()),
                         CaseName);

// Long by design: kube-scheduler's multiple-constraint Filter cases, one entry each.
std::vector<FilterCase> MultipleConstraintsCases() {
  const auto zone_node = MakePod()
                             .Name("p")
                             .Label("foo", "")
                             .Spread(Hard(1, "zone", kFoo))
                             .Spread(Hard(1, "node", kFoo))
                             .Obj();
  const auto foo_bar = MakePod()
                           .Name("p")
                           .Label("foo", "")
                           .Label("bar", "")
                           .Spread(Hard(1, "zone", kFoo))
                           .Spread(Hard(1, "node", kBar))
                           .Obj();
  const PodList three = {P("p-a1", "node-a", {{"foo", ""}}), P("p-b1", "node-b", {{"foo", ""}}),
                         P("p-y1", "node-y", {{"foo", ""}})};
  return {
      {"two Constraints on zone and node, spreads = [3/3, 2/1/0/3]",
       zone_node,
       FourNodesTwoZones(),
       {P("p-a1", "node-a", {{"foo", ""}}), P("p-a2", "node-a", {{"foo", ""}}),
        P("p-b1", "node-b", {{"foo", ""}}), P("p-y1", "node-y", {{"foo", ""}}),
        P("p-y2", "node-y", {{"foo", ""}}), P("p-y3", "node-y", {{"foo", ""}})},
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}}},
      {"two Constraints on zone and node, spreads = [3/4, 2/1/0/4]",
       zone_node,
       FourNodesTwoZones(),
       {P("p-a1", "node-a", {{"foo", ""}}), P("p-a2", "node-a", {{"foo", ""}}),
        P("p-b1", "node-b", {{"foo", ""}}), P("p-y1", "node-y", {{"foo", ""}}),
        P("p-y2", "node-y", {{"foo", ""}}), P("p-y3", "node-y", {{"foo", ""}}),
        P("p-y4", "node-y", {{"foo", ""}})},
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kNo}, {"node-y", kNo}}},
      {"Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]",
       foo_bar,
       FourNodesTwoZones(),
       {P("p-a1", "node-a", {{"foo", ""}}), P("p-y1", "node-y", {{"bar", ""}})},
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}}},
      {"Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]",
       foo_bar,
       FourNodesTwoZones(),
       {P("p-a1", "node-a", {{"foo", ""}}), P("p-x1", "node-x", {{"bar", ""}}),
        P("p-y1", "node-y", {{"bar", ""}})},
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kNo}, {"node-y", kNo}}},
      {"Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]",
       foo_bar,
       FourNodesTwoZones(),
       {P("p-a1", "node-a", {{"foo", ""}}), P("p-a2", "node-a", {{"foo", ""}, {"bar", ""}}),
        P("p-y1", "node-y", {{"foo", ""}}), P("p-y2", "node-y", {{"foo", ""}, {"bar", ""}}),
        P("p-y3", "node-y", {{"foo", ""}})},
       {{"node-a", kNo}, {"node-b", kOk}, {"node-x", kNo}, {"node-y", kNo}}},
      {"Constraints hold different labelSelectors but pod doesn't match itself on 'zone' "
       "constraint",
       MakePod()
           .Name("p")
           .Label("bar", "")
           .Spread(Hard(1, "zone", kFoo))
           .Spread(Hard(1, "node", kBar))
           .Obj(),
       FourNodesTwoZones(),
       {P("p-a1", "node-a", {{"foo", ""}}), P("p-x1", "node-x", {{"bar", ""}}),
        P("p-y1", "node-y", {{"bar", ""}})},
       {{"node-a", kOk}, {"node-b", kOk}, {"node-x", kNo}, {"node-y", kNo}}},
      {"two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, "
       "1/0/0/1]",
       zone_node,
       {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
        N("node-b", {{"zone", "zone1"}, {"node", "node-b"}}), N("node-x", {{"zone", "zone2"}}),
        N("node-y", {{"zone", "zone2"}, {"node", "node-y"}})},
       {P("p-a1", "node-a", {{"foo", ""}}), P("p-y3", "node-y", {{"foo", ""}})},
       {{"node-a", kNo}, {"node-b", kOk}, {"node-x", kNever}, {"node-y", kNo}}},
      {"two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .NodeSelector("foo", "")
           .Spread(Hard(1, "zone", kFoo))
           .Spread(Hard(1, "node", kFoo, kIgnoreAffinity))
           .Obj(),
       {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"foo", ""}}),
        N("node-b", {{"zone", "zone1"}, {"node", "node-b"}, {"foo", ""}}),
        N("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}}),
        N("node-y", {{"zone", "zone2"}, {"node", "node-y"}})},
       three,
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}}},
      {"two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .Spread(Hard(1, "zone", kFoo, kHonorTaints))
           .Spread(Hard(1, "node", kFoo))
           .Obj(),
       {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"foo", ""}}),
        N("node-b", {{"zone", "zone1"}, {"node", "node-b"}, {"foo", ""}}),
        N("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}}),
        N("node-y", {{"zone", "zone2"}, {"node", "node-y"}}, true)},
       three,
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}}},
      {"two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .NodeSelector("foo", "")
           .Spread(Hard(1, "zone", kFoo))
           .Spread(Hard(1, "node", kFoo))
           .Obj(),
       {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"foo", ""}}),
        N("node-b", {{"zone", "zone1"}, {"node", "node-b"}}),
        N("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}}),
        N("node-y", {{"zone", "zone2"}, {"node", "node-y"}, {"foo", ""}}, true)},
       three,
       {{"node-a", kNo}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kNo}}},
      {"two node inclusion Constraints, zone: honor/honor, node: ignore/ignore",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .NodeSelector("foo", "")
           .Spread(Hard(1, "zone", kFoo, kHonorTaints))
           .Spread(Hard(1, "node", kFoo, kIgnoreAffinity))
           .Obj(),
       {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"foo", ""}}),
        N("node-b", {{"zone", "zone1"}, {"node", "node-b"}}),
        N("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}}),
        N("node-y", {{"zone", "zone2"}, {"node", "node-y"}, {"foo", ""}}, true)},
       three,
       {{"node-a", kNo}, {"node-b", kNo}, {"node-x", kOk}, {"node-y", kNo}}},
  };
}

INSTANTIATE_TEST_SUITE_P(MultipleConstraints, FilterTest,
                         ::testing::ValuesIn(MultipleConstraintsCases()), CaseName);

// A node that is not in the cycle's snapshot (e.g. a copy built elsewhere) is judged by its
// labels.
TEST(FilterTest, NodeOutsideSnapshotUsesItsLabels) {
  Fixture fx(FourNodesTwoZones(), {P("p-a1", "node-a", {{"foo", ""}})});
  const auto pod = MakePod().Name("p").Label("foo", "").Spread(Hard(1, "zone", kFoo)).Obj();
  CycleState state;
  ASSERT_TRUE(fx.PreFilter(state, pod).IsSuccess());
  auto pi = PodInfo::Create(pod);
  NodeInfo zone1(N("other", {{"zone", "zone1"}}));
  NodeInfo zone9(N("other", {{"zone", "zone9"}}));
  NodeInfo no_zone(N("other", {}));
  EXPECT_EQ(fx.plugin.Filter(state, *pi, zone1).code(), Code::kUnschedulable);
  EXPECT_TRUE(fx.plugin.Filter(state, *pi, zone9).IsSuccess());
  EXPECT_EQ(fx.plugin.Filter(state, *pi, no_zone).code(), Code::kUnschedulableAndUnresolvable);
}

// nodeTaintsPolicy Honor matches tolerations under the TaintTolerationComparisonOperators gate:
// with it on, a Gt toleration tolerates node-y's sla=800 taint, node-y (no matching pod) joins
// the domains and the minimum drops to 0; with it off node-y is left out and every node fits.
// AddPod counts a pod on node-y only when node-y is included.
TEST(FilterTest, NodeTaintsPolicyHonorsComparisonOperatorsGate) {
  auto tainted = MakeNode().Name("node-y");
  tainted.mutable_node().metadata.labels = {{"node", "node-y"}};
  tainted.Taint("sla", "800", "NoSchedule");
  const NodeList nodes = {N("node-a", {{"node", "node-a"}}), N("node-b", {{"node", "node-b"}}),
                          N("node-x", {{"node", "node-x"}}), tainted.Obj()};
  const PodList existing = {P("p-a1", "node-a", {{"foo", ""}}), P("p-b1", "node-b", {{"foo", ""}}),
                            P("p-x1", "node-x", {{"foo", ""}})};
  const auto pod = MakePod()
                       .Name("p")
                       .Label("foo", "")
                       .Toleration({"sla", "Gt", "500", "NoSchedule", std::nullopt})
                       .Spread(Hard(1, "node", kFoo, kHonorTaints))
                       .Obj();
  for (bool gate : {false, true}) {
    SCOPED_TRACE(gate ? "gate on" : "gate off");
    Fixture fx(nodes, existing, ListArgs(), gate);
    CycleState state;
    ASSERT_TRUE(fx.PreFilter(state, pod).IsSuccess());
    auto pi = PodInfo::Create(pod);
    const std::map<std::string, Code> want =
        gate ? std::map<std::string, Code>{{"node-a", kNo},
                                           {"node-b", kNo},
                                           {"node-x", kNo},
                                           {"node-y", kOk}}
             : std::map<std::string, Code>{
                   {"node-a", kOk}, {"node-b", kOk}, {"node-x", kOk}, {"node-y", kOk}};
    for (const auto& [node, code] : want) {
      EXPECT_EQ(fx.plugin.Filter(state, *pi, fx.Node(node)).code(), code) << node;
    }
    auto added = PodInfo::Create(P("p-y1", "node-y", {{"foo", ""}}));
    ASSERT_TRUE(fx.plugin.AddPod(state, *pi, added, fx.Node("node-y")).IsSuccess());
    // With node-y counted (gate on) every domain holds one pod again.
    EXPECT_EQ(fx.plugin.Filter(state, *pi, fx.Node("node-a")).code(), kOk);
  }
}

}  // namespace
}  // namespace berth::podtopologyspread
