// Cases of upstream's shared allocator test table (structured/internal/allocatortesting), each
// named after the case it comes from.
#include "dra/allocator.h"

#include <gtest/gtest.h>

#include "dra/allocator_test_util.h"

namespace berth::dra::testing {
namespace {

TEST(AllocatorTest, Empty) {
  Case c;
  auto r = c.Run();
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r.value().has_value());
  EXPECT_TRUE(r.value()->empty());
}

TEST(AllocatorTest, Simple) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  auto r = Fit(c);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1)}));
  EXPECT_EQ(r[0].node_selector, LocalSelector(kNode1));
  EXPECT_TRUE(r[0].config.empty());
}

TEST(AllocatorTest, OtherNode) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverB),
              OneDevice(kSlice2, OnNode(kNode2), kPool2, kDriverA)};
  c.node = MakeNode(kNode2, kRegion2);
  auto r = Fit(c);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool2, kDevice1)}));
  EXPECT_EQ(r[0].node_selector, LocalSelector(kNode2));
}

Case SmallAndLarge(bool reversed, bool two_claims) {
  Case c;
  const std::string small =
      "device.capacity[\"driver-a\"].memory.compareTo(quantity(\"1Gi\")) >= 0";
  const std::string large =
      "device.capacity[\"driver-a\"].memory.compareTo(quantity(\"2Gi\")) >= 0";
  if (two_claims) {
    c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1, {small})}),
                Claim(kClaim1, {Request(kReq1, kClassA, 1, {large})})};
  } else {
    c.claims = {
        Claim(kClaim0, {Request(kReq0, kClassA, 1, {small}), Request(kReq1, kClassA, 1, {large})})};
  }
  c.classes = {Class(kClassA, kDriverA)};
  Device d1 = Dev(kDevice1), d2 = Dev(kDevice2);
  d1.capacity["memory"].value = Qty("1Gi");
  d2.capacity["memory"].value = Qty("2Gi");
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    reversed ? std::vector<Device>{d2, d1} : std::vector<Device>{d1, d2})};
  return c;
}

TEST(AllocatorTest, SmallAndLarge) {
  auto r = Fit(SmallAndLarge(false, false));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Devices(r[0]),
            Sorted({D(kReq0, kDriverA, kPool1, kDevice1), D(kReq1, kDriverA, kPool1, kDevice2)}));
}

TEST(AllocatorTest, SmallAndLargeBacktrackRequests) {
  auto r = Fit(SmallAndLarge(true, false));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Devices(r[0]),
            Sorted({D(kReq0, kDriverA, kPool1, kDevice1), D(kReq1, kDriverA, kPool1, kDevice2)}));
}

TEST(AllocatorTest, SmallAndLargeBacktrackClaims) {
  auto r = Fit(SmallAndLarge(true, true));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1)}));
  EXPECT_EQ(Devices(r[1]), Sorted({D(kReq1, kDriverA, kPool1, kDevice2)}));
}

TEST(AllocatorTest, DevicesSplitAcrossDifferentSlices) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 2)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA),
              OneDevice(kSlice2, OnNode(kNode1), kPool2, kDriverA)};
  auto r = Fit(c);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Devices(r[0]),
            Sorted({D(kReq0, kDriverA, kPool1, kDevice1), D(kReq0, kDriverA, kPool2, kDevice1)}));
}

TEST(AllocatorTest, ObsoleteSlice) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  // The newer generation has only one of its two slices: the pool is incomplete, and the
  // older generation's device does not count.
  c.slices = {Slice("slice-1-obsolete", OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice1)}, 2, 1),
              Slice("slice-1-obsolete", OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice2)}, 2, 2)};
  NoFit(c);
}

TEST(AllocatorTest, DuplicateSlice) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice1)}, 2),
              Slice("slice-1-2", OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice1)}, 2)};
  auto r = c.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "invalid resource pools were encountered");
  EXPECT_TRUE(IsFailedAllocationOnNode(r.error()));
}

TEST(AllocatorTest, NoSlices) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  NoFit(c);
}

