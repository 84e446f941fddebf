// PreScore / Score / NormalizeScore, table-driven with the cases of kube-scheduler's
// podtopologyspread scoring tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <span>
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

using NodeList = std::vector<std::shared_ptr<const Node>>;
using PodList = std::vector<std::shared_ptr<const Pod>>;

constexpr const char* kHost = "kubernetes.io/hostname";
constexpr const char* kZone = "topology.kubernetes.io/zone";

std::string CaseName(const std::string& name) {
  std::string n;
  for (char c : name) n += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return n;
}

std::vector<const NodeInfo*> Feasible(const Fixture& fx, const NodeList& nodes) {
  std::vector<const NodeInfo*> out;
  for (const auto& n : nodes) out.push_back(&fx.Node(n->metadata.name));
  return out;
}

ReplicaSet MakeReplicaSet(const std::string& name, std::optional<LabelSelector> selector) {
  ReplicaSet rs;
  rs.metadata.name = name;
  rs.metadata.namespace_ = "default";
  rs.selector = std::move(selector);
  return rs;
}

std::shared_ptr<const Pod> OwnedByReplicaSet(berth::testing::PodBuilder b, const std::string& rs) {
  OwnerReference ref;
  ref.api_version = "apps/v1";
  ref.kind = "ReplicaSet";
  ref.name = rs;
  ref.controller = true;
  b.mutable_pod().metadata.owner_references.push_back(ref);
  return b.Obj();
}

// ---------------------------------------------------------------- PreScore skip

TEST(PreScoreTest, SkipsWithoutSoftConstraints) {
  const NodeList nodes = {N("node-a", {{kHost, "node-a"}}), N("node-b", {{kHost, "node-b"}})};
  Fixture fx(nodes, {});
  CycleState state;
  auto pi = PodInfo::Create(MakePod().Name("p").Spread(Hard(1, kHost, kFoo)).Obj());
  EXPECT_TRUE(fx.plugin.PreScore(state, *pi, Feasible(fx, nodes)).IsSkip());
  EXPECT_EQ(state.Read(kScoreStateKey), nullptr);
}

TEST(PreScoreTest, SkipsWhenTheReplicaSetDoesNotMatch) {
  const NodeList nodes = {N("node-a", {{"planet", "mars"}})};
  Fixture fx(nodes, {}, ListArgs({Soft(2, "planet", std::nullopt)}));
  fx.cluster.AddReplicaSet(
      std::make_shared<const ReplicaSet>(MakeReplicaSet("rs1", Exists("tar"))));
  auto pod = OwnedByReplicaSet(MakePod().Name("p").Label("foo", "bar").Label("baz", "sup"), "rs2");
  CycleState state;
  EXPECT_TRUE(fx.plugin.PreScore(state, *PodInfo::Create(pod), Feasible(fx, nodes)).IsSkip());
}

TEST(PreScoreTest, SkipsOnAnEmptySnapshot) {
  Fixture fx({}, {});
  CycleState state;
  auto pi =
      PodInfo::Create(MakePod().Name("p").Label("foo", "").Spread(Soft(1, kZone, kFoo)).Obj());
  EXPECT_TRUE(fx.plugin.PreScore(state, *pi, {}).IsSkip());
}

// ---------------------------------------------------------------- PreScore state

struct PreScoreCase {
  std::string name;
  std::shared_ptr<const Pod> pod;
  NodeList nodes;
  config::PodTopologySpreadArgs args = ListArgs();
  std::vector<ReplicaSet> replica_sets;
  // Expected constraints as (topologyKey, maxSkew), weights' domain counts, ignored nodes.
  std::vector<std::pair<std::string, int32_t>> constraints;
  std::vector<int64_t> topology_sizes;
  std::vector<std::string> ignored;
};

void PrintTo(const PreScoreCase& c, std::ostream* os) { *os << c.name; }

class PreScoreStateTest : public ::testing::TestWithParam<PreScoreCase> {};

