// Cases of upstream's shared allocator test table: partitionable devices (shared counters); each
// named after its upstream case.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "dra/allocator.h"
#include "dra/allocator_test_util.h"

namespace berth::dra::testing {
namespace {
TEST(AllocatorFeaturesTest, PartitionableDevicesSingleDevice) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Consuming(Dev(kDevice1), "counter-set-1", {{"memory", "4Gi"}}, false)}, 2),
              CounterSlice(kSlice2, OnNode(kNode1), kPool1, kDriverA,
                           {Counters_("counter-set-1", {{"memory", "8Gi"}})})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1)}));
}

std::vector<Device> ThreePartitions() {
  return {Consuming(Dev(kDevice1), "counter-set-1", {{"memory", "4Gi"}}),
          Consuming(Dev(kDevice2), "counter-set-1", {{"memory", "6Gi"}}),
          Consuming(Dev(kDevice3), "counter-set-1", {{"memory", "4Gi"}})};
}

TEST(AllocatorFeaturesTest, PartitionableDevicesPrioritizedList) {
  Case c;
  auto sub0 = SubRequest(kSubReq0, kClassA, 1);
  sub0.request.selectors.push_back({MemoryAtLeast("6Gi")});
  auto sub1 = SubRequest(kSubReq1, kClassA, 1);
  sub1.request.selectors.push_back({MemoryAtLeast("4Gi")});
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1), Prioritized(kReq1, {sub0, sub1})})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, ThreePartitions(), 2),
              CounterSlice(kSlice2, OnNode(kNode1), kPool1, kDriverA,
                           {Counters_("counter-set-1", {{"memory", "8Gi"}})})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1),
                                   D("req-1/subReq-1", kDriverA, kPool1, kDevice3)}));
}

TEST(AllocatorFeaturesTest, PartitionableDevicesMultipleDevices) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1), Request(kReq1, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, ThreePartitions(), 2),
              CounterSlice(kSlice2, OnNode(kNode1), kPool1, kDriverA,
                           {Counters_("counter-set-1", {{"memory", "8Gi"}})})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]),
            Sorted({D(kReq0, kDriverA, kPool1, kDevice1), D(kReq1, kDriverA, kPool1, kDevice3)}));
}

TEST(AllocatorFeaturesTest, PartitionableDevicesMultipleCounters) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1), Request(kReq1, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  auto two = [](const char* name, std::vector<std::pair<std::string, const char*>> a,
                std::vector<std::pair<std::string, const char*>> b) {
    return Consuming(Consuming(Dev(name), "counter-set-1", a), "counter-set-2", b);
  };
  c.slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
            {two(kDevice1, {{"memory", "4Gi"}, {"cpus", "6"}}, {{"cpus", "4"}, {"memory", "2Gi"}}),
             two(kDevice2, {{"memory", "6Gi"}, {"cpus", "4"}}, {{"cpus", "6"}, {"memory", "6Gi"}}),
             two(kDevice3, {{"memory", "4Gi"}, {"cpus", "4"}}, {{"cpus", "4"}, {"memory", "4Gi"}})},
            2),
      CounterSlice(kSlice2, OnNode(kNode1), kPool1, kDriverA,
                   {Counters_("counter-set-1", {{"cpus", "8"}, {"memory", "18Gi"}}),
                    Counters_("counter-set-2", {{"cpus", "12"}, {"memory", "18Gi"}})})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]),
            Sorted({D(kReq0, kDriverA, kPool1, kDevice2), D(kReq1, kDriverA, kPool1, kDevice3)}));
}

TEST(AllocatorFeaturesTest, PartitionableDevicesMultiplePools) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1), Request(kReq1, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  auto dev = [](const char* name, const char* cpus, const char* mem) {
    return Consuming(Dev(name), "counter-set-1", {{"cpus", cpus}, {"memory", mem}});
  };
  auto sets = std::vector{Counters_("counter-set-1", {{"cpus", "8"}, {"memory", "18Gi"}})};
  c.slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
            {dev(kDevice1, "6", "4Gi"), dev(kDevice2, "4", "6Gi"), dev(kDevice3, "4", "4Gi")}, 2),
      CounterSlice(kSlice2, OnNode(kNode1), kPool1, kDriverA, sets),
      Slice("slice-3", OnNode(kNode1), kPool2, kDriverA,
            {dev(kDevice1, "6", "4Gi"), dev(kDevice2, "1", "7Gi"), dev(kDevice3, "1", "7Gi")}, 2),
      CounterSlice("slice-4", OnNode(kNode1), kPool2, kDriverA, sets)};
  c.allocated.allocated = {
      {kDriverA, kPool1, kDevice2}, {kDriverA, kPool1, kDevice3}, {kDriverA, kPool2, kDevice1}};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]),
            Sorted({D(kReq0, kDriverA, kPool2, kDevice2), D(kReq1, kDriverA, kPool2, kDevice3)}));
}

TEST(AllocatorFeaturesTest, PartitionableDevicesUnusedCountersInCounterSet) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 2)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Consuming(Dev(kDevice1), "counter-set-1", {{"memory", "5Gi"}}, false),
                     Consuming(Dev(kDevice2), "counter-set-1", {{"memory", "4Gi"}}, false),
                     Consuming(Dev(kDevice3), "counter-set-1", {{"memory", "4Gi"}}, false)},
                    2),
              CounterSlice(kSlice2, OnNode(kNode1), kPool1, kDriverA,
                           {Counters_("counter-set-1", {{"memory", "8Gi"}, {"unused", "1Gi"}})})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]),
            Sorted({D(kReq0, kDriverA, kPool1, kDevice2), D(kReq0, kDriverA, kPool1, kDevice3)}));
}

