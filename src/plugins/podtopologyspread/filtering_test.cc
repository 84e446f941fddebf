// PreFilter, table-driven with the cases of kube-scheduler's podtopologyspread filtering
// tests (expected counts per eligible domain).
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

// ---------------------------------------------------------------- PreFilter state

struct PreFilterCase {
  std::string name;
  std::shared_ptr<const Pod> pod;
  NodeList nodes;
  PodList existing;
  std::vector<TopologySpreadConstraint> defaults;
  std::vector<Service> services;
  bool want_skip = false;
  std::vector<DomainMap> want;
};

void PrintTo(const PreFilterCase& c, std::ostream* os) { *os << c.name; }

class PreFilterStateTest : public ::testing::TestWithParam<PreFilterCase> {};

TEST_P(PreFilterStateTest, Counts) {
  const PreFilterCase& tc = GetParam();
  Fixture fx(tc.nodes, tc.existing, ListArgs(tc.defaults));
  for (const auto& s : tc.services) fx.cluster.AddService(std::make_shared<const Service>(s));
  CycleState state;
  Status s = fx.PreFilter(state, tc.pod);
  if (tc.want_skip) {
    EXPECT_TRUE(s.IsSkip()) << s.Message();
    EXPECT_EQ(state.Read(kFilterStateKey), nullptr);
    return;
  }
  ASSERT_TRUE(s.IsSuccess()) << s.Message();
  const FilterState* fs = state.Read(kFilterStateKey);
  ASSERT_NE(fs, nullptr);
  ExpectCounts(*fs, tc.want);
}

Service MakeService(std::initializer_list<std::pair<const char*, const char*>> selector) {
  Service s;
  s.metadata.name = "svc";
  s.metadata.namespace_ = "default";
  for (auto& [k, v] : selector) s.selector[k] = v;
  return s;
}

