// Consumable capacity and binding conditions: cases of upstream's shared allocator test table
// (named after them) and a few of Berth's own.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "berth/testing/builders.h"
#include "dra/allocator.h"
#include "dra/allocator_test_util.h"

namespace berth::dra::testing {
namespace {

constexpr const char* kShareId = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa";

std::shared_ptr<DeviceClass> MultiClass(bool multi) {
  auto c = std::make_shared<DeviceClass>();
  c->metadata.name = kClassA;
  c->spec.selectors.push_back({std::string("device.driver == \"driver-a\" && "
                                           "device.allowMultipleAllocations == ") +
                               (multi ? "true" : "false")});
  return c;
}

DeviceRequest WithCapacity(DeviceRequest r, const char* q) {
  r.exactly->capacity_requests["capacity-0"] = Qty(q);
  return r;
}

Device Shared(Device d) {
  d.allow_multiple_allocations = true;
  return d;
}

Device WithCapacityValue(const std::string& name, const char* key, const char* q) {
  Device d = Dev(name);
  d.capacity[key].value = Qty(q);
  return d;
}

// Upstream's withCapacityRequestPolicyRange: default 2, range 2..4 in steps of 2.
Device WithRange(Device d, const char* total) {
  DeviceCapacity& c = d.capacity["capacity-0"];
  c.value = Qty(total);
  c.request_policy.emplace();
  c.request_policy->default_value = Qty("2");
  c.request_policy->valid_range = CapacityRequestPolicyRange{Qty("2"), Qty("4"), Qty("2")};
  return d;
}

Device WithValidValues(Device d, const char* def, const char* total,
                       std::vector<const char*> more) {
  DeviceCapacity& c = d.capacity["capacity-0"];
  c.value = Qty(total);
  c.request_policy.emplace();
  c.request_policy->default_value = Qty(def);
  c.request_policy->valid_values.push_back(Qty(def));
  for (const char* v : more) c.request_policy->valid_values.push_back(Qty(v));
  return d;
}

Case Base() {
  Case c;
  c.classes = {MultiClass(true)};
  c.share_id = kShareId;
  return c;
}

std::optional<std::vector<AllocationResult>> RunCase(const Case& c) {
  auto r = c.Run();
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : std::nullopt;
}

void ExpectShared(const DeviceRequestAllocationResult& r, const char* device,
                  std::optional<const char*> consumed) {
  EXPECT_EQ(r.device, device);
  EXPECT_EQ(r.share_id, std::optional<std::string>(kShareId));
  if (consumed) {
    ASSERT_EQ(r.consumed_capacity.size(), 1u);
    EXPECT_EQ(r.consumed_capacity.at("capacity-0"), Qty(*consumed));
  } else {
    EXPECT_TRUE(r.consumed_capacity.empty());
  }
}

TEST(AllocatorCapacityTest, ConsumableCapacityDisabledFeature) {
  Case c = Base();
  c.features.consumable_capacity = false;
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "1")})};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  auto r = c.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "claim claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity "
            "feature is disabled");
}