TEST_P(PreScoreStateTest, State) {
  const PreScoreCase& tc = GetParam();
  Fixture fx(tc.nodes, {}, tc.args);
  for (const auto& rs : tc.replica_sets)
    fx.cluster.AddReplicaSet(std::make_shared<const ReplicaSet>(rs));
  CycleState state;
  Status s = fx.plugin.PreScore(state, *PodInfo::Create(tc.pod), Feasible(fx, tc.nodes));
  ASSERT_TRUE(s.IsSuccess()) << s.Message();
  const ScoreState* st = state.Read(kScoreStateKey);
  ASSERT_NE(st, nullptr);
  ASSERT_EQ(st->constraints.size(), tc.constraints.size());
  for (size_t i = 0; i < tc.constraints.size(); ++i) {
    EXPECT_EQ(st->constraints[i].topology_key, tc.constraints[i].first);
    EXPECT_EQ(st->constraints[i].max_skew, tc.constraints[i].second);
    EXPECT_DOUBLE_EQ(st->weights[i], std::log(static_cast<double>(tc.topology_sizes[i] + 2)))
        << "constraint " << i;
  }
  for (const auto& n : tc.nodes) {
    const bool want =
        std::find(tc.ignored.begin(), tc.ignored.end(), n->metadata.name) != tc.ignored.end();
    EXPECT_EQ(st->Ignored(fx.Node(n->metadata.name)), want) << n->metadata.name;
  }
}

