// PreScore / Score / NormalizeScore of InterPodAffinity, with the worked cases of
// kube-scheduler's interpodaffinity scoring tests.
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
using test::Expr;
using test::In;
using test::MakeNode;
using test::Term;
using test::TestPod;

using PodPtr = std::shared_ptr<const Pod>;
using NodePtr = std::shared_ptr<const Node>;
using NodeLabels = std::map<std::string, std::string>;

struct ScoreResult {
  Status pre_score;
  std::vector<int64_t> scores;  // normalized, in node order; empty unless PreScore succeeded
};

ScoreResult RunScoring(const std::vector<NodePtr>& nodes, const std::vector<PodPtr>& pods,
                       const PodPtr& pod, config::InterPodAffinityArgs args) {
  InMemoryCluster cluster;
  AddTeamNamespaces(cluster);
  testing::FakeHandle handle(Snapshot::Build(nodes, pods), &cluster);
  InterPodAffinity plugin(args, handle);
  PodInfoPtr info = PodInfo::Create(pod);
  CycleState state;

  std::vector<const NodeInfo*> feasible;
  for (const auto& n : nodes) feasible.push_back(handle.snapshot().Get(n->metadata.name));
  ScoreResult r;
  r.pre_score = plugin.PreScore(state, *info, feasible);
  if (!r.pre_score.IsSuccess()) return r;

  std::vector<NodeScore> list;
  for (const NodeInfo* ni : feasible) {
    int64_t score = 0;
    Status s = plugin.Score(state, *info, *ni, &score);
    EXPECT_TRUE(s.IsSuccess()) << s.Message();
    list.push_back({ni, score});
  }
  Status s = plugin.NormalizeScore(state, *info, list);
  EXPECT_TRUE(s.IsSuccess()) << s.Message();
  for (const auto& ns : list) r.scores.push_back(ns.score);
  return r;
}

// ------------------------------------------ fixtures of kube-scheduler's test table

Affinity StayWithS1InRegion() {
  Affinity a;
  a.pod_affinity.emplace().preferred.push_back({5, In("security", {"S1"}, "region")});
  return a;
}
Affinity StayWithS2InRegion() {
  Affinity a;
  a.pod_affinity.emplace().preferred.push_back({6, In("security", {"S2"}, "region")});
  return a;
}
Affinity Affinity3() {
  Affinity a;
  auto& p = a.pod_affinity.emplace().preferred;
  p.push_back(
      {8, Term(And(Expr("security", "NotIn", {"S1"}), "security", "In", {"S2"}), "region")});
  p.push_back({2, Term(And(Expr("security", "Exists"), "wrongkey", "DoesNotExist"), "region")});
  return a;
}
Affinity HardAffinity() {
  Affinity a;
  auto& r = a.pod_affinity.emplace().required;
  r.push_back(In("security", {"S1", "value2"}, "region"));
  r.push_back(Term(And(Expr("security", "Exists"), "wrongkey", "DoesNotExist"), "region"));
  return a;
}
Affinity AwayFromS1InAz() {
  Affinity a;
  a.pod_anti_affinity.emplace().preferred.push_back({5, In("security", {"S1"}, "az")});
  return a;
}
Affinity AwayFromS2InAz() {
  Affinity a;
  a.pod_anti_affinity.emplace().preferred.push_back({5, In("security", {"S2"}, "az")});
  return a;
}
Affinity StayWithS1InRegionAwayFromS2InAz() {
  Affinity a;
  a.pod_affinity.emplace().preferred.push_back({8, In("security", {"S1"}, "region")});
  a.pod_anti_affinity.emplace().preferred.push_back({5, In("security", {"S2"}, "az")});
  return a;
}
PodAffinityTerm S1InRegionForTeam1AndSubteam2Team2() {
  return Term(Expr("security", "In", {"S1"}), "region", {"subteam2.team2"},
              Expr("team", "In", {"team1"}));
}
Affinity AffinityNamespaceSelector() {
  Affinity a;
  a.pod_affinity.emplace().preferred.push_back({5, S1InRegionForTeam1AndSubteam2Team2()});
  return a;
}
Affinity AntiAffinityNamespaceSelector() {
  Affinity a;
  a.pod_anti_affinity.emplace().preferred.push_back({5, S1InRegionForTeam1AndSubteam2Team2()});
  return a;
}
Affinity InvalidAffinityLabels() {
  Affinity a;
  a.pod_affinity.emplace().preferred.push_back({8, In("security", {"{{.bad-value.}}"}, "region")});
  return a;
}
Affinity InvalidAntiAffinityLabels() {
  Affinity a;
  a.pod_anti_affinity.emplace().preferred.push_back({5, In("security", {"{{.bad-value.}}"}, "az")});
  return a;
}

