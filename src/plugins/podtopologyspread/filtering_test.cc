// PreFilter / Filter / AddPod / RemovePod, table-driven with the cases of kube-scheduler's
// podtopologyspread filtering tests (expected counts per eligible domain and filter codes).
#include <gtest/gtest.h>

#include <climits>
#include <map>
#include <string>
#include <vector>

// Cases name only the fields they set.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include "plugins/podtopologyspread/podtopologyspread.h"
#include "plugins/podtopologyspread/state.h"
#include "plugins/podtopologyspread/test_util.h"

namespace berth::podtopologyspread {
namespace {

using namespace testutil;  // NOLINT

using DomainMap = std::map<std::string, int32_t>;
using NodeList = std::vector<std::shared_ptr<const Node>>;
using PodList = std::vector<std::shared_ptr<const Pod>>;

// Eligible domains with their counts, and the minimum, for every constraint.
void ExpectCounts(const FilterState& fs, const std::vector<DomainMap>& want) {
  ASSERT_EQ(fs.counts.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("constraint " + std::to_string(i));
    const DomainCounts& dc = fs.counts[i];
    EXPECT_EQ(dc.num_domains(), static_cast<int32_t>(want[i].size()));
    int32_t min = INT32_MAX;
    for (const auto& [value, count] : want[i]) {
      EXPECT_EQ(dc.EligibleCount(value), std::optional<int32_t>(count)) << "domain " << value;
      min = std::min(min, count);
    }
    EXPECT_EQ(dc.MinCount(), min);
  }
}

NodeList FourNodesTwoZones() {
  return {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
          N("node-b", {{"zone", "zone1"}, {"node", "node-b"}}),
          N("node-x", {{"zone", "zone2"}, {"node", "node-x"}}),
          N("node-y", {{"zone", "zone2"}, {"node", "node-y"}})};
}

NodeList ThreeNodesNoZones(bool taint_c = false) {
  return {N("node-a", {{"node", "node-a"}, {"foo", ""}}),
          N("node-b", {{"node", "node-b"}, {"foo", ""}}),
          N("node-c", {{"node", "node-c"}, {"bar", ""}}, taint_c)};
}

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

// ---------------------------------------------------------------- AddPod / RemovePod

struct UpdateCase {
  std::string name;
  std::shared_ptr<const Pod> preemptor;
  NodeList nodes;
  PodList existing;
  std::shared_ptr<const Pod> pod;  // added or removed
  std::string node;                // where `pod` is added / removed
  std::vector<DomainMap> want;
};

void PrintTo(const UpdateCase& c, std::ostream* os) { *os << c.name; }

void RunUpdate(const UpdateCase& tc, bool add) {
  Fixture fx(tc.nodes, tc.existing);
  CycleState state;
  ASSERT_TRUE(fx.PreFilter(state, tc.preemptor).IsSuccess());
  auto preemptor = PodInfo::Create(tc.preemptor);
  auto other = PodInfo::Create(tc.pod);
  Status s = add ? fx.plugin.AddPod(state, *preemptor, other, fx.Node(tc.node))
                 : fx.plugin.RemovePod(state, *preemptor, other, fx.Node(tc.node));
  ASSERT_TRUE(s.IsSuccess()) << s.Message();
  ExpectCounts(*state.Read(kFilterStateKey), tc.want);
}

class AddPodTest : public ::testing::TestWithParam<UpdateCase> {};
TEST_P(AddPodTest, Counts) { RunUpdate(GetParam(), true); }

class RemovePodTest : public ::testing::TestWithParam<UpdateCase> {};
TEST_P(RemovePodTest, Counts) { RunUpdate(GetParam(), false); }

auto CaseName = [](const auto& info) {
  std::string n;
  for (char c : info.param.name) n += std::isalnum(c) ? c : '_';
  return n;
};

std::vector<UpdateCase> AddPodCases() {
  const auto node_pod = MakePod().Name("p").Label("foo", "").Spread(Hard(1, "node", kFoo)).Obj();
  const auto zone_node_pod = MakePod()
                                 .Name("p")
                                 .Label("foo", "")
                                 .Spread(Hard(1, "zone", kFoo))
                                 .Spread(Hard(1, "node", kFoo))
                                 .Obj();
  const auto foo_bar_pod = MakePod()
                               .Name("p")
                               .Label("foo", "")
                               .Label("bar", "")
                               .Spread(Hard(1, "zone", kFoo))
                               .Spread(Hard(1, "node", kBar))
                               .Obj();
  const NodeList ab = {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
                       N("node-b", {{"zone", "zone1"}, {"node", "node-b"}})};
  const NodeList ax = {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
                       N("node-x", {{"zone", "zone2"}, {"node", "node-x"}})};
  const NodeList abx = {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
                        N("node-b", {{"zone", "zone1"}, {"node", "node-b"}}),
                        N("node-x", {{"zone", "zone2"}, {"node", "node-x"}})};
  const NodeList foo_nodes = {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"foo", "bar"}}),
                              N("node-b", {{"zone", "zone2"}, {"node", "node-b"}, {"foo", ""}})};
  const NodeList taint_nodes = {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}}, true),
                                N("node-b", {{"zone", "zone2"}, {"node", "node-b"}})};
  const auto zone_pod = MakePod().Name("p").Label("foo", "").Spread(Hard(1, "zone", kFoo)).Obj();
  const auto affinity_pod = MakePod()
                                .Name("p")
                                .Label("foo", "")
                                .Affinity(NodeAffinity("foo", "NotIn", {"bar"}))
                                .Spread(Hard(1, "zone", kFoo))
                                .Obj();
  const PodList a2_b1 = {P("p-a2", "node-a", {{"foo", ""}, {"zone", "zone1"}}),
                         P("p-b1", "node-b", {{"foo", ""}, {"zone", "zone2"}})};
  const PodList a1_b2 = {P("p-a1", "node-a", {{"foo", ""}, {"zone", "zone1"}}),
                         P("p-b2", "node-b", {{"foo", ""}, {"zone", "zone2"}})};
  return {
      {"node a and b both impact current min match",
       node_pod,
       ab,
       {},
       P("p-a1", "node-a", {{"foo", ""}}),
       "node-a",
       {{{"node-a", 1}, {"node-b", 0}}}},
      {"only node a impacts current min match",
       node_pod,
       ab,
       {P("p-b1", "node-b", {{"foo", ""}})},
       P("p-a1", "node-a", {{"foo", ""}}),
       "node-a",
       {{{"node-a", 1}, {"node-b", 1}}}},
      {"add a pod in a different namespace doesn't change topologyKeyToMinPodsMap",
       node_pod,
       ab,
       {P("p-b1", "node-b", {{"foo", ""}})},
       P("p-a1", "node-a", {{"foo", ""}}, "ns1"),
       "node-a",
       {{{"node-a", 0}, {"node-b", 1}}}},
      {"add pod on non-critical node won't trigger re-calculation",
       node_pod,
       ab,
       {P("p-b1", "node-b", {{"foo", ""}})},
       P("p-b2", "node-b", {{"foo", ""}}),
       "node-b",
       {{{"node-a", 0}, {"node-b", 2}}}},
      {"node a and x both impact topologyKeyToMinPodsMap on zone and node",
       zone_node_pod,
       ax,
       {},
       P("p-a1", "node-a", {{"foo", ""}}),
       "node-a",
       {{{"zone1", 1}, {"zone2", 0}}, {{"node-a", 1}, {"node-x", 0}}}},
      {"only node a impacts topologyKeyToMinPodsMap on zone and node",
       zone_node_pod,
       ax,
       {P("p-x1", "node-x", {{"foo", ""}})},
       P("p-a1", "node-a", {{"foo", ""}}),
       "node-a",
       {{{"zone1", 1}, {"zone2", 1}}, {{"node-a", 1}, {"node-x", 1}}}},
      {"node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap "
       "on zone",
       zone_node_pod,
       abx,
       {P("p-b1", "node-b", {{"foo", ""}}), P("p-b2", "node-b", {{"foo", ""}}),
        P("p-x1", "node-x", {{"foo", ""}})},
       P("p-a1", "node-a", {{"foo", ""}}),
       "node-a",
       {{{"zone1", 3}, {"zone2", 1}}, {{"node-a", 1}, {"node-b", 2}, {"node-x", 1}}}},
      {"Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone",
       foo_bar_pod,
       abx,
       {P("p-b1", "node-b", {{"foo", ""}, {"bar", ""}}),
        P("p-x1", "node-x", {{"foo", ""}, {"bar", ""}}), P("p-x2", "node-x", {{"bar", ""}})},
       P("p-a1", "node-a", {{"foo", ""}}),
       "node-a",
       {{{"zone1", 2}, {"zone2", 1}}, {{"node-a", 0}, {"node-b", 1}, {"node-x", 2}}}},
      {"Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both "
       "zone and node",
       foo_bar_pod,
       abx,
       {P("p-b1", "node-b", {{"bar", ""}}), P("p-x1", "node-x", {{"foo", ""}, {"bar", ""}}),
        P("p-x2", "node-x", {{"bar", ""}})},
       P("p-a1", "node-a", {{"foo", ""}, {"bar", ""}}),
       "node-a",
       {{{"zone1", 1}, {"zone2", 1}}, {{"node-a", 1}, {"node-b", 1}, {"node-x", 2}}}},
      {"add a pod when scheduling node affinity unmatched pod",
       affinity_pod,
       foo_nodes,
       a2_b1,
       P("p-a1", "node-a", {{"foo", ""}, {"zone", "zone1"}}),
       "node-a",
       {{{"zone2", 1}}}},
      {"add a pod when scheduling node affinity matched pod",
       zone_pod,
       foo_nodes,
       a1_b2,
       P("p-b1", "node-b", {{"foo", ""}, {"zone", "zone2"}}),
       "node-b",
       {{{"zone1", 1}, {"zone2", 2}}}},
      {"add a label selector not matched pod",
       zone_pod,
       foo_nodes,
       a1_b2,
       P("p-b1", "node-b", {{"zone", "zone2"}}),
       "node-b",
       {{{"zone1", 1}, {"zone2", 1}}}},
      {"add a pod when scheduling taint untolerated pod",
       zone_pod,
       taint_nodes,
       a1_b2,
       P("p-b1", "node-b", {{"foo", ""}, {"zone", "zone2"}}),
       "node-b",
       {{{"zone1", 1}, {"zone2", 2}}}},
      {"add a pod when scheduling taint tolerated pod",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .Toleration(TolerateUnschedulable())
           .Spread(Hard(1, "zone", kFoo))
           .Obj(),
       taint_nodes,
       a1_b2,
       P("p-b1", "node-b", {{"foo", ""}, {"zone", "zone2"}}),
       "node-b",
       {{{"zone1", 1}, {"zone2", 2}}}},
  };
}

