// More cases of upstream's shared allocator test table: constraints, configuration, errors and
// firstAvailable; each named after its upstream case.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "dra/allocator.h"
#include "dra/allocator_test_util.h"

namespace berth::dra::testing {
namespace {

Device WithMemory(const std::string& name, const char* memory) {
  Device d = Dev(name);
  d.capacity["memory"].value = Qty(memory);
  return d;
}

std::shared_ptr<DeviceClass> ClassWithConfig(const std::string& name, const std::string& driver,
                                             const std::string& attribute) {
  auto c = Class(name, driver);
  c->spec.config.push_back({OpaqueDeviceConfiguration{
      driver,
      std::make_shared<const nlohmann::json>(nlohmann::json{{attribute, attribute + "Value"}})}});
  return c;
}

TEST(AllocatorFeaturesTest, WithConstraint) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1), Request(kReq1, kClassA, 1)},
                    {MatchAttribute(kIntAttr), MatchAttribute(kVersionAttr),
                     MatchAttribute(kStringAttr), MatchAttribute(kBoolAttr)})};
  c.classes = {Class(kClassA, kDriverA)};
  auto attrs = std::vector<std::pair<std::string, DeviceAttribute>>{
      {"driverVersion", VersionAttr("1.0.0")},
      {"numa", IntAttr(1)},
      {"stringAttribute", StrAttr("stringAttributeValue")},
      {"boolAttribute", BoolAttr(true)}};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {WithAttrs(kDevice1, attrs), WithAttrs(kDevice2, attrs)})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]),
            Sorted({D(kReq0, kDriverA, kPool1, kDevice1), D(kReq1, kDriverA, kPool1, kDevice2)}));
}

TEST(AllocatorFeaturesTest, WithConstraintNonExistentAttribute) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)},
                    {MatchAttribute("driver-a/NonExistentAttribute")})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  NoFit(c);
}

Case NotMatching(const std::string& attr, const std::string& key, DeviceAttribute a,
                 DeviceAttribute b) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 2)}, {MatchAttribute(attr)})};
  c.classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {WithAttrs(kDevice1, {{key, a}}), WithAttrs(kDevice2, {{key, b}})})};
  return c;
}

TEST(AllocatorFeaturesTest, WithConstraintNotMatchingIntAttribute) {
  NoFit(NotMatching(kIntAttr, "numa", IntAttr(1), IntAttr(2)));
}

TEST(AllocatorFeaturesTest, WithConstraintNotMatchingIntAttributeAllDevices) {
  Case c = NotMatching(kIntAttr, "numa", IntAttr(1), IntAttr(2));
  c.claims[0]->spec.devices.requests[0].exactly->allocation_mode = kAllocationModeAll;
  Fails(c,
        "claim claim-0, request req-0: cannot add device driver-a/pool-1/device-2 because a "
        "claim constraint would not be satisfied");
}

TEST(AllocatorFeaturesTest, WithConstraintNotMatchingStringAttribute) {
  NoFit(NotMatching(kStringAttr, "stringAttribute", StrAttr("stringAttributeValue"),
                    StrAttr("stringAttributeValue2")));
}

TEST(AllocatorFeaturesTest, WithConstraintNotMatchingBoolAttribute) {
  NoFit(NotMatching(kBoolAttr, "boolAttribute", BoolAttr(true), BoolAttr(false)));
}

TEST(AllocatorFeaturesTest, WithConstraintNotMatchingVersionAttribute) {
  NoFit(NotMatching(kVersionAttr, "driverVersion", VersionAttr("1.0.0"), VersionAttr("2.0.0")));
}

TEST(AllocatorFeaturesTest, WithConstraintForRequest) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1), Request(kReq1, kClassA, 1)},
                    {MatchAttribute(kVersionAttr, {kReq0})})};
  c.classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {WithAttrs(kDevice1, {{"driverVersion", VersionAttr("1.0.0")}}),
                     WithAttrs(kDevice2, {{"driverVersion", VersionAttr("2.0.0")}})})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]),
            Sorted({D(kReq0, kDriverA, kPool1, kDevice1), D(kReq1, kDriverA, kPool1, kDevice2)}));
}

