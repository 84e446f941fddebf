// berth explain over a cluster shaped like `berth up --demo-nodes 8` (src/daemon/demo_nodes.cc):
// the cases where it used to propose changes that cannot work.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "config/load.h"
#include "explain/explain.h"
#include "explain/verify.h"
#include "plugins/registry.h"
#include "sim/simulator.h"
#include "testing/builders.h"

namespace berth::explain {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using testing::MakeNode;
using testing::MakePod;
using ::testing::Not;

const Registry& TestRegistry() {
  static const Registry registry = InTreeRegistry();
  return registry;
}

const config::SchedulerConfiguration& TestConfig() {
  static const auto config = config::DefaultConfiguration(TestRegistry());
  return config;
}

Result<Explanation> ExplainPod(const std::vector<Object>& objects, const std::string& pod) {
  return Explain(TestConfig(), TestRegistry(), objects, pod, {});
}

// The i-th of eight demo nodes, as DemoNode makes it: every fourth is large (15800m cpu and
// 63Gi allocatable), the others 7800m and 31Gi, spread over three zones.
std::shared_ptr<Node> DemoNode(int index) {
  static constexpr const char* kZones[] = {"zone-a", "zone-b", "zone-c"};
  const bool large = index % 4 == 3;
  auto b = MakeNode();
  b.Name(fmt::format("demo-node-{:03}", index + 1))
      .Label("kubernetes.io/os", "linux")
      .Label("kubernetes.io/arch", "amd64")
      .Label("node.kubernetes.io/instance-type", large ? "demo.xlarge" : "demo.large")
      .Label("topology.kubernetes.io/region", "demo")
      .Label("topology.kubernetes.io/zone", kZones[index % 3])
      .Label("berth.dev/demo", "true")
      .Capacity({{"cpu", large ? "15800m" : "7800m"},
                 {"memory", large ? "63Gi" : "31Gi"},
                 {"ephemeral-storage", "95Gi"}});
  return std::make_shared<Node>(b.mutable_node());
}

std::vector<Object> DemoCluster(const std::function<void(int, Node&)>& change = {}) {
  std::vector<Object> objects;
  for (int i = 0; i < 8; ++i) {
    auto n = DemoNode(i);
    if (change) change(i, *n);
    objects.push_back(Object(std::shared_ptr<const Node>(n)));
  }
  return objects;
}

void Add(std::vector<Object>& objects, std::shared_ptr<const Pod> p) {
  objects.push_back(Object(std::move(p)));
}

std::vector<std::string> Descriptions(const Explanation& e) {
  std::vector<std::string> out;
  for (const auto& s : e.suggestions) out.push_back(s.description);
  return out;
}

TEST(ExplainDemoTest, ThirtyTwoCpuPodIsLargerThanEveryNode) {
  std::vector<Object> objects = DemoCluster();
  Add(objects, MakePod().Name("small").Node("demo-node-004").Req({{"cpu", "450m"}}).Obj());
  Add(objects, MakePod().Name("other").Node("demo-node-001").Req({{"cpu", "500m"}}).Obj());
  Add(objects, MakePod().Name("big").Req({{"cpu", "32"}}).Obj());
  auto e = ExplainPod(objects, "default/big");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->result, "Unschedulable");
  EXPECT_THAT(e->notes, Contains("no node is large enough: the pod requests 32 cpu, and the most "
                                 "any node has allocatable is 15800m (node demo-node-004)"));
  // No node to free: the pod alone exceeds each of them.
  for (const auto& s : e->suggestions) {
    EXPECT_NE(s.kind, "resources") << s.description;
    EXPECT_THAT(s.description, Not(HasSubstr("free ")));
  }
  ASSERT_EQ(e->suggestions.size(), 1u);
  EXPECT_EQ(e->suggestions[0].kind, "larger-node");
  EXPECT_EQ(e->suggestions[0].node, "demo-node-004");
  EXPECT_THAT(e->suggestions[0].description, HasSubstr("at least 32 cpu"));
  EXPECT_THAT(ToText(*e), HasSubstr("no node is large enough"));
  EXPECT_EQ(ToJson(*e)["notes"][0], e->notes[0]);
}

TEST(ExplainDemoTest, ResourcesToFreeNeverExceedWhatThePodsThereRequest) {
  std::vector<Object> objects = DemoCluster();
  Add(objects, MakePod().Name("a").Node("demo-node-004").Req({{"cpu", "450m"}}).Obj());
  Add(objects, MakePod().Name("b").Node("demo-node-004").Req({{"cpu", "1"}}).Obj());
  Add(objects, MakePod().Name("c").Node("demo-node-008").Req({{"cpu", "1200m"}}).Obj());
  Add(objects, MakePod().Name("web").Req({{"cpu", "15"}}).Obj());
  auto e = ExplainPod(objects, "default/web");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->result, "Unschedulable");
  EXPECT_TRUE(e->notes.empty());
  ASSERT_GE(e->suggestions.size(), 2u);
  // 400m of the 1200m on demo-node-008 (evicting c); 650m of the 1450m on demo-node-004, for
  // which evicting b is enough. The small nodes are never named: 15 cpu exceeds them.
  EXPECT_THAT(e->suggestions[0].description,
              HasSubstr("free 400m cpu on node demo-node-008 (evict or shrink pods there; they "
                        "request 1200m cpu)"));
  EXPECT_THAT(e->suggestions[1].description,
              HasSubstr("free 650m cpu on node demo-node-004 (evict or shrink pods there; they "
                        "request 1450m cpu)"));
  for (const auto& s : e->suggestions) {
    EXPECT_EQ(s.kind, "resources");
    EXPECT_TRUE(s.node == "demo-node-004" || s.node == "demo-node-008") << s.node;
  }
}