std::vector<PreScoreCase> PreScoreCases() {
  const NodeList abx_zone = {N("node-a", {{"zone", "zone1"}, {kHost, "node-a"}}),
                             N("node-b", {{"zone", "zone1"}, {kHost, "node-b"}}),
                             N("node-x", {{"zone", "zone2"}, {kHost, "node-x"}})};
  const NodeList foo_nodes = {N("node-a", {{"zone", "zone1"}, {"foo", ""}, {kHost, "node-a"}}),
                              N("node-b", {{"zone", "zone1"}, {"foo", ""}, {kHost, "node-b"}}),
                              N("node-x", {{"zone", "zone2"}, {kHost, "node-x"}})};
  const NodeList taint_nodes = {N("node-a", {{"zone", "zone1"}, {"foo", ""}, {kHost, "node-a"}}),
                                N("node-b", {{"zone", "zone1"}, {"foo", ""}, {kHost, "node-b"}}),
                                N("node-x", {{"zone", "zone2"}, {kHost, "node-x"}}, true)};
  return {
      {.name = "normal case",
       .pod = MakePod()
                  .Name("p")
                  .Label("foo", "")
                  .Spread(Soft(1, "zone", kFoo))
                  .Spread(Soft(1, kHost, kFoo))
                  .Obj(),
       .nodes = abx_zone,
       .constraints = {{"zone", 1}, {kHost, 1}},
       .topology_sizes = {2, 3}},
      {.name = "null selector",
       .pod = MakePod().Name("p").Label("foo", "").Spread(Soft(1, "zone", std::nullopt)).Obj(),
       .nodes = abx_zone,
       .constraints = {{"zone", 1}},
       .topology_sizes = {2}},
      {.name = "node-x doesn't have label zone",
       .pod = MakePod()
                  .Name("p")
                  .Label("foo", "")
                  .Spread(Soft(1, "zone", kFoo))
                  .Spread(Soft(1, kHost, kBar))
                  .Obj(),
       .nodes = {N("node-a", {{"zone", "zone1"}, {kHost, "node-a"}}),
                 N("node-b", {{"zone", "zone1"}, {kHost, "node-b"}}),
                 N("node-x", {{kHost, "node-x"}})},
       .constraints = {{"zone", 1}, {kHost, 1}},
       .topology_sizes = {1, 2},
       .ignored = {"node-x"}},
      {.name = "system default constraints and a replicaset",
       .pod = OwnedByReplicaSet(MakePod().Name("p").Label("foo", "tar").Label("baz", "sup"), "rs1"),
       .nodes = {N("node-a", {{kHost, "node-a"}, {kZone, "mars"}}),
                 N("node-b", {{kHost, "node-b"}, {kZone, "mars"}}),
                 // Nodes with no zone are not excluded: they form a zone of their own.
                 N("node-c", {{kHost, "node-c"}}), N("node-d", {{kHost, "node-d"}})},
       .args = SystemArgs(),
       .replica_sets = {MakeReplicaSet("rs1", kFoo)},
       .constraints = {{kHost, 3}, {kZone, 5}},
       .topology_sizes = {4, 2}},
      {.name = "default constraints and a replicaset",
       .pod = OwnedByReplicaSet(MakePod().Name("p").Label("foo", "tar").Label("baz", "sup"), "rs1"),
       .nodes = {N("node-a", {{"rack", "rack1"}, {kHost, "node-a"}, {"planet", "mars"}})},
       .args = ListArgs({Soft(1, kHost, std::nullopt), Hard(2, "rack", std::nullopt),
                         Soft(2, "planet", std::nullopt)}),
       .replica_sets = {MakeReplicaSet("rs1", kFoo)},
       .constraints = {{kHost, 1}, {"planet", 2}},
       .topology_sizes = {1, 1}},
      {.name = "default constraints and a replicaset, but pod has constraints",
       .pod = OwnedByReplicaSet(MakePod()
                                    .Name("p")
                                    .Label("foo", "bar")
                                    .Label("baz", "sup")
                                    .Spread(Hard(1, "zone", kBar))
                                    .Spread(Soft(2, "planet", MatchLabels({{"baz", "sup"}}))),
                                "rs1"),
       .nodes = {N("node-a", {{"planet", "mars"}, {"galaxy", "andromeda"}})},
       .args = ListArgs({Soft(2, "galaxy", std::nullopt)}),
       .replica_sets = {MakeReplicaSet("rs1", kFoo)},
       .constraints = {{"planet", 2}},
       .topology_sizes = {1}},
      {.name = "NodeAffinityPolicy honored with labelSelectors",
       .pod = MakePod()
                  .Name("p")
                  .Label("foo", "")
                  .NodeSelector("foo", "")
                  .Spread(Soft(1, "zone", kBar))
                  .Obj(),
       .nodes = foo_nodes,
       .constraints = {{"zone", 1}},
       .topology_sizes = {2}},
      {.name = "NodeAffinityPolicy ignored with labelSelectors",
       .pod = MakePod()
                  .Name("p")
                  .Label("foo", "")
                  .NodeSelector("foo", "")
                  .Spread(Soft(1, "zone", kBar, kIgnoreAffinity))
                  .Obj(),
       .nodes = foo_nodes,
       .constraints = {{"zone", 1}},
       .topology_sizes = {2}},
      {.name = "NodeTaintsPolicy honored",
       .pod =
           MakePod().Name("p").Label("foo", "").Spread(Soft(1, "zone", kBar, kHonorTaints)).Obj(),
       .nodes = taint_nodes,
       .constraints = {{"zone", 1}},
       .topology_sizes = {2}},
  };
}

INSTANTIATE_TEST_SUITE_P(Upstream, PreScoreStateTest, ::testing::ValuesIn(PreScoreCases()),
                         [](const auto& info) { return CaseName(info.param.name); });

// ---------------------------------------------------------------- Score + NormalizeScore

struct ScoreCase {
  std::string name;
  std::shared_ptr<const Pod> pod;
  PodList existing;
  NodeList nodes;        // feasible
  NodeList failed = {};  // in the snapshot, not feasible
  std::vector<Service> services = {};
  std::vector<int64_t> want;  // normalized, in `nodes` order
};

void PrintTo(const ScoreCase& c, std::ostream* os) { *os << c.name; }

