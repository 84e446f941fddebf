// Extended resources backed by DRA in DynamicResources: cases of kube-scheduler's
// extendeddynamicresources_test.go (Test_createRequestsAndMappings_requests and _mappings) and
// of dynamicresources_test.go's TestPlugin for DRAExtendedResource, each named after its
// upstream case, driving the plugin's points against an InMemoryCluster.
#include "plugins/dynamicresources/extended_resources.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "berth/testing/fake_handle.h"
#include "framework/dra_extended_resources.h"
#include "framework/in_memory_cluster.h"
#include "plugins/dynamicresources/dynamicresources.h"
#include "testing/builders.h"

namespace berth::dynamicresources {
namespace {

using berth::testing::FakeHandle;
using berth::testing::MakeNode;
using berth::testing::MakePod;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kGpu = "example.com/gpu";

// ------------------------------------------------------------ createRequestsAndMappings

struct WantRequest {
  std::string name, device_class;
  int64_t count;
};

std::vector<WantRequest> Requests(const Pod& pod, const std::vector<ExtendedRequest>& resources) {
  std::vector<const ExtendedRequest*> ptrs;
  for (const auto& r : resources) ptrs.push_back(&r);
  std::vector<DeviceRequest> requests;
  std::vector<ContainerRequestMapping> mappings;
  CreateRequestsAndMappings(pod, ptrs, &requests, &mappings);
  std::vector<WantRequest> out;
  for (const auto& r : requests)
    out.push_back({r.name, r.exactly->device_class_name, r.exactly->count});
  return out;
}

std::vector<ContainerRequestMapping> Mappings(const Pod& pod,
                                              const std::vector<ExtendedRequest>& resources) {
  std::vector<const ExtendedRequest*> ptrs;
  for (const auto& r : resources) ptrs.push_back(&r);
  std::vector<DeviceRequest> requests;
  std::vector<ContainerRequestMapping> mappings;
  CreateRequestsAndMappings(pod, ptrs, &requests, &mappings);
  // As upstream's test compares them: by request name, then container.
  std::sort(mappings.begin(), mappings.end(), [](const auto& a, const auto& b) {
    return std::tie(a.request, a.container) < std::tie(b.request, b.container);
  });
  return mappings;
}

bool operator==(const WantRequest& a, const WantRequest& b) {
  return a.name == b.name && a.device_class == b.device_class && a.count == b.count;
}
void PrintTo(const WantRequest& r, std::ostream* os) {
  *os << r.name << "/" << r.device_class << "/" << r.count;
}
void PrintTo(const ContainerRequestMapping& m, std::ostream* os) {
  *os << m.container << ":" << m.resource << "->" << m.request;
}

const std::string kGpu1 = std::string(kGpu) + "1";
const std::string kGpuInit = std::string(kGpu) + "init";
const std::string kImplicitInit = "deviceclass.resource.kubernetes.io/classInit";

// pod1: one container asking gpu 1 and gpu1 2.
Ptr<Pod> Pod1() { return MakePod().Name("p").Req({{kGpu, "1"}, {kGpu1.c_str(), "2"}}).Obj(); }
// pod2: two containers, gpu 1 and gpu1 2.
Ptr<Pod> Pod2() { return MakePod().Name("p").Req({{kGpu, "1"}}).Req({{kGpu1.c_str(), "2"}}).Obj(); }
// podInit: init container gpuinit 2, container gpu 1.
Ptr<Pod> PodInit() {
  return MakePod().Name("p").Req({{kGpu, "1"}}).InitReq({{kGpuInit.c_str(), "2"}}).Obj();
}
// podInit2: init containers gpuinit 1 and 2, container gpu 1.
Ptr<Pod> PodInit2() {
  return MakePod()
      .Name("p")
      .Req({{kGpu, "1"}})
      .InitReq({{kGpuInit.c_str(), "1"}})
      .InitReq({{kGpuInit.c_str(), "2"}})
      .Obj();
}
// podInit3: init container gpuinit 1, sidecar gpuinit 1, init container gpuinit 2, container
// gpu 1.
Ptr<Pod> PodInit3() {
  return MakePod()
      .Name("p")
      .Req({{kGpu, "1"}})
      .InitReq({{kGpuInit.c_str(), "1"}})
      .InitReq({{kGpuInit.c_str(), "1"}}, /*sidecar=*/true)
      .InitReq({{kGpuInit.c_str(), "2"}})
      .Obj();
}

const std::vector<ExtendedRequest> kRes = {{kGpu, 1, "class"}};
const std::vector<ExtendedRequest> kRes2OneClass = {{kGpu, 1, "class"}, {kGpu1, 2, ""}};
const std::vector<ExtendedRequest> kRes2 = {{kGpu, 1, "class"}, {kGpu1, 2, "class1"}};
const std::vector<ExtendedRequest> kResInit = {{kGpu, 1, "class"}, {kGpuInit, 2, "classInit"}};

TEST(CreateRequestsAndMappingsRequests, Nil) { EXPECT_TRUE(Requests(*Pod1(), {}).empty()); }

TEST(CreateRequestsAndMappingsRequests, OneResourceMatch) {
  EXPECT_THAT(Requests(*Pod1(), kRes),
              ElementsAre(WantRequest{"container-0-request-0", "class", 1}));
}

TEST(CreateRequestsAndMappingsRequests, OneResourceMatchOneResourceNotMatch) {
  EXPECT_THAT(Requests(*Pod1(), kRes2OneClass),
              ElementsAre(WantRequest{"container-0-request-0", "class", 1}));
}

TEST(CreateRequestsAndMappingsRequests, TwoResourcesMatch) {
  EXPECT_THAT(Requests(*Pod1(), kRes2),
              ElementsAre(WantRequest{"container-0-request-0", "class", 1},
                          WantRequest{"container-0-request-1", "class1", 2}));
}

TEST(CreateRequestsAndMappingsRequests, TwoContainersMatch) {
  EXPECT_THAT(Requests(*Pod2(), kRes2),
              ElementsAre(WantRequest{"container-0-request-0", "class", 1},
                          WantRequest{"container-1-request-0", "class1", 2}));
}

TEST(CreateRequestsAndMappingsRequests, OneInitContainerOneRegularContainer) {
  EXPECT_THAT(Requests(*PodInit(), kResInit),
              ElementsAre(WantRequest{"container-0-request-0", "classInit", 2},
                          WantRequest{"container-1-request-0", "class", 1}));
}

TEST(CreateRequestsAndMappingsRequests, TwoInitContainersOneRegularContainer) {
  EXPECT_THAT(Requests(*PodInit2(), kResInit),
              ElementsAre(WantRequest{"container-1-request-0", "classInit", 2},
                          WantRequest{"container-2-request-0", "class", 1}));
}

TEST(CreateRequestsAndMappingsRequests, ThreeInitContainersOneSidecarOneRegularContainer) {
  EXPECT_THAT(Requests(*PodInit3(), kResInit),
              ElementsAre(WantRequest{"container-1-request-0", "classInit", 1},
                          WantRequest{"container-2-request-0", "classInit", 2},
                          WantRequest{"container-3-request-0", "class", 1}));
}

TEST(CreateRequestsAndMappingsMappings, OneContainerTwoRequests) {
  EXPECT_THAT(Mappings(*Pod1(), kRes2),
              ElementsAre(ContainerRequestMapping{"c0", kGpu, "container-0-request-0"},
                          ContainerRequestMapping{"c0", kGpu1, "container-0-request-1"}));
}

TEST(CreateRequestsAndMappingsMappings, OneContainerOneExplicitAndOneImplicitRequest) {
  auto pod = MakePod().Name("p").InitReq({{kGpuInit.c_str(), "1"}, {kImplicitInit.c_str(), "2"}});
  const std::vector<ExtendedRequest> res = {
      {kGpu, 1, "class"}, {kGpuInit, 2, "classInit"}, {kImplicitInit, 2, "classInit"}};
  EXPECT_THAT(Mappings(*pod.Obj(), res),
              ElementsAre(ContainerRequestMapping{"i0", kImplicitInit, "container-0-request-0"},
                          ContainerRequestMapping{"i0", kGpuInit, "container-0-request-1"}));
}

TEST(CreateRequestsAndMappingsMappings, TwoContainersTwoRequests) {
  EXPECT_THAT(Mappings(*Pod2(), kRes2),
              ElementsAre(ContainerRequestMapping{"c0", kGpu, "container-0-request-0"},
                          ContainerRequestMapping{"c1", kGpu1, "container-1-request-0"}));
}

TEST(CreateRequestsAndMappingsMappings, OneInitContainerOneRegularContainerOneRequest) {
  EXPECT_THAT(Mappings(*PodInit(), kResInit),
              ElementsAre(ContainerRequestMapping{"i0", kGpuInit, "container-0-request-0"},
                          ContainerRequestMapping{"c0", kGpu, "container-1-request-0"}));
}

TEST(CreateRequestsAndMappingsMappings, ThreeContainersTwoAreInitContainerTwoRequests) {
  EXPECT_THAT(Mappings(*PodInit2(), kResInit),
              ElementsAre(ContainerRequestMapping{"i0", kGpuInit, "container-1-request-0"},
                          ContainerRequestMapping{"i1", kGpuInit, "container-1-request-0"},
                          ContainerRequestMapping{"c0", kGpu, "container-2-request-0"}));
}

TEST(CreateRequestsAndMappingsMappings,
     ThreeContainersTwoAreInitContainerBothExplicitAndImplicitResources) {
  auto pod = MakePod()
                 .Name("p")
                 .Req({{kGpu, "1"}})
                 .InitReq({{kGpuInit.c_str(), "1"}})
                 .InitReq({{kImplicitInit.c_str(), "2"}});
  const std::vector<ExtendedRequest> res = {
      {kGpu, 1, "class"}, {kGpuInit, 2, "classInit"}, {kImplicitInit, 2, "classInit"}};
  EXPECT_THAT(Mappings(*pod.Obj(), res),
              ElementsAre(ContainerRequestMapping{"i0", kGpuInit, "container-0-request-0"},
                          ContainerRequestMapping{"i1", kImplicitInit, "container-1-request-0"},
                          ContainerRequestMapping{"c0", kGpu, "container-2-request-0"}));
}

TEST(CreateRequestsAndMappingsMappings, FourContainersTwoAreInitContainerOneSidecarThreeRequests) {
  EXPECT_THAT(Mappings(*PodInit3(), kResInit),
              ElementsAre(ContainerRequestMapping{"i0", kGpuInit, "container-1-request-0"},
                          ContainerRequestMapping{"i1", kGpuInit, "container-1-request-0"},
                          ContainerRequestMapping{"i2", kGpuInit, "container-2-request-0"},
                          ContainerRequestMapping{"c0", kGpu, "container-3-request-0"}));
}

// ------------------------------------------------------------ the device class arbitration

// The ExtendedResourceCache's rule: the newest class serves an explicit name, the lower name
// on a tie; the implicit name always its own class.
// Nodes that advertise none of the class-backed resources get one claim made once; a node
// that advertises one of them gets its own, with fewer requests.
TEST(FilterExtendedResources, NodesThatAdvertiseNoneShareOneClaim) {
  const Ptr<Pod> pod = Pod1();
  ResourceClaim claim;
  claim.metadata.name = std::string(kSpecialClaimName);
  ExtendedClaimData data;
  data.requests = kRes2;
  Resource none, with_gpu1;
  with_gpu1.scalar.emplace_back(kGpu1, 2);
  NodeExtendedClaim a, b, c;
  ASSERT_TRUE(FilterExtendedResources(*pod, claim, data, none, &a).IsSuccess());
  ASSERT_TRUE(FilterExtendedResources(*pod, claim, data, none, &b).IsSuccess());
  ASSERT_TRUE(FilterExtendedResources(*pod, claim, data, with_gpu1, &c).IsSuccess());
  ASSERT_NE(a.claim, nullptr);
  EXPECT_EQ(a.claim, b.claim);
  EXPECT_EQ(a.mappings, b.mappings);
  EXPECT_EQ(a.claim->spec.devices.requests.size(), 2u);
  EXPECT_EQ(a.mappings.size(), 2u);
  ASSERT_NE(c.claim, nullptr);
  EXPECT_NE(c.claim, a.claim);
  ASSERT_EQ(c.claim->spec.devices.requests.size(), 1u);
  EXPECT_EQ(c.claim->spec.devices.requests[0].exactly->device_class_name, "class");
  EXPECT_EQ(c.claim->metadata.name, kSpecialClaimName);
}

TEST(ResolveDeviceClass, NewestClassWinsThenLowerName) {
  auto make = [](const char* name, const char* resource, UnixTime created) {
    auto c = std::make_shared<DeviceClass>();
    c->metadata.name = name;
    c->metadata.creation_timestamp = created;
    if (resource) c->spec.extended_resource_name = resource;
    return Ptr<DeviceClass>(c);
  };
  std::vector<Ptr<DeviceClass>> classes = {
      make("old", kGpu, 1), make("new", kGpu, 5), make("b-tie", "example.com/x", 3),
      make("a-tie", "example.com/x", 3), make("plain", nullptr, 9)};
  EXPECT_EQ(dra_extended::ResolveDeviceClass(classes, kGpu)->metadata.name, "new");
  EXPECT_EQ(dra_extended::ResolveDeviceClass(classes, "example.com/x")->metadata.name, "a-tie");
  EXPECT_EQ(dra_extended::ResolveDeviceClass(classes, "deviceclass.resource.kubernetes.io/old")
                ->metadata.name,
            "old");
  EXPECT_EQ(dra_extended::ResolveDeviceClass(classes, "plain"), nullptr);
  EXPECT_EQ(dra_extended::ResolveDeviceClass(classes, "example.com/none"), nullptr);
}

// ------------------------------------------------------------ the plugin (TestPlugin)

class ExtendedResourcesPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    handle_ = std::make_unique<FakeHandle>(Snapshot{}, &cluster_);
    plugin_ = std::make_unique<DynamicResources>(*handle_, config::DynamicResourcesArgs{},
                                                 dra::Features{});
    worker_ = std::make_shared<NodeInfo>(MakeNode().Name("worker").Obj());
  }
  // deviceClassWithExtendResourceName: spec.extendedResourceName example.com/gpu.
  void AddClass(const std::string& name = "gpu-class", const char* resource = kGpu) {
    auto c = std::make_shared<DeviceClass>();
    c->metadata.name = name;
    if (resource) c->spec.extended_resource_name = resource;
    cluster_.AddDeviceClass(c);
  }
  // workerNodeSlice: `devices` devices of driver some-driver on node `node`.
  void AddSlice(const std::string& node = "worker", int devices = 1) {
    auto s = std::make_shared<ResourceSlice>();
    s->metadata.name = node + "-slice";
    s->spec.driver = "some-driver";
    s->spec.pool.name = node;
    s->spec.pool.generation = 1;
    s->spec.pool.resource_slice_count = 1;
    s->spec.node_name = node;
    for (int i = 1; i <= devices; ++i) {
      Device d;
      d.name = "instance-" + std::to_string(i);
      s->spec.devices.push_back(std::move(d));
    }
    cluster_.AddResourceSlice(s);
  }
  // podWithExtendedResourceName: one container asking `quantity` of `resource`.
  PodInfoPtr AddPod(const char* resource = kGpu, const char* quantity = "1") {
    PodInfoPtr pod = MakePod().Name("my-pod").Req({{resource, quantity}}).Info();
    cluster_.AddPod(pod->pod);
    return pod;
  }
  Status PreFilter(CycleState& state, const PodInfo& pod) {
    PreFilterResult result;
    std::vector<const NodeInfo*> nodes = {worker_.get()};
    return plugin_->PreFilter(state, pod, nodes, &result);
  }
  // The claims the plugin created (annotated as the pod's extended resource claim).
  std::vector<Ptr<ResourceClaim>> Created() const {
    std::vector<Ptr<ResourceClaim>> out;
    for (const auto& c : cluster_.ListResourceClaims())
      if (c->metadata.annotations.count(std::string(dra_extended::kClaimAnnotation)))
        out.push_back(c);
    return out;
  }
  // Schedules `pod` on the worker through PreBind; the stored claim.
  Ptr<ResourceClaim> ScheduleOnWorker(const PodInfo& pod) {
    CycleState state;
    EXPECT_TRUE(PreFilter(state, pod).IsSuccess());
    EXPECT_TRUE(plugin_->Filter(state, pod, *worker_).IsSuccess());
    EXPECT_TRUE(plugin_->Reserve(state, pod, "worker").IsSuccess());
    EXPECT_TRUE(plugin_->PreBind(state, pod, "worker").IsSuccess());
    auto created = Created();
    return created.size() == 1 ? created[0] : nullptr;
  }

