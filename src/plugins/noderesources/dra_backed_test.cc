// Scoring extended resources backed by DRA (DRAExtendedResource): the allocatable and
// requested amounts NodeResourcesFit and BalancedAllocation see on a node that does not
// advertise the resource. Cases of kube-scheduler's TestCalculateResourceAllocatableRequest,
// named after their upstream case, then the same through the plugins' Score.
#include "plugins/noderesources/dra_backed.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "berth/config/plugin_args.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/testing/fake_handle.h"
#include "framework/in_memory_cluster.h"
#include "plugins/noderesources/noderesources.h"
#include "testing/builders.h"

namespace berth::noderesources {
namespace {

using testing::MakeNode;
using testing::MakeNodeInfo;
using testing::MakePod;

constexpr const char* kNode = "resource-node";
constexpr const char* kDriver = "test-driver";
constexpr const char* kClass = "device-class-name";
constexpr const char* kExplicit = "extended.resource.dra.io/something";
const std::string kImplicit = std::string("deviceclass.resource.kubernetes.io/") + kClass;

Ptr<DeviceClass> Class(std::optional<std::string> extended_name,
                       std::vector<std::string> selectors = {}) {
  auto c = std::make_shared<DeviceClass>();
  c->metadata.name = kClass;
  c->spec.extended_resource_name = std::move(extended_name);
  for (auto& e : selectors) c->spec.selectors.push_back(DeviceSelector{std::move(e)});
  return c;
}

Ptr<ResourceSlice> Slice(std::vector<std::string> devices) {
  auto s = std::make_shared<ResourceSlice>();
  s->metadata.name = std::string(kNode) + "-slice";
  s->spec.driver = kDriver;
  s->spec.pool = {kNode, 1, 1};
  s->spec.node_name = kNode;
  for (auto& d : devices) s->spec.devices.push_back(Device{.name = std::move(d)});
  return s;
}

Ptr<ResourceClaim> AllocatedClaim(const std::string& name, const std::string& pool,
                                  const std::string& device,
                                  std::optional<std::string> share_id = std::nullopt) {
  auto c = std::make_shared<ResourceClaim>();
  c->metadata.namespace_ = "default";
  c->metadata.name = name;
  AllocationResult a;
  DeviceRequestAllocationResult r;
  r.request = "req-1";
  r.driver = kDriver;
  r.pool = pool;
  r.device = device;
  r.share_id = std::move(share_id);
  a.results.push_back(std::move(r));
  c->status.allocation = std::move(a);
  return c;
}

struct Usage {
  int64_t allocatable = 0;
  int64_t requested = 0;
  friend bool operator==(const Usage&, const Usage&) = default;
};

std::ostream& operator<<(std::ostream& os, const Usage& u) {
  return os << "{allocatable " << u.allocatable << ", requested " << u.requested << "}";
}

class DraBackedTest : public ::testing::Test {
 protected:
  // What the scorer sees for `resource` on `node` when the pod requests 1 of it.
  // With `held`, what the claims hold is kept across calls as a plugin keeps it.
  Usage UsageOf(const std::string& resource, std::shared_ptr<const Node> node,
                dra::AllocatedStateTracker* held = nullptr) {
    testing::FakeHandle handle(Snapshot{}, &cluster_);
    std::vector<ScoredResource> resources = ResolveResources({{resource, 1}});
    auto dra = DraBackedResources::Gather(handle, resources, &cache_, held);
    NodeInfo ni = MakeNodeInfo(std::move(node), {});
    std::vector<int64_t> pod_requests = {1};
    std::vector<int64_t> allocatable(1);
    std::vector<int64_t> requested(1);
    NodeUsage(ni, resources, pod_requests, RequestSource::kNonZero, allocatable, requested);
    if (dra) dra->Apply(ni, resources, pod_requests, allocatable, requested);
    return {allocatable[0], requested[0]};
  }
  std::shared_ptr<const Node> PlainNode() { return MakeNode().Name(kNode).Obj(); }