TEST(AllocatorCapacityTest, ConsumableCapacityDisabledFeatureWithPrioritizedList) {
  Case c = Base();
  c.features.consumable_capacity = false;
  auto sub = SubRequest(kSubReq0, kClassA, 1);
  sub.request.capacity_requests["capacity-0"] = Qty("1");
  c.claims = {Claim(kClaim0, {Prioritized(kReq0, {sub})})};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  auto r = c.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "claim claim-0, subrequest subReq-0: has capacity requests, but the "
            "DRAConsumableCapacity feature is disabled");
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceWithMissingCapacityRequest) {
  Case c = Base();
  c.classes = {Class(kClassA, kDriverA)};
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "1")})};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Shared(WithCapacityValue(kDevice1, "capacity-1", "1"))})};
  EXPECT_FALSE(RunCase(c).has_value());
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceWithoutCapacityWithoutCapacityRequest) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)}),
              Claim(kClaim1, {Request(kReq0, kClassA, 1)})};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Shared(Dev(kDevice1))})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  ExpectShared((*r)[0].results.at(0), kDevice1, std::nullopt);
  ExpectShared((*r)[1].results.at(0), kDevice1, std::nullopt);
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceWithoutPolicyWithoutCapacityRequest) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)}),
              Claim(kClaim1, {Request(kReq0, kClassA, 1)})};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Shared(WithCapacityValue(kDevice1, "capacity-0", "1")),
                     Shared(WithCapacityValue(kDevice2, "capacity-0", "1"))})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  // Without a request each takes the whole capacity, so they land on different devices.
  ExpectShared((*r)[0].results.at(0), kDevice1, "1");
  ExpectShared((*r)[1].results.at(0), kDevice2, "1");
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceWithoutPolicyWithoutCapacityRequestBlock) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)}),
              Claim(kClaim1, {Request(kReq0, kClassA, 1)})};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Shared(WithCapacityValue(kDevice1, "capacity-0", "2"))})};
  EXPECT_FALSE(RunCase(c).has_value());
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceWithoutPolicyWithCapacityRequest) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "1")}),
              Claim(kClaim1, {WithCapacity(Request(kReq0, kClassA, 1), "1")})};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Shared(WithCapacityValue(kDevice1, "capacity-0", "2"))})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  ExpectShared((*r)[0].results.at(0), kDevice1, "1");
  ExpectShared((*r)[1].results.at(0), kDevice1, "1");
  EXPECT_EQ((*r)[0].node_selector, LocalSelector(kNode1));
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceWithPolicyWithoutCapacityRequest) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)}),
              Claim(kClaim1, {Request(kReq0, kClassA, 1)})};
  c.slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Shared(WithRange(Dev(kDevice1), "4"))})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  ExpectShared((*r)[0].results.at(0), kDevice1, "2");
  ExpectShared((*r)[1].results.at(0), kDevice1, "2");
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceWithZeroRequestPolicy) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)}),
              Claim(kClaim1, {Request(kReq0, kClassA, 1)})};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Shared(WithValidValues(Dev(kDevice1), "0", "1", {}))})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  ExpectShared((*r)[0].results.at(0), kDevice1, "0");
  ExpectShared((*r)[1].results.at(0), kDevice1, "0");
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceViolatesZeroRequestPolicy) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "1")})};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Shared(WithValidValues(Dev(kDevice1), "0", "1", {}))})};
  EXPECT_FALSE(RunCase(c).has_value());
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceWithRangePolicyWithCapacityRequest) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "1")}),
              Claim(kClaim1, {WithCapacity(Request(kReq0, kClassA, 1), "1")})};
  c.slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Shared(WithRange(Dev(kDevice1), "4"))})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  // Rounded up to the range's minimum.
  ExpectShared((*r)[0].results.at(0), kDevice1, "2");
  ExpectShared((*r)[1].results.at(0), kDevice1, "2");
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceWithRangePolicyStep) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "3")})};
  c.slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Shared(WithRange(Dev(kDevice1), "4"))})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  ExpectShared((*r)[0].results.at(0), kDevice1, "4");
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceWithValidValuesPolicy) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "2")})};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Shared(WithValidValues(Dev(kDevice1), "1", "4", {"2"}))})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  ExpectShared((*r)[0].results.at(0), kDevice1, "2");
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceWithValidValuesPolicyRoundUp) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "2")})};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Shared(WithValidValues(Dev(kDevice1), "1", "3", {"3"}))})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  ExpectShared((*r)[0].results.at(0), kDevice1, "3");
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceWithExceededConsumableCapacityRequest) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "1")}),
              Claim(kClaim1, {WithCapacity(Request(kReq0, kClassA, 1), "2")})};
  c.slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Shared(WithRange(Dev(kDevice1), "2"))})};
  EXPECT_FALSE(RunCase(c).has_value());
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceWithRequestOverMaxSharingPolicy) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "6")})};
  c.slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Shared(WithRange(Dev(kDevice1), "10"))})};
  EXPECT_FALSE(RunCase(c).has_value());
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceWithAllocatedCapacityUseRemaining) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "2")})};
  c.allocated.consumed_capacity[{kDriverA, kPool1, kDevice1}]["driver-a/capacity-0"] = Qty("2");
  c.slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Shared(WithRange(Dev(kDevice1), "4"))})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  ExpectShared((*r)[0].results.at(0), kDevice1, "2");
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceWithAllocatedCapacityNextDevice) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "2")})};
  c.allocated.consumed_capacity[{kDriverA, kPool1, kDevice1}]["driver-a/capacity-0"] = Qty("2");
  c.slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
            {Shared(WithRange(Dev(kDevice1), "2")), Shared(WithRange(Dev(kDevice2), "2"))})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  ExpectShared((*r)[0].results.at(0), kDevice2, "2");
}