const NodeLabels kChina = {{"region", "China"}};
const NodeLabels kIndia = {{"region", "India"}};
const NodeLabels kAz1 = {{"az", "az1"}};
const NodeLabels kAz2 = {{"az", "az2"}};
const NodeLabels kChinaAz1 = {{"region", "China"}, {"az", "az1"}};

TestPod S1() { return TestPod().Label("security", "S1"); }
TestPod S2() { return TestPod().Label("security", "S2"); }
PodPtr On(TestPod p, std::string node) { return p.Node(std::move(node)).Obj(); }

std::vector<NodePtr> Nodes(std::vector<NodeLabels> labels) {
  std::vector<NodePtr> out;
  for (size_t i = 0; i < labels.size(); ++i) {
    std::map<std::string, std::string> l(labels[i].begin(), labels[i].end());
    out.push_back(MakeNode("node" + std::to_string(i + 1), l));
  }
  return out;
}

struct PreferredCase {
  std::string name;
  PodPtr pod;
  std::vector<PodPtr> pods;
  std::vector<NodePtr> nodes;
  std::vector<int64_t> want;
  Code want_code = Code::kSuccess;
  bool ignore_preferred_terms_of_existing_pods = false;
  std::string want_message_substr = "";
};

class PreferredAffinityTest : public ::testing::TestWithParam<PreferredCase> {};

TEST_P(PreferredAffinityTest, Scores) {
  const auto& c = GetParam();
  config::InterPodAffinityArgs args;
  args.hard_pod_affinity_weight = 1;
  args.ignore_preferred_terms_of_existing_pods = c.ignore_preferred_terms_of_existing_pods;
  ScoreResult r = RunScoring(c.nodes, c.pods, c.pod, args);
  ASSERT_EQ(r.pre_score.code(), c.want_code) << r.pre_score.Message();
  if (!c.want_message_substr.empty()) {
    EXPECT_THAT(r.pre_score.Message(), ::testing::HasSubstr(c.want_message_substr));
  }
  if (c.want_code != Code::kSuccess) return;
  EXPECT_EQ(r.scores, c.want);
}

