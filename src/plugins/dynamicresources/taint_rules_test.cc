// DynamicResources with DeviceTaintRules: the cluster client lists the slices with the rules'
// taints (framework/tainted_slices.h), so a rule keeps an untolerating claim off the devices
// it selects, and its removal is a slice update the plugin requeues pods on and rebuilds its
// slice index for.
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
#include "testing/ignoring_event_handler.h"

namespace berth::dynamicresources {
namespace {

using berth::testing::FakeHandle;
using berth::testing::MakeNode;
using berth::testing::MakePod;

using berth::testing::DecodeOne;

// The DRA events the cluster reports.
class DraEvents final : public berth::testing::IgnoringEventHandler, public DraEventHandler {
 public:
  struct Seen {
    DraClusterEvent event;
    DraEventObject old_object, new_object;
  };
  std::vector<Seen> seen;
  void OnDraEvent(const DraClusterEvent& event, const DraEventObject& old_object,
                  const DraEventObject& new_object) override {
    seen.push_back({event, old_object, new_object});
  }
};

class TaintRulesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.SetEventHandler(&events_);
    node_ = std::make_shared<NodeInfo>(MakeNode().Name("worker").Obj());
    handle_ = std::make_unique<FakeHandle>(Snapshot{}, &cluster_);
    plugin_ = std::make_unique<DynamicResources>(*handle_, config::DynamicResourcesArgs{},
                                                 dra::Features{});
    cluster_.AddDeviceClass(DecodeOne<DeviceClass>(
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: class}\n"));
    cluster_.AddResourceSlice(DecodeOne<ResourceSlice>(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: worker-some-driver}
spec:
  driver: some-driver
  pool: {name: worker, generation: 1, resourceSliceCount: 1}
  nodeName: worker
  devices: [{name: instance-1}]
)"));
  }
  void AddClaim(const std::string& tolerations) {
    cluster_.AddResourceClaim(DecodeOne<ResourceClaim>(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: my-pod-claim, "
        "namespace: default, uid: uid-claim}\nspec:\n  devices:\n    requests:\n    - name: "
        "req-1\n      exactly: {deviceClassName: class" +
        tolerations + "}\n"));
  }
  // PreFilter and Filter on the one node, in a new cycle.
  Status Cycle() {
    auto pod = MakePod().Name("my-pod").Claim("my-claim", "my-pod-claim").Info();
    CycleState state;
    PreFilterResult result;
    const std::vector<const NodeInfo*> nodes{node_.get()};
    Status s = plugin_->PreFilter(state, *pod, nodes, &result);
    if (!s.IsSuccess()) return s;
    return plugin_->Filter(state, *pod, *node_);
  }
  static DeviceTaintRule Rule() {
    DeviceTaintRule rule;
    rule.metadata.name = "maintenance";
    rule.selector = DeviceTaintRule::Selector{.driver = "some-driver"};
    rule.taint = DeviceTaint{"example.com/maintenance", "", "NoSchedule", 0};
    return rule;
  }

  InMemoryCluster cluster_;
  DraEvents events_;
  std::shared_ptr<NodeInfo> node_;
  std::unique_ptr<FakeHandle> handle_;
  std::unique_ptr<DynamicResources> plugin_;
};

TEST_F(TaintRulesTest, ARuleKeepsAnUntoleratingClaimOffTheDeviceUntilItIsDeleted) {
  AddClaim("");
  ASSERT_TRUE(Cycle().IsSuccess());  // the plugin has indexed the untainted slice
  cluster_.AddDeviceTaintRule(Rule());
  Status s = Cycle();
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "cannot allocate all claims");
  // The rule's deletion is a slice update that the plugin's registration covers, with no hint
  // that could skip it: the pod is queued again, and the next cycle allocates.
  const size_t before = events_.seen.size();
  cluster_.RemoveDeviceTaintRule("maintenance");
  ASSERT_EQ(events_.seen.size(), before + 1);
  const DraClusterEvent& event = events_.seen.back().event;
  bool covered = false;
  for (const DraClusterEventWithHint& e : plugin_->DraEventsToRegister()) {
    if (!e.event.Covers(event)) continue;
    covered = true;
    if (e.hint) {
      auto pod = MakePod().Name("my-pod").Claim("my-claim", "my-pod-claim").Obj();
      auto hint = e.hint(*pod, events_.seen.back().old_object, events_.seen.back().new_object);
      ASSERT_TRUE(hint.ok());
      EXPECT_EQ(*hint, QueueingHint::kQueue);
    }
  }
  EXPECT_TRUE(covered);
  EXPECT_TRUE(Cycle().IsSuccess());
}

TEST_F(TaintRulesTest, AClaimToleratingTheRulesTaintIsAllocated) {
  AddClaim(", tolerations: [{key: example.com/maintenance, operator: Exists}]");
  cluster_.AddDeviceTaintRule(Rule());
  EXPECT_TRUE(Cycle().IsSuccess());
}

TEST_F(TaintRulesTest, ARuleOfAnotherDriverChangesNothing) {
  AddClaim("");
  DeviceTaintRule other = Rule();
  other.selector->driver = "other-driver";
  const size_t before = events_.seen.size();
  cluster_.AddDeviceTaintRule(other);
  EXPECT_EQ(events_.seen.size(), before);
  EXPECT_TRUE(Cycle().IsSuccess());
}

}  // namespace
}  // namespace berth::dynamicresources