TEST(AllocatorTest, NotEnoughSuitableDevices) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)}),
              Claim(kClaim0, {Request(kReq1, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  NoFit(c);
}

TEST(AllocatorTest, NoClasses) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  Fails(c, "claim claim-0, request req-0: could not retrieve device class class-a");
}

TEST(AllocatorTest, UnknownClass) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, "unknown-class", 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  Fails(c, "could not retrieve device class unknown-class");
}

TEST(AllocatorTest, EmptyClass) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, "", 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  Fails(c, "claim claim-0, request req-0: missing device class name (unsupported request type?)");
}

TEST(AllocatorTest, NoClaimsToAllocate) {
  Case c;
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  auto r = c.Run();
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r.value().has_value());
  EXPECT_TRUE(r.value()->empty());
}

TEST(AllocatorTest, AllDevicesSingle) {
  Case c;
  c.claims = {Claim(kClaim0, {AllRequest(kReq0, kClassA)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  auto r = Fit(c);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1)}));
}

TEST(AllocatorTest, AllDevicesMany) {
  Case c;
  c.claims = {Claim(kClaim0, {AllRequest(kReq0, kClassA)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA),
              OneDevice(kSlice1, OnNode(kNode1), kPool2, kDriverA)};
  auto r = Fit(c);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Devices(r[0]),
            Sorted({D(kReq0, kDriverA, kPool1, kDevice1), D(kReq0, kDriverA, kPool2, kDevice1)}));
}

TEST(AllocatorTest, AllDevicesOfTheIncompletePool) {
  Case c;
  c.claims = {Claim(kClaim0, {AllRequest(kReq0, kClassA)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice1)}, 2)};
  Fails(c,
        "claim claim-0, request req-0: asks for all devices, but resource pool driver-a/pool-1 "
        "is currently being updated");
}

Case AllPlusAnother(bool reversed, bool many) {
  Case c;
  auto all = Claim(kClaim0, {AllRequest(kReq0, kClassA)});
  auto other = Claim(kClaim1, {Request(kReq0, kClassB, 1)});
  c.claims = reversed ? std::vector{other, all} : std::vector{all, other};
  c.classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)};
  std::vector<Device> devs = {Dev(kDevice1)};
  if (many) devs.push_back(Dev(kDevice2));
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, devs),
              OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverB)};
  return c;
}

TEST(AllocatorTest, AllDevicesPlusAnother) {
  auto r = Fit(AllPlusAnother(false, false));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1)}));
  EXPECT_EQ(Devices(r[1]), Sorted({D(kReq0, kDriverB, kPool1, kDevice1)}));
}

TEST(AllocatorTest, AllDevicesPlusAnotherReversed) {
  auto r = Fit(AllPlusAnother(true, false));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverB, kPool1, kDevice1)}));
  EXPECT_EQ(Devices(r[1]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1)}));
}

TEST(AllocatorTest, AllDevicesManyPlusAnother) {
  auto r = Fit(AllPlusAnother(false, true));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(Devices(r[0]),
            Sorted({D(kReq0, kDriverA, kPool1, kDevice1), D(kReq0, kDriverA, kPool1, kDevice2)}));
  EXPECT_EQ(Devices(r[1]), Sorted({D(kReq0, kDriverB, kPool1, kDevice1)}));
}

TEST(AllocatorTest, AllDevicesManyPlusAnotherReversed) {
  auto r = Fit(AllPlusAnother(true, true));
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverB, kPool1, kDevice1)}));
  EXPECT_EQ(Devices(r[1]),
            Sorted({D(kReq0, kDriverA, kPool1, kDevice1), D(kReq0, kDriverA, kPool1, kDevice2)}));
}