// Long by design: kube-scheduler's PreFilter cases, one entry each.
std::vector<PreFilterCase> PreFilterCases() {
  std::vector<PreFilterCase> cases;
  const PodList two_three = {P("p-a1", "node-a", {{"foo", ""}}), P("p-a2", "node-a", {{"foo", ""}}),
                             P("p-b1", "node-b", {{"foo", ""}}), P("p-y1", "node-y", {{"foo", ""}}),
                             P("p-y2", "node-y", {{"foo", ""}})};
  const PodList seven = {P("p-a1", "node-a", {{"foo", ""}}), P("p-a2", "node-a", {{"foo", ""}}),
                         P("p-b1", "node-b", {{"foo", ""}}), P("p-y1", "node-y", {{"foo", ""}}),
                         P("p-y2", "node-y", {{"foo", ""}}), P("p-y3", "node-y", {{"foo", ""}}),
                         P("p-y4", "node-y", {{"foo", ""}})};
  cases.push_back({.name = "clean cluster with one spreadConstraint",
                   .pod = MakePod()
                              .Name("p")
                              .Label("foo", "")
                              .Spread(Hard(5, "zone", MatchLabels({{"foo", "bar"}})))
                              .Obj(),
                   .nodes = FourNodesTwoZones(),
                   .want = {{{"zone1", 0}, {"zone2", 0}}}});
  cases.push_back({.name = "normal case with one spreadConstraint",
                   .pod = MakePod().Name("p").Label("foo", "").Spread(Hard(1, "zone", kFoo)).Obj(),
                   .nodes = FourNodesTwoZones(),
                   .existing = two_three,
                   .want = {{{"zone1", 3}, {"zone2", 2}}}});
  cases.push_back(
      {.name = "normal case with null label selector",
       .pod = MakePod().Name("p").Label("foo", "").Spread(Hard(1, "zone", std::nullopt)).Obj(),
       .nodes = FourNodesTwoZones(),
       .existing = two_three,
       .want = {{{"zone1", 0}, {"zone2", 0}}}});
  {
    NodeList nodes = FourNodesTwoZones();
    nodes.push_back(N("node-o", {{"zone", "zone3"}, {"node", "node-o"}}));
    nodes.push_back(N("node-p", {{"zone", "zone3"}, {"node", "node-p"}}));
    cases.push_back(
        {.name = "normal case with one spreadConstraint, on a 3-zone cluster",
         .pod = MakePod().Name("p").Label("foo", "").Spread(Hard(1, "zone", kFoo)).Obj(),
         .nodes = nodes,
         .existing = two_three,
         .want = {{{"zone1", 3}, {"zone2", 2}, {"zone3", 0}}}});
  }
  cases.push_back(
      {.name = "namespace mismatch doesn't count",
       .pod = MakePod().Name("p").Label("foo", "").Spread(Hard(1, "zone", kFoo)).Obj(),
       .nodes = FourNodesTwoZones(),
       .existing = {P("p-a1", "node-a", {{"foo", ""}}), P("p-a2", "node-a", {{"foo", ""}}, "ns1"),
                    P("p-b1", "node-b", {{"foo", ""}}), P("p-y1", "node-y", {{"foo", ""}}, "ns2"),
                    P("p-y2", "node-y", {{"foo", ""}})},
       .want = {{{"zone1", 2}, {"zone2", 1}}}});
  cases.push_back({.name = "normal case with two spreadConstraints",
                   .pod = MakePod()
                              .Name("p")
                              .Label("foo", "")
                              .Spread(Hard(1, "zone", kFoo))
                              .Spread(Hard(1, "node", kFoo))
                              .Obj(),
                   .nodes = FourNodesTwoZones(),
                   .existing = seven,
                   .want = {{{"zone1", 3}, {"zone2", 4}},
                            {{"node-a", 2}, {"node-b", 1}, {"node-x", 0}, {"node-y", 4}}}});
  {
    NodeList nodes = FourNodesTwoZones();
    nodes.erase(nodes.begin() + 2);  // no node-x
    cases.push_back(
        {.name = "soft spreadConstraints should be bypassed",
         .pod = MakePod()
                    .Name("p")
                    .Label("foo", "")
                    .Spread(Soft(1, "zone", kFoo))
                    .Spread(Hard(1, "zone", kFoo))
                    .Spread(Soft(1, "node", kFoo))
                    .Spread(Hard(1, "node", kFoo))
                    .Obj(),
         .nodes = nodes,
         .existing = seven,
         .want = {{{"zone1", 3}, {"zone2", 4}}, {{"node-a", 2}, {"node-b", 1}, {"node-y", 4}}}});
    cases.push_back(
        {.name = "different labelSelectors - simple version",
         .pod = MakePod()
                    .Name("p")
                    .Label("foo", "")
                    .Label("bar", "")
                    .Spread(Hard(1, "zone", kFoo))
                    .Spread(Hard(1, "node", kBar))
                    .Obj(),
         .nodes = nodes,
         .existing = {P("p-a", "node-a", {{"foo", ""}}), P("p-b", "node-b", {{"bar", ""}})},
         .want = {{{"zone1", 1}, {"zone2", 0}}, {{"node-a", 0}, {"node-b", 1}, {"node-y", 0}}}});
    cases.push_back(
        {.name = "different labelSelectors - complex pods",
         .pod = MakePod()
                    .Name("p")
                    .Label("foo", "")
                    .Label("bar", "")
                    .Spread(Hard(1, "zone", kFoo))
                    .Spread(Hard(1, "node", kBar))
                    .Obj(),
         .nodes = nodes,
         .existing = {P("p-a1", "node-a", {{"foo", ""}}),
                      P("p-a2", "node-a", {{"foo", ""}, {"bar", ""}}),
                      P("p-b1", "node-b", {{"foo", ""}}), P("p-y1", "node-y", {{"foo", ""}}),
                      P("p-y2", "node-y", {{"foo", ""}, {"bar", ""}}),
                      P("p-y3", "node-y", {{"foo", ""}}),
                      P("p-y4", "node-y", {{"foo", ""}, {"bar", ""}})},
         .want = {{{"zone1", 3}, {"zone2", 4}}, {{"node-a", 1}, {"node-b", 0}, {"node-y", 2}}}});
  }
  cases.push_back(
      {.name = "two spreadConstraints, and with podAffinity",
       .pod = MakePod()
                  .Name("p")
                  .Label("foo", "")
                  .Affinity(NodeAffinity("node", "NotIn", {"node-x"}))
                  .Spread(Hard(1, "zone", kFoo))
                  .Spread(Hard(1, "node", kFoo))
                  .Obj(),
       .nodes = FourNodesTwoZones(),
       .existing = seven,
       .want = {{{"zone1", 3}, {"zone2", 4}}, {{"node-a", 2}, {"node-b", 1}, {"node-y", 4}}}});
  cases.push_back({.name = "default constraints and a service",
                   .pod = MakePod().Name("p").Label("foo", "bar").Label("baz", "kar").Obj(),
                   .defaults = {Hard(3, "node", std::nullopt), Soft(2, "node", std::nullopt),
                                Hard(5, "rack", std::nullopt)},
                   .services = {MakeService({{"foo", "bar"}})},
                   .want = {{}, {}}});
  cases.push_back({.name = "default constraints and a service that doesn't match",
                   .pod = MakePod().Name("p").Label("foo", "bar").Obj(),
                   .defaults = {Hard(3, "node", std::nullopt)},
                   .services = {MakeService({{"baz", "kep"}})},
                   .want_skip = true});
  cases.push_back({.name = "default constraints and a service, but pod has constraints",
                   .pod = MakePod()
                              .Name("p")
                              .Label("foo", "bar")
                              .Label("baz", "tar")
                              .Spread(Hard(1, "zone", MatchLabels({{"baz", "tar"}})))
                              .Spread(Soft(2, "planet", MatchLabels({{"fot", "rok"}})))
                              .Obj(),
                   .defaults = {Hard(2, "node", std::nullopt)},
                   .services = {MakeService({{"foo", "bar"}})},
                   .want = {{}}});
  cases.push_back({.name = "default soft constraints and a service",
                   .pod = MakePod().Name("p").Label("foo", "bar").Obj(),
                   .defaults = {Soft(2, "node", std::nullopt)},
                   .services = {MakeService({{"foo", "bar"}})},
                   .want_skip = true});
  const PodList bar_pods = {P("p-a", "node-a", {{"bar", ""}}), P("p-b", "node-b", {{"bar", ""}}),
                            P("p-c", "node-b", {{"bar", ""}}), P("p-d", "node-c", {})};
  cases.push_back({.name = "NodeAffinityPolicy honored with labelSelectors",
                   .pod = MakePod()
                              .Name("p")
                              .Label("foo", "")
                              .NodeSelector("foo", "")
                              .Spread(Hard(1, "node", kBar))
                              .Obj(),
                   .nodes = ThreeNodesNoZones(),
                   .existing = bar_pods,
                   .want = {{{"node-a", 1}, {"node-b", 2}}}});
  cases.push_back({.name = "NodeAffinityPolicy ignored with labelSelectors",
                   .pod = MakePod()
                              .Name("p")
                              .Label("foo", "")
                              .NodeSelector("foo", "")
                              .Spread(Hard(1, "node", kBar, kIgnoreAffinity))
                              .Obj(),
                   .nodes = ThreeNodesNoZones(),
                   .existing = bar_pods,
                   .want = {{{"node-a", 1}, {"node-b", 2}, {"node-c", 0}}}});
  cases.push_back({.name = "NodeAffinityPolicy honored with nodeAffinity",
                   .pod = MakePod()
                              .Name("p")
                              .Label("foo", "")
                              .Affinity(NodeAffinity("foo", "In", {""}))
                              .Spread(Hard(1, "node", kBar))
                              .Obj(),
                   .nodes = ThreeNodesNoZones(),
                   .existing = bar_pods,
                   .want = {{{"node-a", 1}, {"node-b", 2}}}});
  cases.push_back({.name = "NodeAffinityPolicy ignored with nodeAffinity",
                   .pod = MakePod()
                              .Name("p")
                              .Label("foo", "")
                              .Affinity(NodeAffinity("foo", "In", {""}))
                              .Spread(Hard(1, "node", kBar, kIgnoreAffinity))
                              .Obj(),
                   .nodes = ThreeNodesNoZones(),
                   .existing = bar_pods,
                   .want = {{{"node-a", 1}, {"node-b", 2}, {"node-c", 0}}}});
  const NodeList tainted_c = {N("node-a", {{"node", "node-a"}}), N("node-b", {{"node", "node-b"}}),
                              N("node-c", {{"node", "node-c"}, {"bar", ""}}, true)};
  cases.push_back({.name = "NodeTaintsPolicy ignored",
                   .pod = MakePod().Name("p").Label("foo", "").Spread(Hard(1, "node", kBar)).Obj(),
                   .nodes = tainted_c,
                   .existing = bar_pods,
                   .want = {{{"node-a", 1}, {"node-b", 2}, {"node-c", 0}}}});
  cases.push_back(
      {.name = "NodeTaintsPolicy honored",
       .pod =
           MakePod().Name("p").Label("foo", "").Spread(Hard(1, "node", kBar, kHonorTaints)).Obj(),
       .nodes = tainted_c,
       .existing = bar_pods,
       .want = {{{"node-a", 1}, {"node-b", 2}}}});
  cases.push_back({.name = "NodeTaintsPolicy honored with tolerated taints",
                   .pod = MakePod()
                              .Name("p")
                              .Label("foo", "")
                              .Toleration(TolerateUnschedulable())
                              .Spread(Hard(1, "node", kBar, kHonorTaints))
                              .Obj(),
                   .nodes = tainted_c,
                   .existing = bar_pods,
                   .want = {{{"node-a", 1}, {"node-b", 2}, {"node-c", 0}}}});
  {
    const NodeList nodes = {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"foo", ""}}),
                            N("node-b", {{"zone", "zone1"}, {"node", "node-b"}}),
                            N("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}})};
    const PodList pods = {P("p-b1", "node-b", {{"foo", ""}}), P("p-b2", "node-b", {{"foo", ""}}),
                          P("p-x1", "node-x", {{"foo", ""}})};
    cases.push_back(
        {.name = "two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore",
         .pod = MakePod()
                    .Name("p")
                    .Label("foo", "")
                    .NodeSelector("foo", "")
                    .Spread(Hard(1, "zone", kFoo))
                    .Spread(Hard(1, "node", kFoo, kIgnoreAffinity))
                    .Obj(),
         .nodes = nodes,
         .existing = pods,
         .want = {{{"zone1", 0}, {"zone2", 1}}, {{"node-a", 0}, {"node-b", 2}, {"node-x", 1}}}});
  }
  {
    const NodeList nodes = {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"foo", ""}}),
                            N("node-b", {{"zone", "zone1"}, {"node", "node-b"}}, true),
                            N("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}})};
    const PodList pods = {P("p-b1", "node-b", {{"foo", ""}}), P("p-b2", "node-b", {{"foo", ""}}),
                          P("p-x1", "node-x", {{"foo", ""}})};
    cases.push_back(
        {.name = "two node inclusion Constraints, zone: honor/honor, node: honor/ignore",
         .pod = MakePod()
                    .Name("p")
                    .Label("foo", "")
                    .Spread(Hard(1, "zone", kFoo, kHonorTaints))
                    .Spread(Hard(1, "node", kFoo))
                    .Obj(),
         .nodes = nodes,
         .existing = pods,
         .want = {{{"zone1", 0}, {"zone2", 1}}, {{"node-a", 0}, {"node-b", 2}, {"node-x", 1}}}});
  }
  {
    const NodeList nodes = {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
                            N("node-b", {{"zone", "zone1"}, {"node", "node-b"}, {"foo", ""}}, true),
                            N("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}}),
                            N("node-y", {{"zone", "zone2"}, {"node", "node-y"}})};
    cases.push_back(
        {.name = "two node inclusion Constraints, zone: honor/ignore, node: honor/ignore",
         .pod = MakePod()
                    .Name("p")
                    .Label("foo", "")
                    .NodeSelector("foo", "")
                    .Spread(Hard(1, "zone", kFoo))
                    .Spread(Hard(1, "node", kFoo))
                    .Obj(),
         .nodes = nodes,
         .existing = {P("p-a1", "node-a", {{"foo", ""}}), P("p-a2", "node-a", {{"foo", ""}}),
                      P("p-x1", "node-x", {{"foo", ""}}), P("p-y1", "node-y", {{"foo", ""}})},
         .want = {{{"zone1", 0}, {"zone2", 1}}, {{"node-b", 0}, {"node-x", 1}}}});
  }
  {
    const NodeList nodes = {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
                            N("node-b", {{"zone", "zone1"}, {"node", "node-b"}, {"foo", ""}}, true),
                            N("node-x", {{"zone", "zone2"}, {"node", "node-x"}, {"foo", ""}}),
                            N("node-y", {{"zone", "zone2"}, {"node", "node-y"}, {"foo", ""}})};
    cases.push_back(
        {.name = "two node inclusion Constraints, zone: ignore/ignore, node: honor/honor",
         .pod = MakePod()
                    .Name("p")
                    .Label("foo", "")
                    .NodeSelector("foo", "")
                    .Spread(Hard(1, "zone", kFoo, kIgnoreAffinity))
                    .Spread(Hard(1, "node", kFoo, kHonorTaints))
                    .Obj(),
         .nodes = nodes,
         .existing = {P("p-a1", "node-a", {{"foo", ""}}), P("p-a2", "node-a", {{"foo", ""}}),
                      P("p-x1", "node-x", {{"foo", ""}}), P("p-x2", "node-x", {{"foo", ""}}),
                      P("p-y1", "node-y", {{"foo", ""}})},
         .want = {{{"zone1", 2}, {"zone2", 3}}, {{"node-x", 2}, {"node-y", 1}}}});
  }
  cases.push_back({.name = "matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
                   .pod = MakePod()
                              .Name("p")
                              .Label("foo", "")
                              .Label("bar", "a")
                              .Spread(Hard(1, "zone", kFoo, {.match_label_keys = {"bar"}}))
                              .Obj(),
                   .nodes = FourNodesTwoZones(),
                   .existing = {P("p-a1", "node-a", {{"foo", ""}}),
                                P("p-a2", "node-a", {{"foo", ""}, {"bar", "a"}}),
                                P("p-b1", "node-b", {{"foo", ""}}),
                                P("p-y1", "node-y", {{"foo", ""}, {"bar", "a"}}),
                                P("p-y2", "node-y", {{"bar", ""}})},
                   .want = {{{"zone1", 1}, {"zone2", 1}}}});
  const PodList foo_a = {P("p-a1", "node-a", {{"foo", "a"}}), P("p-a2", "node-a", {{"foo", "a"}}),
                         P("p-b1", "node-b", {{"foo", "a"}}), P("p-y1", "node-y", {{"foo", "a"}}),
                         P("p-y2", "node-y", {{"foo", "a"}})};
  cases.push_back(
      {.name = "matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
       .pod = MakePod()
                  .Name("p")
                  .Label("foo", "a")
                  .Spread(Hard(1, "zone", LabelSelector{}, {.match_label_keys = {"foo"}}))
                  .Obj(),
       .nodes = FourNodesTwoZones(),
       .existing = foo_a,
       .want = {{{"zone1", 3}, {"zone2", 2}}}});
  cases.push_back({.name = "key in matchLabelKeys is ignored when LabelSelector is nil",
                   .pod = MakePod()
                              .Name("p")
                              .Label("foo", "")
                              .Spread(Hard(1, "zone", std::nullopt, {.match_label_keys = {"bar"}}))
                              .Obj(),
                   .nodes = FourNodesTwoZones(),
                   .existing = foo_a,
                   .want = {{{"zone1", 0}, {"zone2", 0}}}});
  cases.push_back({.name = "key in matchLabelKeys is ignored when it isn't exist in pod.labels",
                   .pod = MakePod()
                              .Name("p")
                              .Label("foo", "")
                              .Spread(Hard(1, "zone", kFoo, {.match_label_keys = {"bar"}}))
                              .Obj(),
                   .nodes = FourNodesTwoZones(),
                   .existing = foo_a,
                   .want = {{{"zone1", 3}, {"zone2", 2}}}});
  cases.push_back(
      {.name = "empty selector counts no pod",
       .pod = MakePod().Name("p").Label("foo", "a").Spread(Hard(1, "zone", LabelSelector{})).Obj(),
       .nodes = FourNodesTwoZones(),
       .existing = foo_a,
       .want = {{{"zone1", 0}, {"zone2", 0}}}});
  cases.push_back({.name = "skip if not specified",
                   .pod = MakePod().Name("p").Label("foo", "").Obj(),
                   .nodes = {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}})},
                   .want_skip = true});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Upstream, PreFilterStateTest, ::testing::ValuesIn(PreFilterCases()),
                         [](const auto& info) {
                           std::string n;
                           for (char c : info.param.name) n += std::isalnum(c) ? c : '_';
                           return n;
                         });

