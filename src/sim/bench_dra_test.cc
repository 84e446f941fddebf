#include "sim/bench_dra.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "berth/api/resource_claims.h"
#include "config/load.h"
#include "plugins/registry.h"

namespace berth::sim {
namespace {

// Nodes publishing one or two devices each, a class that takes them, a template claim asking
// for one, and pods using either a claim from the template or a named claim.
constexpr std::string_view kTemplates = R"(
templates:
  node: &node
    apiVersion: v1
    kind: Node
    metadata: {name: template}
    status:
      allocatable: {pods: "110", cpu: "4", memory: 32Gi}
      conditions: [{type: Ready, status: "True"}]
  oneDevice: &oneDevice
    apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {name: test-driver}
    spec:
      driver: test-driver.cdi.k8s.io
      pool: {name: template, resourceSliceCount: 1}
      nodeName: template
      devices: [{name: instance-0}]
  twoDevices: &twoDevices
    apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {name: test-driver}
    spec:
      driver: test-driver.cdi.k8s.io
      pool: {name: template, resourceSliceCount: 1}
      nodeName: template
      devices: [{name: instance-0}, {name: instance-1}]
  objects: &objects
  - apiVersion: resource.k8s.io/v1
    kind: DeviceClass
    metadata: {name: test-class}
    spec: {selectors: [{cel: {expression: 'device.driver == "test-driver.cdi.k8s.io"'}}]}
  - apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata: {name: test-claim-template, namespace: test}
    spec: {spec: {devices: {requests: [{name: req-0, exactly: {deviceClassName: test-class}}]}}}
  claim: &claim
    apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: test-claim, namespace: test}
    spec: {devices: {requests: [{name: req-0, exactly: {deviceClassName: test-class}}]}}
  templatePod: &templatePod
    apiVersion: v1
    kind: Pod
    metadata: {name: test-dra, namespace: test}
    spec:
      containers: [{name: pause, resources: {claims: [{name: resource}]}}]
      resourceClaims: [{name: resource, resourceClaimTemplateName: test-claim-template}]
  claimPod: &claimPod
    apiVersion: v1
    kind: Pod
    metadata: {name: test-dra, namespace: test}
    spec:
      containers: [{name: pause, resources: {claims: [{name: resource}]}}]
      resourceClaims: [{name: resource, resourceClaimName: test-claim}]
)";

class BenchDraTest : public ::testing::Test {
 protected:
  void SetUp() override {
    registry_ = InTreeRegistry();
    config_ = config::DefaultConfiguration(registry_);
  }
  void TearDown() override {
    if (!path_.empty()) std::remove(path_.c_str());
  }
  Result<std::vector<Workload>> Load(std::string_view workloads) {
    path_ = ::testing::TempDir() + "/bench_dra_test_" + std::to_string(getpid()) + ".yaml";
    std::ofstream(path_) << kTemplates << "workloads:\n" << workloads;
    return LoadWorkloads(path_);
  }
  Result<BenchResult> Run(const Workload& w) { return RunWorkload(w, config_, registry_); }

  Registry registry_;
  config::SchedulerConfiguration config_;
  std::string path_;
};

TEST_F(BenchDraTest, SteadyStateDeletesScheduledPodsWithTheirClaims) {
  // Two devices in all: without deleting each scheduled pod's claim, no more than two pods
  // could ever be placed. Kept at one pending pod, the run places eight, one after the other.
  auto ws = Load(R"(
- name: steady
  nodes: 2
  nodeTemplate: *node
  nodeResourceSlice: *oneDevice
  objects: *objects
  measurePods: [{count: 1, namePrefix: m, template: *templatePod}]
  steadyState: {pods: 8}
)");
  ASSERT_TRUE(ws.ok()) << ws.error().message;
  ASSERT_TRUE((*ws)[0].steady_state.has_value());
  EXPECT_EQ((*ws)[0].steady_state->pods, 8);
  auto r = Run((*ws)[0]);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->scheduled, 8);
  EXPECT_EQ(r->measured_pods, 8);  // the run ends before a ninth is created
  EXPECT_GT(r->pods_per_second, 0);
}