TEST(AllocatorTest, AllDevicesNoSolution) {
  Case c;
  c.claims = {Claim(kClaim1, {Request(kReq0, kClassA, 1)}),
              Claim(kClaim0, {AllRequest(kReq0, kClassA)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  NoFit(c);
}

TEST(AllocatorTest, AllDevicesNoSolutionReversed) {
  Case c;
  c.claims = {Claim(kClaim0, {AllRequest(kReq0, kClassA)}),
              Claim(kClaim1, {Request(kReq0, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  NoFit(c);
}

TEST(AllocatorTest, AllDevicesSliceWithoutDevices) {
  Case c;
  c.claims = {Claim(kClaim0, {AllRequest(kReq0, kClassA)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {})};
  NoFit(c);
}

TEST(AllocatorTest, AllDevicesNoSlices) {
  Case c;
  c.claims = {Claim(kClaim0, {AllRequest(kReq0, kClassA)})};
  c.classes = {Class(kClassA, kDriverA)};
  NoFit(c);
}

TEST(AllocatorTest, AllDevicesSomeAllocated) {
  Case c;
  c.claims = {Claim(kClaim0, {AllRequest(kReq0, kClassA)})};
  c.allocated.allocated.insert({kDriverA, kPool1, kDevice1});
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice1), Dev(kDevice2)})};
  NoFit(c);
}

TEST(AllocatorTest, AllDevicesSomeAllocatedAdminAccess) {
  Case c;
  auto claim = Claim(kClaim0, {AllRequest(kReq0, kClassA)});
  claim->spec.devices.requests[0].exactly->admin_access = true;
  c.claims = {claim};
  c.allocated.allocated.insert({kDriverA, kPool1, kDevice1});
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice1), Dev(kDevice2)})};
  auto r = Fit(c);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1, true),
                                   D(kReq0, kDriverA, kPool1, kDevice2, true)}));
}

TEST(AllocatorTest, AllDevicesSomeAllocatingAdminAccess) {
  Case c;
  auto claim = Claim(kClaim0, {Request(kReq0, kClassA, 1), Request(kReq1, kClassA, 1)});
  claim->spec.devices.requests[0].exactly->admin_access = true;
  claim->spec.devices.requests[1].exactly->admin_access = true;
  claim->spec.devices.requests[1].exactly->allocation_mode = kAllocationModeAll;
  c.claims = {claim};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice1), Dev(kDevice2)})};
  NoFit(c);
}

TEST(AllocatorTest, CountDevicesSomeAllocatedAdminAccess) {
  Case c;
  auto claim = Claim(kClaim0, {Request(kReq0, kClassA, 2)});
  claim->spec.devices.requests[0].exactly->admin_access = true;
  c.claims = {claim};
  c.allocated.allocated.insert({kDriverA, kPool1, kDevice1});
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice1), Dev(kDevice2)})};
  auto r = Fit(c);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1, true),
                                   D(kReq0, kDriverA, kPool1, kDevice2, true)}));
}

TEST(AllocatorTest, SeparateClaimsShareDeviceAdminAccess) {
  Case c;
  auto c0 = Claim(kClaim0, {Request(kReq0, kClassA, 1)});
  auto c1 = Claim(kClaim1, {Request(kReq0, kClassA, 1)});
  c0->spec.devices.requests[0].exactly->admin_access = true;
  c1->spec.devices.requests[0].exactly->admin_access = true;
  c.claims = {c0, c1};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice1), Dev(kDevice2)})};
  auto r = Fit(c);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1, true)}));
  EXPECT_EQ(Devices(r[1]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1, true)}));
}

TEST(AllocatorTest, AdminAccessClaimsDeviceAllocatingForNonAdminAccess) {
  Case c;
  auto admin = Claim(kClaim1, {Request(kReq0, kClassA, 1)});
  admin->spec.devices.requests[0].exactly->admin_access = true;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)}), admin};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice1), Dev(kDevice2)})};
  auto r = Fit(c);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1)}));
  EXPECT_EQ(Devices(r[1]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1, true)}));
}

Case PrioritizedAll() {
  Case c;
  auto sub0 = SubRequest(kSubReq0, kClassA, 1);
  sub0.request.allocation_mode = kAllocationModeAll;
  sub0.request.count = 0;
  c.claims = {Claim(kClaim0, {Prioritized(kReq0, {sub0, SubRequest(kSubReq1, kClassB, 1)})})};
  c.classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)};
  return c;
}

TEST(AllocatorTest, AllDevicesSliceWithoutDevicesPrioritizedList) {
  Case c = PrioritizedAll();
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {}),
              OneDevice(kSlice2, OnNode(kNode1), kPool2, kDriverB)};
  auto r = Fit(c);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Devices(r[0]), Sorted({D("req-0/subReq-1", kDriverB, kPool2, kDevice1)}));
}