  InMemoryCluster cluster_;
  std::unique_ptr<FakeHandle> handle_;
  std::unique_ptr<DynamicResources> plugin_;
  std::shared_ptr<NodeInfo> worker_;
};

// "empty-with-extended-resources-enabled"
TEST_F(ExtendedResourcesPluginTest, EmptyWithExtendedResourcesEnabled) {
  AddClass();
  CycleState state;
  EXPECT_TRUE(PreFilter(state, *MakePod().Name("foo").Info()).IsSkip());
}

// "non-DRA-extended-resource-name-with-zero-allocatable": no class names the resource.
TEST_F(ExtendedResourcesPluginTest, NonDraExtendedResourceNameWithZeroAllocatable) {
  AddClass("plain-class", nullptr);
  AddSlice();
  CycleState state;
  EXPECT_TRUE(PreFilter(state, *AddPod()).IsSkip());
}

// "extended-resource-name-no-resource": no device to allocate.
TEST_F(ExtendedResourcesPluginTest, ExtendedResourceNameNoResource) {
  AddClass();
  auto pod = AddPod();
  CycleState state;
  ASSERT_TRUE(PreFilter(state, *pod).IsSuccess());
  Status s = plugin_->Filter(state, *pod, *worker_);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "cannot allocate all claims");
  PostFilterResult post;
  EXPECT_EQ(plugin_->PostFilter(state, *pod, {}, &post).Message(), "still not schedulable");
}

