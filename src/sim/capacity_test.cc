// berth capacity: agrees with placing the same pods one by one through the simulator, names
// what runs out, counts per node and zone, and leaves pending pods and preemption out.
#include "sim/capacity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/codec.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "sim/simulator.h"
#include "testing/builders.h"

namespace berth::sim {
namespace {

using testing::MakeNode;
using testing::MakePod;

std::vector<Object> Cluster() {
  std::vector<Object> out;
  for (auto [name, zone, cpu] : {std::tuple{"a1", "zone-a", "4"}, std::tuple{"a2", "zone-a", "2"},
                                 std::tuple{"b1", "zone-b", "3"}}) {
    out.push_back(Object(MakeNode()
                             .Name(name)
                             .Label("topology.kubernetes.io/zone", zone)
                             .Capacity({{"cpu", cpu}, {"memory", "16Gi"}})
                             .Obj()));
  }
  // Bound: takes 1 CPU of a1. Pending: must not compete. Low priority: must not be preempted.
  out.push_back(Object(MakePod().Name("running").Node("a1").Priority(0).Req({{"cpu", "1"}}).Obj()));
  out.push_back(Object(MakePod().Name("pending").Req({{"cpu", "3"}}).Obj()));
  return out;
}

// Appends `count` copies of the template (copy-0, copy-1, ...) that never preempt, as capacity
// places them.
void AppendCopies(const Pod& tmpl, int count, std::vector<Object>* objects) {
  for (int i = 0; i < count; ++i) {
    auto copy = std::make_shared<Pod>(tmpl);
    copy->metadata.name = "copy-" + std::to_string(i);
    copy->metadata.uid = copy->metadata.name;
    copy->spec.preemption_policy = "Never";
    objects->push_back(Object(std::shared_ptr<const Pod>(std::move(copy))));
  }
}

TEST(CapacityTest, AgreesWithPlacingOneByOne) {
  Registry registry = InTreeRegistry();
  auto config = config::DefaultConfiguration(registry);
  auto tmpl = MakePod().Name("web").Priority(1000).Req({{"cpu", "1"}}).Obj();
  auto r = EstimateCapacity(config, registry, Cluster(), *tmpl, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->placed, 8);  // 3 + 2 + 3, the running pod kept
  EXPECT_EQ(r->per_node.at("a1"), 3);
  EXPECT_EQ(r->per_node.at("a2"), 2);
  EXPECT_EQ(r->per_zone.at("zone-a"), 5);
  EXPECT_EQ(r->per_zone.at("zone-b"), 3);
  EXPECT_EQ(r->limiting_reason, "Insufficient cpu");
  EXPECT_FALSE(r->reached_max);

  // The same copies, bound pods only, through the simulator one by one.
  std::vector<Object> objects;
  for (const Object& o : Cluster()) {
    auto* p = std::get_if<std::shared_ptr<const Pod>>(&o);
    if (!p || !(*p)->spec.node_name.empty()) objects.push_back(o);
  }
  AppendCopies(*tmpl, 12, &objects);
  SimulationOptions so;
  so.max_attempts = 1;
  auto sim = Simulate(config, registry, objects, so);
  ASSERT_TRUE(sim.ok());
  int scheduled = 0;
  for (const auto& pr : sim->results) scheduled += pr.result == "Scheduled";
  EXPECT_EQ(scheduled, r->placed);

  CapacityOptions capped;
  capped.max = 3;
  auto c = EstimateCapacity(config, registry, Cluster(), *tmpl, capped);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->placed, 3);
  EXPECT_TRUE(c->reached_max);
  EXPECT_TRUE(c->limit_message.empty());
  capped.max = 0;
  EXPECT_FALSE(EstimateCapacity(config, registry, Cluster(), *tmpl, capped).ok());
}

// A cluster where the nodes differ in every way the default plugins look at: capacity, zone,
// taints (hard and preferred), images, labels, cordoned nodes, pods already bound (some with
// anti-affinity and preferred affinity towards the template's labels). More than 100 nodes, so
// each placement sees only a rotating part of them, as the scheduler does.
PodAffinityTerm Term(std::string app, std::string topology_key) {
  PodAffinityTerm t;
  t.label_selector.emplace().match_labels["app"] = std::move(app);
  t.topology_key = std::move(topology_key);
  return t;
}

std::vector<Object> VariedCluster() {
  std::vector<Object> out;
  for (int i = 0; i < 180; ++i) {
    const std::string name = "n" + std::to_string(i);
    const char* cpus[] = {"1", "2", "3", "1500m"};
    auto node = MakeNode()
                    .Name(name)
                    .Label("kubernetes.io/hostname", name)
                    .Label("topology.kubernetes.io/zone", "zone-" + std::to_string(i % 4))
                    .Label("disk", i % 3 == 0 ? "ssd" : "hdd")
                    .Capacity({{"cpu", cpus[i % 4]}, {"memory", i % 7 == 0 ? "2Gi" : "8Gi"}});
    if (i % 11 == 0) node.Taint("dedicated", "db", "NoSchedule");
    if (i % 5 == 0) node.Taint("spot", "true", "PreferNoSchedule");
    if (i % 6 == 0) node.Image({"registry.example/web:1"}, 400 << 20);
    if (i % 29 == 0) node.Unschedulable();
    out.push_back(Object(node.Obj()));
  }
  for (int i = 0; i < 120; ++i) {
    auto pod = MakePod()
                   .Name("bound-" + std::to_string(i))
                   .Node("n" + std::to_string((i * 7) % 180))
                   .Label("app", i % 2 ? "db" : "cache")
                   .Req({{"cpu", i % 3 ? "250m" : "500m"}, {"memory", "512Mi"}});
    if (i % 40 == 0) {
      // Keeps pods labelled app=web out of its zone.
      Affinity a;
      a.pod_anti_affinity.emplace().required.push_back(Term("web", "topology.kubernetes.io/zone"));
      pod.Affinity(a);
    } else if (i % 9 == 0) {
      Affinity a;
      a.pod_affinity.emplace().preferred.push_back({50, Term("web", "kubernetes.io/hostname")});
      pod.Affinity(a);
    }
    out.push_back(Object(pod.Obj()));
  }
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<const Pod>>> Templates() {
  std::vector<std::pair<std::string, std::shared_ptr<const Pod>>> out;
  Affinity prefer_ssd;
  prefer_ssd.node_affinity.emplace().preferred.push_back(
      {30, NodeSelectorTerm{{{"disk", "In", {"ssd"}}}, {}}});
  out.emplace_back("plain", MakePod()
                                .Name("web")
                                .Label("app", "web")
                                .Image("registry.example/web:1")
                                .Req({{"cpu", "200m"}, {"memory", "256Mi"}})
                                .Affinity(prefer_ssd)
                                .Obj());
  out.emplace_back(
      "host port",
      MakePod().Name("agent").Label("app", "agent").HostPort(9100).Req({{"cpu", "100m"}}).Obj());
  // Copies that repel each other: their placements change other nodes' verdicts, so nothing
  // is reused for them (and the answer must still agree).
  Affinity one_per_host;
  one_per_host.pod_anti_affinity.emplace().required.push_back(
      Term("solo", "kubernetes.io/hostname"));
  out.emplace_back("anti-affinity", MakePod()
                                        .Name("solo")
                                        .Label("app", "solo")
                                        .Req({{"cpu", "100m"}})
                                        .Affinity(one_per_host)
                                        .Obj());
  return out;
}

// berth capacity gives the answer of placing the copies one by one through the simulator, node
// for node, whether it reuses per-node results or not.
TEST(CapacityTest, AgreesNodeForNodeOnAVariedCluster) {
  Registry registry = InTreeRegistry();
  auto config = config::DefaultConfiguration(registry);
  const std::vector<Object> cluster = VariedCluster();
  for (const auto& [what, tmpl] : Templates()) {
    SCOPED_TRACE(what);
    auto fast = EstimateCapacity(config, registry, cluster, *tmpl, {});
    ASSERT_TRUE(fast.ok()) << fast.error().message;
    CapacityOptions full_options;
    full_options.reuse_node_results = false;
    auto full = EstimateCapacity(config, registry, cluster, *tmpl, full_options);
    ASSERT_TRUE(full.ok());
    EXPECT_GT(fast->placed, 50);
    EXPECT_FALSE(fast->reached_max);
    EXPECT_EQ(fast->placed, full->placed);
    EXPECT_EQ(fast->per_node, full->per_node);
    EXPECT_EQ(fast->limit_message, full->limit_message);

    std::vector<Object> objects = cluster;
    AppendCopies(*tmpl, fast->placed + 5, &objects);
    SimulationOptions so;
    so.max_attempts = 1;
    so.record_details = false;
    auto sim = Simulate(config, registry, objects, so);
    ASSERT_TRUE(sim.ok());
    std::map<std::string, int> per_node;
    for (const auto& pr : sim->results)
      if (pr.result == "Scheduled") ++per_node[pr.node];
    EXPECT_EQ(per_node, fast->per_node);
  }
}

}  // namespace
}  // namespace berth::sim

