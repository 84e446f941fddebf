// Allocator::Diagnose: per request, how many devices pass each of the allocator's checks.
#include <gtest/gtest.h>

#include "cel/dra.h"
#include "dra/allocator.h"
#include "dra/allocator_test_util.h"

namespace berth::dra::testing {
namespace {

Device WithMemory(const std::string& name, const char* memory) {
  Device d = Dev(name);
  d.capacity["memory"].value = Qty(memory);
  return d;
}

Result<Diagnosis> Diagnose(const Case& c) {
  cel::dra::SelectorCache cache(100);
  auto lookup = [&c](std::string_view name) -> std::shared_ptr<const DeviceClass> {
    for (const auto& k : c.classes)
      if (k->metadata.name == name) return k;
    return nullptr;
  };
  std::vector<std::shared_ptr<const ResourceSlice>> s(c.slices.begin(), c.slices.end());
  Allocator a(c.features, c.allocated, lookup, s, &cache);
  std::vector<std::shared_ptr<const ResourceClaim>> claims(c.claims.begin(), c.claims.end());
  return a.Diagnose(c.node, claims);
}

// A GPU class whose selector reads device.capacity; two GPUs of 8Gi and 16Gi plus one device
// of another driver on the node.
Case Gpus() {
  Case c;
  auto gpu = Class(kClassA, kDriverA);
  gpu->spec.selectors.push_back({MemoryAtLeast("8Gi")});
  c.classes = {gpu};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {WithMemory(kDevice0, "4Gi"), WithMemory(kDevice1, "8Gi"),
                     WithMemory(kDevice2, "16Gi")}),
              OneDevice(kSlice2, OnNode(kNode1), kPool2, kDriverB)};
  return c;
}

TEST(AllocatorDiagnoseTest, RequestSelectorNoDeviceMatches) {
  Case c = Gpus();
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1, {MemoryAtLeast("32Gi")})})};
  auto d = Diagnose(c);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_FALSE(d->fits);
  ASSERT_EQ(d->requests.size(), 1u);
  const RequestDiagnosis& r = d->requests[0];
  EXPECT_EQ(r.request, kReq0);
  EXPECT_EQ(r.device_class, kClassA);
  EXPECT_EQ(r.wanted, 1);
  EXPECT_EQ(r.considered, 4);
  EXPECT_EQ(r.class_match, 2);  // 8Gi and 16Gi of driver-a
  EXPECT_EQ(r.request_match, 0);
  EXPECT_EQ(r.free, 0);
}

TEST(AllocatorDiagnoseTest, MatchingDeviceAllocated) {
  Case c = Gpus();
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1, {MemoryAtLeast("16Gi")})})};
  c.allocated.allocated.insert(DeviceId{kDriverA, kPool1, kDevice2});
  auto d = Diagnose(c);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_FALSE(d->fits);
  ASSERT_EQ(d->requests.size(), 1u);
  const RequestDiagnosis& r = d->requests[0];
  EXPECT_EQ(r.class_match, 2);
  EXPECT_EQ(r.request_match, 1);
  EXPECT_EQ(r.capacity_fit, 1);
  ASSERT_EQ(r.allocated.size(), 1u);
  EXPECT_EQ(r.allocated[0].device, kDevice2);
  EXPECT_EQ(r.free, 0);
}

TEST(AllocatorDiagnoseTest, FitsAgreesWithAllocate) {
  Case c = Gpus();
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 2)})};
  auto d = Diagnose(c);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_TRUE(d->fits);
  EXPECT_EQ(d->requests[0].free, 2);
  auto r = c.Run();
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->has_value());
}

// Each request alone has a free device, but matchAttribute cannot hold for both.
TEST(AllocatorDiagnoseTest, ConstraintUnmet) {
  Case c;
  c.classes = {Class(kClassA, kDriverA)};
  const std::string attr = std::string(kDriverA) + "/numa";
  Device d0 = Dev(kDevice0);
  d0.attributes[attr] = IntAttr(0);
  Device d1 = Dev(kDevice1);
  d1.attributes[attr] = IntAttr(1);
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {d0, d1})};
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1), Request(kReq1, kClassA, 1)},
                    {MatchAttribute(attr)})};
  // Both devices of the node: one must be allocated already for the constraint to bite.
  c.claims[0]->spec.devices.requests[1].exactly->selectors.push_back(
      {"device.attributes[\"driver-a\"].numa == 1"});
  c.claims[0]->spec.devices.requests[0].exactly->selectors.push_back(
      {"device.attributes[\"driver-a\"].numa == 0"});
  auto d = Diagnose(c);
  ASSERT_TRUE(d.ok()) << d.error().message;
  EXPECT_FALSE(d->fits);
  ASSERT_EQ(d->requests.size(), 2u);
  EXPECT_EQ(d->requests[0].free, 1);
  EXPECT_EQ(d->requests[1].free, 1);
}

TEST(AllocatorDiagnoseTest, MissingClassIsTheAllocatorsError) {
  Case c = Gpus();
  c.claims = {Claim(kClaim0, {Request(kReq0, "no-such-class", 1)})};
  auto d = Diagnose(c);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().message, c.Run().error().message);
}

}  // namespace
}  // namespace berth::dra::testing