// Long by design: kube-scheduler's scoring cases, one entry each.
std::vector<PreferredCase> PreferredCases() {
  const int64_t M = kMaxNodeScore;
  return {
      {"all nodes are the same priority when affinity is nil",
       S1().Obj(),
       {},
       Nodes({kChina, kIndia, kAz1}),
       {},
       Code::kSkip},
      {"affinity: nodes matching the topology key and the selector score high",
       S1().WithAffinity(StayWithS1InRegion()).Obj(),
       {On(S1(), "node1"), On(S2(), "node2"), On(S1(), "node3")},
       Nodes({kChina, kIndia, kAz1}),
       {M, 0, 0}},
      {"affinity: nodes sharing the matching node's topology value score the same",
       TestPod().WithAffinity(StayWithS1InRegion()).Obj(),
       {On(S1(), "node1")},
       Nodes({kChina, kChinaAz1, kIndia}),
       {M, M, 0}},
      {"affinity: the region with more matching pods scores high",
       S1().WithAffinity(StayWithS2InRegion()).Obj(),
       {On(S2(), "node1"), On(S2(), "node1"), On(S2(), "node2"), On(S2(), "node3"),
        On(S2(), "node4"), On(S2(), "node5")},
       Nodes({kChina, kIndia, kChina, kChina, kIndia}),
       {M, 0, M, M, 0}},
      {"affinity: different label operators and values, including failed matches",
       S1().WithAffinity(Affinity3()).Obj(),
       {On(S1(), "node1"), On(S2(), "node2"), On(S1(), "node3")},
       Nodes({kChina, kIndia, kAz1}),
       {20, M, 0}},
      {"affinity symmetry: existing pods' preferred affinity",
       S2().Obj(),
       {On(S1().WithAffinity(StayWithS1InRegion()), "node1"),
        On(S2().WithAffinity(StayWithS2InRegion()), "node2")},
       Nodes({kChina, kIndia, kAz1}),
       {0, M, 0}},
      {"affinity symmetry with a namespace selector",
       S1().Namespace("subteam1.team1").Obj(),
       {On(S1().WithAffinity(AffinityNamespaceSelector()), "node1"),
        On(S2().WithAffinity(StayWithS2InRegion()), "node2")},
       Nodes({kChina, kIndia, kAz1}),
       {M, 0, 0}},
      {"anti-affinity symmetry with a namespace selector",
       S1().Namespace("subteam1.team1").Obj(),
       {On(S1().WithAffinity(AntiAffinityNamespaceSelector()), "node1"),
        On(S2().WithAffinity(StayWithS2InRegion()), "node2")},
       Nodes({kChina, kIndia, kAz1}),
       {0, M, M}},
      {"affinity symmetry: existing pods' required affinity counts with hardPodAffinityWeight",
       S1().Obj(),
       {On(S1().WithAffinity(HardAffinity()), "node1"),
        On(S2().WithAffinity(HardAffinity()), "node2")},
       Nodes({kChina, kIndia, kAz1}),
       {M, M, 0}},
      {"anti-affinity: the node without matching pods scores high",
       S1().WithAffinity(AwayFromS1InAz()).Obj(),
       {On(S1(), "node1"), On(S2(), "node2")},
       Nodes({kAz1, kChina}),
       {0, M}},
      {"anti-affinity: a node without the topology key scores high",
       S1().WithAffinity(AwayFromS1InAz()).Obj(),
       {On(S1(), "node1"), On(S1(), "node2")},
       Nodes({kAz1, kChina}),
       {0, M}},
      {"anti-affinity: the node with more matching pods scores low",
       S1().WithAffinity(AwayFromS1InAz()).Obj(),
       {On(S1(), "node1"), On(S1(), "node1"), On(S2(), "node2")},
       Nodes({kAz1, kIndia}),
       {0, M}},
      {"anti-affinity symmetry: existing pods' preferred anti-affinity",
       S2().Obj(),
       {On(S1().WithAffinity(AwayFromS2InAz()), "node1"),
        On(S2().WithAffinity(AwayFromS1InAz()), "node2")},
       Nodes({kAz1, kAz2}),
       {0, M}},
      {"affinity and anti-affinity: preferred terms of both kinds",
       S1().WithAffinity(StayWithS1InRegionAwayFromS2InAz()).Obj(),
       {On(S1(), "node1"), On(S1(), "node2")},
       Nodes({kChina, kAz1}),
       {M, 0}},
      {"affinity and anti-affinity: pod and existing pods have the same labels",
       S1().WithAffinity(StayWithS1InRegionAwayFromS2InAz()).Obj(),
       {On(S1(), "node1"), On(S1(), "node1"), On(S1(), "node2"), On(S1(), "node3"),
        On(S1(), "node3"), On(S1(), "node4"), On(S1(), "node5")},
       Nodes({kChinaAz1, kIndia, kChina, kChina, kIndia}),
       {M, 0, M, M, 0}},
      {"affinity, anti-affinity and symmetry together",
       S1().WithAffinity(StayWithS1InRegionAwayFromS2InAz()).Obj(),
       {On(S1(), "node1"), On(S2(), "node2"),
        On(TestPod().WithAffinity(StayWithS1InRegionAwayFromS2InAz()), "node3"),
        On(TestPod().WithAffinity(AwayFromS1InAz()), "node4")},
       Nodes({kChina, kAz1, kIndia, kAz2}),
       {M, 0, M, 0}},
      {"some nodes of a topology domain have no pods with affinity",
       S1().Obj(),
       {On(S1(), "node1"), On(TestPod().WithAffinity(StayWithS1InRegionAwayFromS2InAz()), "node2")},
       Nodes({kChina, kChina}),
       {0, 0}},
      {"invalid affinity fails PreScore",
       TestPod().WithAffinity(InvalidAffinityLabels()).Obj(),
       {},
       Nodes({kChina, kChina}),
       {},
       Code::kError,
       false,
       "{{.bad-value.}}"},
      {"invalid anti-affinity fails PreScore",
       TestPod().WithAffinity(InvalidAntiAffinityLabels()).Obj(),
       {},
       Nodes({kChina, kChina}),
       {},
       Code::kError,
       false,
       "{{.bad-value.}}"},
      {"affinity with pods matching the namespaceSelector",
       S1().Namespace("subteam1.team1").WithAffinity(AffinityNamespaceSelector()).Obj(),
       {On(S1().Namespace("subteam1.team1"), "node1"),
        On(S1().Namespace("subteam1.team1"), "node1"),
        On(S1().Namespace("subteam1.team2"), "node1"),
        On(S1().Namespace("subteam2.team1"), "node2")},
       Nodes({kChina, kIndia}),
       {M, 0}},
      {"affinity with pods matching both the namespaceSelector and the namespaces",
       S1().Namespace("subteam1.team1").WithAffinity(AffinityNamespaceSelector()).Obj(),
       {On(S1().Namespace("subteam1.team1"), "node1"),
        On(S1().Namespace("subteam1.team1"), "node1"),
        On(S1().Namespace("subteam2.team2"), "node1"),
        On(S1().Namespace("subteam2.team1"), "node2")},
       Nodes({kChina, kIndia}),
       {M, 0}},
      {"anti-affinity with pods matching the namespaceSelector",
       S1().Namespace("subteam1.team1").WithAffinity(AntiAffinityNamespaceSelector()).Obj(),
       {On(S1().Namespace("subteam1.team1"), "node1"),
        On(S1().Namespace("subteam1.team1"), "node1"),
        On(S1().Namespace("subteam1.team2"), "node1"),
        On(S1().Namespace("subteam2.team1"), "node2")},
       Nodes({kChina, kIndia}),
       {0, M}},
      {"anti-affinity with pods matching both the namespaceSelector and the namespaces",
       S1().Namespace("subteam1.team1").WithAffinity(AntiAffinityNamespaceSelector()).Obj(),
       {On(S1().Namespace("subteam1.team1"), "node1"),
        On(S1().Namespace("subteam1.team1"), "node1"),
        On(S1().Namespace("subteam2.team2"), "node1"),
        On(S1().Namespace("subteam2.team1"), "node2")},
       Nodes({kChina, kIndia}),
       {0, M}},
      {"ignore preferred terms of existing pods",
       S2().Obj(),
       {On(S1().WithAffinity(StayWithS1InRegionAwayFromS2InAz()), "node1"),
        On(S2().WithAffinity(StayWithS2InRegion()), "node2")},
       Nodes({kChina, kIndia}),
       {},
       Code::kSkip,
       true},
      {"do not ignore preferred terms of existing pods",
       S2().Obj(),
       {On(S1().WithAffinity(StayWithS1InRegionAwayFromS2InAz()), "node1"),
        On(S2().WithAffinity(StayWithS2InRegion()), "node2")},
       Nodes({kChina, kIndia}),
       {0, M}},
      {"no nodes to score", S2().Obj(), {}, {}, {}, Code::kSkip},
      // Not in kube-scheduler's test table: the option only skips pods without preferred terms; a
      // pod with its own preferred terms is scored with the existing pods' terms too (China +5 from
      // the pod's term, India +6 from node2's pod preferring S2).
      {"ignoring existing pods' preferred terms does not apply to a pod with its own",
       S2().WithAffinity(StayWithS1InRegion()).Obj(),
       {On(S1().WithAffinity(StayWithS1InRegionAwayFromS2InAz()), "node1"),
        On(S2().WithAffinity(StayWithS2InRegion()), "node2")},
       Nodes({kChina, kIndia}),
       {0, M},
       Code::kSuccess,
       true},
      // Weights that cancel out still make a topology pair: PreScore succeeds and every node
      // scores 0, rather than the plugin being skipped.
      {"attraction and repulsion of equal weight cancel out",
       S1().WithAffinity([] {
             Affinity a;
             a.pod_affinity.emplace().preferred.push_back({5, In("security", {"S1"}, "region")});
             a.pod_anti_affinity.emplace().preferred.push_back(
                 {5, In("security", {"S1"}, "region")});
             return a;
           }())
           .Obj(),
       {On(S1(), "node1")},
       Nodes({kChina, kIndia}),
       {0, 0}},
  };
}