std::vector<int64_t> RunScores(Fixture& fx, const std::shared_ptr<const Pod>& pod,
                               const std::vector<const NodeInfo*>& feasible) {
  CycleState state;
  auto pi = PodInfo::Create(pod);
  Status s = fx.plugin.PreScore(state, *pi, feasible);
  EXPECT_TRUE(s.IsSuccess()) << s.Message();
  std::vector<NodeScore> scores;
  for (const NodeInfo* n : feasible) {
    int64_t raw = -1;
    Status st = fx.plugin.Score(state, *pi, *n, &raw);
    EXPECT_TRUE(st.IsSuccess()) << st.Message();
    scores.push_back({n, raw});
  }
  EXPECT_TRUE(fx.plugin.NormalizeScore(state, *pi, scores).IsSuccess());
  std::vector<int64_t> out;
  for (const auto& ns : scores) out.push_back(ns.score);
  return out;
}

class ScoreTest : public ::testing::TestWithParam<ScoreCase> {};

TEST_P(ScoreTest, NormalizedScores) {
  const ScoreCase& tc = GetParam();
  NodeList all = tc.nodes;
  all.insert(all.end(), tc.failed.begin(), tc.failed.end());
  Fixture fx(all, tc.existing, SystemArgs());
  for (const auto& s : tc.services) fx.cluster.AddService(std::make_shared<const Service>(s));
  EXPECT_EQ(RunScores(fx, tc.pod, Feasible(fx, tc.nodes)), tc.want);
}

PodList Pods(std::initializer_list<std::pair<const char*, int>> per_node) {
  PodList out;
  for (auto& [node, n] : per_node) {
    for (int i = 0; i < n; ++i) {
      out.push_back(P(std::string("p-") + node + std::to_string(i), node, {{"foo", ""}}));
    }
  }
  return out;
}

NodeList HostNodes(std::initializer_list<const char*> names) {
  NodeList out;
  for (const char* n : names) out.push_back(N(n, {{kHost, n}}));
  return out;
}

