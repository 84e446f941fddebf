// AddPod / RemovePod and the incoming pod's counts of InterPodAffinity's PreFilter state,
// with the worked cases of kube-scheduler's interpodaffinity filtering tests.
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