TEST(AllocatorFeaturesTest, WithConstraintForRequestRetry) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1), Request(kReq1, kClassA, 1)},
                    {MatchAttribute(kVersionAttr, {kReq0}), MatchAttribute(kStringAttr)})};
  c.classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {WithAttrs(kDevice1, {{"driverVersion", VersionAttr("1.0.0")},
                                          {"stringAttribute", StrAttr("a")}}),
                     WithAttrs(kDevice2, {{"driverVersion", VersionAttr("2.0.0")},
                                          {"stringAttribute", StrAttr("b")}}),
                     WithAttrs(kDevice3, {{"driverVersion", VersionAttr("3.0.0")},
                                          {"stringAttribute", StrAttr("b")}})})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]),
            Sorted({D(kReq0, kDriverA, kPool1, kDevice2), D(kReq1, kDriverA, kPool1, kDevice3)}));
}

TEST(AllocatorFeaturesTest, WithClassDeviceConfig) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  c.classes = {ClassWithConfig(kClassA, kDriverA, "classAttribute")};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  auto r = Fit(c);
  ASSERT_EQ(r[0].config.size(), 1u);
  EXPECT_EQ(r[0].config[0].source, "FromClass");
  EXPECT_EQ(r[0].config[0].requests, std::vector<std::string>{kReq0});
  EXPECT_EQ(r[0].config[0].opaque.driver, kDriverA);
  EXPECT_EQ((*r[0].config[0].opaque.parameters)["classAttribute"], "classAttributeValue");
}

TEST(AllocatorFeaturesTest, WithClassDeviceConfigWithMultipleRequestAndConfigs) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1), Request(kReq1, kClassA, 1),
                              Request(kReq2, kClassB, 1)})};
  c.classes = {ClassWithConfig(kClassA, kDriverA, "classAttribute-A"),
               ClassWithConfig(kClassB, kDriverB, "classAttribute-B")};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice0), Dev(kDevice1)}),
              OneDevice(kSlice2, OnNode(kNode1), kPool1, kDriverB)};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]),
            Sorted({D(kReq0, kDriverA, kPool1, kDevice0), D(kReq1, kDriverA, kPool1, kDevice1),
                    D(kReq2, kDriverB, kPool1, kDevice1)}));
  ASSERT_EQ(r[0].config.size(), 2u);
  EXPECT_EQ(r[0].config[0].requests, (std::vector<std::string>{kReq0, kReq1}));
  EXPECT_EQ(r[0].config[0].opaque.driver, kDriverA);
  EXPECT_EQ(r[0].config[1].requests, std::vector<std::string>{kReq2});
  EXPECT_EQ(r[0].config[1].opaque.driver, kDriverB);
}

TEST(AllocatorFeaturesTest, ClaimWithDeviceConfig) {
  Case c;
  auto claim = Claim(kClaim0, {Request(kReq0, kClassA, 1)});
  claim->spec.devices.config.push_back(
      {{},
       {kDriverA, std::make_shared<const nlohmann::json>(
                      nlohmann::json{{"deviceAttribute", "deviceAttributeValue"}})}});
  c.claims = {claim};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  auto r = Fit(c);
  ASSERT_EQ(r[0].config.size(), 1u);
  EXPECT_EQ(r[0].config[0].source, "FromClaim");
  EXPECT_TRUE(r[0].config[0].requests.empty());
}

TEST(AllocatorFeaturesTest, UnknownSelector) {
  Case c;
  auto claim = Claim(kClaim0, {Request(kReq0, kClassA, 1)});
  claim->spec.devices.requests[0].exactly->selectors.push_back({""});
  c.claims = {claim};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  Fails(c, "CEL expression empty (unsupported selector type?)");
}

