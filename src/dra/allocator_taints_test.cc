// Cases of upstream's shared allocator test table: device taints and tolerations; each named after
// its upstream case.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "dra/allocator.h"
#include "dra/allocator_test_util.h"

namespace berth::dra::testing {
namespace {
const DeviceTaint kTaintNone{"taint-key", "taint-value", "None", 0};
const DeviceTaint kTaintNoSchedule{"taint-key", "taint-value", "NoSchedule", 0};
const DeviceTaint kTaintNoExecute{"taint-key", "taint-value-2", "NoExecute", 0};
const DeviceToleration kTolerationNoSchedule{"taint-key", "Exists", "", "NoSchedule", {}};
const DeviceToleration kTolerationNoExecute{"taint-key", "Equal", "taint-value-2", "NoExecute", {}};

Device Tainted(const std::string& name, std::vector<DeviceTaint> taints) {
  Device d = Dev(name);
  d.taints = std::move(taints);
  return d;
}

Case TwoTainted(std::vector<DeviceToleration> tolerations) {
  Case c;
  auto claim = Claim(kClaim0, {Request(kReq0, kClassA, 1)});
  claim->spec.devices.requests[0].exactly->tolerations = std::move(tolerations);
  c.claims = {claim};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Tainted(kDevice1, {kTaintNoSchedule}), Tainted(kDevice2, {kTaintNoExecute})})};
  return c;
}

TEST(AllocatorFeaturesTest, TaintedTwoDevices) { NoFit(TwoTainted({})); }

TEST(AllocatorFeaturesTest, TaintedOneDeviceTwoTaints) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Tainted(kDevice1, {kTaintNoSchedule, kTaintNoExecute})})};
  NoFit(c);
}

TEST(AllocatorFeaturesTest, TaintedTwoDevicesTolerated) {
  auto r = Fit(TwoTainted({kTolerationNoExecute}));
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice2)}));
  EXPECT_EQ(r[0].results[0].tolerations, std::vector<DeviceToleration>{kTolerationNoExecute});
}

TEST(AllocatorFeaturesTest, TaintedTwoDevicesPrioritizedListTolerated) {
  Case c = TwoTainted({});
  auto sub1 = SubRequest(kSubReq1, kClassA, 1);
  sub1.request.tolerations = {kTolerationNoExecute};
  c.claims = {Claim(kClaim0, {Prioritized(kReq0, {SubRequest(kSubReq0, kClassA, 1), sub1})})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D("req-0/subReq-1", kDriverA, kPool1, kDevice2)}));
  EXPECT_EQ(r[0].results[0].tolerations, std::vector<DeviceToleration>{kTolerationNoExecute});
}

TEST(AllocatorFeaturesTest, TaintedNoEffect) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Tainted(kDevice1, {kTaintNone})})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1)}));
}

TEST(AllocatorFeaturesTest, TaintedOneDeviceTwoTaintsBothTolerated) {
  Case c;
  auto claim = Claim(kClaim0, {Request(kReq0, kClassA, 1)});
  claim->spec.devices.requests[0].exactly->tolerations = {kTolerationNoSchedule,
                                                          kTolerationNoExecute};
  c.claims = {claim};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {Tainted(kDevice1, {kTaintNoSchedule, kTaintNoExecute})})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1)}));
  EXPECT_EQ(r[0].results[0].tolerations.size(), 2u);
}

TEST(AllocatorFeaturesTest, TaintedDisabled) {
  Case c = TwoTainted({});
  c.features.device_taints = false;
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1)}));
}

TEST(AllocatorFeaturesTest, TaintedPrioritizedList) {
  Case c;
  c.claims = {Claim(kClaim0, {Prioritized(kReq0, {SubRequest(kSubReq0, kClassB, 1),
                                                  SubRequest(kSubReq1, kClassA, 1)})})};
  c.classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)};
  c.slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Tainted(kDevice1, {kTaintNoSchedule})})};
  NoFit(c);
  c.features.device_taints = false;  // tainted-prioritized-list-disabled
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D("req-0/subReq-1", kDriverA, kPool1, kDevice1)}));
}

TEST(AllocatorFeaturesTest, TaintedAdminAccess) {
  Case c;
  auto claim = Claim(kClaim0, {Request(kReq0, kClassA, 1)});
  claim->spec.devices.requests[0].exactly->admin_access = true;
  c.claims = {claim};
  c.allocated.allocated = {{kDriverA, kPool1, kDevice1}, {kDriverA, kPool1, kDevice2}};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Tainted(kDevice1, {kTaintNoSchedule})})};
  NoFit(c);
  c.features.device_taints = false;  // tainted-admin-access-disabled
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1, true)}));
}

TEST(AllocatorFeaturesTest, TaintedAllDevicesSingle) {
  Case c;
  c.claims = {Claim(kClaim0, {AllRequest(kReq0, kClassA)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Tainted(kDevice1, {kTaintNoSchedule})})};
  NoFit(c);
  c.features.device_taints = false;  // tainted-all-devices-single-disabled
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1)}));
}

}  // namespace
}  // namespace berth::dra::testing
