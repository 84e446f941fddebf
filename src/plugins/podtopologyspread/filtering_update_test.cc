// AddPod / RemovePod, table-driven with the cases of kube-scheduler's podtopologyspread
// filtering tests (expected counts per eligible domain after the update).
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

// Long by design: kube-scheduler's AddPod cases, one entry each.
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

}  // namespace
}  // namespace berth::podtopologyspread
