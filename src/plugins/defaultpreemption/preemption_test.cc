#include "plugins/defaultpreemption/preemption.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "testing/builders.h"
#include "testing/fake_extender.h"

namespace berth::preemption {
namespace {

using testing::MakePod;

Ptr<PodDisruptionBudget> MakePdb(std::string name, std::string ns, Labels match_labels,
                                 int32_t allowed, std::vector<std::string> disrupted = {}) {
  auto pdb = std::make_shared<PodDisruptionBudget>();
  pdb->metadata.name = std::move(name);
  pdb->metadata.namespace_ = std::move(ns);
  LabelSelector sel;
  sel.match_labels = std::move(match_labels);
  pdb->selector = std::move(sel);
  pdb->disruptions_allowed = allowed;
  for (auto& d : disrupted) pdb->disrupted_pods[d] = true;
  return pdb;
}

std::vector<std::string> Names(const std::vector<PodInfoPtr>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back(p->pod->metadata.name);
  return out;
}

TEST(CalculateNumCandidatesTest, Table) {
  struct Case {
    int32_t nodes, pct, abs, want;
  };
  const Case cases[] = {
      {10, 10, 100, 10},     // capped at the node count
      {1000, 10, 100, 100},  // absolute minimum wins
      {5000, 10, 100, 500},  // percentage wins
      {5, 40, 1, 2},         // 5*40/100 = 2
      {5, 40, 2, 2},         //
      {5, 0, 3, 3},          // percentage off
      {1000, 100, 0, 1000},  //
      {3, 50, 0, 1},         // integer division
  };
  for (const auto& c : cases) {
    EXPECT_EQ(CalculateNumCandidates(c.nodes, c.pct, c.abs), c.want)
        << c.nodes << " nodes, " << c.pct << "%, abs " << c.abs;
  }
}

TEST(MoreImportantPodTest, PriorityThenEarlierStart) {
  auto high = MakePod().Name("h").Priority(10).StartTime(50).Obj();
  auto low_old = MakePod().Name("lo").Priority(1).StartTime(10).Obj();
  auto low_new = MakePod().Name("ln").Priority(1).StartTime(20).Obj();
  auto low_unstarted = MakePod().Name("lu").Priority(1).Obj();
  EXPECT_TRUE(MoreImportantPod(*high, *low_old));
  EXPECT_FALSE(MoreImportantPod(*low_old, *high));
  EXPECT_TRUE(MoreImportantPod(*low_old, *low_new));
  EXPECT_FALSE(MoreImportantPod(*low_new, *low_old));
  // Not started yet counts as the newest.
  EXPECT_TRUE(MoreImportantPod(*low_new, *low_unstarted));
  EXPECT_FALSE(MoreImportantPod(*low_unstarted, *low_unstarted));
}

TEST(SplitByPdbViolationTest, Table) {
  struct Case {
    std::string name;
    std::vector<Ptr<Pod>> pods;
    std::vector<Ptr<PodDisruptionBudget>> pdbs;
    std::vector<std::string> want_violating, want_non_violating;
  };
  const Labels foo{{"app", "foo"}};
  const std::vector<Case> cases = {
      {"budget of one: the second matching pod violates",
       {MakePod().Name("a").Label("app", "foo").Obj(),
        MakePod().Name("b").Label("app", "foo").Obj()},
       {MakePdb("pdb", "default", foo, 1)},
       {"b"},
       {"a"}},
      {"pod already disrupted neither consumes nor violates",
       {MakePod().Name("a").Label("app", "foo").Obj(),
        MakePod().Name("b").Label("app", "foo").Obj()},
       {MakePdb("pdb", "default", foo, 1, {"a"})},
       {},
       {"a", "b"}},
      {"disrupted pod that is not a victim does not help",
       {MakePod().Name("a").Label("app", "foo").Obj(),
        MakePod().Name("b").Label("app", "foo").Obj()},
       {MakePdb("pdb", "default", foo, 1, {"zzz"})},
       {"b"},
       {"a"}},
      {"other namespace does not match",
       {MakePod().Name("a").Namespace("other").Label("app", "foo").Obj()},
       {MakePdb("pdb", "default", foo, 0)},
       {},
       {"a"}},
      {"empty selector matches nothing",
       {MakePod().Name("a").Label("app", "foo").Obj()},
       {MakePdb("pdb", "default", {}, 0)},
       {},
       {"a"}},
      {"unlabelled pods never violate",
       {MakePod().Name("a").Obj()},
       {MakePdb("pdb", "default", {}, 0)},
       {},
       {"a"}},
      {"any violated budget makes the pod violating; budgets are consumed by every match",
       {MakePod().Name("a").Label("app", "foo").Label("tier", "x").Obj(),
        MakePod().Name("b").Label("tier", "x").Obj()},
       {MakePdb("generous", "default", foo, 5), MakePdb("strict", "default", {{"tier", "x"}}, 1)},
       {"b"},
       {"a"}},
      {"zero budget violates at once",
       {MakePod().Name("a").Label("app", "foo").Obj()},
       {MakePdb("pdb", "default", foo, 0)},
       {"a"},
       {}},
  };
  for (const auto& c : cases) {
    std::vector<PodInfoPtr> pods;
    for (const auto& p : c.pods) pods.push_back(PodInfo::Create(p));
    const auto compiled = CompilePdbs(c.pdbs);
    std::vector<PodInfoPtr> violating, non_violating;
    SplitByPdbViolation(pods, compiled, &violating, &non_violating);
    EXPECT_EQ(Names(violating), c.want_violating) << c.name;
    EXPECT_EQ(Names(non_violating), c.want_non_violating) << c.name;
  }
}

Candidate MakeCandidate(std::string node, std::vector<Ptr<Pod>> victims, int64_t violations = 0) {
  Candidate c;
  c.node_name = std::move(node);
  for (auto& v : victims) c.victims.pods.push_back(PodInfo::Create(v));
  c.victims.num_pdb_violations = violations;
  return c;
}

Ptr<Pod> V(const std::string& name, int32_t priority, UnixTime start = 100) {
  return MakePod().Name(name).Priority(priority).StartTime(start).Obj();
}

TEST(PickOneNodeForPreemptionTest, Table) {
  struct Case {
    std::string name;
    std::vector<Candidate> candidates;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"fewest PDB violations first",
       {MakeCandidate("n1", {V("a", 0)}, 1), MakeCandidate("n2", {V("b", 100), V("c", 100)}, 0)},
       "n2"},
      {"lowest highest-priority victim",
       {MakeCandidate("n1", {V("a", 100), V("b", 0)}), MakeCandidate("n2", {V("c", 50)}),
        MakeCandidate("n3", {V("d", 0), V("e", 0)})},
       "n3"},
      {"smallest sum of priorities",
       {MakeCandidate("n1", {V("a", 100), V("b", 100)}),
        MakeCandidate("n2", {V("c", 100), V("d", 0)})},
       "n2"},
      {"sum uses priorities shifted by 2^31: more negative victims is worse",
       {MakeCandidate("n1", {V("a", 100), V("b", -100), V("c", -100)}),
        MakeCandidate("n2", {V("d", 100), V("e", -100)})},
       "n2"},
      {"more victims lose through the shifted sum",
       {MakeCandidate("n1", {V("a", 100), V("b", 0), V("c", 0)}),
        MakeCandidate("n2", {V("d", 100), V("e", 0)})},
       "n2"},
      {"latest start among the highest-priority victims",
       {MakeCandidate("n1", {V("a", 100, 2), V("b", 100, 2)}),
        MakeCandidate("n2", {V("c", 100, 3), V("d", 100, 3)}),
        MakeCandidate("n3", {V("e", 100, 1), V("f", 100, 1)})},
       "n2"},
      {"start of lower-priority victims is ignored",
       {MakeCandidate("n1", {V("a", 100, 2), V("b", 0, 4)}),
        MakeCandidate("n2", {V("c", 100, 6), V("d", 0, 1)}),
        MakeCandidate("n3", {V("e", 100, 5), V("f", 0, 3)})},
       "n2"},
      {"victims that have not started count as newest",
       {MakeCandidate("n1", {V("a", 100, 9)}), MakeCandidate("n2", {V("b", 100, 0)})},
       "n2"},
      {"complete tie: first candidate",
       {MakeCandidate("n1", {V("a", 100)}), MakeCandidate("n2", {V("b", 100)})},
       "n1"},
  };
  for (const auto& c : cases) {
    const int got = PickOneNodeForPreemption(c.candidates);
    ASSERT_GE(got, 0) << c.name;
    EXPECT_EQ(c.candidates[got].node_name, c.want) << c.name;
  }
  EXPECT_EQ(PickOneNodeForPreemption({}), -1);
}

std::shared_ptr<berth::testing::FakeExtender> Ext(std::string name,
                                                  std::vector<std::string> allowed,
                                                  bool ignorable = false, bool interested = true,
                                                  bool fail = false) {
  auto e = std::make_shared<berth::testing::FakeExtender>(std::move(name));
  e->preempt = true;
  e->preempt_allowed = std::move(allowed);
  if (e->preempt_allowed.empty()) e->preempt_allowed.push_back("<none>");
  e->ignorable = ignorable;
  e->interested = interested;
  e->fail = fail;
  return e;
}

TEST(CallExtendersTest, Table) {
  auto pod = MakePod().Name("p").Obj();
  auto candidates = [] {
    return std::vector<Candidate>{MakeCandidate("node1", {V("a", 0)}),
                                  MakeCandidate("node2", {V("b", 0)}),
                                  MakeCandidate("node3", {V("c", 0)})};
  };
  struct Case {
    std::string name;
    std::vector<std::shared_ptr<berth::testing::FakeExtender>> extenders;
    std::vector<std::string> want_nodes;
    bool want_error = false;
  };
  const std::vector<Case> cases = {
      {"no extenders keeps candidates in order", {}, {"node1", "node2", "node3"}},
      {"extenders narrow in sequence",
       {Ext("e1", {"node1", "node3"}), Ext("e2", std::vector<std::string>{"node1"})},
       {"node1"}},
      {"uninterested extender is skipped",
       {Ext("e1", std::vector<std::string>{"node2"}, false, false)},
       {"node1", "node2", "node3"}},
      {"ignorable error is skipped",
       {Ext("e1", std::vector<std::string>{}, true, true, true),
        Ext("e2", std::vector<std::string>{"node2"})},
       {"node2"}},
      {"error fails preemption",
       {Ext("e1", std::vector<std::string>{}, false, true, true)},
       {},
       true},
      {"extender rejecting every node leaves none", {Ext("e1", std::vector<std::string>{})}, {}},
  };
  for (const auto& c : cases) {
    std::vector<Extender*> extenders;
    for (const auto& e : c.extenders) extenders.push_back(e.get());
    auto got = CallExtenders(extenders, *pod, candidates(), Snapshot());
    ASSERT_EQ(!got.ok(), c.want_error) << c.name;
    if (!got.ok()) continue;
    std::vector<std::string> nodes;
    for (const auto& cand : *got) nodes.push_back(cand.node_name);
    EXPECT_EQ(nodes, c.want_nodes) << c.name;
  }
}

}  // namespace
}  // namespace berth::preemption
