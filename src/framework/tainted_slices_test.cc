#include "framework/tainted_slices.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "framework/in_memory_cluster.h"
#include "testing/ignoring_event_handler.h"

namespace berth {
namespace {

Ptr<ResourceSlice> MakeSlice(const std::string& name, const std::string& driver,
                             const std::string& pool, std::vector<std::string> devices) {
  auto s = std::make_shared<ResourceSlice>();
  s->metadata.name = name;
  s->spec.driver = driver;
  s->spec.pool.name = pool;
  s->spec.pool.resource_slice_count = 1;
  s->spec.node_name = pool;
  for (auto& d : devices) s->spec.devices.push_back(Device{.name = std::move(d)});
  return s;
}

DeviceTaintRule Rule(const std::string& name, std::optional<DeviceTaintRule::Selector> selector,
                     const std::string& effect = "NoSchedule") {
  DeviceTaintRule r;
  r.metadata.name = name;
  r.selector = std::move(selector);
  r.taint = DeviceTaint{"example.com/taint", "tainted", effect, 100};
  return r;
}

// The taint keys of each device of `slice`, in device order.
std::vector<size_t> TaintCounts(const Ptr<ResourceSlice>& slice) {
  std::vector<size_t> out;
  for (const Device& d : slice->spec.devices) out.push_back(d.taints.size());
  return out;
}

TEST(TaintedSlicesTest, ARuleTaintsOnlyTheDevicesItsSelectorPicks) {
  TaintedSlices slices;
  slices.PutSlice(MakeSlice("a", "gpu.example.com", "node-a", {"gpu-0", "gpu-1"}));
  slices.PutSlice(MakeSlice("b", "gpu.example.com", "node-b", {"gpu-0", "gpu-1"}));
  slices.PutSlice(MakeSlice("c", "nic.example.com", "node-a", {"gpu-0"}));
  DeviceTaintRule::Selector sel{.driver = "gpu.example.com", .pool = "node-a", .device = "gpu-1"};
  auto changes = slices.PutRule(Rule("one-device", sel));
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].old_slice->metadata.name, "a");
  EXPECT_EQ(TaintCounts(changes[0].old_slice), (std::vector<size_t>{0, 0}));
  EXPECT_EQ(TaintCounts(changes[0].new_slice), (std::vector<size_t>{0, 1}));
  const DeviceTaint& t = slices.Get("a")->spec.devices[1].taints[0];
  EXPECT_EQ(t.key, "example.com/taint");
  EXPECT_EQ(t.effect, "NoSchedule");
  EXPECT_EQ(t.time_added, 100);
  EXPECT_EQ(TaintCounts(slices.Get("b")), (std::vector<size_t>{0, 0}));
  EXPECT_EQ(TaintCounts(slices.Get("c")), (std::vector<size_t>{0}));
}

// An empty selector taints every device; without a selector, none is.
TEST(TaintedSlicesTest, AnEmptySelectorTaintsEveryDeviceAnAbsentOneNone) {
  TaintedSlices slices;
  slices.PutSlice(MakeSlice("a", "gpu.example.com", "node-a", {"gpu-0", "gpu-1"}));
  slices.PutSlice(MakeSlice("c", "nic.example.com", "node-b", {"nic-0"}));
  EXPECT_TRUE(slices.PutRule(Rule("none", std::nullopt)).empty());
  EXPECT_EQ(TaintCounts(slices.Get("a")), (std::vector<size_t>{0, 0}));
  EXPECT_EQ(slices.PutRule(Rule("all", DeviceTaintRule::Selector{})).size(), 2u);
  EXPECT_EQ(TaintCounts(slices.Get("a")), (std::vector<size_t>{1, 1}));
  EXPECT_EQ(TaintCounts(slices.Get("c")), (std::vector<size_t>{1}));
}

// A slice published after the rule gets its taint; the driver's own taints come first.
TEST(TaintedSlicesTest, ASliceAddedLaterIsTaintedAfterItsOwnTaints) {
  TaintedSlices slices;
  EXPECT_TRUE(slices.PutRule(Rule("pool", DeviceTaintRule::Selector{.pool = "node-a"})).empty());
  auto published = MakeSlice("a", "gpu.example.com", "node-a", {"gpu-0"});
  std::const_pointer_cast<ResourceSlice>(published)->spec.devices[0].taints.push_back(
      DeviceTaint{"driver/own", "", "NoExecute", 5});
  auto change = slices.PutSlice(published);
  EXPECT_EQ(change.old_slice, nullptr);
  ASSERT_EQ(change.new_slice->spec.devices[0].taints.size(), 2u);
  EXPECT_EQ(change.new_slice->spec.devices[0].taints[0].key, "driver/own");
  EXPECT_EQ(change.new_slice->spec.devices[0].taints[1].key, "example.com/taint");
  // The published slice itself is not changed.
  EXPECT_EQ(published->spec.devices[0].taints.size(), 1u);
}