INSTANTIATE_TEST_SUITE_P(Upstream, AddPodTest, ::testing::ValuesIn(AddPodCases()), CaseName);

std::vector<UpdateCase> RemovePodCases() {
  const auto zone_pod = MakePod().Name("p").Label("foo", "").Spread(Hard(1, "zone", kFoo)).Obj();
  const NodeList abx = {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
                        N("node-b", {{"zone", "zone1"}, {"node", "node-b"}}),
                        N("node-x", {{"zone", "zone2"}, {"node", "node-x"}})};
  const NodeList foo_nodes = {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}, {"foo", "bar"}}),
                              N("node-b", {{"zone", "zone2"}, {"node", "node-b"}, {"foo", ""}})};
  const PodList abxy = {P("p-a1", "node-a", {{"foo", ""}}), P("p-b1", "node-b", {{"foo", ""}}),
                        P("p-x1", "node-x", {{"foo", ""}}), P("p-y1", "node-y", {{"foo", ""}})};
  return {
      {"one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged",
       zone_pod,
       abx,
       {P("p-a1", "node-a", {{"foo", ""}}), P("p-b1", "node-b", {{"foo", ""}}),
        P("p-x1", "node-x", {{"foo", ""}})},
       P("p-a1", "node-a", {{"foo", ""}}),
       "node-a",
       {{{"zone1", 1}, {"zone2", 1}}}},
      {"one spreadConstraint on node, topologyKeyToMinPodsMap changed",
       zone_pod,
       FourNodesTwoZones(),
       abxy,
       P("p-a1", "node-a", {{"foo", ""}}),
       "node-a",
       {{{"zone1", 1}, {"zone2", 2}}}},
      {"delete an irrelevant pod won't help",
       zone_pod,
       FourNodesTwoZones(),
       {P("p-a0", "node-a", {{"bar", ""}}), P("p-a1", "node-a", {{"foo", ""}}),
        P("p-b1", "node-b", {{"foo", ""}}), P("p-x1", "node-x", {{"foo", ""}}),
        P("p-y1", "node-y", {{"foo", ""}})},
       P("p-a0", "node-a", {{"bar", ""}}),
       "node-a",
       {{{"zone1", 2}, {"zone2", 2}}}},
      {"delete a non-existing pod won't help",
       zone_pod,
       FourNodesTwoZones(),
       abxy,
       P("p-a0", "node-a", {{"bar", ""}}),
       "node-a",
       {{{"zone1", 2}, {"zone2", 2}}}},
      {"two spreadConstraints",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .Spread(Hard(1, "zone", kFoo))
           .Spread(Hard(1, "node", kFoo))
           .Obj(),
       abx,
       {P("p-a1", "node-a", {{"foo", ""}}), P("p-a2", "node-a", {{"foo", ""}}),
        P("p-b1", "node-b", {{"foo", ""}}), P("p-x1", "node-x", {{"foo", ""}}),
        P("p-x2", "node-x", {{"foo", ""}})},
       P("p-x1", "node-x", {{"foo", ""}}),
       "node-x",
       {{{"zone1", 3}, {"zone2", 1}}, {{"node-a", 2}, {"node-b", 1}, {"node-x", 1}}}},
      {"remove a pod when scheduling node affinity unmatched pod",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .Affinity(NodeAffinity("foo", "NotIn", {"bar"}))
           .Spread(Hard(1, "zone", kFoo))
           .Obj(),
       foo_nodes,
       {P("p-a2", "node-a", {{"foo", ""}, {"zone", "zone1"}}),
        P("p-b1", "node-b", {{"foo", ""}, {"zone", "zone2"}})},
       P("p-a1", "node-a", {{"foo", ""}, {"zone", "zone1"}}),
       "node-a",
       {{{"zone2", 1}}}},
      {"remove a pod when scheduling node affinity matched pod",
       zone_pod,
       foo_nodes,
       {P("p-a1", "node-a", {{"foo", ""}, {"zone", "zone1"}}),
        P("p-b2", "node-b", {{"foo", ""}, {"zone", "zone2"}})},
       P("p-b1", "node-b", {{"foo", ""}, {"zone", "zone2"}}),
       "node-b",
       {{{"zone1", 1}, {"zone2", 0}}}},
  };
}