  InMemoryCluster cluster_;
  cel::dra::SelectorCache cache_{10};
};

TEST_F(DraBackedTest, DevicePluginResource) {
  // device-plugin-resource-feature-enabled: a node that advertises the resource keeps it.
  cluster_.AddDeviceClass(Class(kExplicit));
  cluster_.AddResourceSlice(Slice({"device-1"}));
  EXPECT_EQ(UsageOf(kExplicit, MakeNode().Name(kNode).Capacity({{kExplicit, "4"}}).Obj()),
            (Usage{4, 1}));
}

TEST_F(DraBackedTest, DraBackedResourceExplicit) {
  cluster_.AddDeviceClass(Class(kExplicit));
  cluster_.AddResourceSlice(Slice({"device-1"}));
  EXPECT_EQ(UsageOf(kExplicit, PlainNode()), (Usage{1, 1}));
}

TEST_F(DraBackedTest, DraBackedResourceImplicit) {
  cluster_.AddDeviceClass(Class(std::nullopt));
  cluster_.AddResourceSlice(Slice({"device-1"}));
  EXPECT_EQ(UsageOf(kImplicit, PlainNode()), (Usage{1, 1}));
}

TEST_F(DraBackedTest, DraBackedResourceNoSlices) {
  cluster_.AddDeviceClass(Class(kExplicit));
  EXPECT_EQ(UsageOf(kExplicit, PlainNode()), (Usage{0, 0}));
}

TEST_F(DraBackedTest, NotBackedByAnyClass) {
  cluster_.AddResourceSlice(Slice({"device-1"}));
  EXPECT_EQ(UsageOf(kExplicit, PlainNode()), (Usage{0, 0}));
}

TEST_F(DraBackedTest, DraBackedResourceWithAllocatedDevice) {
  cluster_.AddDeviceClass(Class(kExplicit));
  cluster_.AddResourceSlice(Slice({"device-1", "device-2"}));
  cluster_.AddResourceClaim(AllocatedClaim("test-claim", kNode, "device-1"));
  EXPECT_EQ(UsageOf(kExplicit, PlainNode()), (Usage{2, 2}));
}

TEST_F(DraBackedTest, KeptStateFollowsClaimsAllocatedAndDeleted) {
  // Cycle after cycle, the state kept across them counts what a fresh count does: a claim
  // allocated in between is added, one deleted is taken away again.
  dra::AllocatedStateTracker held;
  cluster_.AddDeviceClass(Class(kExplicit));
  cluster_.AddResourceSlice(Slice({"device-1", "device-2", "device-3"}));
  EXPECT_EQ(UsageOf(kExplicit, PlainNode(), &held), (Usage{3, 1}));
  cluster_.AddResourceClaim(AllocatedClaim("a", kNode, "device-1"));
  cluster_.AddResourceClaim(AllocatedClaim("b", kNode, "device-2"));
  EXPECT_EQ(UsageOf(kExplicit, PlainNode(), &held), (Usage{3, 3}));
  EXPECT_EQ(UsageOf(kExplicit, PlainNode()), (Usage{3, 3}));
  cluster_.RemoveResourceClaim("default", "a");
  EXPECT_EQ(UsageOf(kExplicit, PlainNode(), &held), (Usage{3, 2}));
  EXPECT_EQ(UsageOf(kExplicit, PlainNode()), (Usage{3, 2}));
  cluster_.AddResourceClaim(AllocatedClaim("b", kNode, "device-3"));  // b moves to device-3
  EXPECT_EQ(UsageOf(kExplicit, PlainNode(), &held), (Usage{3, 2}));
  cluster_.RemoveResourceClaim("default", "b");
  EXPECT_EQ(UsageOf(kExplicit, PlainNode(), &held), (Usage{3, 1}));
}

TEST_F(DraBackedTest, DraBackedResourceWithSharedDeviceAllocation) {
  cluster_.AddDeviceClass(Class(kExplicit));
  cluster_.AddResourceSlice(Slice({"device-1", "device-2"}));
  cluster_.AddResourceClaim(AllocatedClaim("test-claim", kNode, "device-1", "share-123"));
  EXPECT_EQ(UsageOf(kExplicit, PlainNode()), (Usage{2, 2}));
}

TEST_F(DraBackedTest, DraBackedResourceMultipleDevicesMixedAllocation) {
  cluster_.AddDeviceClass(Class(kExplicit));
  cluster_.AddResourceSlice(Slice({"device-1", "device-2", "device-3"}));
  cluster_.AddResourceClaim(AllocatedClaim("test-claim-1", kNode, "device-1"));
  cluster_.AddResourceClaim(AllocatedClaim("test-claim-2", kNode, "device-2", "share-456"));
  EXPECT_EQ(UsageOf(kExplicit, PlainNode()), (Usage{3, 3}));
}

TEST_F(DraBackedTest, DraBackedResourceWithPerDeviceNodeSelection) {
  cluster_.AddDeviceClass(
      Class(kExplicit, {R"(device.driver == "test-driver" && )"
                        R"(device.capacity["test-driver"].memory.compareTo(quantity("8Gi")) >= 0 )"
                        R"(&& device.attributes["test-driver"].model.startsWith("SOME-"))"}));
  auto s = std::make_shared<ResourceSlice>();
  s->metadata.name = "per-device-slice";
  s->spec.driver = kDriver;
  s->spec.pool = {"per-device-pool", 1, 1};
  s->spec.per_device_node_selection = true;
  auto gpu = [](std::string name, std::string model, const char* memory) {
    Device d;
    d.name = std::move(name);
    d.attributes["model"].string_value = std::move(model);
    d.capacity["memory"].value = Quantity::Parse(memory).value();
    return d;
  };
  Device d1 = gpu("device-1", "SOME-XYZ", "16Gi");
  d1.node_name = kNode;
  Device d2 = gpu("device-2", "SOME-ZYX", "12Gi");
  d2.node_name = "other-node";
  Device d3 = gpu("device-3", "SOME-XZY", "24Gi");
  d3.node_selector = NodeSelector{{NodeSelectorTerm{{{"zone", "In", {"us-east-1a"}}}, {}}}};
  s->spec.devices = {d1, d2, d3};
  cluster_.AddResourceSlice(s);
  cluster_.AddResourceClaim(AllocatedClaim("test-claim", "per-device-pool", "device-1"));
  // device-1 names the node and device-3 selects it; device-1 is allocated.
  EXPECT_EQ(UsageOf(kExplicit, MakeNode().Name(kNode).Label("zone", "us-east-1a").Obj()),
            (Usage{2, 2}));
}

TEST_F(DraBackedTest, ClassSelectorsDecide) {
  cluster_.AddDeviceClass(Class(kExplicit, {R"(device.attributes["test-driver"].model == "A")"}));
  auto s = Slice({"device-1", "device-2"});
  auto copy = std::make_shared<ResourceSlice>(*s);
  copy->spec.devices[0].attributes["model"].string_value = "A";
  copy->spec.devices[1].attributes["model"].string_value = "B";
  cluster_.AddResourceSlice(copy);
  EXPECT_EQ(UsageOf(kExplicit, PlainNode()), (Usage{1, 1}));
}

// Through the plugins: MostAllocated over the DRA-backed resource alone prefers the node with
// more of the class's devices in use; BalancedAllocation balances it against cpu.
TEST_F(DraBackedTest, FitAndBalancedAllocationScoreIt) {
  cluster_.AddDeviceClass(Class(kExplicit));
  auto slice_of = [](const std::string& node, int devices) {
    auto s = std::make_shared<ResourceSlice>();
    s->metadata.name = node + "-slice";
    s->spec.driver = kDriver;
    s->spec.pool = {node, 1, 1};
    s->spec.node_name = node;
    for (int i = 0; i < devices; ++i)
      s->spec.devices.push_back(Device{.name = "gpu-" + std::to_string(i)});
    return s;
  };
  cluster_.AddResourceSlice(slice_of("busy", 4));
  cluster_.AddResourceSlice(slice_of("idle", 4));
  cluster_.AddResourceClaim(AllocatedClaim("c1", "busy", "gpu-0"));
  cluster_.AddResourceClaim(AllocatedClaim("c2", "busy", "gpu-1"));
  auto busy = MakeNode().Name("busy").Capacity({{"cpu", "4"}, {"memory", "8Gi"}}).Obj();
  auto idle = MakeNode().Name("idle").Capacity({{"cpu", "4"}, {"memory", "8Gi"}}).Obj();
  Snapshot snapshot = Snapshot::Build({busy, idle}, {});
  PodInfoPtr pod = MakePod().Name("p").Req({{"cpu", "1"}, {kExplicit, "1"}}).Info();
  testing::FakeHandle handle(Snapshot{}, &cluster_);

  auto scores = [&](Plugin& plugin) {
    CycleState state;
    std::vector<const NodeInfo*> feasible(snapshot.nodes().begin(), snapshot.nodes().end());
    Status pre = dynamic_cast<PreScorePlugin&>(plugin).PreScore(state, *pod, feasible);
    EXPECT_TRUE(pre.IsSuccess()) << pre.Message();
    std::vector<int64_t> out;
    for (const char* name : {"busy", "idle"}) {
      int64_t score = -1;
      Status s = dynamic_cast<ScorePlugin&>(plugin).Score(state, *pod, *snapshot.Get(name), &score);
      EXPECT_TRUE(s.IsSuccess()) << s.Message();
      out.push_back(score);
    }
    return out;
  };

  config::NodeResourcesFitArgs fit_args;
  fit_args.scoring_strategy.type = "MostAllocated";
  fit_args.scoring_strategy.resources = {{kExplicit, 1}};
  auto fit = NodeResourcesFitRegistration().factory(&fit_args, handle);
  ASSERT_TRUE(fit.ok()) << fit.error().message;
  // busy: (2 allocated + 1) of 4 = 75; idle: 1 of 4 = 25.
  EXPECT_EQ(scores(**fit), (std::vector<int64_t>{75, 25}));

  config::NodeResourcesBalancedAllocationArgs ba_args;
  ba_args.resources = {{"cpu", 1}, {kExplicit, 1}};
  auto ba = NodeResourcesBalancedAllocationRegistration().factory(&ba_args, handle);
  ASSERT_TRUE(ba.ok()) << ba.error().message;
  // cpu 1/4 everywhere; gpus 3/4 on busy (|0.25-0.75|/2 = 0.25 -> 75), 1/4 on idle (100).
  EXPECT_EQ(scores(**ba), (std::vector<int64_t>{75, 100}));
}

}  // namespace
}  // namespace berth::noderesources
