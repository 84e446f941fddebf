// berth simulate and berth bench take DeviceTaintRules: a rule's taint goes on the devices it
// selects, so a claim that does not tolerate it is not allocated one of them.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "api/codec.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "sim/bench.h"
#include "sim/simulator.h"

namespace berth::sim {
namespace {

// Two nodes with one device each; the class takes them; a claim asks for one device.
constexpr const char* kCluster = R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "10"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec: {driver: gpu.example.com, nodeName: n1, pool: {name: n1, resourceSliceCount: 1},
       devices: [{name: gpu-0}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n2-gpu}
spec: {driver: gpu.example.com, nodeName: n2, pool: {name: n2, resourceSliceCount: 1},
       devices: [{name: gpu-0}]}
---
apiVersion: v1
kind: Pod
metadata: {name: app, namespace: default}
spec:
  containers: [{name: c, image: busybox, resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimName: gpu}]
)";

std::string Claim(const std::string& tolerations) {
  return R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu, namespace: default}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu)" +
         tolerations + "}}]}}\n";
}

std::string Rule(const std::string& selector) {
  return "apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata: {name: r}\n"
         "spec: {deviceSelector: " +
         selector + ", taint: {key: example.com/broken, effect: NoSchedule}}\n";
}

Result<SimulationResult> SimulateCluster(const std::string& manifests) {
  auto objects = DecodeObjects(manifests, "test");
  if (!objects.ok()) return objects.error();
  Registry registry = InTreeRegistry();
  auto config = config::DefaultConfiguration(registry);
  SimulationOptions options;
  options.max_attempts = 1;
  return Simulate(config, registry, *objects, options);
}

TEST(SimulateDeviceTaintRule, TheClaimGoesToTheDeviceTheRuleDoesNotTaint) {
  for (const char* pool : {"n1", "n2"}) {
    auto sim = SimulateCluster(std::string(kCluster) + "---\n" + Claim("") + "---\n" +
                               Rule(std::string("{pool: ") + pool + "}"));
    ASSERT_TRUE(sim.ok()) << sim.error().message;
    ASSERT_EQ(sim->results.size(), 1u);
    EXPECT_EQ(sim->results[0].result, "Scheduled") << sim->results[0].message;
    EXPECT_EQ(sim->results[0].node, std::string(pool) == "n1" ? "n2" : "n1");
  }
}

TEST(SimulateDeviceTaintRule, AllDevicesTaintedOnlyATolerantClaimIsScheduled) {
  auto refused =
      SimulateCluster(std::string(kCluster) + "---\n" + Claim("") + "---\n" + Rule("{}"));
  ASSERT_TRUE(refused.ok()) << refused.error().message;
  EXPECT_NE(refused->results.at(0).result, "Scheduled");
  auto tolerated = SimulateCluster(
      std::string(kCluster) + "---\n" +
      Claim(", tolerations: [{key: example.com/broken, operator: Exists}]") + "---\n" + Rule("{}"));
  ASSERT_TRUE(tolerated.ok()) << tolerated.error().message;
  EXPECT_EQ(tolerated->results.at(0).result, "Scheduled") << tolerated->results.at(0).message;
}

// Without a selector a rule selects nothing (an empty one selects everything, above).
TEST(SimulateDeviceTaintRule, ARuleWithoutSelectorTaintsNothing) {
  auto sim =
      SimulateCluster(std::string(kCluster) + "---\n" + Claim("") + "---\n" +
                      "apiVersion: resource.k8s.io/v1\nkind: DeviceTaintRule\nmetadata: {name: r}\n"
                      "spec: {taint: {key: example.com/broken, effect: NoSchedule}}\n");
  ASSERT_TRUE(sim.ok()) << sim.error().message;
  EXPECT_EQ(sim->results.at(0).result, "Scheduled") << sim->results.at(0).message;
}

TEST(SimulateDeviceTaintRule, AMalformedRuleIsAnErrorNamingTheField) {
  auto sim =
      SimulateCluster(std::string(kCluster) + "---\n" + Claim("") + "---\n" + Rule("{pool: [a]}"));
  ASSERT_FALSE(sim.ok());
  EXPECT_NE(sim.error().message.find("spec.deviceSelector.pool"), std::string::npos)
      << sim.error().message;
}

// berth bench: the workload objects may hold DeviceTaintRules.
TEST(BenchDeviceTaintRule, ARuleOnEveryDeviceKeepsUntoleratingPodsPending) {
  const std::string path =
      ::testing::TempDir() + "/bench_taint_rule_" + std::to_string(getpid()) + ".yaml";
  auto workload = [](const std::string& name, const std::string& tolerations) {
    return "- name: " + name + R"(
  nodes: 2
  nodeTemplate: {apiVersion: v1, kind: Node, metadata: {name: t},
                 status: {allocatable: {pods: "110", cpu: "4", memory: 8Gi}}}
  nodeResourceSlice:
    apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {name: d}
    spec: {driver: d.example.com, pool: {name: t, resourceSliceCount: 1}, nodeName: t,
           devices: [{name: dev-0}]}
  objects:
  - {apiVersion: resource.k8s.io/v1, kind: DeviceTaintRule, metadata: {name: all},
     spec: {deviceSelector: {}, taint: {key: k, effect: NoSchedule}}}
  - {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: c}}
  - apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata: {name: t, namespace: test}
    spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: c)" +
           tolerations + R"(}}]}}}
  measurePods:
  - count: 2
    namePrefix: m
    template:
      apiVersion: v1
      kind: Pod
      metadata: {name: p, namespace: test}
      spec:
        containers: [{name: c, resources: {claims: [{name: r}]}}]
        resourceClaims: [{name: r, resourceClaimTemplateName: t}]
)";
  };
  std::ofstream(path) << "workloads:\n"
                      << workload("untolerating", "")
                      << workload("tolerating", ", tolerations: [{key: k, operator: Exists}]");
  auto ws = LoadWorkloads(path);
  std::remove(path.c_str());
  ASSERT_TRUE(ws.ok()) << ws.error().message;
  Registry registry = InTreeRegistry();
  auto config = config::DefaultConfiguration(registry);
  auto untolerating = RunWorkload((*ws)[0], config, registry);
  ASSERT_TRUE(untolerating.ok()) << untolerating.error().message;
  EXPECT_EQ(untolerating->scheduled, 0);
  auto tolerating = RunWorkload((*ws)[1], config, registry);
  ASSERT_TRUE(tolerating.ok()) << tolerating.error().message;
  EXPECT_EQ(tolerating->scheduled, 2);
}

}  // namespace
}  // namespace berth::sim