TEST(AllocatorFeaturesTest, UnknownAllocationMode) {
  Case c;
  auto claim = Claim(kClaim0, {Request(kReq0, kClassA, 1)});
  claim->spec.devices.requests[0].exactly->allocation_mode = "future-mode";
  c.claims = {claim};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  Fails(c, "unsupported count mode future-mode");
}

TEST(AllocatorFeaturesTest, UnknownConstraint) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)}, {DeviceConstraint{}})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  Fails(c, "claim claim-0, constraint #0: empty constraint (unsupported constraint type?)");
}

TEST(AllocatorFeaturesTest, InvalidCELOneDevice) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1, {"noSuchVar"})})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  Fails(c, "claim claim-0: selector #0: CEL compile error: ");
  Fails(c, "undeclared reference");
}

TEST(AllocatorFeaturesTest, InvalidCELOneDeviceClass) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  auto cls = Class(kClassA, kDriverA);
  cls->spec.selectors[0].cel_expression = "noSuchVar";
  c.classes = {cls};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  Fails(c, "class class-a: selector #0: CEL compile error: ");
  Fails(c, "undeclared reference");
}

TEST(AllocatorFeaturesTest, InvalidCELAllDevices) {
  Case c;
  c.claims = {Claim(kClaim0, {AllRequest(kReq0, kClassA)})};
  c.claims[0]->spec.devices.requests[0].exactly->selectors.push_back({"noSuchVar"});
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  Fails(c, "undeclared reference");
}

TEST(AllocatorFeaturesTest, CELRuntimeErrorNamesTheDevice) {
  Case c;
  c.claims = {Claim(
      kClaim0, {Request(kReq0, kClassA, 1, {"device.attributes[\"driver-a\"].model == \"x\""})})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  Fails(c, "claim claim-0: selector #0 on device driver-a/pool-1/device-1: CEL runtime error: ");
}

TEST(AllocatorFeaturesTest, TooManyDevicesSingleRequest) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 500)})};
  c.classes = {Class(kClassA, kDriverA)};
  Fails(c, "claim claim-0: number of requested devices 500 exceeds the claim limit of 32");
}

TEST(AllocatorFeaturesTest, ManyDevicesOkay) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, kAllocationResultsMaxSize)})};
  c.classes = {Class(kClassA, kDriverA)};
  NoFit(c);
}

std::vector<Device> NumberedDevices(int n) {
  std::vector<Device> out;
  for (int i = 0; i < n; ++i) out.push_back(Dev("device-" + std::to_string(i)));
  return out;
}

TEST(AllocatorFeaturesTest, TooManyDevicesTotal) {
  Case c;
  c.claims = {Claim(
      kClaim0, {Request(kReq0, kClassA, kAllocationResultsMaxSize), Request(kReq1, kClassA, 1)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    NumberedDevices(kAllocationResultsMaxSize + 1))};
  Fails(c, "exceeds the claim limit");
}

TEST(AllocatorFeaturesTest, MaxNumberDevices) {
  Case c;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, kAllocationResultsMaxSize)})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, NumberedDevices(kAllocationResultsMaxSize))};
  auto r = Fit(c);
  EXPECT_EQ(r[0].results.size(), static_cast<size_t>(kAllocationResultsMaxSize));
}

TEST(AllocatorFeaturesTest, PrioritizedListFirstUnavailable) {
  Case c;
  c.claims = {Claim(kClaim0, {Prioritized(kReq0, {SubRequest(kSubReq0, kClassB, 1),
                                                  SubRequest(kSubReq1, kClassA, 1)})})};
  c.classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D("req-0/subReq-1", kDriverA, kPool1, kDevice1)}));
}

TEST(AllocatorFeaturesTest, PrioritizedListNonAvailable) {
  Case c;
  c.claims = {Claim(kClaim0, {Prioritized(kReq0, {SubRequest(kSubReq0, kClassB, 2),
                                                  SubRequest(kSubReq1, kClassA, 2)})})};
  c.classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA),
              OneDevice(kSlice2, OnNode(kNode1), kPool2, kDriverB)};
  NoFit(c);
}