TEST(PreFilterTest, DefaultConstraintsTakeTheServiceSelector) {
  Fixture fx({N("n1", {{"node", "n1"}, {"rack", "r1"}})},
             {P("p1", "n1", {{"foo", "bar"}}), P("p2", "n1", {{"foo", "other"}})},
             ListArgs({Hard(3, "node", std::nullopt), Hard(5, "rack", std::nullopt)}));
  fx.cluster.AddService(std::make_shared<const Service>(MakeService({{"foo", "bar"}})));
  CycleState state;
  ASSERT_TRUE(fx.PreFilter(state, MakePod().Name("p").Label("foo", "bar").Obj()).IsSuccess());
  const FilterState* fs = state.Read(kFilterStateKey);
  ASSERT_NE(fs, nullptr);
  const auto& cs = *fs->constraints;
  ASSERT_EQ(cs.size(), 2u);
  EXPECT_EQ(cs[0].max_skew, 3);
  EXPECT_EQ(cs[0].topology_key, "node");
  EXPECT_EQ(cs[1].max_skew, 5);
  EXPECT_EQ(cs[1].topology_key, "rack");
  EXPECT_TRUE(fs->counts[0].self_match);
  ExpectCounts(*fs, {{{"n1", 1}}, {{"r1", 1}}});
}

TEST(PreFilterTest, InvalidSelectorIsAnError) {
  LabelSelector bad;
  bad.match_expressions.push_back({"foo", "Bogus", {}});
  Fixture fx({N("n1", {{"zone", "z1"}})}, {});
  CycleState state;
  Status s = fx.PreFilter(state, MakePod().Name("p").Spread(Hard(1, "zone", bad)).Obj());
  EXPECT_TRUE(s.IsError());
  EXPECT_NE(s.Message().find("get constraints from pod: obtaining pod's hard topology spread "
                             "constraints: "),
            std::string::npos)
      << s.Message();
}

TEST(PreFilterTest, FilterWithoutPreFilterIsAnError) {
  Fixture fx({N("n1", {{"zone", "z1"}})}, {});
  CycleState state;
  auto pod = PodInfo::Create(MakePod().Name("p").Obj());
  Status s = fx.plugin.Filter(state, *pod, fx.Node("n1"));
  EXPECT_TRUE(s.IsError());
  EXPECT_EQ(s.Message(), "reading \"PreFilterPodTopologySpread\" from cycleState: not found");
}

}  // namespace
}  // namespace berth::podtopologyspread