INSTANTIATE_TEST_SUITE_P(Upstream, RemovePodTest, ::testing::ValuesIn(RemovePodCases()), CaseName);

// The global minimum stays exact however many pods are added (a two-entry "critical paths"
// approximation would report 2 here instead of 1).
TEST(AddPodTest, MinimumStaysExactAcrossUpdates) {
  const NodeList nodes = {N("n1", {{"zone", "z1"}}), N("n2", {{"zone", "z2"}}),
                          N("n3", {{"zone", "z3"}})};
  Fixture fx(nodes, {P("e1", "n3", {{"foo", ""}})});
  const auto pod = MakePod().Name("p").Label("foo", "").Spread(Hard(1, "zone", kFoo)).Obj();
  CycleState state;
  ASSERT_TRUE(fx.PreFilter(state, pod).IsSuccess());
  auto pi = PodInfo::Create(pod);
  auto add = [&](const std::string& name, const std::string& node) {
    ASSERT_TRUE(
        fx.plugin.AddPod(state, *pi, PodInfo::Create(P(name, node, {{"foo", ""}})), fx.Node(node))
            .IsSuccess());
  };
  add("x1", "n1");  // 1/0/1
  add("x2", "n2");  // 1/1/1
  add("x3", "n1");  // 2/1/1
  add("x4", "n2");  // 2/2/1
  ExpectCounts(*state.Read(kFilterStateKey), {{{"z1", 2}, {"z2", 2}, {"z3", 1}}});
  EXPECT_EQ(fx.plugin.Filter(state, *pi, fx.Node("n1")).code(), Code::kUnschedulable);
  EXPECT_TRUE(fx.plugin.Filter(state, *pi, fx.Node("n3")).IsSuccess());
}