TEST(AllocatorFeaturesTest, PrioritizedListDeviceConfig) {
  Case c;
  auto claim = Claim(
      kClaim0,
      {Prioritized(kReq0, {SubRequest(kSubReq0, kClassA, 1), SubRequest(kSubReq1, kClassB, 2)})});
  claim->spec.devices.config.push_back({{"req-0/subReq-0"}, {kDriverA, nullptr}});
  claim->spec.devices.config.push_back({{"req-0/subReq-1"}, {kDriverB, nullptr}});
  c.claims = {claim};
  c.classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverB, {Dev(kDevice1), Dev(kDevice2)})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D("req-0/subReq-1", kDriverB, kPool1, kDevice1),
                                   D("req-0/subReq-1", kDriverB, kPool1, kDevice2)}));
  ASSERT_EQ(r[0].config.size(), 1u);
  EXPECT_EQ(r[0].config[0].source, "FromClaim");
  EXPECT_EQ(r[0].config[0].requests, std::vector<std::string>{"req-0/subReq-1"});
  EXPECT_EQ(r[0].config[0].opaque.driver, kDriverB);
}

TEST(AllocatorFeaturesTest, PrioritizedListClassConfig) {
  Case c;
  c.claims = {Claim(kClaim0, {Prioritized(kReq0, {SubRequest(kSubReq0, kClassA, 2),
                                                  SubRequest(kSubReq1, kClassB, 2)})})};
  c.classes = {ClassWithConfig(kClassA, kDriverA, "foo"),
               ClassWithConfig(kClassB, kDriverB, "bar")};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverB, {Dev(kDevice1), Dev(kDevice2)}),
              Slice(kSlice2, OnNode(kNode1), kPool2, kDriverA, {Dev(kDevice3)})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D("req-0/subReq-1", kDriverB, kPool1, kDevice1),
                                   D("req-0/subReq-1", kDriverB, kPool1, kDevice2)}));
  ASSERT_EQ(r[0].config.size(), 1u);
  EXPECT_EQ(r[0].config[0].source, "FromClass");
  EXPECT_EQ(r[0].config[0].requests, std::vector<std::string>{"req-0/subReq-1"});
}

TEST(AllocatorFeaturesTest, PrioritizedListSubrequestsWithExpressions) {
  Case c;
  auto sub0 = SubRequest(kSubReq0, kClassA, 1);
  sub0.request.selectors.push_back({MemoryAtLeast("4Gi")});
  auto sub1 = SubRequest(kSubReq1, kClassA, 2);
  sub1.request.selectors.push_back({MemoryAtLeast("2Gi")});
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1, {MemoryAtLeast("1Gi")}),
                              Prioritized(kReq1, {sub0, sub1})})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(
      kSlice1, OnNode(kNode1), kPool1, kDriverA,
      {WithMemory(kDevice1, "2Gi"), WithMemory(kDevice2, "2Gi"), WithMemory(kDevice3, "1Gi")})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice3),
                                   D("req-1/subReq-1", kDriverA, kPool1, kDevice1),
                                   D("req-1/subReq-1", kDriverA, kPool1, kDevice2)}));
}