TEST(AllocatorFeaturesTest, PartitionableDevicesOverallocatedCapacityPool) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Consuming(Dev(kDevice1), "counter-set-1", {{"memory", "4Gi"}}),
                     Consuming(Dev(kDevice2), "counter-set-1", {{"memory", "20Gi"}})},
                    2),
              CounterSlice(kSlice2, OnNode(kNode1), kPool1, kDriverA,
                           {Counters_("counter-set-1", {{"memory", "18Gi"}})})};
  c.allocated.allocated = {{kDriverA, kPool1, kDevice2}};
  NoFit(c);
}

TEST(AllocatorFeaturesTest, PartitionableDevicesDisabledDeviceConsumesCounters) {
  Case c;
  c.features.partitionable_devices = false;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Consuming(Dev(kDevice1), "counter-set-1", {{"memory", "4Gi"}}, false)}),
              CounterSlice(kSlice2, OnNode(kNode1), kPool1, kDriverA,
                           {Counters_("counter-set-1", {{"memory", "18Gi"}})}, 1)};
  NoFit(c);
}

TEST(AllocatorFeaturesTest, PartitionableDevicesDisabledOtherDeviceDoNotConsumeCounters) {
  Case c;
  c.features.partitionable_devices = false;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
            {Consuming(Dev(kDevice1), "counter-set-1", {{"memory", "4Gi"}}, false), Dev(kDevice2)},
            2),
      CounterSlice(kSlice2, OnNode(kNode1), kPool1, kDriverA,
                   {Counters_("counter-set-1", {{"memory", "18Gi"}})})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice2)}));
}

TEST(AllocatorFeaturesTest, PartitionableDevicesDisabledPerDeviceNodeSelection) {
  Case c;
  c.features.partitionable_devices = false;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  Device d = Dev(kDevice2);
  d.node_name = kNode1;
  c.slices = {Slice(kSlice1, PerDevice(), kPool1, kDriverA, {d})};
  NoFit(c);
}

TEST(AllocatorFeaturesTest, PartitionableDevicesPerDeviceNodeSelectionNodename) {
  Case c;
  auto sub0 = SubRequest(kSubReq0, kClassA, 1);
  sub0.request.selectors.push_back({MemoryAtLeast("6Gi")});
  auto sub1 = SubRequest(kSubReq1, kClassA, 1);
  sub1.request.selectors.push_back({MemoryAtLeast("4Gi")});
  c.claims = {Claim(kClaim0, {Prioritized(kReq0, {sub0, sub1})})};
  c.classes = {Class(kClassA, kDriverA)};
  Device d1 = Consuming(Dev(kDevice1), "counter-set-1", {{"memory", "4Gi"}});
  d1.node_name = kNode1;
  Device d2 = Consuming(Dev(kDevice2), "counter-set-1", {{"memory", "6Gi"}});
  d2.node_name = kNode2;
  c.slices = {Slice(kSlice1, PerDevice(), kPool1, kDriverA, {d1, d2}, 2),
              CounterSlice(kSlice2, PerDevice(), kPool1, kDriverA,
                           {Counters_("counter-set-1", {{"memory", "18Gi"}})})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D("req-0/subReq-1", kDriverA, kPool1, kDevice1)}));
  EXPECT_EQ(r[0].node_selector, LocalSelector(kNode1));
}

TEST(AllocatorFeaturesTest, PartitionableDevicesPerDeviceNodeSelectionNodeSelector) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  Device d1 = Consuming(Dev(kDevice1), "counter-set-1", {{"memory", "4Gi"}});
  d1.node_selector = LabelSelector("region", kRegion1);
  c.slices = {Slice(kSlice1, PerDevice(), kPool1, kDriverA, {d1}, 2),
              CounterSlice(kSlice2, PerDevice(), kPool1, kDriverA,
                           {Counters_("counter-set-1", {{"memory", "18Gi"}})})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1)}));
  EXPECT_EQ(r[0].node_selector, LabelSelector("region", kRegion1));
}

TEST(AllocatorFeaturesTest, PartitionableDevicesWithAttributeSelector) {
  Case c;
  c.claims = {
      Claim(kClaim0, {Request(kReq0, kClassA, 2),
                      Request(kReq1, kClassA, 1, {"device.attributes[\"driver-a\"].special"})})};
  c.classes = {Class(kClassA, kDriverA)};
  auto dev = [](const char* name, bool special, const char* cpu) {
    Device d = WithAttrs(name, {{"special", BoolAttr(special)}});
    d = Consuming(d, "counter-set-1", {{cpu, "1"}}, false);
    return Consuming(d, "counter-set-2", {{"mem", "10Gi"}}, false);
  };
  c.slices = {
      Slice(
          kSlice1, OnNode(kNode1), kPool1, kDriverA,
          {dev(kDevice1, true, "cpu1"), dev(kDevice2, false, "cpu2"), dev(kDevice3, false, "cpu3")},
          2),
      CounterSlice(kSlice2, OnNode(kNode1), kPool1, kDriverA,
                   {Counters_("counter-set-1", {{"cpu1", "1"}, {"cpu2", "1"}, {"cpu3", "1"}}),
                    Counters_("counter-set-2", {{"mem", "30Gi"}})})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]),
            Sorted({D(kReq0, kDriverA, kPool1, kDevice2), D(kReq0, kDriverA, kPool1, kDevice3),
                    D(kReq1, kDriverA, kPool1, kDevice1)}));
}

}  // namespace
}  // namespace berth::dra::testing