// "extended-resource-name-with-resources": the claim is created at PreBind, owned by the pod,
// allocated and reserved for it; the pod's status names it.
TEST_F(ExtendedResourcesPluginTest, ExtendedResourceNameWithResources) {
  AddClass();
  AddSlice();
  auto pod = AddPod();
  Ptr<ResourceClaim> claim = ScheduleOnWorker(*pod);
  ASSERT_NE(claim, nullptr);
  EXPECT_THAT(claim->metadata.name, ::testing::StartsWith("my-pod-extended-resources-"));
  ASSERT_EQ(claim->metadata.owner_references.size(), 1u);
  EXPECT_EQ(claim->metadata.owner_references[0].uid, pod->pod->metadata.uid);
  EXPECT_TRUE(claim->metadata.owner_references[0].controller);
  ASSERT_EQ(claim->spec.devices.requests.size(), 1u);
  EXPECT_EQ(claim->spec.devices.requests[0].name, "container-0-request-0");
  EXPECT_EQ(claim->spec.devices.requests[0].exactly->device_class_name, "gpu-class");
  ASSERT_TRUE(claim->status.allocation);
  ASSERT_EQ(claim->status.allocation->results.size(), 1u);
  EXPECT_EQ(claim->status.allocation->results[0].request, "container-0-request-0");
  EXPECT_EQ(claim->status.allocation->results[0].device, "instance-1");
  ASSERT_EQ(claim->status.reserved_for.size(), 1u);
  EXPECT_EQ(claim->status.reserved_for[0].uid, pod->pod->metadata.uid);
  Ptr<Pod> stored = cluster_.GetPod("default", "my-pod");
  ASSERT_TRUE(stored->raw);
  EXPECT_EQ((*stored->raw)["status"]["extendedResourceClaimStatus"],
            nlohmann::json::parse(R"({"resourceClaimName":")" + claim->metadata.name +
                                  R"(","requestMappings":[{"containerName":"c0",
                "resourceName":"example.com/gpu","requestName":"container-0-request-0"}]})"));
  // The device stays taken for the next pod, before and after the listers show the claim.
  auto other = MakePod().Name("other").Req({{kGpu, "1"}}).Info();
  CycleState state;
  ASSERT_TRUE(PreFilter(state, *other).IsSuccess());
  EXPECT_EQ(plugin_->Filter(state, *other, *worker_).Message(), "cannot allocate all claims");
}

