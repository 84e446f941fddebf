#include "sim/bench.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "config/load.h"
#include "plugins/registry.h"

namespace berth::sim {
namespace {

constexpr std::string_view kTemplates = R"(
templates:
  node: &node
    apiVersion: v1
    kind: Node
    metadata: {name: template}
    status:
      allocatable: {pods: "110", cpu: "4", memory: 32Gi}
      conditions: [{type: Ready, status: "True"}]
  pod: &pod
    apiVersion: v1
    kind: Pod
    metadata: {name: pod, namespace: default}
    spec:
      containers:
      - name: pause
        resources: {requests: {cpu: 100m, memory: 500Mi}}
  anti: &anti
    apiVersion: v1
    kind: Pod
    metadata: {name: anti, labels: {color: green}}
    spec:
      containers:
      - name: pause
        resources: {requests: {cpu: 100m}}
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {color: green}}
            topologyKey: kubernetes.io/hostname
            namespaceSelector: {matchLabels: {team: devops}}
  large: &large
    apiVersion: v1
    kind: Pod
    metadata: {name: large}
    spec:
      priority: 10
      containers:
      - name: pause
        resources: {requests: {cpu: "9"}}
)";

class BenchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = InTreeRegistry();
    config_ = config::DefaultConfiguration(registry_);
  }
  void TearDown() override {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  Result<std::vector<Workload>> Load(std::string_view workloads) {
    path_ = ::testing::TempDir() + "/bench_test_" + std::to_string(getpid()) + ".yaml";
    std::ofstream(path_) << kTemplates << "workloads:\n" << workloads;
    return LoadWorkloads(path_);
  }
  BenchResult Run(const Workload& w) {
    auto r = RunWorkload(w, config_, registry_);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : BenchResult{};
  }

  Registry registry_;
  config::SchedulerConfiguration config_;
  std::string path_;
};

TEST_F(BenchTest, NamespaceSetsAndLabelsReachTheNamespaceSelector) {
  // 2 labelled namespaces x 2 anti-affinity pods take 4 of 5 nodes; of 3 measured pods in a
  // labelled namespace only one fits. Were the namespaces unlabelled, all three would fit.
  auto ws = Load(R"(
- name: ns
  nodes: 5
  nodeTemplate: *node
  namespaces:
  - {prefix: init-ns, count: 2, labels: {team: devops}}
  - {prefix: measure-ns, count: 1, labels: {team: devops}}
  initPods: [{count: 2, namePrefix: init, template: *anti, namespaceSets: {prefix: init-ns, count: 2}}]
  measurePods: [{count: 3, namePrefix: m, namespace: measure-ns-0, template: *anti}]
- name: unlabelled
  nodes: 5
  nodeTemplate: *node
  namespaces: [{prefix: init-ns, count: 2}, {prefix: measure-ns, count: 1}]
  initPods: [{count: 2, namePrefix: init, template: *anti, namespaceSets: {prefix: init-ns, count: 2}}]
  measurePods: [{count: 3, namePrefix: m, namespace: measure-ns-0, template: *anti}]
)");
  ASSERT_TRUE(ws.ok()) << ws.error().message;
  ASSERT_EQ(ws->size(), 2u);
  BenchResult labelled = Run((*ws)[0]);
  EXPECT_EQ(labelled.init_pods, 4);
  EXPECT_EQ(labelled.measured_pods, 3);
  EXPECT_EQ(labelled.scheduled, 1);
  EXPECT_EQ(Run((*ws)[1]).scheduled, 3);
}