// A cloned state follows its own updates; the original is untouched.
TEST(AddPodTest, CloneIsIndependent) {
  Fixture fx({N("n1", {{"zone", "z1"}}), N("n2", {{"zone", "z2"}})}, {});
  const auto pod = MakePod().Name("p").Label("foo", "").Spread(Hard(1, "zone", kFoo)).Obj();
  CycleState state;
  ASSERT_TRUE(fx.PreFilter(state, pod).IsSuccess());
  CycleState clone = state.Clone();
  auto pi = PodInfo::Create(pod);
  ASSERT_TRUE(
      fx.plugin.AddPod(clone, *pi, PodInfo::Create(P("x", "n1", {{"foo", ""}})), fx.Node("n1"))
          .IsSuccess());
  ExpectCounts(*clone.Read(kFilterStateKey), {{{"z1", 1}, {"z2", 0}}});
  ExpectCounts(*state.Read(kFilterStateKey), {{{"z1", 0}, {"z2", 0}}});
  EXPECT_EQ(fx.plugin.Filter(clone, *pi, fx.Node("n1")).code(), Code::kUnschedulable);
  EXPECT_TRUE(fx.plugin.Filter(state, *pi, fx.Node("n1")).IsSuccess());
}

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

}  // namespace
}  // namespace berth::podtopologyspread
