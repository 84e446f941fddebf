// DynamicResources keeps the slices' index, each node's pools, selector results and the
// allocated devices across cycles: each case warms those caches with one cycle, changes the
// cluster, and checks that the next cycle decides from the change.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "api/codec.h"
#include "berth/testing/fake_handle.h"
#include "framework/in_memory_cluster.h"
#include "plugins/dynamicresources/dynamicresources.h"
#include "testing/builders.h"
#include "testing/decode_one.h"

namespace berth::dynamicresources {
namespace {

using berth::testing::FakeHandle;
using berth::testing::MakeNode;
using berth::testing::MakePod;

using berth::testing::DecodeOne;

std::string ClassYaml(const std::string& driver) {
  return "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: class}\nspec:\n"
         "  selectors:\n  - cel: {expression: 'device.driver == \"" +
         driver + "\"'}\n";
}

std::string SliceYaml(int devices, int generation = 1) {
  std::string y =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: worker-slice}\n"
      "spec:\n  driver: some-driver\n  pool: {name: worker, generation: " +
      std::to_string(generation) + ", resourceSliceCount: 1}\n  nodeName: worker\n  devices:\n";
  for (int i = 1; i <= devices; ++i) y += "  - name: instance-" + std::to_string(i) + "\n";
  return y;
}

// A claim of one device of `class`, allocated instance-1 of worker when `allocated`.
std::string ClaimYaml(const std::string& name, bool allocated) {
  std::string y =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: " + name +
      "\n  namespace: default\n  uid: uid-" + name +
      "\n  resourceVersion: \"1\"\nspec:\n  devices:\n    requests:\n"
      "    - name: req-1\n      exactly: {deviceClassName: class}\n";
  if (allocated)
    y += "status:\n  allocation:\n    devices:\n      results:\n      - {request: req-1, driver: "
         "some-driver, pool: worker, device: instance-1}\n";
  return y;
}

class PoolCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = std::make_shared<NodeInfo>(MakeNode().Name("worker").Obj());
    handle_ = std::make_unique<FakeHandle>(Snapshot{}, &cluster_);
    plugin_ = std::make_unique<DynamicResources>(*handle_, config::DynamicResourcesArgs{},
                                                 dra::Features{});
    cluster_.AddDeviceClass(DecodeOne<DeviceClass>(ClassYaml("some-driver")));
    cluster_.AddResourceClaim(DecodeOne<ResourceClaim>(ClaimYaml("my-pod-claim", false)));
  }
  // One cycle's PreFilter and Filter on the node: "" when the pod fits, else the message.
  std::string Cycle() {
    CycleState state;
    auto pod = MakePod().Name("my-pod").Claim("my-claim", "my-pod-claim").Info();
    PreFilterResult result;
    std::vector<const NodeInfo*> nodes{node_.get()};
    Status pre = plugin_->PreFilter(state, *pod, nodes, &result);
    if (!pre.IsSuccess()) return pre.Message();
    Status s = plugin_->Filter(state, *pod, *node_);
    return s.IsSuccess() ? "" : s.Message();
  }
  void SetSlice(int devices, int generation = 1) {
    cluster_.AddResourceSlice(DecodeOne<ResourceSlice>(SliceYaml(devices, generation)));
  }

  InMemoryCluster cluster_;
  std::shared_ptr<NodeInfo> node_;
  std::unique_ptr<FakeHandle> handle_;
  std::unique_ptr<DynamicResources> plugin_;
};

constexpr const char* kNoFit = "cannot allocate all claims";

TEST_F(PoolCacheTest, SliceUpdateIsSeen) {
  SetSlice(1);
  cluster_.AddResourceClaim(DecodeOne<ResourceClaim>(ClaimYaml("other", true)));
  EXPECT_EQ(Cycle(), kNoFit);  // the one device is taken
  SetSlice(2, 2);              // the driver publishes a second device
  EXPECT_EQ(Cycle(), "");
  SetSlice(1, 3);
  EXPECT_EQ(Cycle(), kNoFit);
}

TEST_F(PoolCacheTest, SliceDeleteIsSeen) {
  SetSlice(1);
  EXPECT_EQ(Cycle(), "");
  cluster_.RemoveResourceSlice("worker-slice");
  EXPECT_EQ(Cycle(), kNoFit);
  SetSlice(1);
  EXPECT_EQ(Cycle(), "");
}

TEST_F(PoolCacheTest, ClassChangeIsSeen) {
  SetSlice(1);
  EXPECT_EQ(Cycle(), "");
  // The selector's result on the device was kept; the new class's selector is another one.
  cluster_.AddDeviceClass(DecodeOne<DeviceClass>(ClassYaml("other-driver")));
  EXPECT_EQ(Cycle(), kNoFit);
  cluster_.AddDeviceClass(DecodeOne<DeviceClass>(ClassYaml("some-driver")));
  EXPECT_EQ(Cycle(), "");
}

TEST_F(PoolCacheTest, ClaimAllocatedByAnotherPodIsSeen) {
  SetSlice(1);
  EXPECT_EQ(Cycle(), "");
  cluster_.AddResourceClaim(DecodeOne<ResourceClaim>(ClaimYaml("other", true)));
  EXPECT_EQ(Cycle(), kNoFit);
  // Deallocated (status cleared), then deleted: the device is free again either way.
  cluster_.AddResourceClaim(DecodeOne<ResourceClaim>(ClaimYaml("other", false)));
  EXPECT_EQ(Cycle(), "");
  cluster_.AddResourceClaim(DecodeOne<ResourceClaim>(ClaimYaml("other", true)));
  EXPECT_EQ(Cycle(), kNoFit);
  cluster_.RemoveResourceClaim("default", "other");
  EXPECT_EQ(Cycle(), "");
}

}  // namespace
}  // namespace berth::dynamicresources