TEST_F(BenchTest, DraWorkloadStampsASlicePerNodeAndClaimsPerPod) {
  // 3 nodes x 2 devices: 2 init pods and 4 of 5 measured pods get a device each; the fifth has
  // none left. Without the per-node slices no pod could be placed.
  auto ws = Load(R"(
- name: dra
  nodes: 3
  nodeTemplate: *node
  nodeResourceSlice:
    apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {name: test-driver}
    spec:
      driver: test-driver.cdi.k8s.io
      pool: {name: template, resourceSliceCount: 1}
      nodeName: template
      devices: [{name: instance-0}, {name: instance-1}]
  objects:
  - apiVersion: resource.k8s.io/v1
    kind: DeviceClass
    metadata: {name: test-class}
    spec: {selectors: [{cel: {expression: 'device.driver == "test-driver.cdi.k8s.io"'}}]}
  - apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata: {name: test-claim-template, namespace: test}
    spec: {spec: {devices: {requests: [{name: req-0, exactly: {deviceClassName: test-class}}]}}}
  initPods: [{count: 2, namePrefix: init, template: &draPod {
    apiVersion: v1, kind: Pod, metadata: {name: test-dra, namespace: test},
    spec: {containers: [{name: pause, resources: {claims: [{name: resource}]}}],
           resourceClaims: [{name: resource, resourceClaimTemplateName: test-claim-template}]}}}]
  measurePods: [{count: 5, namePrefix: m, template: *draPod}]
- name: no-slices
  nodes: 3
  nodeTemplate: *node
  objects:
  - apiVersion: resource.k8s.io/v1
    kind: DeviceClass
    metadata: {name: test-class}
  - apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata: {name: test-claim-template, namespace: test}
    spec: {spec: {devices: {requests: [{name: req-0, exactly: {deviceClassName: test-class}}]}}}
  measurePods: [{count: 2, namePrefix: m, template: *draPod}]
)");
  ASSERT_TRUE(ws.ok()) << ws.error().message;
  ASSERT_EQ(ws->size(), 2u);
  ASSERT_TRUE((*ws)[0].node_resource_slice.has_value());
  EXPECT_EQ((*ws)[0].node_resource_slice->spec.devices.size(), 2u);
  BenchResult dra = Run((*ws)[0]);
  EXPECT_EQ(dra.init_pods, 2);
  EXPECT_EQ(dra.measured_pods, 5);
  EXPECT_EQ(dra.scheduled, 4);
  EXPECT_EQ(Run((*ws)[1]).scheduled, 0);
}

TEST_F(BenchTest, DraExtendedResourcePodsGetOneDeviceEach) {
  // 3 nodes x 2 devices and a DeviceClass naming example.com/gpu, which no node advertises:
  // 6 of 7 equivalent pods asking example.com/gpu: 1 get a device (each cycle allocates
  // afresh; none reuses an earlier pod's verdicts), the seventh has none left.
  auto ws = Load(R"(
- name: dra-extended
  nodes: 3
  nodeTemplate: *node
  nodeResourceSlice:
    apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {name: test-driver}
    spec:
      driver: test-driver.cdi.k8s.io
      pool: {name: template, resourceSliceCount: 1}
      nodeName: template
      devices: [{name: instance-0}, {name: instance-1}]
  objects:
  - apiVersion: resource.k8s.io/v1
    kind: DeviceClass
    metadata: {name: test-class}
    spec:
      extendedResourceName: example.com/gpu
      selectors: [{cel: {expression: 'device.driver == "test-driver.cdi.k8s.io"'}}]
  measurePods: [{count: 7, namePrefix: m, template: {
    apiVersion: v1, kind: Pod, metadata: {name: gpu, namespace: test},
    spec: {containers: [{name: c, resources: {requests: {example.com/gpu: "1"},
                                              limits: {example.com/gpu: "1"}}}]}}}]
)");
  ASSERT_TRUE(ws.ok()) << ws.error().message;
  BenchResult r = Run((*ws)[0]);
  EXPECT_EQ(r.measured_pods, 7);
  EXPECT_EQ(r.scheduled, 6);
}

TEST_F(BenchTest, NodeResourceSliceMustBeAResourceSlice) {
  auto ws = Load(R"(
- name: bad
  nodes: 1
  nodeTemplate: *node
  nodeResourceSlice: *node
)");
  ASSERT_FALSE(ws.ok());
  EXPECT_NE(ws.error().message.find("nodeResourceSlice"), std::string::npos);
}

TEST_F(BenchTest, BoundInitPodsAreRunningRoundRobinAndTakeRoom) {
  // 2 nodes of 4 CPUs; 14 bound pods of 500m take 3.5 CPUs on each (round-robin), so of 4
  // measured 500m pods exactly 2 fit. Were the bound pods not in the cache, or all on one
  // node, all 4 would fit.
  const std::string load = R"(
- name: load
  nodes: 2
  nodeTemplate: *node
  initPods:
  - count: 14
    namePrefix: running
    bound: true
    template: {apiVersion: v1, kind: Pod, metadata: {name: r, namespace: default}, spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}}
  measurePods:
  - count: 4
    namePrefix: m
    template: {apiVersion: v1, kind: Pod, metadata: {name: m, namespace: default}, spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}}
)";
  auto ws = Load(load + R"(- name: bad
  nodes: 1
  nodeTemplate: *node
  initPods: [{count: 1, template: *pod, bound: "yes"}]
)");
  ASSERT_FALSE(ws.ok());
  EXPECT_NE(ws.error().message.find("initPods[0].bound: must be a boolean"), std::string::npos)
      << ws.error().message;
  ws = Load(load);
  ASSERT_TRUE(ws.ok()) << ws.error().message;
  BenchResult r = Run((*ws)[0]);
  EXPECT_EQ(r.init_pods, 14);
  EXPECT_EQ(r.scheduled, 2);
  EXPECT_GT(r.load_seconds, 0);
}