Case ConstraintsRef(std::vector<std::string> requests, bool third_device) {
  Case c;
  auto sub0 = SubRequest(kSubReq0, kClassA, 1);
  sub0.request.selectors.push_back({MemoryAtLeast("2Gi")});
  auto sub1 = SubRequest(kSubReq1, kClassA, 1);
  sub1.request.selectors.push_back({MemoryAtLeast("1Gi")});
  c.claims = {
      Claim(kClaim0,
            {Request(kReq0, kClassA, 1, {MemoryAtLeast("8Gi")}), Prioritized(kReq1, {sub0, sub1})},
            {MatchAttribute(kVersionAttr, std::move(requests))})};
  c.classes = {Class(kClassA, kDriverA)};
  auto dev = [](const char* name, const char* mem, const char* version) {
    Device d = WithMemory(name, mem);
    d.attributes["driverVersion"] = VersionAttr(version);
    return d;
  };
  std::vector<Device> pool2 = {dev(kDevice2, "2Gi", "2.0.0")};
  if (third_device) pool2.push_back(dev(kDevice3, "1Gi", "1.0.0"));
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {dev(kDevice1, "8Gi", "1.0.0")}),
              Slice(kSlice2, OnNode(kNode1), kPool2, kDriverA, pool2)};
  return c;
}

TEST(AllocatorFeaturesTest, PrioritizedListSubrequestsWithConstraintsRefParentRequest) {
  auto r = Fit(ConstraintsRef({kReq0, kReq1}, true));
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1),
                                   D("req-1/subReq-1", kDriverA, kPool2, kDevice3)}));
}

TEST(AllocatorFeaturesTest, PrioritizedListSubrequestsWithConstraintsRefSubRequest) {
  auto r = Fit(ConstraintsRef({kReq0, "req-1/subReq-0"}, false));
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1),
                                   D("req-1/subReq-1", kDriverA, kPool2, kDevice2)}));
}

TEST(AllocatorFeaturesTest, PrioritizedListSubrequestsWithAllocationModeAll) {
  Case c;
  auto sub0 = SubRequest(kSubReq0, kClassA, 0);
  sub0.request.allocation_mode = kAllocationModeAll;
  c.claims = {Claim(kClaim0, {Prioritized(kReq0, {sub0, SubRequest(kSubReq1, kClassA, 1)})})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice1), Dev(kDevice2)})};
  c.allocated.allocated.insert({kDriverA, kPool1, kDevice1});
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D("req-0/subReq-1", kDriverA, kPool1, kDevice2)}));
}

TEST(AllocatorFeaturesTest, PrioritizedListAllocationModeAllMultipleRequests) {
  Case c;
  auto sub0 = SubRequest(kSubReq0, kClassA, 0);
  sub0.request.allocation_mode = kAllocationModeAll;
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1),
                              Prioritized(kReq1, {sub0, SubRequest(kSubReq1, kClassA, 1)})})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice1), Dev(kDevice2)})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq0, kDriverA, kPool1, kDevice1),
                                   D("req-1/subReq-1", kDriverA, kPool1, kDevice2)}));
}

TEST(AllocatorFeaturesTest, PrioritizedListDisabled) {
  Case c;
  c.features.prioritized_list = false;
  c.claims = {Claim(kClaim0, {Prioritized(kReq0, {SubRequest(kSubReq0, kClassA, 1)})})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  Fails(c,
        "claim claim-0, request req-0: has subrequests, but the DRAPrioritizedList feature is "
        "disabled");
}

TEST(AllocatorFeaturesTest, PrioritizedListMultiRequest) {
  Case c;
  auto sub0 = SubRequest(kSubReq0, kClassA, 1);
  sub0.request.selectors.push_back({MemoryAtLeast("8Gi")});
  auto sub1 = SubRequest(kSubReq1, kClassA, 1);
  sub1.request.selectors.push_back({MemoryAtLeast("4Gi")});
  c.claims = {Claim(kClaim0, {Request(kReq1, kClassA, 1, {MemoryAtLeast("8Gi")}),
                              Prioritized(kReq0, {sub0, sub1})})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {WithMemory(kDevice1, "8Gi")}),
              Slice(kSlice2, OnNode(kNode1), kPool2, kDriverA, {WithMemory(kDevice2, "4Gi")})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D(kReq1, kDriverA, kPool1, kDevice1),
                                   D("req-0/subReq-1", kDriverA, kPool2, kDevice2)}));
}