TEST(ExplainDemoTest, ResourcesNameThePodsAndEvictingThemPlacesThePod) {
  std::vector<Object> objects = DemoCluster();
  Add(objects, MakePod().Name("low").Node("demo-node-008").Priority(0).Req({{"cpu", "2"}}).Obj());
  Add(objects,
      MakePod().Name("keep").Node("demo-node-004").Priority(100).Req({{"cpu", "3"}}).Obj());
  Add(objects, MakePod().Name("web").Priority(10).Req({{"cpu", "15"}}).Obj());
  auto e = ExplainPod(objects, "default/web");
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_FALSE(e->suggestions.empty());
  EXPECT_EQ(e->suggestions[0].node, "demo-node-008");
  EXPECT_THAT(e->suggestions[0].victims, ::testing::ElementsAre("default/low"));
  // Applying it: without "low" the pod is placed.
  std::erase_if(objects, [](const Object& o) {
    auto* p = std::get_if<std::shared_ptr<const Pod>>(&o);
    return p && (*p)->metadata.name == "low";
  });
  auto sim = sim::Simulate(TestConfig(), TestRegistry(), objects, {});
  ASSERT_TRUE(sim.ok());
  EXPECT_EQ(sim->results[0].result, "Scheduled");
}

TEST(ExplainDemoTest, PodsThatWouldComeBackAreNotCountedAsRoomToFree) {
  // demo-node-004's CPU is mostly a DaemonSet's pod's: evicting it frees nothing for long.
  // Only demo-node-008, whose pod is an ordinary one, is asked to free room.
  std::vector<Object> objects = DemoCluster();
  auto daemon = std::make_shared<Pod>(
      *MakePod().Name("agent").Node("demo-node-004").Req({{"cpu", "2"}}).Obj());
  daemon->metadata.owner_references.push_back({"apps/v1", "DaemonSet", "agent", "u1", true});
  Add(objects, daemon);
  Add(objects, MakePod().Name("c").Node("demo-node-008").Req({{"cpu", "3"}}).Obj());
  Add(objects, MakePod().Name("web").Req({{"cpu", "15"}}).Obj());
  auto e = ExplainPod(objects, "default/web");
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_EQ(e->suggestions.size(), 1u) << ::testing::PrintToString(Descriptions(*e));
  EXPECT_EQ(e->suggestions[0].node, "demo-node-008");
  EXPECT_THAT(e->suggestions[0].description, HasSubstr("free 2200m cpu on node demo-node-008"));
}

// A pod that may only run on demo-node-002, which is tainted.
std::shared_ptr<const Pod> PinnedToNode2(bool by_affinity) {
  auto p = std::make_shared<Pod>(*MakePod().Name("pinned").Req({{"cpu", "1"}}).Obj());
  if (by_affinity) {
    NodeSelectorTerm term;
    term.match_expressions.push_back({"kubernetes.io/hostname", "In", {"demo-node-002"}});
    p->spec.affinity = Affinity{};
    p->spec.affinity->node_affinity = NodeAffinity{};
    p->spec.affinity->node_affinity->required = NodeSelector{};
    p->spec.affinity->node_affinity->required->terms.push_back(term);
  } else {
    p->spec.node_selector["kubernetes.io/hostname"] = "demo-node-002";
  }
  return p;
}

TEST(ExplainDemoTest, HostnameAffinityToATaintedNodeGetsTheTolerationNotARelabel) {
  for (bool by_affinity : {true, false}) {
    SCOPED_TRACE(by_affinity ? "required node affinity" : "nodeSelector");
    std::vector<Object> objects = DemoCluster([](int i, Node& n) {
      if (i == 1) n.spec.taints.push_back({"dedicated", "infra", "NoSchedule"});
    });
    Add(objects, PinnedToNode2(by_affinity));
    auto e = ExplainPod(objects, "default/pinned");
    ASSERT_TRUE(e.ok()) << e.error().message;
    EXPECT_EQ(e->result, "Unschedulable");
    ASSERT_EQ(e->suggestions.size(), 1u) << ::testing::PrintToString(Descriptions(*e));
    EXPECT_EQ(e->suggestions[0].kind, "toleration");
    EXPECT_EQ(e->suggestions[0].description,
              "add a toleration for the taint dedicated=infra:NoSchedule");
    EXPECT_EQ(e->suggestions[0].opens_nodes, 1);
    EXPECT_THAT(ToText(*e), Not(HasSubstr("label node")));
  }
}

