// NodeResourcesFit with extended resources backed by DRA (DRAExtendedResource): a request the
// node does not advertise is left to DynamicResources when a DeviceClass backs it. Cases of
// kube-scheduler's TestEnoughRequests named after their upstream case.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/testing/fake_handle.h"
#include "framework/in_memory_cluster.h"
#include "plugins/noderesources/noderesources.h"
#include "testing/builders.h"

namespace berth {
namespace {

using testing::MakeNode;
using testing::MakeNodeInfo;
using testing::MakePod;

constexpr const char* kDraResource = "extended.resource.dra.io/something";

class FitDraExtendedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    handle_ = std::make_unique<testing::FakeHandle>(Snapshot{}, &cluster_);
    auto plugin = NodeResourcesFitRegistration().factory(nullptr, *handle_);
    ASSERT_TRUE(plugin.ok());
    plugin_ = std::move(plugin).value();
  }
  // A DeviceClass named `name` whose spec.extendedResourceName is `resource` (none when empty).
  void AddClass(const std::string& name, const std::string& resource = "", UnixTime created = 1) {
    auto c = std::make_shared<DeviceClass>();
    c->metadata.name = name;
    c->metadata.creation_timestamp = created;
    if (!resource.empty()) c->spec.extended_resource_name = resource;
    cluster_.AddDeviceClass(c);
  }
  // Filter of a pod asking `resource: 1` on a node with 10 cpu and `node_extra` allocatable.
  Status FilterPod(const char* resource,
                   std::initializer_list<std::pair<const char*, const char*>> node_extra = {}) {
    PodInfoPtr pod = MakePod().Name("p").Req({{"cpu", "1m"}, {resource, "1"}}).Info();
    auto builder = MakeNode().Name("n").Capacity({{"cpu", "10"}, {"pods", "32"}});
    if (node_extra.size() > 0) {
      auto node = std::make_shared<Node>(*builder.Obj());
      for (const auto& [k, v] : node_extra) {
        node->status.allocatable[k] = Quantity::Parse(v).value();
        node->status.capacity[k] = Quantity::Parse(v).value();
      }
      node_ = node;
    } else {
      node_ = builder.Obj();
    }
    CycleState state;
    PreFilterResult result;
    EXPECT_TRUE(dynamic_cast<PreFilterPlugin*>(plugin_.get())
                    ->PreFilter(state, *pod, {}, &result)
                    .IsSuccess());
    NodeInfo ni = MakeNodeInfo(node_, {});
    return dynamic_cast<FilterPlugin*>(plugin_.get())->Filter(state, *pod, ni);
  }
  QueueingHint NodeAddHint(const char* resource) {
    Pod pod = *MakePod().Name("p").Req({{resource, "1"}}).Obj();
    std::shared_ptr<const Node> node = MakeNode().Name("n").Capacity({{"pods", "10"}}).Obj();
    for (const ClusterEventWithHint& e :
         dynamic_cast<EnqueueExtensions*>(plugin_.get())->EventsToRegister()) {
      if (e.event.resource != EventResource::kNode || (e.event.actions & kAdd) == 0) continue;
      auto hint = e.hint(pod, EventObject{}, EventObject{node});
      EXPECT_TRUE(hint.ok());
      return *hint;
    }
    ADD_FAILURE() << "no node-add event registered";
    return QueueingHint::kQueueSkip;
  }

  InMemoryCluster cluster_;
  std::unique_ptr<testing::FakeHandle> handle_;
  std::unique_ptr<Plugin> plugin_;
  std::shared_ptr<const Node> node_;
};

// "extended resource backed by device plugin"
TEST_F(FitDraExtendedTest, ExtendedResourceBackedByDevicePlugin) {
  AddClass("class", kDraResource);
  EXPECT_TRUE(FilterPod("example.com/aaa", {{"example.com/aaa", "5"}}).IsSuccess());
}

// "extended resource backed by DRA": no node advertises it, a class names it.
TEST_F(FitDraExtendedTest, ExtendedResourceBackedByDra) {
  AddClass("class", kDraResource);
  EXPECT_TRUE(FilterPod(kDraResource).IsSuccess());
}

// The implicit name deviceclass.resource.kubernetes.io/<class> of any class.
TEST_F(FitDraExtendedTest, ImplicitExtendedResourceName) {
  AddClass("gpu.example.com");
  EXPECT_TRUE(FilterPod("deviceclass.resource.kubernetes.io/gpu.example.com").IsSuccess());
  Status s = FilterPod("deviceclass.resource.kubernetes.io/other");
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.reasons(),
            std::vector<std::string>{"Insufficient deviceclass.resource.kubernetes.io/other"});
}

// "extended resource NOT backed by DRA"
TEST_F(FitDraExtendedTest, ExtendedResourceNotBackedByDra) {
  AddClass("class", kDraResource);
  Status s = FilterPod("example.com/bbb");
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.reasons(), std::vector<std::string>{"Insufficient example.com/bbb"});
}

// "extended resource was backed by Device Plugin (Allocatable: 0)": zero allocatable counts as
// not advertised.
TEST_F(FitDraExtendedTest, ExtendedResourceWasBackedByDevicePluginAllocatableZero) {
  AddClass("class", kDraResource);
  EXPECT_TRUE(FilterPod(kDraResource, {{kDraResource, "0"}}).IsSuccess());
}

// A node that advertises the resource is checked as before, class or not: the device plugin's
// count is what the node has.
TEST_F(FitDraExtendedTest, AdvertisedResourceIsCheckedAgainstTheNode) {
  AddClass("class", kDraResource);
  PodInfoPtr pod = MakePod().Name("p").Req({{kDraResource, "3"}}).Info();
  auto node = std::make_shared<Node>(*MakeNode().Name("n").Capacity({{"pods", "32"}}).Obj());
  node->status.allocatable[kDraResource] = Quantity::Parse("2").value();
  CycleState state;
  PreFilterResult result;
  ASSERT_TRUE(dynamic_cast<PreFilterPlugin*>(plugin_.get())
                  ->PreFilter(state, *pod, {}, &result)
                  .IsSuccess());
  Status s =
      dynamic_cast<FilterPlugin*>(plugin_.get())->Filter(state, *pod, MakeNodeInfo(node, {}));
  EXPECT_EQ(s.reasons(), std::vector<std::string>{std::string("Insufficient ") + kDraResource});
}

// The node-added hint: a node without the resource can take the pod when a class backs it.
TEST_F(FitDraExtendedTest, NodeAddHintQueuesForDraBackedResource) {
  EXPECT_EQ(NodeAddHint(kDraResource), QueueingHint::kQueueSkip);
  AddClass("class", kDraResource);
  EXPECT_EQ(NodeAddHint(kDraResource), QueueingHint::kQueue);
}

}  // namespace
}  // namespace berth