TEST(AllocatorCapacityTest, ConsumableCapacityWithMultiAllocatableDeviceBacktrack) {
  Case c = Base();
  c.classes = {Class(kClassA, kDriverA)};
  c.claims = {Claim(kClaim0,
                    {WithCapacity(Request(kReq0, kClassA, 1), "2"),
                     WithCapacity(Request(kReq1, kClassA, 1), "2")},
                    {MatchAttribute("driver-a/stringAttribute")}),
              Claim(kClaim1, {WithCapacity(Request(kReq0, kClassA, 1), "2")})};
  Device d2 = Shared(WithRange(Dev(kDevice2), "2"));
  d2.attributes["stringAttribute"] = StrAttr("stringAttributeValue1");
  Device d1 = Shared(WithRange(Dev(kDevice1), "4"));
  d1.attributes["stringAttribute"] = StrAttr("stringAttributeValue2");
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {d2, d1})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ((*r)[0].results.size(), 2u);
  ExpectShared((*r)[0].results[0], kDevice1, "2");
  ExpectShared((*r)[0].results[1], kDevice1, "2");
  ExpectShared((*r)[1].results.at(0), kDevice2, "2");
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceWithSubrequest) {
  Case c = Base();
  auto sub = [](const char* name, const char* q) {
    auto s = SubRequest(name, kClassA, 1);
    if (q) s.request.capacity_requests["capacity-0"] = Qty(q);
    return s;
  };
  c.claims = {Claim(kClaim0, {Prioritized(kReq0, {sub(kSubReq0, "4"), sub(kSubReq1, "2"),
                                                  sub(kSubReq1, nullptr)})})};
  c.slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Shared(WithRange(Dev(kDevice1), "2"))})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ((*r)[0].results.at(0).request, "req-0/subReq-1");
  ExpectShared((*r)[0].results.at(0), kDevice1, "2");
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceWithNoAvailableConsumableCapacity) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "2")})};
  c.allocated.consumed_capacity[{kDriverA, kPool1, kDevice1}]["driver-a/capacity-0"] = Qty("2");
  c.slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Shared(WithRange(Dev(kDevice1), "2"))})};
  EXPECT_FALSE(RunCase(c).has_value());
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceAllocationModeAllFilterOutInsufficientCapacity) {
  Case c = Base();
  DeviceRequest all = AllRequest(kReq0, kClassA);
  all.exactly->capacity_requests["capacity-0"] = Qty("2");
  c.claims = {Claim(kClaim0, {all})};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Shared(WithCapacityValue(kDevice1, "capacity-0", "2")),
                     Shared(WithCapacityValue(kDevice2, "capacity-0", "1"))})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ((*r)[0].results.size(), 1u);
  ExpectShared((*r)[0].results[0], kDevice1, "2");
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceAllocationModeAllAllocatingSufficient) {
  Case c = Base();
  c.classes = {Class(kClassA, kDriverA)};
  DeviceRequest all = AllRequest(kReq1, kClassA);
  all.exactly->capacity_requests["capacity-0"] = Qty("1");
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "1"), all})};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Shared(WithCapacityValue(kDevice1, "capacity-0", "2")),
                     Shared(WithCapacityValue(kDevice2, "capacity-0", "1"))})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(Devices((*r)[0]), Sorted({{kReq0, kDriverA, kPool1, kDevice1, false},
                                      {kReq1, kDriverA, kPool1, kDevice1, false},
                                      {kReq1, kDriverA, kPool1, kDevice2, false}}));
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceAllocationModeAllAllocatingInsufficient) {
  Case c = Base();
  c.classes = {Class(kClassA, kDriverA)};
  DeviceRequest all = AllRequest(kReq1, kClassA);
  all.exactly->capacity_requests["capacity-0"] = Qty("1");
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "1"), all})};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Shared(WithCapacityValue(kDevice1, "capacity-0", "1")),
                     Shared(WithCapacityValue(kDevice2, "capacity-0", "1"))})};
  EXPECT_FALSE(RunCase(c).has_value());
}