TEST(ExplainDemoTest, ANodesTaintsAreToleratedTogetherAsTheApiMatchesThem) {
  // The pod's empty-key Equal toleration tolerates every taint of value "gpu" (as
  // TolerationToleratesTaint, and TaintToleration, have it); the other two taints of the node
  // need tolerations together, one alone opens nothing.
  std::vector<Object> objects = DemoCluster([](int i, Node& n) {
    n.spec.taints.push_back({"dedicated", "gpu", "NoSchedule"});
    if (i == 1) {
      n.spec.taints.push_back({"team", "ml", "NoSchedule"});
      n.spec.taints.push_back({"maintenance", "", "NoExecute"});
    } else {
      n.spec.unschedulable = true;
    }
  });
  Add(objects, MakePod().Name("job").Toleration({"", "Equal", "gpu", "", {}}).Obj());
  auto e = ExplainPod(objects, "default/job");
  ASSERT_TRUE(e.ok()) << e.error().message;
  const Suggestion* tol = nullptr;
  for (const auto& s : e->suggestions)
    if (s.kind == "toleration") tol = &s;
  ASSERT_NE(tol, nullptr) << ::testing::PrintToString(Descriptions(*e));
  EXPECT_EQ(tol->description,
            "add a toleration for the taints team=ml:NoSchedule, maintenance:NoExecute");
  EXPECT_THAT(tol->yaml, AllOf(HasSubstr("key: team"), HasSubstr("key: maintenance"),
                               Not(HasSubstr("dedicated"))));
}

TEST(ExplainDemoTest, UnboundClaimIsNamedWithTheMissingStorageClass) {
  std::vector<Object> objects = DemoCluster();
  auto sc = std::make_shared<StorageClass>();
  sc->metadata.name = "standard";
  sc->provisioner = "example.com/disk";
  sc->volume_binding_mode = "WaitForFirstConsumer";
  objects.push_back(Object(std::shared_ptr<const StorageClass>(sc)));
  auto pvc = std::make_shared<PersistentVolumeClaim>();
  pvc->metadata.namespace_ = "default";
  pvc->metadata.name = "data";
  pvc->spec.storage_class_name = "fast";
  pvc->spec.access_modes = {"ReadWriteOnce"};
  pvc->spec.requests["storage"] = Quantity::Parse("1Gi").value();
  pvc->status.phase = "Pending";
  objects.push_back(Object(std::shared_ptr<const PersistentVolumeClaim>(pvc)));
  Add(objects, MakePod().Name("db").PVC("data").Obj());
  auto e = ExplainPod(objects, "default/db");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->result, "Unschedulable");
  ASSERT_EQ(e->notes.size(), 1u);
  EXPECT_EQ(e->notes[0],
            "claim default/data is unbound: it asks for StorageClass \"fast\", and no "
            "StorageClass of that name exists (there are standard); nor is there a "
            "PersistentVolume of that class to bind it to");
  EXPECT_THAT(ToText(*e), HasSubstr("claim default/data is unbound"));
}

TEST(ExplainDemoTest, VerificationDropsAChangeThatWouldNotPlaceThePod) {
  // "web" must run beside an app=db pod (same node), and the only one fills demo-node-004's
  // CPU. Freeing the CPU there means evicting that pod, which leaves the affinity unmet: the
  // candidate is checked and dropped, where a node with more room would have looked fine.
  std::vector<Object> objects = DemoCluster();
  Add(objects,
      MakePod().Name("db").Label("app", "db").Node("demo-node-004").Req({{"cpu", "15"}}).Obj());
  auto web = std::make_shared<Pod>(*MakePod().Name("web").Req({{"cpu", "1"}}).Obj());
  PodAffinityTerm term;
  term.topology_key = "kubernetes.io/hostname";
  term.label_selector = LabelSelector{};
  term.label_selector->match_labels["app"] = "db";
  web->spec.affinity = Affinity{};
  web->spec.affinity->pod_affinity = PodAffinity{};
  web->spec.affinity->pod_affinity->required.push_back(term);
  Add(objects, web);
  auto e = ExplainPod(objects, "default/web");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->result, "Unschedulable");
  for (const auto& s : e->suggestions) EXPECT_NE(s.kind, "resources") << s.description;

  // The Verifier itself: a change after which the pod still fits nowhere is not kept.
  Cluster c;
  for (const Object& o : objects)
    if (auto* n = std::get_if<NodePtr>(&o)) c.nodes.push_back(*n);
  c.others.push_back(objects[8]);  // db
  c.pod = web;
  ExplainOptions options;
  Verifier verifier(TestConfig(), TestRegistry(), options);
  Suggestion evict;
  evict.kind = "resources";
  EXPECT_FALSE(verifier.Check(evict, c.WithoutPods({"default/db"})));
  EXPECT_TRUE(verifier.Check(
      evict,
      c.WithAdded(Object(MakePod().Name("db-2").Label("app", "db").Node("demo-node-001").Obj()))));
  auto kept = verifier.Take();
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].opens_nodes, 1);
  EXPECT_EQ(verifier.checks(), 2);
}

}  // namespace
}  // namespace berth::explain