INSTANTIATE_TEST_SUITE_P(Upstream, PreferredAffinityTest, ::testing::ValuesIn(PreferredCases()));

// ---------------------------------------------------------------- hardPodAffinityWeight

Affinity HardPodAffinity() {
  Affinity a;
  // Upstream's table names the pods' own (empty) namespace; these pods live in "default".
  a.pod_affinity.emplace().required.push_back(Term(Expr("service", "In", {"S1"}), "region",
                                                   {"default", "subteam2.team2"},
                                                   Expr("team", "In", {"team1"})));
  return a;
}

struct HardWeightCase {
  std::string name;
  PodPtr pod;
  int32_t hard_pod_affinity_weight;
  std::vector<int64_t> want;
  Code want_code = Code::kSuccess;
};

class HardPodAffinitySymmetricWeightTest : public ::testing::TestWithParam<HardWeightCase> {};

TEST_P(HardPodAffinitySymmetricWeightTest, Scores) {
  const auto& c = GetParam();
  config::InterPodAffinityArgs args;
  args.hard_pod_affinity_weight = c.hard_pod_affinity_weight;
  std::vector<PodPtr> pods = {On(TestPod().WithAffinity(HardPodAffinity()), "node1"),
                              On(TestPod().WithAffinity(HardPodAffinity()), "node2")};
  ScoreResult r = RunScoring(Nodes({kChina, kIndia, kAz1}), pods, c.pod, args);
  ASSERT_EQ(r.pre_score.code(), c.want_code) << r.pre_score.Message();
  if (c.want_code == Code::kSuccess) {
    EXPECT_EQ(r.scores, c.want);
  }
}