TEST(AllocatorFeaturesTest, PrioritizedListWithBacktracking) {
  Case c;
  auto sub0 = SubRequest(kSubReq0, kClassA, 1);
  sub0.request.selectors.push_back({MemoryAtLeast("8Gi")});
  auto sub1 = SubRequest(kSubReq1, kClassA, 1);
  sub1.request.selectors.push_back({MemoryAtLeast("4Gi")});
  c.claims = {Claim(kClaim0, {Prioritized(kReq0, {sub0, sub1}),
                              Request(kReq1, kClassA, 1, {MemoryAtLeast("8Gi")})})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {WithMemory(kDevice1, "8Gi")}),
              Slice(kSlice2, OnNode(kNode1), kPool2, kDriverA, {WithMemory(kDevice2, "4Gi")})};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D("req-0/subReq-1", kDriverA, kPool2, kDevice2),
                                   D(kReq1, kDriverA, kPool1, kDevice1)}));
}

TEST(AllocatorFeaturesTest, PrioritizedListTooManyInFirstSubrequest) {
  Case c;
  c.claims = {Claim(kClaim0, {Prioritized(kReq0, {SubRequest(kSubReq0, kClassB, 500),
                                                  SubRequest(kSubReq1, kClassA, 1)})})};
  c.classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)};
  c.slices = {OneDevice(kSlice1, OnNode(kNode1), kPool1, kDriverA)};
  auto r = Fit(c);
  EXPECT_EQ(Devices(r[0]), Sorted({D("req-0/subReq-1", kDriverA, kPool1, kDevice1)}));
}

TEST(AllocatorFeaturesTest, PrioritizedListMaxAllocationLimitRequest) {
  Case c;
  const int max = kAllocationResultsMaxSize;
  c.claims = {Claim(kClaim0, {Prioritized(kReq0, {SubRequest(kSubReq0, kClassA, max),
                                                  SubRequest(kSubReq1, kClassA, max / 2)}),
                              Prioritized(kReq1, {SubRequest(kSubReq0, kClassA, max),
                                                  SubRequest(kSubReq1, kClassA, max / 2)})})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, NumberedDevices(2 * max))};
  auto r = Fit(c);
  std::vector<Expected> want;
  for (int i = 0; i < max / 2; ++i)
    want.push_back(D("req-0/subReq-1", kDriverA, kPool1, "device-" + std::to_string(i)));
  for (int i = max / 2; i < max; ++i)
    want.push_back(D("req-1/subReq-1", kDriverA, kPool1, "device-" + std::to_string(i)));
  EXPECT_EQ(Devices(r[0]), Sorted(want));
}

TEST(AllocatorFeaturesTest, PrioritizedListAllocationModeAllWithSelectors) {
  Case c;
  auto sub0 = SubRequest(kSubReq0, kClassA, 0);
  sub0.request.allocation_mode = kAllocationModeAll;
  sub0.request.selectors.push_back({"device.attributes[\"driver-a\"].generation == \"v6\""});
  auto sub1 = sub0;
  sub1.name = kSubReq1;
  sub1.request.selectors[0].cel_expression = "device.attributes[\"driver-a\"].generation == \"v5\"";
  c.claims = {Claim(kClaim0, {Prioritized(kReq0, {sub0, sub1})})};
  c.classes = {Class(kClassA, kDriverA)};
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA,
                    {WithAttrs(kDevice1, {{"generation", StrAttr("v5")}})}),
              Slice(kSlice2, OnNode(kNode2), kPool2, kDriverA,
                    {WithAttrs(kDevice1, {{"generation", StrAttr("v5")}}),
                     WithAttrs(kDevice2, {{"generation", StrAttr("v6")}})})};
  auto r = Fit(c);  // ...-multiple-pools-across-nodes: node-2's devices do not count
  EXPECT_EQ(Devices(r[0]), Sorted({D("req-0/subReq-1", kDriverA, kPool1, kDevice1)}));
}

}  // namespace
}  // namespace berth::dra::testing