namespace berth::sim {
namespace {

// A pod whose claim comes from a template: each copy gets a claim of its own (the claim lives in
// the pod's document, which the copies keep), so two GPUs take two copies although the CPU
// would take many more.
TEST(CapacityTest, CopiesKeepTheirResourceClaims) {
  constexpr const char* kCluster = R"(
apiVersion: v1
kind: Node
metadata: {name: gpu-a, labels: {kubernetes.io/hostname: gpu-a}}
status:
  capacity: {cpu: "8", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-a-gpu.example.com}
spec:
  driver: gpu.example.com
  pool: {name: gpu-a, generation: 1, resourceSliceCount: 1}
  nodeName: gpu-a
  devices: [{name: gpu-0}, {name: gpu-1}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.example.com}
)";
  constexpr const char* kTemplatePod = R"(
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: default}
spec:
  containers:
  - name: c
    image: registry.k8s.io/pause:3.10
    resources:
      requests: {cpu: 100m}
      claims: [{name: gpu}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
)";
  auto cluster = DecodeObjects(kCluster, "cluster.yaml");
  ASSERT_TRUE(cluster.ok()) << cluster.error().message;
  auto pod = DecodeObjects(kTemplatePod, "pod.yaml");
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  const auto& tmpl = std::get<std::shared_ptr<const Pod>>(pod->at(0));
  Registry registry = InTreeRegistry();
  auto config = config::DefaultConfiguration(registry);
  auto r = EstimateCapacity(config, registry, *cluster, *tmpl, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->placed, 2);
  EXPECT_EQ(r->limiting_reason, "cannot allocate all claims");
}

}  // namespace
}  // namespace berth::sim