// Long by design: kube-scheduler's scoring cases, one entry each.
std::vector<ScoreCase> ScoreCases() {
  const auto host1 = MakePod().Name("p").Label("foo", "").Spread(Soft(1, kHost, kFoo)).Obj();
  const NodeList abcd = HostNodes({"node-a", "node-b", "node-c", "node-d"});
  const PodList two_one_zero_three = Pods({{"node-a", 2}, {"node-b", 1}, {"node-d", 3}});
  const PodList four_three_two_one =
      Pods({{"node-a", 4}, {"node-b", 3}, {"node-c", 2}, {"node-d", 1}});
  const PodList four_two_one_three =
      Pods({{"node-a", 4}, {"node-b", 2}, {"node-x", 1}, {"node-y", 3}});
  Service foo_service;
  foo_service.metadata.name = "svc";
  foo_service.metadata.namespace_ = "default";
  foo_service.selector["foo"] = "";
  const NodeList zone4 = {N("node-a", {{"zone", "zone1"}, {kHost, "node-a"}}),
                          N("node-b", {{"zone", "zone1"}, {kHost, "node-b"}}),
                          N("node-x", {{"zone", "zone2"}, {kHost, "node-x"}}),
                          N("node-y", {{"zone", "zone2"}, {kHost, "node-y"}})};
  const auto zone_host_foo_bar = MakePod()
                                     .Name("p")
                                     .Label("foo", "")
                                     .Label("bar", "")
                                     .Spread(Soft(1, "zone", kFoo))
                                     .Spread(Soft(1, kHost, kBar))
                                     .Obj();
  const NodeList node_key_foo = {N("node-a", {{"node", "node-a"}, {"foo", ""}}),
                                 N("node-b", {{"node", "node-b"}, {"foo", ""}}),
                                 N("node-c", {{"node", "node-c"}})};
  const PodList two_one_one = Pods({{"node-a", 2}, {"node-b", 1}, {"node-c", 1}});
  const NodeList taint_c = {N("node-a", {{"node", "node-a"}}), N("node-b", {{"node", "node-b"}}),
                            N("node-c", {{"node", "node-c"}}, true)};
  const NodeList zone_cd = {N("node-a", {{"zone", "zone1"}, {kHost, "node-a"}}),
                            N("node-b", {{"zone", "zone1"}, {kHost, "node-b"}}),
                            N("node-c", {{"zone", "zone2"}, {kHost, "node-c"}}),
                            N("node-d", {{"zone", "zone2"}, {kHost, "node-d"}})};
  return {
      {"one constraint on node, no existing pods",
       host1,
       {},
       HostNodes({"node-a", "node-b"}),
       {},
       {},
       {100, 100}},
      {"one constraint on node, only one node is candidate",
       host1,
       Pods({{"node-a", 2}, {"node-b", 1}}),
       HostNodes({"node-a"}),
       HostNodes({"node-b"}),
       {},
       {100}},
      {"one constraint on node, all nodes have the same number of matching pods",
       host1,
       Pods({{"node-a", 1}, {"node-b", 1}}),
       HostNodes({"node-a", "node-b"}),
       {},
       {},
       {100, 100}},
      {"one constraint on node, all 4 nodes are candidates",
       host1,
       two_one_zero_three,
       abcd,
       {},
       {},
       {20, 60, 100, 0}},
      {"one constraint on node, null selector",
       MakePod().Name("p").Label("foo", "").Spread(Soft(1, kHost, std::nullopt)).Obj(),
       two_one_zero_three,
       abcd,
       {},
       {},
       {100, 100, 100, 100}},
      {"one constraint on node, all 4 nodes are candidates, maxSkew=2",
       MakePod().Name("p").Label("foo", "").Spread(Soft(2, kHost, kFoo)).Obj(),
       two_one_zero_three,
       abcd,
       {},
       {},
       {33, 66, 100, 16}},
      {"one constraint on node, all 4 nodes are candidates, maxSkew=3",
       MakePod().Name("p").Label("foo", "").Spread(Soft(3, kHost, kFoo)).Obj(),
       four_three_two_one,
       abcd,
       {},
       {},
       {44, 66, 77, 100}},
      {"system defaulting, nodes don't have zone, pods match service",
       MakePod().Name("p").Label("foo", "").Obj(),
       four_three_two_one,
       abcd,
       {},
       {foo_service},
       {44, 66, 77, 100}},
      {"one constraint on node, 3 out of 4 nodes are candidates",
       host1,
       four_two_one_three,
       HostNodes({"node-a", "node-b", "node-x"}),
       HostNodes({"node-y"}),
       {},
       {33, 83, 100}},
      {"one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology "
       "key",
       host1,
       four_two_one_three,
       {N("node-a", {{kHost, "node-a"}}), N("node-b", {{"n", "node-b"}}),
        N("node-x", {{kHost, "node-x"}})},
       HostNodes({"node-y"}),
       {},
       {16, 0, 100}},
      {"one constraint on zone, 3 out of 4 nodes are candidates",
       MakePod().Name("p").Label("foo", "").Spread(Soft(1, "zone", kFoo)).Obj(),
       four_two_one_three,
       {zone4[0], zone4[1], zone4[2]},
       {zone4[3]},
       {},
       {75, 75, 100}},
      {"two Constraints on zone and node, 2 out of 4 nodes are candidates",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .Spread(Soft(1, "zone", kFoo))
           .Spread(Soft(1, kHost, kFoo))
           .Obj(),
       Pods({{"node-a", 2}, {"node-b", 1}, {"node-x", 2}, {"node-y", 4}}),
       {zone4[0], zone4[2]},
       {zone4[1], zone4[3]},
       {},
       {100, 63}},
      {"two Constraints on zone and node, with different labelSelectors",
       zone_host_foo_bar,
       {P("p-a1", "node-a", {{"foo", ""}}), P("p-b1", "node-b", {{"foo", ""}, {"bar", ""}}),
        P("p-y1", "node-y", {{"foo", ""}}), P("p-y2", "node-y", {{"bar", ""}})},
       zone4,
       {},
       {},
       {60, 20, 100, 60}},
      {"two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
       zone_host_foo_bar,
       {P("p-b1", "node-b", {{"bar", ""}}), P("p-x1", "node-x", {{"foo", ""}}),
        P("p-y1", "node-y", {{"foo", ""}, {"bar", ""}})},
       zone4,
       {},
       {},
       {100, 60, 40, 0}},
      {"two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are "
       "candidates",
       zone_host_foo_bar,
       {P("p-a1", "node-a", {{"foo", ""}}), P("p-b1", "node-b", {{"foo", ""}, {"bar", ""}}),
        P("p-y1", "node-y", {{"foo", ""}}), P("p-y2", "node-y", {{"bar", ""}})},
       {zone4[0], zone4[1], zone4[2]},
       {zone4[3]},
       {},
       {50, 25, 100}},
      {"existing pods in a different namespace do not count",
       host1,
       {P("p-a1", "node-a", {{"foo", ""}}, "ns1"), P("p-a2", "node-a", {{"foo", ""}}),
        P("p-b1", "node-b", {{"foo", ""}}), P("p-b2", "node-b", {{"foo", ""}})},
       HostNodes({"node-a", "node-b"}),
       {},
       {},
       {100, 33}},
      {"terminating Pods should be excluded",
       host1,
       {MakePod().Name("p-a").Node("node-a").Label("foo", "").Terminating().Obj(),
        P("p-b", "node-b", {{"foo", ""}})},
       HostNodes({"node-a", "node-b"}),
       {},
       {},
       {100, 0}},
      {"minDomains has no effect when ScheduleAnyway",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .Spread(Soft(2, "node", kFoo, {.min_domains = 10}))
           .Obj(),
       Pods({{"node-a", 2}, {"node-b", 2}, {"node-c", 1}}),
       {N("node-a", {{"node", "node-a"}}), N("node-b", {{"node", "node-b"}}),
        N("node-c", {{"node", "node-c"}})},
       {},
       {},
       {75, 75, 100}},
      {"NodeAffinityPolicy honored with labelSelectors",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .NodeSelector("foo", "")
           .Spread(Soft(1, "node", kFoo))
           .Obj(),
       two_one_one,
       node_key_foo,
       {},
       {},
       {0, 33, 100}},
      {"NodeAffinityPolicy ignored with labelSelectors",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .NodeSelector("foo", "")
           .Spread(Soft(1, "node", kFoo, kIgnoreAffinity))
           .Obj(),
       two_one_one,
       node_key_foo,
       {},
       {},
       {66, 100, 100}},
      {"NodeAffinityPolicy honored with nodeAffinity",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .Affinity(NodeAffinity("foo", "In", {""}))
           .Spread(Soft(1, "node", kFoo))
           .Obj(),
       two_one_one,
       node_key_foo,
       {},
       {},
       {0, 33, 100}},
      {"NodeAffinityPolicy ignored with nodeAffinity",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .Affinity(NodeAffinity("foo", "In", {""}))
           .Spread(Soft(1, "node", kFoo, kIgnoreAffinity))
           .Obj(),
       two_one_one,
       node_key_foo,
       {},
       {},
       {66, 100, 100}},
      {"NodeTaintsPolicy honored",
       MakePod().Name("p").Label("foo", "").Spread(Soft(1, "node", kFoo, kHonorTaints)).Obj(),
       two_one_one,
       taint_c,
       {},
       {},
       {0, 33, 100}},
      {"NodeTaintsPolicy ignored",
       MakePod().Name("p").Label("foo", "").Spread(Soft(1, "node", kFoo)).Obj(),
       two_one_one,
       taint_c,
       {},
       {},
       {66, 100, 100}},
      {"matchLabelKeys ANDed with LabelSelector when LabelSelector is empty",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .Label("bar", "")
           .Spread(Soft(1, "zone", LabelSelector{}, {.match_label_keys = {"foo"}}))
           .Spread(Soft(1, kHost, LabelSelector{}, {.match_label_keys = {"bar"}}))
           .Obj(),
       {P("p-a1", "node-a", {{"foo", ""}}), P("p-b1", "node-b", {{"foo", ""}, {"bar", ""}}),
        P("p-y1", "node-c", {{"foo", ""}}), P("p-y2", "node-c", {{"bar", ""}})},
       zone_cd,
       {},
       {},
       {60, 20, 60, 100}},
      {"matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty",
       MakePod()
           .Name("p")
           .Label("foo", "")
           .Label("bar", "")
           .Label("baz", "")
           .Spread(Soft(1, "zone", kFoo))
           .Spread(Soft(1, kHost, kBar, {.match_label_keys = {"baz"}}))
           .Obj(),
       {P("p-a1", "node-a", {{"foo", ""}}),
        P("p-b1", "node-b", {{"foo", ""}, {"bar", ""}, {"baz", ""}}),
        P("p-c1", "node-c", {{"foo", ""}}), P("p-c2", "node-c", {{"bar", ""}}),
        P("p-d3", "node-c", {{"bar", ""}, {"baz", ""}})},
       zone_cd,
       {},
       {},
       {60, 20, 60, 100}},
  };
}