TEST_F(BenchDraTest, SteadyStateKeepsTheCountPendingAndStopsWhenNothingFits) {
  // Init pods hold both devices: the three pending pods never fit, nothing is deleted, and the
  // run ends when the queue is idle rather than waiting out its duration.
  auto ws = Load(R"(
- name: full
  nodes: 2
  nodeTemplate: *node
  nodeResourceSlice: *oneDevice
  objects: *objects
  initPods: [{count: 2, namePrefix: init, template: *templatePod}]
  measurePods: [{count: 3, namePrefix: m, template: *templatePod}]
  steadyState: {durationSeconds: 600}
)");
  ASSERT_TRUE(ws.ok()) << ws.error().message;
  auto r = Run((*ws)[0]);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->init_pods, 2);
  EXPECT_EQ(r->measured_pods, 3);
  EXPECT_EQ(r->scheduled, 0);
  EXPECT_LT(r->seconds, 60);
}

TEST_F(BenchDraTest, AllocatedClaimsHoldDevicesThatPodsCannotTake) {
  // 3 nodes x 2 devices. Five allocated claims leave one device: one of three pods fits. The
  // same claims unallocated hold nothing, and seven allocated claims fit nowhere.
  auto ws = Load(R"(
- name: allocated
  nodes: 3
  nodeTemplate: *node
  nodeResourceSlice: *twoDevices
  objects: *objects
  claims: [{count: 5, template: *claim, allocate: true}]
  measurePods: [{count: 3, namePrefix: m, template: *templatePod}]
- name: unallocated
  nodes: 3
  nodeTemplate: *node
  nodeResourceSlice: *twoDevices
  objects: *objects
  claims: [{count: 5, template: *claim}]
  measurePods: [{count: 3, namePrefix: m, template: *templatePod}]
- name: too-many
  nodes: 3
  nodeTemplate: *node
  nodeResourceSlice: *twoDevices
  objects: *objects
  claims: [{count: 7, template: *claim, allocate: true}]
)");
  ASSERT_TRUE(ws.ok()) << ws.error().message;
  ASSERT_EQ(ws->size(), 3u);
  ASSERT_EQ((*ws)[0].claims.size(), 1u);
  EXPECT_TRUE((*ws)[0].claims[0].allocate);
  auto allocated = Run((*ws)[0]);
  ASSERT_TRUE(allocated.ok()) << allocated.error().message;
  EXPECT_EQ(allocated->scheduled, 1);
  auto unallocated = Run((*ws)[1]);
  ASSERT_TRUE(unallocated.ok()) << unallocated.error().message;
  EXPECT_EQ(unallocated->scheduled, 3);
  auto too_many = Run((*ws)[2]);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.error().message.find("test/test-claim-6 fits no node"), std::string::npos)
      << too_many.error().message;
}

TEST_F(BenchDraTest, SharedClaimsServeConsecutivePods) {
  // One device and two claims, each shared by three consecutive pods: the pods of the first
  // claim share its device; the second claim finds none, so its three pods wait.
  auto ws = Load(R"(
- name: shared
  nodes: 1
  nodeTemplate: *node
  nodeResourceSlice: *oneDevice
  objects: *objects
  claims: [{count: 2, template: *claim}]
  measurePods: [{count: 6, namePrefix: m, template: *claimPod, vary: {sharedClaims: 3}}]
)");
  ASSERT_TRUE(ws.ok()) << ws.error().message;
  auto r = Run((*ws)[0]);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->measured_pods, 6);
  EXPECT_EQ(r->scheduled, 3);
}