std::vector<HardWeightCase> HardWeightCases() {
  const int64_t M = kMaxNodeScore;
  auto s1 = [](std::string ns) { return TestPod().Namespace(ns).Label("service", "S1").Obj(); };
  return {
      {"with default weight", s1("default"), 1, {M, M, 0}},
      {"with zero weight", s1("default"), 0, {}, Code::kSkip},
      {"with no matching namespace", s1("subteam1.team2"), 1, {}, Code::kSkip},
      {"with matching NamespaceSelector", s1("subteam1.team1"), 1, {M, M, 0}},
      {"with matching Namespaces", s1("subteam2.team2"), 1, {M, M, 0}},
  };
}

INSTANTIATE_TEST_SUITE_P(Upstream, HardPodAffinitySymmetricWeightTest,
                         ::testing::ValuesIn(HardWeightCases()));

// ---------------------------------------------------------------- normalization and raw scores

TEST(InterPodAffinityScoreTest, RawScoresSumEveryTopologyKeyOfTheNode) {
  InMemoryCluster cluster;
  auto nodes = std::vector<NodePtr>{MakeNode("a", {{"region", "r1"}, {"zone", "z1"}}),
                                    MakeNode("b", {{"region", "r1"}, {"zone", "z2"}}),
                                    MakeNode("c", {{"region", "r2"}, {"zone", "z3"}})};
  testing::FakeHandle handle(
      Snapshot::Build(nodes, {On(S1(), "a"), On(S1(), "a"), On(S2(), "b"), On(S2(), "c")}),
      &cluster);
  config::InterPodAffinityArgs args;
  InterPodAffinity plugin(args, handle);
  auto pod = S1().PreferredAffinity(3, In("security", {"S1"}, "region"))
                 .PreferredAntiAffinity(7, In("security", {"S2"}, "zone"))
                 .Obj();
  PodInfoPtr info = PodInfo::Create(pod);
  CycleState state;
  std::vector<const NodeInfo*> feasible = {handle.snapshot().Get("a"), handle.snapshot().Get("b"),
                                           handle.snapshot().Get("c")};
  ASSERT_TRUE(plugin.PreScore(state, *info, feasible).IsSuccess());
  std::vector<NodeScore> scores;
  for (const NodeInfo* ni : feasible) {
    int64_t s = 0;
    ASSERT_TRUE(plugin.Score(state, *info, *ni, &s).IsSuccess());
    scores.push_back({ni, s});
  }
  // a: region r1 has two S1 pods (+6); b: +6 for r1, -7 for the S2 pod in z2; c: -7 in z3.
  EXPECT_EQ(scores[0].score, 6);
  EXPECT_EQ(scores[1].score, -1);
  EXPECT_EQ(scores[2].score, -7);
  ASSERT_TRUE(plugin.NormalizeScore(state, *info, scores).IsSuccess());
  // (s - min) * 100 / (max - min), truncated: 100, 6 * 100 / 13 = 46, 0.
  EXPECT_EQ(scores[0].score, 100);
  EXPECT_EQ(scores[1].score, 46);
  EXPECT_EQ(scores[2].score, 0);
}