INSTANTIATE_TEST_SUITE_P(Upstream, ScoreTest, ::testing::ValuesIn(ScoreCases()),
                         [](const auto& info) { return CaseName(info.param.name); });

// Score and NormalizeScore accept NodeInfos other than the snapshot's (copies of the same node
// objects) and give them the same result.
TEST(ScoreTest, CopiesOfSnapshotNodesScoreTheSame) {
  const NodeList nodes = HostNodes({"node-a", "node-b", "node-c", "node-d"});
  Fixture fx(nodes, Pods({{"node-a", 2}, {"node-b", 1}, {"node-d", 3}}), SystemArgs());
  std::vector<NodeInfo> copies;
  for (const auto& n : nodes) copies.push_back(fx.Node(n->metadata.name));
  std::vector<const NodeInfo*> feasible;
  for (const auto& c : copies) feasible.push_back(&c);
  const auto pod = MakePod().Name("p").Label("foo", "").Spread(Soft(1, kHost, kFoo)).Obj();
  EXPECT_EQ(RunScores(fx, pod, feasible), (std::vector<int64_t>{20, 60, 100, 0}));
}

// A node Score was not prepared for is computed from its labels and pods.
TEST(ScoreTest, UnseenNodeIsComputed) {
  const NodeList nodes = HostNodes({"node-a", "node-b"});
  Fixture fx(nodes, Pods({{"node-a", 2}}), SystemArgs());
  const auto pod = MakePod().Name("p").Label("foo", "").Spread(Soft(1, kHost, kFoo)).Obj();
  CycleState state;
  auto pi = PodInfo::Create(pod);
  ASSERT_TRUE(fx.plugin.PreScore(state, *pi, Feasible(fx, nodes)).IsSuccess());
  int64_t a = -1, unseen = -1;
  ASSERT_TRUE(fx.plugin.Score(state, *pi, fx.Node("node-a"), &a).IsSuccess());
  NodeInfo other(N("node-z", {{kHost, "node-z"}}));
  other.AddPod(PodInfo::Create(P("z1", "node-z", {{"foo", ""}})));
  ASSERT_TRUE(fx.plugin.Score(state, *pi, other, &unseen).IsSuccess());
  // Weight ln(2 + 2): two matching pods score round(2 ln 4) = 3, one scores round(ln 4) = 1.
  EXPECT_EQ(a, 3);
  EXPECT_EQ(unseen, 1);
}

