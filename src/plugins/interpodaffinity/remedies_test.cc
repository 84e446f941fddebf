#include "plugins/interpodaffinity/remedies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "berth/testing/builders.h"
#include "framework/in_memory_cluster.h"

namespace berth::interpodaffinity {
namespace {

using ::testing::ElementsAre;
using testing::MakeNode;
using testing::MakePod;

PodAffinityTerm Term(std::string key, std::string value, std::string topology) {
  PodAffinityTerm t;
  t.label_selector = LabelSelector{};
  t.label_selector->match_labels[key] = value;
  t.topology_key = std::move(topology);
  return t;
}

Affinity AntiAffinity(PodAffinityTerm t) {
  Affinity a;
  a.pod_anti_affinity.emplace();
  a.pod_anti_affinity->required.push_back(std::move(t));
  return a;
}

Affinity PodAffinityTo(PodAffinityTerm t) {
  Affinity a;
  a.pod_affinity.emplace();
  a.pod_affinity->required.push_back(std::move(t));
  return a;
}

// The pods kept apart are found both ways: those the pod's anti-affinity matches and those whose
// own anti-affinity matches the pod (a term with a namespaceSelector, resolved against the
// namespaces' labels as Filter resolves it); the nodes of one zone share one remedy.
TEST(InterPodAffinityRemediesTest, AntiAffinityMovesThePodsKeepingThemApartBothWays) {
  InMemoryCluster cluster;
  for (auto [name, zone] : {std::pair{"a1", "a"}, {"a2", "a"}, {"b1", "b"}})
    cluster.AddNode(MakeNode().Name(name).Label("zone", zone).Obj());
  Namespace team;
  team.metadata.name = "team";
  team.metadata.labels["tier"] = "front";
  cluster.AddNamespace(std::make_shared<const Namespace>(team));
  cluster.AddPod(MakePod().Name("web").Label("app", "web").Node("a1").Obj());
  PodAffinityTerm guard = Term("app", "batch", "zone");
  guard.namespace_selector = LabelSelector{};
  guard.namespace_selector->match_labels["tier"] = "front";
  cluster.AddPod(
      MakePod().Name("guard").Namespace("other").Node("b1").Affinity(AntiAffinity(guard)).Obj());
  auto pod = MakePod()
                 .Name("batch")
                 .Namespace("team")
                 .Label("app", "batch")
                 .Affinity(AntiAffinity([] {
                   PodAffinityTerm t = Term("app", "web", "zone");
                   t.namespaces = {"default"};
                   return t;
                 }()))
                 .Obj();
  const Status st = Status::Unschedulable("node(s) didn't match pod anti-affinity rules");
  std::vector<Node> nodes;
  for (const char* n : {"a1", "a2", "b1"}) nodes.push_back(*cluster.GetNode(n));
  const RejectedNode rejected[] = {{&nodes[0], &st}, {&nodes[1], &st}, {&nodes[2], &st}};
  RemedyProposal p = ProposeRemedies(cluster, *pod, rejected, 8);
  ASSERT_EQ(p.remedies.size(), 2u);
  EXPECT_EQ(p.remedies[0].kind, "anti-affinity");
  EXPECT_THAT(p.remedies[0].removed_pods, ElementsAre("default/web"));
  EXPECT_EQ(p.remedies[0].node, "a1");
  EXPECT_THAT(p.remedies[1].removed_pods, ElementsAre("other/guard"));
  EXPECT_EQ(p.remedies[1].node, "b1");
}

// Required affinity with matching pods in zone b only: for a node of zone a, a bound pod there
// relabelled, a new pod there, and the node moved to zone b (an alternative per node); the
// machine's own labels (hostname) are never proposed.
TEST(InterPodAffinityRemediesTest, PodAffinityProposesAPeerInTheDomainOrTheNodeMoved) {
  InMemoryCluster cluster;
  cluster.AddNode(MakeNode().Name("a1").Label("zone", "a").Obj());
  cluster.AddNode(MakeNode().Name("b1").Label("zone", "b").Obj());
  cluster.AddPod(MakePod().Name("cache").Label("app", "cache").Node("b1").Obj());
  cluster.AddPod(MakePod().Name("other").Label("app", "other").Node("a1").Obj());
  auto pod = MakePod().Name("web").Affinity(PodAffinityTo(Term("app", "cache", "zone"))).Obj();
  const Status st = Status::Unresolvable("node(s) didn't match pod affinity rules");
  const Node a1 = *cluster.GetNode("a1");
  const RejectedNode rejected[] = {{&a1, &st}};
  RemedyProposal p = ProposeRemedies(cluster, *pod, rejected, 8);
  std::vector<std::string> variants;
  for (const auto& r : p.remedies) variants.push_back(r.variant);
  EXPECT_THAT(variants, ElementsAre("label-pod", "new-pod", "label-node"));
  EXPECT_EQ(p.remedies[0].running_pod, "default/other");
  ASSERT_EQ(p.remedies[0].bound_pods.size(), 1u);
  EXPECT_EQ(p.remedies[0].bound_pods[0]->metadata.labels.at("app"), "cache");
  EXPECT_EQ(p.remedies[1].bound_pods[0]->spec.node_name, "a1");
  ASSERT_EQ(p.remedies[2].nodes.size(), 1u);
  EXPECT_EQ(p.remedies[2].nodes[0]->metadata.labels.at("zone"), "b");
  EXPECT_EQ(p.remedies[2].alternatives, "label-node/a1");
  for (const auto& r : p.remedies) {
    EXPECT_EQ(r.merge_key, "pod-affinity/" + r.variant);
    EXPECT_FALSE(r.same_change);
  }
}

}  // namespace
}  // namespace berth::interpodaffinity