TEST(InterPodAffinityScoreTest, ScoreWithoutPreScoreStateIsAnError) {
  InMemoryCluster cluster;
  testing::FakeHandle handle(Snapshot::Build({MakeNode("a", {})}, {}), &cluster);
  config::InterPodAffinityArgs args;
  InterPodAffinity plugin(args, handle);
  PodInfoPtr info = PodInfo::Create(TestPod().Obj());
  CycleState state;
  int64_t s = 0;
  Status st = plugin.Score(state, *info, *handle.snapshot().Get("a"), &s);
  EXPECT_EQ(st.code(), Code::kError);
}

// Many nodes exercise the parallel accumulation; the scores must equal a direct computation.
TEST(InterPodAffinityScoreTest, ManyNodesScoresEqualDirectComputation) {
  std::vector<NodePtr> nodes;
  std::vector<PodPtr> pods;
  std::map<std::string, int64_t> zone_weight;
  for (int i = 0; i < 400; ++i) {
    std::string name = "n" + std::to_string(i);
    std::string zone = "z" + std::to_string(i % 9);
    nodes.push_back(MakeNode(name, {{"zone", zone}, {"hostname", name}}));
    if (i % 4 == 0) {
      pods.push_back(On(S1().Name("s1-" + name), name));
      zone_weight[zone] += 2;
    }
    if (i % 6 == 0) {
      pods.push_back(On(S2().Name("s2-" + name), name));
      zone_weight[zone] -= 3;
    }
  }
  InMemoryCluster cluster;
  testing::FakeHandle handle(Snapshot::Build(nodes, pods), &cluster);
  config::InterPodAffinityArgs args;
  InterPodAffinity plugin(args, handle);
  PodInfoPtr info = PodInfo::Create(TestPod()
                                        .PreferredAffinity(2, In("security", {"S1"}, "zone"))
                                        .PreferredAntiAffinity(3, In("security", {"S2"}, "zone"))
                                        .Obj());
  CycleState state;
  std::vector<const NodeInfo*> feasible;
  for (const auto& n : nodes) feasible.push_back(handle.snapshot().Get(n->metadata.name));
  ASSERT_TRUE(plugin.PreScore(state, *info, feasible).IsSuccess());
  for (size_t i = 0; i < nodes.size(); ++i) {
    int64_t s = 0;
    ASSERT_TRUE(plugin.Score(state, *info, *feasible[i], &s).IsSuccess());
    EXPECT_EQ(s, zone_weight["z" + std::to_string(i % 9)]) << nodes[i]->metadata.name;
  }
}

}  // namespace
}  // namespace berth::interpodaffinity