// Runs of the very list PreScore saw are scored by position; any other list (a copy, a run
// of another list) one node at a time; both agree with Score. NormalizeScore gives each node the
// same score whether the list comes in PreScore's order or not.
TEST(ScoreTest, RunsOfTheFeasibleListScoreAsOneNodeAtATime) {
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) names.push_back("node-" + std::to_string(i));
  NodeList nodes;
  for (size_t i = 0; i < names.size(); ++i) {
    // Every fifth node lacks the zone key (ignored with the pod's own constraints).
    nodes.push_back(
        i % 5 == 4 ? N(names[i], {{kHost, names[i].c_str()}})
                   : N(names[i], {{kHost, names[i].c_str()}, {kZone, i % 3 == 0 ? "z0" : "z1"}}));
  }
  PodList placed;
  for (size_t i = 0; i < names.size(); i += 3) {
    for (size_t k = 0; k < i % 4; ++k)
      placed.push_back(P("p-" + names[i] + "-" + std::to_string(k), names[i], {{"foo", ""}}));
  }
  Fixture fx(nodes, placed, SystemArgs());
  const auto pod = MakePod()
                       .Name("p")
                       .Label("foo", "")
                       .Spread(Soft(1, kHost, kFoo))
                       .Spread(Soft(2, kZone, kFoo))
                       .Obj();
  auto pi = PodInfo::Create(pod);
  CycleState state;
  const std::vector<const NodeInfo*> feasible = Feasible(fx, nodes);
  ASSERT_TRUE(fx.plugin.PreScore(state, *pi, feasible).IsSuccess());
  std::vector<int64_t> one_by_one(feasible.size());
  for (size_t j = 0; j < feasible.size(); ++j)
    ASSERT_TRUE(fx.plugin.Score(state, *pi, *feasible[j], &one_by_one[j]).IsSuccess());
  const std::vector<const NodeInfo*> copy = feasible;
  for (const auto* list : {&feasible, &copy}) {
    std::vector<int64_t> runs(list->size(), -1);
    const std::span<const NodeInfo* const> all(*list);
    for (size_t begin = 0; begin < all.size(); begin += 7) {
      const size_t len = std::min<size_t>(7, all.size() - begin);
      ASSERT_TRUE(
          fx.plugin.ScoreNodes(state, *pi, all.subspan(begin, len), &runs[begin]).IsSuccess());
    }
    EXPECT_EQ(runs, one_by_one) << (list == &feasible ? "the list PreScore saw" : "a copy");
  }
  std::vector<NodeScore> in_order, reversed;
  for (size_t j = 0; j < feasible.size(); ++j) in_order.push_back({feasible[j], one_by_one[j]});
  reversed.assign(in_order.rbegin(), in_order.rend());
  ASSERT_TRUE(fx.plugin.NormalizeScore(state, *pi, in_order).IsSuccess());
  ASSERT_TRUE(fx.plugin.NormalizeScore(state, *pi, reversed).IsSuccess());
  std::reverse(reversed.begin(), reversed.end());
  int ignored = 0;
  for (size_t j = 0; j < feasible.size(); ++j) {
    EXPECT_EQ(in_order[j].score, reversed[j].score) << names[j];
    if (j % 5 == 4) {
      EXPECT_EQ(in_order[j].score, 0) << names[j] << " lacks the zone";
      ++ignored;
    }
  }
  EXPECT_EQ(ignored, 8);
}

TEST(ScoreTest, ScoreWithoutPreScoreIsAnError) {
  Fixture fx(HostNodes({"node-a"}), {});
  CycleState state;
  int64_t score = 0;
  auto pi = PodInfo::Create(MakePod().Name("p").Obj());
  EXPECT_TRUE(fx.plugin.Score(state, *pi, fx.Node("node-a"), &score).IsError());
}

}  // namespace
}  // namespace berth::podtopologyspread