TEST(AllocatorCapacityTest, MultiAllocatableDeviceAllocationModeAllInUseInsufficient) {
  Case c = Base();
  c.classes = {Class(kClassA, kDriverA)};
  DeviceRequest all = AllRequest(kReq0, kClassA);
  all.exactly->capacity_requests["capacity-0"] = Qty("1");
  c.claims = {Claim(kClaim0, {all})};
  c.allocated.consumed_capacity[{kDriverA, kPool1, kDevice1}]["driver-a/capacity-0"] = Qty("1");
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Shared(WithCapacityValue(kDevice1, "capacity-0", "1")),
                     Shared(WithCapacityValue(kDevice2, "capacity-0", "1"))})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ((*r)[0].results.size(), 1u);
  ExpectShared((*r)[0].results[0], kDevice2, "1");
}

TEST(AllocatorCapacityTest, DedicatedDeviceWithConsumableCapacityRequest) {
  Case c = Base();
  c.classes = {MultiClass(false)};
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "1")})};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {WithCapacityValue(kDevice1, "capacity-0", "1")})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  const auto& res = (*r)[0].results.at(0);
  EXPECT_EQ(res.device, kDevice1);
  EXPECT_FALSE(res.share_id.has_value());
  EXPECT_TRUE(res.consumed_capacity.empty());
}

TEST(AllocatorCapacityTest, DedicatedDeviceWithMultipleConsumableCapacityRequest) {
  Case c = Base();
  c.classes = {MultiClass(false)};
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "1")}),
              Claim(kClaim1, {WithCapacity(Request(kReq0, kClassA, 1), "1")})};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {WithRange(Dev(kDevice1), "2")})};
  EXPECT_FALSE(RunCase(c).has_value());
}

TEST(AllocatorCapacityTest, AllowMultipleAllocationsExcludeMultiAllocatableDeviceByClassSelector) {
  Case c = Base();
  c.classes = {MultiClass(false)};
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "1")})};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Shared(WithCapacityValue(kDevice1, "capacity-0", "1"))})};
  EXPECT_FALSE(RunCase(c).has_value());
}

TEST(AllocatorCapacityTest,
     AllowMultipleAllocationsNotAllocateMultiAllocatableDeviceWhichAlreadyDedicated) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "1")})};
  c.allocated.allocated.insert({kDriverA, kPool1, kDevice1});
  c.slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Shared(WithRange(Dev(kDevice1), "2"))})};
  EXPECT_FALSE(RunCase(c).has_value());
}

TEST(AllocatorCapacityTest,
     AllowMultipleAllocationsNotAllocateDedicatedDeviceWhichChangeFromMultiAllocatable) {
  Case c = Base();
  c.claims = {Claim(kClaim0, {WithCapacity(Request(kReq0, kClassA, 1), "1")})};
  c.allocated.consumed_capacity[{kDriverA, kPool1, kDevice1}]["driver-a/capacity-0"] = Qty("1");
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {WithRange(Dev(kDevice1), "2")})};
  EXPECT_FALSE(RunCase(c).has_value());
}

// Berth: the allocated state of claims holds what their allocations took.
TEST(AllocatorCapacityTest, AllocatedStateOfClaims) {
  auto claim = [](std::vector<DeviceRequestAllocationResult> results) {
    auto c = std::make_shared<ResourceClaim>();
    c->status.allocation.emplace().results = std::move(results);
    return std::shared_ptr<const ResourceClaim>(c);
  };
  DeviceRequestAllocationResult exclusive{kReq0, kDriverA, kPool1, kDevice1};
  DeviceRequestAllocationResult admin{kReq0, kDriverA, kPool1, kDevice2};
  admin.admin_access = true;
  DeviceRequestAllocationResult shared{kReq0, kDriverA, kPool1, kDevice3};
  shared.share_id = "s1";
  shared.consumed_capacity["capacity-0"] = Qty("1");
  DeviceRequestAllocationResult shared2 = shared;
  shared2.share_id = "s2";
  shared2.consumed_capacity.clear();
  shared2.consumed_capacity["driver-a/capacity-0"] = Qty("2");
  AllocatedState s = AllocatedStateOf({claim({exclusive, admin}), claim({shared}), claim({shared2}),
                                       std::make_shared<ResourceClaim>()});
  EXPECT_EQ(s.allocated, (std::set<DeviceId>{{kDriverA, kPool1, kDevice1}}));
  EXPECT_EQ(s.allocated_shared.size(), 2u);
  const DeviceId d3{kDriverA, kPool1, kDevice3};
  EXPECT_EQ(s.consumed_capacity.at(d3).at("driver-a/capacity-0"), Qty("3"));
}