// "implicit-extended-resource-name-with-resources": deviceclass.resource.kubernetes.io/<class>.
TEST_F(ExtendedResourcesPluginTest, ImplicitExtendedResourceNameWithResources) {
  AddClass("gpu-class", nullptr);
  AddSlice("worker", 2);
  auto pod = AddPod("deviceclass.resource.kubernetes.io/gpu-class", "2");
  Ptr<ResourceClaim> claim = ScheduleOnWorker(*pod);
  ASSERT_NE(claim, nullptr);
  ASSERT_EQ(claim->spec.devices.requests.size(), 1u);
  EXPECT_EQ(claim->spec.devices.requests[0].exactly->count, 2);
  ASSERT_TRUE(claim->status.allocation);
  EXPECT_EQ(claim->status.allocation->results.size(), 2u);
}

// "extended-resource-name-with-node-resource": the node's device plugin advertises it.
TEST_F(ExtendedResourcesPluginTest, ExtendedResourceNameWithNodeResource) {
  AddClass();
  AddSlice();
  worker_ = std::make_shared<NodeInfo>(MakeNode().Name("worker").Capacity({{kGpu, "1"}}).Obj());
  auto pod = AddPod();
  CycleState state;
  ASSERT_TRUE(PreFilter(state, *pod).IsSuccess());
  EXPECT_TRUE(plugin_->Filter(state, *pod, *worker_).IsSuccess());
  ASSERT_TRUE(plugin_->Reserve(state, *pod, "worker").IsSuccess());
  ASSERT_TRUE(plugin_->PreBind(state, *pod, "worker").IsSuccess());
  EXPECT_TRUE(Created().empty());
}