TEST(AllocatorTest, AllDevicesNoSlicesPrioritizedList) {
  Case c = PrioritizedAll();
  c.slices = {OneDevice(kSlice2, OnNode(kNode1), kPool2, kDriverB)};
  auto r = Fit(c);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Devices(r[0]), Sorted({D("req-0/subReq-1", kDriverB, kPool2, kDevice1)}));
}

TEST(AllocatorTest, AllDevicesSomeAllocatedPrioritizedList) {
  Case c = PrioritizedAll();
  c.allocated.allocated.insert({kDriverA, kPool1, kDevice1});
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice1), Dev(kDevice2)}),
              OneDevice(kSlice2, OnNode(kNode1), kPool2, kDriverB)};
  auto r = Fit(c);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Devices(r[0]), Sorted({D("req-0/subReq-1", kDriverB, kPool2, kDevice1)}));
}

TEST(AllocatorTest, NetworkAttachedDevice) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, Selected(LabelSelector("region", kRegion1)), kPool1, kDriverA)};
  auto r = Fit(c);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1)}));
  EXPECT_EQ(r[0].node_selector, LabelSelector("region", kRegion1));
}

TEST(AllocatorTest, UnsuccessfulAllocationNetworkAttachedDevice) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, Selected(LabelSelector("region", kRegion1)), kPool1, kDriverA)};
  c.node = MakeNode(kNode2, kRegion2);
  NoFit(c);
}

TEST(AllocatorTest, ManyNetworkAttachedDevices) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 4)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, Selected(LabelSelector("region", kRegion1)), kPool1, kDriverA),
              OneDevice(kSlice1, AllNodes(), kPool2, kDriverA),
              OneDevice(kSlice1, Selected(LabelSelector("planet", "earth")), kPool3, kDriverA),
              OneDevice(kSlice1, Selected(LocalSelector(kNode1)), kPool4, kDriverA)};
  auto r = Fit(c);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Devices(r[0]),
            Sorted({D(kReq0, kDriverA, kPool1, kDevice1), D(kReq0, kDriverA, kPool2, kDevice1),
                    D(kReq0, kDriverA, kPool3, kDevice1), D(kReq0, kDriverA, kPool4, kDevice1)}));
  // The union of the slices' selectors.
  NodeSelector want;
  want.terms.push_back(NodeSelectorTerm{{{"region", "In", {kRegion1}}, {"planet", "In", {"earth"}}},
                                        {{"metadata.name", "In", {kNode1}}}});
  EXPECT_EQ(r[0].node_selector, want);
}

TEST(AllocatorTest, LocalAndNetworkAttachedDevices) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 2)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, Selected(LabelSelector("region", kRegion1)), kPool1, kDriverA),
              OneDevice(kSlice1, OnNode(kNode1), kPool2, kDriverA)};
  auto r = Fit(c);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].node_selector, LocalSelector(kNode1));
}

TEST(AllocatorTest, SeveralDifferentDrivers) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)}),
              Claim(kClaim0, {Request(kReq0, kClassB, 1)})};
  c.classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice1), Dev(kDevice2)}),
              OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverB)};
  auto r = Fit(c);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1)}));
  EXPECT_EQ(Devices(r[1]), Sorted({D(kReq0, kDriverB, kPool1, kDevice1)}));
}

TEST(AllocatorTest, AlreadyAllocatedDevices) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.allocated.allocated = {{kDriverA, kPool1, kDevice1}, {kDriverA, kPool1, kDevice2}};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  NoFit(c);
}

TEST(AllocatorTest, AdminAccessDisabled) {
  Case c;
  c.features.admin_access = false;
  auto claim = Claim(kClaim0, {Request(kReq0, kClassA, 1)});
  claim->spec.devices.requests[0].exactly->admin_access = true;
  c.claims = {claim};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  Fails(c, "claim claim-0, request req-0: admin access is requested, but the feature is disabled");
}

TEST(AllocatorTest, AdminAccessEnabled) {
  Case c;
  auto claim = Claim(kClaim0, {Request(kReq0, kClassA, 1)});
  claim->spec.devices.requests[0].exactly->admin_access = true;
  c.claims = {claim};
  c.allocated.allocated = {{kDriverA, kPool1, kDevice1}, {kDriverA, kPool1, kDevice2}};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  auto r = Fit(c);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1, true)}));
}

}  // namespace
}  // namespace berth::dra::testing
