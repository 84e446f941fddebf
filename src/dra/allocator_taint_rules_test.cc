// The allocator on slices as the scheduler lists them with DeviceTaintRules applied
// (framework/tainted_slices.h): a device a rule selects carries the rule's taint, and the
// requests' tolerations decide, as for taints the driver published.
#include <gtest/gtest.h>

#include "dra/allocator.h"
#include "dra/allocator_test_util.h"
#include "framework/tainted_slices.h"

namespace berth::dra::testing {
namespace {

DeviceTaintRule Rule(std::optional<DeviceTaintRule::Selector> selector, std::string effect) {
  DeviceTaintRule r;
  r.metadata.name = "rule";
  r.selector = std::move(selector);
  r.taint = DeviceTaint{"example.com/taint", "tainted", std::move(effect), 0};
  return r;
}

// Two devices of one pool, the rule applied as the listers apply it.
Case TwoDevices(const DeviceTaintRule& rule, std::vector<DeviceToleration> tolerations) {
  Case c;
  auto claim = Claim(kClaim0, {Request(kReq0, kClassA, 1)});
  claim->spec.devices.requests[0].exactly->tolerations = std::move(tolerations);
  c.claims = {claim};
  c.classes = {Class(kClassA, kDriverA)};
  auto slice = Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice1), Dev(kDevice2)});
  c.slices = {std::const_pointer_cast<ResourceSlice>(ApplyDeviceTaintRules(slice, {&rule}))};
  return c;
}

TEST(AllocatorTaintRulesTest, NoScheduleOnEveryDeviceWithoutTolerationDoesNotFit) {
  NoFit(TwoDevices(Rule(DeviceTaintRule::Selector{}, "NoSchedule"), {}));
}

// A rule without a selector selects no device.
TEST(AllocatorTaintRulesTest, ARuleWithoutSelectorTaintsNothing) {
  auto r = Fit(TwoDevices(Rule(std::nullopt, "NoSchedule"), {}));
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1)}));
  EXPECT_TRUE(r[0].results[0].tolerations.empty());
}

TEST(AllocatorTaintRulesTest, NoExecuteOnEveryDeviceWithoutTolerationDoesNotFit) {
  NoFit(TwoDevices(Rule(DeviceTaintRule::Selector{.driver = kDriverA}, "NoExecute"), {}));
}

TEST(AllocatorTaintRulesTest, TheDeviceTheRuleDoesNotSelectIsAllocated) {
  auto r = Fit(TwoDevices(Rule(DeviceTaintRule::Selector{.device = kDevice1}, "NoSchedule"), {}));
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice2)}));
}

TEST(AllocatorTaintRulesTest, ATolerationOfTheRulesTaintFits) {
  const DeviceToleration exists{"example.com/taint", "Exists", "", "", {}};
  auto r = Fit(TwoDevices(Rule(DeviceTaintRule::Selector{}, "NoSchedule"), {exists}));
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1)}));
  EXPECT_EQ(r[0].results[0].tolerations, std::vector<DeviceToleration>{exists});
}

TEST(AllocatorTaintRulesTest, ATolerationOfAnotherValueDoesNotFit) {
  const DeviceToleration other{"example.com/taint", "Equal", "other", "NoSchedule", {}};
  NoFit(TwoDevices(Rule(DeviceTaintRule::Selector{}, "NoSchedule"), {other}));
}

TEST(AllocatorTaintRulesTest, EffectNoneDoesNotKeepDevicesFromBeingAllocated) {
  Fit(TwoDevices(Rule(DeviceTaintRule::Selector{}, "None"), {}));
}

}  // namespace
}  // namespace berth::dra::testing