// "extended-resource-name-with-zero-allocatable": allocatable 0 is not advertised.
TEST_F(ExtendedResourcesPluginTest, ExtendedResourceNameWithZeroAllocatable) {
  AddClass();
  AddSlice();
  worker_ = std::make_shared<NodeInfo>(MakeNode().Name("worker").Capacity({{kGpu, "0"}}).Obj());
  EXPECT_NE(ScheduleOnWorker(*AddPod()), nullptr);
}

// "extended-resource-one-device-plugin-one-dra": only the resource the node lacks is claimed.
TEST_F(ExtendedResourcesPluginTest, ExtendedResourceOneDevicePluginOneDra) {
  AddClass();
  AddClass("gpu-class-2", "example.com/gpu2");
  AddSlice();
  worker_ = std::make_shared<NodeInfo>(MakeNode().Name("worker").Capacity({{kGpu, "1"}}).Obj());
  PodInfoPtr pod = MakePod().Name("my-pod").Req({{kGpu, "1"}, {"example.com/gpu2", "1"}}).Info();
  cluster_.AddPod(pod->pod);
  Ptr<ResourceClaim> claim = ScheduleOnWorker(*pod);
  ASSERT_NE(claim, nullptr);
  ASSERT_EQ(claim->spec.devices.requests.size(), 1u);
  EXPECT_EQ(claim->spec.devices.requests[0].name, "container-0-request-1");
  EXPECT_EQ(claim->spec.devices.requests[0].exactly->device_class_name, "gpu-class-2");
}