TEST_F(BenchTest, ExtraNodesAreCreatedAsGiven) {
  auto ws = Load(R"(
- name: ds
  nodes: 3
  nodeTemplate: *node
  extraNodes:
  - apiVersion: v1
    kind: Node
    metadata: {name: the-node}
    status:
      allocatable: {pods: "500", cpu: "4", memory: 32Gi}
      conditions: [{type: Ready, status: "True"}]
  measurePods:
  - count: 200
    namePrefix: ds
    template:
      apiVersion: v1
      kind: Pod
      metadata: {name: ds}
      spec:
        containers: [{name: pause}]
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
              - matchFields: [{key: metadata.name, operator: In, values: [the-node]}]
)");
  ASSERT_TRUE(ws.ok()) << ws.error().message;
  BenchResult r = Run((*ws)[0]);
  EXPECT_EQ(r.nodes, 4);
  // 200 pods exceed what a template node holds (110): only the extra node can take them all.
  EXPECT_EQ(r.scheduled, 200);
}

TEST_F(BenchTest, ChurnCreatesObjectsWhileMeasuredPodsScheduleAndIsNotCounted) {
  auto ws = Load(R"(
- name: churn
  nodes: 80
  nodeTemplate: *node
  measurePods: [{count: 3000, namePrefix: m, template: *pod}]
  churn: {mode: recreate, intervalMilliseconds: 1, templates: [*node, *large]}
)");
  ASSERT_TRUE(ws.ok()) << ws.error().message;
  ASSERT_TRUE((*ws)[0].churn.has_value());
  EXPECT_EQ((*ws)[0].churn->mode, Churn::Mode::kRecreate);
  // 80 nodes hold 3,200 of these pods, so every measured pod is placed however many churn
  // nodes happen to exist when it is tried: the tick count follows the wall clock, the
  // placements must not.
  BenchResult r = Run((*ws)[0]);
  EXPECT_GE(r.churn_ticks, 1);
  EXPECT_EQ(r.measured_pods, 3000);
  EXPECT_EQ(r.scheduled, 3000);
}

TEST_F(BenchTest, BadWorkloadFieldsAreNamed) {
  struct Case {
    std::string yaml, want;
  };
  const Case cases[] = {
      {"- {name: a, nodes: 1, nodeTemplate: *node, churn: {mode: sometimes, "
       "intervalMilliseconds: 5, templates: [*pod]}}\n",
       "workloads[0].churn.mode: \"sometimes\" is not create or recreate"},
      {"- {name: a, nodes: 1, nodeTemplate: *node, churn: {templates: [*pod]}}\n",
       "workloads[0].churn.intervalMilliseconds: required positive integer"},
      {"- {name: a, nodes: 1, nodeTemplate: *node, churn: {intervalMilliseconds: 5, templates: "
       "[{apiVersion: v1, kind: Namespace, metadata: {name: x}}]}}\n",
       "workloads[0].churn.templates[0]: churn creates Pods, Nodes and Services only"},
      {"- {name: a, nodes: 1, nodeTemplate: *node, percentageOfNodesToScore: 101}\n",
       "workloads[0].percentageOfNodesToScore: must be an integer 0..100"},
      {"- {name: a, nodes: 1, nodeTemplate: *node, namespaces: [{prefix: x}]}\n",
       "workloads[0].namespaces[0].count: required non-negative integer"},
      {"- {name: a, nodes: 1, nodeTemplate: *node, initPods: [{count: 1, template: *pod, "
       "namespaceSets: {prefix: x}}]}\n",
       "workloads[0].initPods[0].namespaceSets: want {prefix: <string>, count: <non-negative "
       "integer>}"},
      {"- {name: a, nodes: 1, nodeTemplate: *node, measurePods: [{count: 1, template: *pod, "
       "vary: {cpuMillis: -1}}]}\n",
       "workloads[0].measurePods[0].vary.cpuMillis: must be a non-negative integer"},
      {"- {name: a, nodes: 1, nodeTemplate: *node, measurePods: [{count: 1, template: *pod, "
       "vary: {gpus: 2}}]}\n",
       "workloads[0].measurePods[0].vary.gpus: unknown field"},
  };
  for (const auto& c : cases) {
    auto ws = Load(c.yaml);
    ASSERT_FALSE(ws.ok()) << c.yaml;
    EXPECT_NE(ws.error().message.find(c.want), std::string::npos) << ws.error().message;
    EXPECT_NE(ws.error().message.find(path_), std::string::npos) << ws.error().message;
  }
}