TEST_F(BenchDraTest, StampedSlicesAreOnePoolEachWithTheirIndex) {
  // Two slices of three devices that every node reaches; a pod asks for two devices with the
  // same dra.example.com/slice. With the index stamped, a pair must come from one slice: one
  // pod per slice fits. With the template's value on every device, pairs may span the slices.
  constexpr std::string_view kWorkload = R"(
- name: {}
  nodes: 2
  nodeTemplate: *node
  resourceSlices:
  - count: 2
    {}
    template:
      apiVersion: resource.k8s.io/v1
      kind: ResourceSlice
      metadata: {{name: net}}
      spec:
        driver: test-driver.cdi.k8s.io
        pool: {{name: net, resourceSliceCount: 1}}
        allNodes: true
        devices:
        - {{name: d0, attributes: {{dra.example.com/slice: {{int: 0}}}}}}
        - {{name: d1, attributes: {{dra.example.com/slice: {{int: 0}}}}}}
        - {{name: d2, attributes: {{dra.example.com/slice: {{int: 0}}}}}}
  objects:
  - apiVersion: resource.k8s.io/v1
    kind: DeviceClass
    metadata: {{name: test-class}}
  - apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata: {{name: test-claim-template, namespace: test}}
    spec:
      spec:
        devices:
          requests: [{{name: req-0, exactly: {{deviceClassName: test-class, count: 2}}}}]
          constraints: [{{requests: [req-0], matchAttribute: dra.example.com/slice}}]
  measurePods: [{{count: 3, namePrefix: m, template: *templatePod}}]
)";
  auto ws = Load(fmt::format(kWorkload, "indexed", "indexAttribute: dra.example.com/slice") +
                 fmt::format(kWorkload, "same", ""));
  ASSERT_TRUE(ws.ok()) << ws.error().message;
  ASSERT_EQ(ws->size(), 2u);
  ASSERT_EQ((*ws)[0].resource_slices.size(), 1u);
  EXPECT_EQ((*ws)[0].resource_slices[0].index_attribute, "dra.example.com/slice");
  auto indexed = Run((*ws)[0]);
  ASSERT_TRUE(indexed.ok()) << indexed.error().message;
  EXPECT_EQ(indexed->scheduled, 2);
  auto same = Run((*ws)[1]);
  ASSERT_TRUE(same.ok()) << same.error().message;
  EXPECT_EQ(same->scheduled, 3);
}

TEST_F(BenchDraTest, VariedPodsNameTheirSharedClaim) {
  PodGroup g;
  g.name_prefix = "m";
  g.vary.shared_claims = 5;
  SetPodResourceClaims(g.template_pod, {{"resource", "test-claim", std::nullopt},
                                        {"scratch", std::nullopt, "scratch-template"}});
  auto p = internal::StampPod(g, "-m", "test", 0, 12);
  EXPECT_EQ(p->metadata.name, "m-12");
  const auto claims = PodResourceClaimsOf(*p);
  ASSERT_EQ(claims.size(), 2u);
  EXPECT_EQ(claims[0].resource_claim_name, "test-claim-2");
  EXPECT_FALSE(claims[1].resource_claim_name.has_value());
  EXPECT_EQ(claims[1].resource_claim_template_name, "scratch-template");
}

TEST_F(BenchDraTest, BadDraFieldsAreNamed) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"steadyState: {}", "durationSeconds or pods required"},
      {"steadyState: {pods: 0}", "steadyState.pods"},
      {"steadyState: {seconds: 3}", "steadyState.seconds: unknown field"},
      {"claims: [{count: 1, template: *node}]", "must be a ResourceClaim"},
      {"claims: [{template: *claim}]", "claims[0].count"},
      {"claims: [{count: 1, template: *claim, allocate: 1}]", "allocate: must be a boolean"},
      {"resourceSlices: [{count: 1, template: *claim}]", "must be a ResourceSlice"},
      {"resourceSlices: [{count: 1, template: *oneDevice, indexAttribute: 3}]",
       "resourceSlices[0].indexAttribute"},
  };
  for (const auto& [field, want] : cases) {
    auto ws = Load(fmt::format(R"(
- name: bad
  nodes: 1
  nodeTemplate: *node
  measurePods: [{{count: 1, template: *claimPod}}]
  {}
)",
                               field));
    ASSERT_FALSE(ws.ok()) << field;
    EXPECT_NE(ws.error().message.find(want), std::string::npos) << ws.error().message;
  }
}

}  // namespace
}  // namespace berth::sim