// "extended-resource-name-with-resources-has-claim": a claim of an earlier attempt is refused in
// Filter and deleted by PostFilter.
TEST_F(ExtendedResourcesPluginTest, ExtendedResourceNameWithResourcesHasClaim) {
  AddClass();
  AddSlice();
  auto pod = AddPod();
  ASSERT_NE(ScheduleOnWorker(*pod), nullptr);  // bound elsewhere, binding failed afterwards
  CycleState state;
  ASSERT_TRUE(PreFilter(state, *pod).IsSuccess());
  Status s = plugin_->Filter(state, *pod, *worker_);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "cannot schedule extended resource claim");
  PostFilterResult post;
  EXPECT_EQ(plugin_->PostFilter(state, *pod, {}, &post).Message(),
            "deletion of ResourceClaim completed");
  EXPECT_TRUE(Created().empty());
}

// "extended-resource-name-bind-failure": Unreserve after PreBind deletes the created claim.
TEST_F(ExtendedResourcesPluginTest, ExtendedResourceNameBindFailure) {
  AddClass();
  AddSlice();
  auto pod = AddPod();
  CycleState state;
  ASSERT_TRUE(PreFilter(state, *pod).IsSuccess());
  ASSERT_TRUE(plugin_->Filter(state, *pod, *worker_).IsSuccess());
  ASSERT_TRUE(plugin_->Reserve(state, *pod, "worker").IsSuccess());
  ASSERT_TRUE(plugin_->PreBind(state, *pod, "worker").IsSuccess());
  ASSERT_EQ(Created().size(), 1u);
  plugin_->Unreserve(state, *pod, "worker");
  EXPECT_TRUE(Created().empty());
  EXPECT_EQ(plugin_->assumed().size(), 0u);
  // The device is free again.
  CycleState again;
  ASSERT_TRUE(PreFilter(again, *pod).IsSuccess());
  EXPECT_TRUE(plugin_->Filter(again, *pod, *worker_).IsSuccess());
}