// The workload's objects are loaded whatever their kind (the ReplicaSets and Services the
// default spreading selects by, as SchedulingReplicaSet's); pods and nodes come only from the
// templates.
TEST_F(BenchTest, ObjectsOfEveryKindAreLoadedButPodsAndNodesComeFromTemplates) {
  auto ws = Load(R"(
- name: replicas
  nodes: 6
  zones: 3
  nodeTemplate: *node
  objects:
  - {apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: rs, namespace: default, uid: rs-1},
     spec: {selector: {matchLabels: {app: a}}, template: {metadata: {labels: {app: a}}}}}
  - {apiVersion: v1, kind: Service, metadata: {name: svc, namespace: default},
     spec: {selector: {app: a}}}
  measurePods: [{count: 12, namePrefix: m, template: *pod}]
- name: pod-object
  nodes: 1
  nodeTemplate: *node
  objects: [*pod]
  measurePods: [{count: 1, namePrefix: m, template: *pod}]
)");
  ASSERT_TRUE(ws.ok()) << ws.error().message;
  EXPECT_EQ(Run((*ws)[0]).scheduled, 12);
  auto refused = RunWorkload((*ws)[1], config_, registry_);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            "pod-object: objects: pods and nodes come from initPods, measurePods and nodeTemplate");
}

TEST_F(BenchTest, VariedPodsDifferAsDocumented) {
  auto ws = Load(
      "- {name: v, nodes: 20, zones: 4, nodeTemplate: *node, measurePods: [{count: 8, "
      "template: *pod, vary: {cpuMillis: 3, memoryMi: 2, labels: 2, zones: 4, priorities: [0, "
      "7]}}]}\n");
  ASSERT_TRUE(ws.ok()) << ws.error().message;
  const PodGroup& g = ws->front().measure_pods.front();
  Pod pod = g.template_pod;
  VaryPod(g.vary, 5, &pod);
  const auto& req = pod.spec.containers.front().resources.requests;
  EXPECT_EQ(req.at("cpu").MilliValue(), 100 + 5 % 3);
  EXPECT_EQ(req.at("memory").Value(), (500 + 5 % 2) * (int64_t{1} << 20));
  EXPECT_EQ(pod.metadata.labels.at("berth.dev/variant"), "v1");
  EXPECT_EQ(pod.spec.priority, 7);
  ASSERT_TRUE(pod.spec.affinity && pod.spec.affinity->node_affinity &&
              pod.spec.affinity->node_affinity->required);
  const auto& expr =
      pod.spec.affinity->node_affinity->required->terms.at(0).match_expressions.at(0);
  EXPECT_EQ(expr.key, "topology.kubernetes.io/zone");
  EXPECT_EQ(expr.values, std::vector<std::string>{"zone-1"});
  // Both runs schedule every pod (each pod requires its own zone).
  auto r = RunWorkload(ws->front(), config_, registry_, nullptr, /*reuse_results=*/true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->scheduled, 8);
  auto fresh = RunWorkload(ws->front(), config_, registry_, nullptr, /*reuse_results=*/false);
  ASSERT_TRUE(fresh.ok()) << fresh.error().message;
  EXPECT_EQ(fresh->scheduled, 8);
}

TEST(BenchSummary, MedianAndSpreadOfRuns) {
  auto run = [](double pps, double p99, int64_t rss) {
    BenchResult r;
    r.name = "w";
    r.pods_per_second = pps;
    r.p99_ms = p99;
    r.peak_rss_mb = rss;
    r.scheduled = 10;
    return r;
  };
  RepeatedResult s = Summarize({run(100, 3, 50), run(300, 1, 70), run(200, 2, 60)});
  EXPECT_EQ(s.runs.size(), 3u);
  EXPECT_DOUBLE_EQ(s.median.pods_per_second, 200);
  EXPECT_DOUBLE_EQ(s.median.p99_ms, 2);
  EXPECT_EQ(s.median.peak_rss_mb, 70);
  EXPECT_DOUBLE_EQ(s.min_pods_per_second, 100);
  EXPECT_DOUBLE_EQ(s.max_pods_per_second, 300);
  RepeatedResult even = Summarize({run(100, 1, 1), run(200, 1, 1)});
  EXPECT_DOUBLE_EQ(even.median.pods_per_second, 150);
  auto j = ToJson(s);
  EXPECT_EQ(j["repeat"], 3);
  EXPECT_EQ(j["podsPerSecondRuns"].size(), 3u);
}

}  // namespace
}  // namespace berth::sim