// Berth: binding conditions of the device are copied to the result; with the feature off,
// devices that have them are not allocated.
TEST(AllocatorCapacityTest, BindingConditionsCopiedToResult) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  Device d = Dev(kDevice1);
  d.binding_conditions = {"attached"};
  d.binding_failure_conditions = {"failed"};
  d.binds_to_node = true;
  c.slices = {Slice(kSlice1, Selected(LabelSelector("region", kRegion1)), kPool1, kDriverA, {d})};
  auto r = RunCase(c);
  ASSERT_TRUE(r.has_value());
  const auto& res = (*r)[0].results.at(0);
  EXPECT_EQ(res.binding_conditions, std::vector<std::string>{"attached"});
  EXPECT_EQ(res.binding_failure_conditions, std::vector<std::string>{"failed"});
  // bindsToNode pins the allocation to the node even though the slice is network-attached.
  EXPECT_EQ((*r)[0].node_selector, LocalSelector(kNode1));
  c.features.binding_conditions = false;
  EXPECT_FALSE(RunCase(c).has_value());
}

// Berth: Allocate is const and called for many nodes at once; the results do not depend on
// the interleaving.
TEST(AllocatorCapacityTest, ConcurrentAllocateOnManyNodes) {
  cel::dra::SelectorCache cache(10);
  std::vector<std::shared_ptr<const ResourceSlice>> slices;
  for (int n = 0; n < 8; ++n) {
    slices.push_back(Slice("slice-" + std::to_string(n), OnNode("node-" + std::to_string(n)),
                           "pool-" + std::to_string(n), kDriverA, {Dev(kDevice0), Dev(kDevice1)}));
  }
  auto cls = Class(kClassA, kDriverA);
  Allocator a(
      Features{}, AllocatedState{},
      [&](std::string_view) -> std::shared_ptr<const DeviceClass> { return cls; }, slices, &cache);
  std::vector<std::shared_ptr<const ResourceClaim>> claims = {
      Claim(kClaim0, {Request(kReq0, kClassA, 2, {"device.driver == \"driver-a\""})})};
  std::vector<std::thread> threads;
  std::vector<std::string> got(8);
  for (int n = 0; n < 8; ++n) {
    threads.emplace_back([&, n] {
      for (int i = 0; i < 50; ++i) {
        auto r = a.Allocate(MakeNode("node-" + std::to_string(n), kRegion1), claims);
        if (r.ok() && *r && (**r)[0].results.size() == 2) got[n] = (**r)[0].results[0].pool;
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int n = 0; n < 8; ++n) EXPECT_EQ(got[n], "pool-" + std::to_string(n));
}

}  // namespace
}  // namespace berth::dra::testing

namespace berth::dra::testing {
namespace {

TEST(PodBuilderClaimsTest, BuiltPodsCarryTheirClaims) {
  auto pod = berth::testing::MakePod()
                 .Name("p")
                 .Claim("shared", "shared-gpu")
                 .ClaimFromTemplate("gpu", "gpu-template")
                 .ClaimStatus("gpu", "p-gpu-1")
                 .Obj();
  auto claims = PodResourceClaimsOf(*pod);
  ASSERT_EQ(claims.size(), 2u);
  EXPECT_EQ(claims[0], (PodResourceClaim{"shared", "shared-gpu", std::nullopt}));
  EXPECT_EQ(claims[1], (PodResourceClaim{"gpu", std::nullopt, "gpu-template"}));
  EXPECT_EQ(PodResourceClaimStatusesOf(*pod),
            (std::vector<std::pair<std::string, std::string>>{{"gpu", "p-gpu-1"}}));
}

}  // namespace
}  // namespace berth::dra::testing