// "extended-resource-name-skip-bind": Unreserve before PreBind drops the in-flight allocation.
TEST_F(ExtendedResourcesPluginTest, ExtendedResourceNameSkipBind) {
  AddClass();
  AddSlice();
  auto pod = AddPod();
  CycleState state;
  ASSERT_TRUE(PreFilter(state, *pod).IsSuccess());
  ASSERT_TRUE(plugin_->Filter(state, *pod, *worker_).IsSuccess());
  ASSERT_TRUE(plugin_->Reserve(state, *pod, "worker").IsSuccess());
  EXPECT_EQ(plugin_->assumed().size(), 1u);
  // Another pod meanwhile finds the device taken.
  auto other = MakePod().Name("other").Req({{kGpu, "1"}}).Info();
  CycleState other_state;
  ASSERT_TRUE(PreFilter(other_state, *other).IsSuccess());
  EXPECT_EQ(plugin_->Filter(other_state, *other, *worker_).Message(), "cannot allocate all claims");
  plugin_->Unreserve(state, *pod, "worker");
  EXPECT_EQ(plugin_->assumed().size(), 0u);
  EXPECT_TRUE(Created().empty());
}

// "extended-resource-name-with-resources-fail-patch": the pod's status cannot be written.
TEST_F(ExtendedResourcesPluginTest, ExtendedResourceNameWithResourcesFailPatch) {
  AddClass();
  AddSlice();
  PodInfoPtr pod = MakePod().Name("my-pod").Req({{kGpu, "1"}}).Info();  // not in the cluster
  CycleState state;
  ASSERT_TRUE(PreFilter(state, *pod).IsSuccess());
  ASSERT_TRUE(plugin_->Filter(state, *pod, *worker_).IsSuccess());
  ASSERT_TRUE(plugin_->Reserve(state, *pod, "worker").IsSuccess());
  Status s = plugin_->PreBind(state, *pod, "worker");
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_THAT(s.Message(), HasSubstr("update pod default/my-pod ExtendedResourceClaimStatus"));
  plugin_->Unreserve(state, *pod, "worker");
  EXPECT_TRUE(Created().empty());
}

// Pod with a claim of its own and an extended resource: both are allocated on the node.
TEST_F(ExtendedResourcesPluginTest, UserClaimAndExtendedResource) {
  AddClass();
  AddSlice("worker", 2);
  auto claim = std::make_shared<ResourceClaim>();
  claim->metadata.name = "my-claim";
  claim->metadata.namespace_ = "default";
  claim->metadata.uid = "uid-my-claim";
  DeviceRequest r;
  r.name = "req-1";
  r.exactly.emplace().device_class_name = "gpu-class";
  claim->spec.devices.requests.push_back(r);
  cluster_.AddResourceClaim(claim);
  PodInfoPtr pod = MakePod().Name("my-pod").Req({{kGpu, "1"}}).Claim("c", "my-claim").Info();
  cluster_.AddPod(pod->pod);
  Ptr<ResourceClaim> extended = ScheduleOnWorker(*pod);
  ASSERT_NE(extended, nullptr);
  auto mine = cluster_.GetResourceClaim("default", "my-claim");
  ASSERT_TRUE(mine->status.allocation && extended->status.allocation);
  EXPECT_NE(mine->status.allocation->results[0].device,
            extended->status.allocation->results[0].device);
}

// FilterDiagnosis names the extended resource that cannot be satisfied.
TEST_F(ExtendedResourcesPluginTest, DiagnosisNamesTheExtendedResource) {
  AddClass();
  AddSlice("worker", 2);
  auto pod = AddPod(kGpu, "3");
  CycleState state;
  ASSERT_TRUE(PreFilter(state, *pod).IsSuccess());
  Status s = plugin_->Filter(state, *pod, *worker_);
  ASSERT_EQ(s.Message(), "cannot allocate all claims");
  EXPECT_THAT(plugin_->Diagnose(*pod->pod, *worker_->node(), s),
              ElementsAre("extended resource example.com/gpu (container c0): wants 3 devices, 2 "
                          "free"));
}

}  // namespace
}  // namespace berth::dynamicresources