// Moving a rule to another pool untaints the first pool's slices and taints the other's;
// deleting it untaints them; a rule that changes no taint reports no change.
TEST(TaintedSlicesTest, UpdatingAndDeletingARuleReportsTheSlicesWhoseTaintsChanged) {
  TaintedSlices slices;
  slices.PutSlice(MakeSlice("a", "gpu.example.com", "node-a", {"gpu-0"}));
  slices.PutSlice(MakeSlice("b", "gpu.example.com", "node-b", {"gpu-0"}));
  ASSERT_EQ(slices.PutRule(Rule("r", DeviceTaintRule::Selector{.pool = "node-a"})).size(), 1u);
  auto moved = slices.PutRule(Rule("r", DeviceTaintRule::Selector{.pool = "node-b"}));
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_EQ(TaintCounts(slices.Get("a")), (std::vector<size_t>{0}));
  EXPECT_EQ(TaintCounts(slices.Get("b")), (std::vector<size_t>{1}));
  EXPECT_TRUE(slices.PutRule(Rule("r", DeviceTaintRule::Selector{.pool = "node-b"})).empty());
  auto effect = slices.PutRule(Rule("r", DeviceTaintRule::Selector{.pool = "node-b"}, "NoExecute"));
  ASSERT_EQ(effect.size(), 1u);
  EXPECT_EQ(effect[0].new_slice->spec.devices[0].taints[0].effect, "NoExecute");
  auto removed = slices.RemoveRule("r");
  ASSERT_EQ(removed.size(), 1u);
  EXPECT_EQ(removed[0].new_slice->metadata.name, "b");
  EXPECT_EQ(TaintCounts(slices.Get("b")), (std::vector<size_t>{0}));
  EXPECT_EQ(slices.rule_count(), 0u);
  EXPECT_TRUE(slices.RemoveRule("r").empty());
  EXPECT_EQ(slices.RemoveSlice("a").old_slice->metadata.name, "a");
  EXPECT_EQ(slices.List().size(), 1u);
}

// Records the DRA slice events it gets.
class SliceEvents final : public berth::testing::IgnoringEventHandler, public DraEventHandler {
 public:
  struct Seen {
    uint32_t actions;
    const ResourceSlice* old_slice;
    const ResourceSlice* new_slice;
  };
  std::vector<Seen> events;
  void OnDraEvent(const DraClusterEvent& event, const DraEventObject& old_object,
                  const DraEventObject& new_object) override {
    if (event.resource != DraEventResource::kResourceSlice) return;
    events.push_back({event.actions, DraObjectAs<ResourceSlice>(old_object),
                      DraObjectAs<ResourceSlice>(new_object)});
  }
};

// The in-memory cluster lists the tainted slices, and a rule's change is a slice update (with
// a new slice generation) for the scheduler's DRA hints and caches.
TEST(TaintedSlicesTest, InMemoryClusterReportsARulesChangeAsSliceUpdates) {
  InMemoryCluster cluster;
  SliceEvents handler;
  cluster.SetEventHandler(&handler);
  cluster.AddResourceSlice(MakeSlice("a", "gpu.example.com", "node-a", {"gpu-0"}));
  cluster.AddResourceSlice(MakeSlice("b", "gpu.example.com", "node-b", {"gpu-0"}));
  ASSERT_EQ(handler.events.size(), 2u);
  const uint64_t before = cluster.ResourceSliceGeneration();
  cluster.AddDeviceTaintRule(Rule("r", DeviceTaintRule::Selector{.pool = "node-b"}));
  EXPECT_GT(cluster.ResourceSliceGeneration(), before);
  ASSERT_EQ(handler.events.size(), 3u);
  EXPECT_EQ(handler.events[2].actions, kUpdateOther);
  ASSERT_NE(handler.events[2].new_slice, nullptr);
  EXPECT_EQ(handler.events[2].new_slice->metadata.name, "b");
  EXPECT_EQ(handler.events[2].new_slice->spec.devices[0].taints.size(), 1u);
  EXPECT_EQ(handler.events[2].old_slice->spec.devices[0].taints.size(), 0u);
  auto listed = cluster.ListResourceSlices();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[1]->spec.devices[0].taints.size(), 1u);
  // A rule that selects nothing changes nothing.
  const uint64_t after = cluster.ResourceSliceGeneration();
  cluster.AddDeviceTaintRule(Rule("none", DeviceTaintRule::Selector{.driver = "other"}));
  EXPECT_EQ(cluster.ResourceSliceGeneration(), after);
  EXPECT_EQ(handler.events.size(), 3u);
  cluster.RemoveDeviceTaintRule("r");
  ASSERT_EQ(handler.events.size(), 4u);
  EXPECT_EQ(handler.events[3].new_slice->spec.devices[0].taints.size(), 0u);
  cluster.RemoveResourceSlice("a");
  ASSERT_EQ(handler.events.size(), 5u);
  EXPECT_EQ(handler.events[4].actions, kDelete);
}

}  // namespace
}  // namespace berth
