// resource.k8s.io/v1 defaulting and validation, with cases from kube-apiserver's
// pkg/apis/resource/validation tests (validation_resourceclaim_test.go,
// validation_resourceslice_test.go, validation_deviceclass_test.go).
#include "apiserver/resource_validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "apiserver/resources.h"
#include "apiserver/selectors.h"
#include "apiserver/table.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const ResourceInfo& Res(const char* plural) {
  return *FindResource("resource.k8s.io", "v1", plural);
}

Json Claim(Json requests, Json constraints = Json::array()) {
  Json claim = {{"metadata", {{"name", "claim"}, {"namespace", "default"}}},
                {"spec", {{"devices", {{"requests", std::move(requests)}}}}}};
  if (!constraints.empty()) claim["spec"]["devices"]["constraints"] = std::move(constraints);
  return claim;
}

Json Exact(const char* name, Json exactly = {{"deviceClassName", "gpu.example.com"}}) {
  return {{"name", name}, {"exactly", std::move(exactly)}};
}

// Defaulted then validated, as a create is.
std::vector<std::string> ResourceFieldErrorTexts(const ResourceInfo& r, const Json& obj,
                                                 const Json* old) {
  return ToStrings(ResourceFieldErrors(r, obj, old));
}

std::vector<std::string> CreateErrors(const char* plural, Json obj) {
  DefaultResourceObject(Res(plural), obj, true, "2026-01-01T00:00:00Z");
  return ResourceFieldErrorTexts(Res(plural), obj, nullptr);
}

TEST(ResourceDefaultsTest, ExactRequestsAndSubrequestsGetExactCountOfOne) {
  Json claim =
      Claim({Exact("a", {{"deviceClassName", "c"}, {"tolerations", {{{"key", "k"}}}}}),
             {{"name", "b"}, {"firstAvailable", {{{"name", "x"}, {"deviceClassName", "c"}}}}},
             Exact("all", {{"deviceClassName", "c"}, {"allocationMode", "All"}})});
  claim["status"] = {{"reservedFor", Json::array()}};
  DefaultResourceObject(Res("resourceclaims"), claim, true, "now");
  const Json& requests = claim["spec"]["devices"]["requests"];
  EXPECT_EQ(requests[0]["exactly"]["allocationMode"], "ExactCount");
  EXPECT_EQ(requests[0]["exactly"]["count"], 1);
  EXPECT_EQ(requests[0]["exactly"]["tolerations"][0]["operator"], "Equal");
  EXPECT_EQ(requests[1]["firstAvailable"][0]["allocationMode"], "ExactCount");
  EXPECT_EQ(requests[1]["firstAvailable"][0]["count"], 1);
  EXPECT_FALSE(requests[2]["exactly"].contains("count"));
  // A created claim starts without status, as its registry strategy resets it.
  EXPECT_FALSE(claim.contains("status"));
  // A status write's results get their tolerations' operator too.
  claim["status"]["allocation"]["devices"]["results"] = {{{"tolerations", {{{"key", "k"}}}}}};
  DefaultResourceObject(Res("resourceclaims"), claim, false, "now");
  EXPECT_EQ(claim["status"]["allocation"]["devices"]["results"][0]["tolerations"][0]["operator"],
            "Equal");
}

TEST(ResourceDefaultsTest, TemplateSpecAndSliceTaintsAreDefaulted) {
  Json tmpl = {{"metadata", {{"name", "t"}}},
               {"spec", {{"spec", {{"devices", {{"requests", {Exact("gpu")}}}}}}}}};
  DefaultResourceObject(Res("resourceclaimtemplates"), tmpl, true, "now");
  EXPECT_EQ(tmpl["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"], 1);
  Json slice = {{"spec", {{"devices", {{{"name", "d"}, {"taints", {{{"key", "k"}}}}}}}}}};
  DefaultResourceObject(Res("resourceslices"), slice, true, "2026-01-01T00:00:00Z");
  EXPECT_EQ(slice["spec"]["devices"][0]["taints"][0]["timeAdded"], "2026-01-01T00:00:00Z");
}

TEST(ResourceClaimValidationTest, ValidClaimHasNoErrors) {
  EXPECT_THAT(
      CreateErrors(
          "resourceclaims",
          Claim(
              {Exact(
                   "gpu",
                   {{"deviceClassName", "gpu.example.com"},
                    {"selectors",
                     {{{"cel",
                        {{"expression",
                          R"(device.capacity["gpu.example.com"].memory.compareTo(quantity("8Gi")) >= 0)"}}}}}}}),
               Exact("nic")},
              {{{"requests", {"gpu", "nic"}}, {"matchAttribute", "gpu.example.com/numa"}}})),
      IsEmpty());
}

TEST(ResourceClaimValidationTest, RequestNamesAreUniqueDnsLabels) {
  EXPECT_THAT(
      CreateErrors("resourceclaims", Claim({Exact("gpu"), Exact("gpu"), Exact("Bad_Name")})),
      ElementsAre(
          "spec.devices.requests[2].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 "
          "label must consist of lower case alphanumeric characters or '-', and must start and "
          "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
          "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
          "spec.devices.requests[1]: Duplicate value: \"gpu\""));
}

TEST(ResourceClaimValidationTest, ExactlyOneOfExactlyAndFirstAvailable) {
  Json both = Exact("b");
  both["firstAvailable"] = {{{"name", "x"}, {"deviceClassName", "c"}}};
  EXPECT_THAT(CreateErrors("resourceclaims", Claim({{{"name", "a"}}, both})),
              ElementsAre("spec.devices.requests[0]: Required value: exactly one of `exactly` "
                          "or `firstAvailable` is required",
                          "spec.devices.requests[1]: Invalid value: \"null\": exactly one of "
                          "`exactly` or `firstAvailable` is required, but multiple fields are "
                          "set"));
}

TEST(ResourceClaimValidationTest, ClassModeAndCount) {
  EXPECT_THAT(
      CreateErrors(
          "resourceclaims",
          Claim({Exact("a", Json::object()),
                 Exact("b", {{"deviceClassName", "c"}, {"allocationMode", "Some"}}),
                 Exact("c", {{"deviceClassName", "c"}, {"count", -1}}),
                 Exact("d", {{"deviceClassName", "c"}, {"allocationMode", "All"}, {"count", 2}})})),
      ElementsAre("spec.devices.requests[0].exactly.deviceClassName: Required value",
                  "spec.devices.requests[1].exactly.allocationMode: Unsupported value: \"Some\": "
                  "supported values: \"All\", \"ExactCount\"",
                  "spec.devices.requests[2].exactly.count: Invalid value: -1: must be greater "
                  "than zero",
                  "spec.devices.requests[3].exactly.count: Invalid value: 2: must not be "
                  "specified when allocationMode is 'All'"));
}

TEST(ResourceClaimValidationTest, CelExpressionsAreCompiled) {
  auto with = [](std::string expression) {
    return Claim({Exact("a", {{"deviceClassName", "c"},
                              {"selectors", {{{"cel", {{"expression", expression}}}}}}})});
  };
  auto errors = CreateErrors("resourceclaims", with("device.no_such_field"));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], ::testing::StartsWith("spec.devices.requests[0].exactly.selectors[0]."
                                               "cel.expression: Invalid value: "
                                               "\"device.no_such_field\": compilation failed"));
  EXPECT_THAT(CreateErrors("resourceclaims", with(std::string(10 * 1024 + 1, 'x'))),
              ElementsAre("spec.devices.requests[0].exactly.selectors[0].cel.expression: Too "
                          "long: may not be more than 10240 bytes"));
  EXPECT_THAT(CreateErrors(
                  "resourceclaims",
                  Claim({Exact("a", {{"deviceClassName", "c"}, {"selectors", {Json::object()}}})})),
              ElementsAre("spec.devices.requests[0].exactly.selectors[0].cel: Required value"));
}

TEST(ResourceClaimValidationTest, ConstraintsNameRequestsAndQualifiedAttributes) {
  EXPECT_THAT(CreateErrors("resourceclaims", Claim({Exact("a")}, {{{"requests", {"a", "missing"}},
                                                                   {"matchAttribute", "numa"}},
                                                                  {{"requests", {"a"}}}})),
              ElementsAre("spec.devices.constraints[0].requests[1]: Invalid value: \"missing\": "
                          "must be the name of a request in the claim or the name of a request "
                          "and a subrequest separated by '/'",
                          "spec.devices.constraints[0].matchAttribute: Invalid value: \"numa\": a "
                          "fully qualified name must be a domain and a name separated by a slash",
                          "spec.devices.constraints[1]: Required value: exactly one of "
                          "\"matchAttribute\" or \"distinctAttribute\" is required, but multiple "
                          "fields are set"));
}

TEST(ResourceClaimValidationTest, TolerationsAreChecked) {
  EXPECT_THAT(CreateErrors("resourceclaims",
                           Claim({Exact("a", {{"deviceClassName", "c"},
                                              {"tolerations",
                                               {{{"operator", "Exists"}, {"value", "v"}},
                                                {{"operator", "Equal"}, {"effect", "Bad"}}}}})})),
              ElementsAre("spec.devices.requests[0].exactly.tolerations[0].value: Invalid value: "
                          "\"v\": must be empty for operator `Exists`",
                          "spec.devices.requests[0].exactly.tolerations[1].effect: Unsupported "
                          "value: \"Bad\": supported values: \"NoExecute\", \"NoSchedule\", "
                          "\"None\""));
}

TEST(ResourceClaimValidationTest, SpecIsImmutableAndStatusFollowsTheRules) {
  Json old = Claim({Exact("a")});
  DefaultResourceObject(Res("resourceclaims"), old, true, "now");
  Json changed = old;
  changed["spec"]["devices"]["requests"][0]["name"] = "b";
  auto errors = ResourceFieldErrorTexts(Res("resourceclaims"), changed, &old);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], ::testing::StartsWith("spec: Invalid value: "));
  EXPECT_THAT(errors[0], ::testing::EndsWith(": field is immutable"));

  // Empty lists and nulls decode to what an absent field does: no change.
  Json same = old;
  same["spec"]["devices"]["constraints"] = Json::array();
  same["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = nullptr;
  EXPECT_THAT(ResourceFieldErrorTexts(Res("resourceclaims"), same, &old), IsEmpty());

  Json reserved = old;
  reserved["status"]["reservedFor"] = {{{"resource", "pods"}, {"name", "p"}, {"uid", "1"}}};
  EXPECT_THAT(ResourceFieldErrorTexts(Res("resourceclaims"), reserved, &old),
              ElementsAre("status.reservedFor: Forbidden: may not be specified when `allocated` "
                          "is not set"));

  const Json allocation = {
      {"devices",
       {{"results",
         {{{"request", "a"}, {"driver", "gpu.example.com"}, {"pool", "n1"}, {"device", "g0"}}}}}}};
  Json allocated = old;
  allocated["status"]["allocation"] = allocation;
  allocated["status"]["reservedFor"] = Json::array();
  for (int i = 0; i < 257; ++i) {
    allocated["status"]["reservedFor"].push_back(
        {{"resource", "pods"}, {"name", "p"}, {"uid", std::to_string(i)}});
  }
  EXPECT_THAT(ResourceFieldErrorTexts(Res("resourceclaims"), allocated, &old),
              ElementsAre("status.reservedFor: Too many: 257: must have at most 256 items"));
  allocated["status"]["reservedFor"] = {{{"resource", "pods"}, {"name", "p"}, {"uid", "1"}},
                                        {{"resource", "pods"}, {"name", "q"}, {"uid", "1"}}};
  EXPECT_THAT(ResourceFieldErrorTexts(Res("resourceclaims"), allocated, &old),
              ElementsAre("status.reservedFor[1]: Duplicate value: \"1\""));
  allocated["status"]["reservedFor"].erase(1);
  EXPECT_THAT(ResourceFieldErrorTexts(Res("resourceclaims"), allocated, &old), IsEmpty());

  // Once set, the allocation may only be cleared.
  Json moved = allocated;
  moved["status"]["allocation"]["devices"]["results"][0]["device"] = "g1";
  auto refused = ResourceFieldErrorTexts(Res("resourceclaims"), moved, &allocated);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_THAT(refused[0], ::testing::StartsWith("status.allocation: Invalid value: "));
  Json cleared = old;
  EXPECT_THAT(ResourceFieldErrorTexts(Res("resourceclaims"), cleared, &allocated), IsEmpty());

  Json wrong_request = old;
  wrong_request["status"]["allocation"] = allocation;
  wrong_request["status"]["allocation"]["devices"]["results"][0]["request"] = "zz";
  EXPECT_THAT(ResourceFieldErrorTexts(Res("resourceclaims"), wrong_request, &old),
              ElementsAre("status.allocation.devices.results[0].request: Invalid value: \"zz\": "
                          "must be the name of a request in the claim or the name of a request "
                          "and a subrequest separated by '/'"));
}

TEST(ResourceClaimValidationTest, DeviceStatusesNameAllocatedDevicesAndDeletionStopsReserving) {
  Json old = Claim({Exact("a")});
  DefaultResourceObject(Res("resourceclaims"), old, true, "now");
  old["status"]["allocation"] = {
      {"devices",
       {{"results",
         {{{"request", "a"}, {"driver", "gpu.example.com"}, {"pool", "n1"}, {"device", "g0"}}}}}}};
  Json next = old;
  next["status"]["devices"] = {{{"driver", "gpu.example.com"}, {"pool", "n1"}, {"device", "g0"}},
                               {{"driver", "gpu.example.com"}, {"pool", "n1"}, {"device", "g9"}}};
  EXPECT_THAT(ResourceFieldErrorTexts(Res("resourceclaims"), next, &old),
              ElementsAre("status.devices[1]: Invalid value: gpu.example.com/n1/g9: must be an "
                          "allocated device in the claim"));
  Json deleting = old;
  deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  Json reserving = deleting;
  reserving["status"]["reservedFor"] = {{{"resource", "pods"}, {"name", "p"}, {"uid", "1"}}};
  EXPECT_THAT(ResourceFieldErrorTexts(Res("resourceclaims"), reserving, &deleting),
              ElementsAre("status.reservedFor: Forbidden: new entries may not be added while "
                          "`deallocationRequested` or `deletionTimestamp` are set"));
}

TEST(ResourceClaimTemplateValidationTest, PathsStartAtSpecSpecAndSpecIsImmutable) {
  Json tmpl = {{"metadata", {{"name", "t"}}},
               {"spec", {{"spec", {{"devices", {{"requests", {Exact("a", Json::object())}}}}}}}}};
  EXPECT_THAT(CreateErrors("resourceclaimtemplates", tmpl),
              ElementsAre("spec.spec.devices.requests[0].exactly.deviceClassName: Required value"));
  Json old = tmpl;
  tmpl["spec"]["metadata"] = {{"labels", {{"a", "b"}}}};
  auto errors = ResourceFieldErrorTexts(Res("resourceclaimtemplates"), tmpl, &old);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], ::testing::EndsWith("field is immutable"));
}

TEST(DeviceClassValidationTest, SelectorsConfigAndExtendedResourceName) {
  Json cls = {{"metadata", {{"name", "gpu.example.com"}}},
              {"spec",
               {{"selectors", {{{"cel", {{"expression", "device.driver == 1 +"}}}}}},
                {"config", {{{"opaque", {{"driver", "gpu.example.com"}}}}}},
                {"extendedResourceName", "cpu"}}}};
  auto errors = CreateErrors("deviceclasses", cls);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_THAT(errors[0], ::testing::StartsWith("spec.selectors[0].cel.expression: Invalid value"));
  EXPECT_EQ(errors[1], "spec.config[0].opaque.parameters: Required value");
  EXPECT_EQ(errors[2],
            "spec.extendedResourceName: Invalid value: \"cpu\": must be a valid extended "
            "resource name");
  // An unchanged selector is not compiled again on update.
  Json old = cls;
  cls["spec"].erase("config");
  cls["spec"].erase("extendedResourceName");
  EXPECT_THAT(ResourceFieldErrorTexts(Res("deviceclasses"), cls, &old), IsEmpty());
}

Json Slice(Json devices) {
  return {{"metadata", {{"name", "node-1-gpu"}}},
          {"spec",
           {{"driver", "gpu.example.com"},
            {"pool", {{"name", "node-1"}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"nodeName", "node-1"},
            {"devices", std::move(devices)}}}};
}

TEST(ResourceSliceValidationTest, ValidSliceHasNoErrors) {
  EXPECT_THAT(
      CreateErrors("resourceslices", Slice({{{"name", "gpu-0"},
                                             {"attributes",
                                              {{"model", {{"string", "a100"}}},
                                               {"driverVersion", {{"version", "1.2.3-rc.1"}}}}},
                                             {"capacity", {{"memory", {{"value", "80Gi"}}}}}}})),
      IsEmpty());
}

TEST(ResourceSliceValidationTest, PoolDriverAndNodeSelection) {
  Json slice = Slice(Json::array());
  slice["spec"]["driver"] = "";
  slice["spec"]["pool"] = {{"name", ""}, {"generation", -1}, {"resourceSliceCount", 0}};
  slice["spec"]["allNodes"] = true;
  EXPECT_THAT(CreateErrors("resourceslices", slice),
              ElementsAre("spec.driver: Required value", "spec.pool.name: Required value",
                          "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than "
                          "zero",
                          "spec.pool.generation: Invalid value: -1: must be greater than or "
                          "equal to zero",
                          "spec: Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of "
                          "`nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is "
                          "required, but multiple fields are set"));
  slice = Slice(Json::array());
  slice["spec"].erase("nodeName");
  EXPECT_THAT(CreateErrors("resourceslices", slice),
              ElementsAre("spec: Required value: exactly one of `nodeName`, `nodeSelector`, "
                          "`allNodes`, `perDeviceNodeSelection` is required"));
}

TEST(ResourceSliceValidationTest, DevicesAttributesAndLimits) {
  EXPECT_THAT(
      CreateErrors("resourceslices", Slice({{{"name", "gpu-0"},
                                             {"attributes",
                                              {{"a", {{"bool", true}, {"int", 1}}},
                                               {"v", {{"version", "1.2"}}},
                                               {"bad/slash/name", {{"int", 1}}}}}},
                                            {{"name", "gpu-0"}}})),
      ElementsAre("spec.devices[0].attributes[a]: Invalid value: {\"bool\":true,\"int\":1}: "
                  "exactly one value must be specified",
                  "spec.devices[0].attributes: Invalid value: \"bad/slash/name\": must not "
                  "contain more than one slash",
                  "spec.devices[0].attributes[v].version: Invalid value: \"1.2\": must be a "
                  "string compatible with semver.org spec 2.0.0",
                  "spec.devices[1]: Duplicate value: \"gpu-0\""));
  Json many = Json::array();
  for (int i = 0; i < 129; ++i) many.push_back({{"name", "d" + std::to_string(i)}});
  EXPECT_THAT(CreateErrors("resourceslices", Slice(many)),
              ElementsAre("spec.devices: Too many: 129: must have at most 128 items"));
}

TEST(ResourceSliceValidationTest, ListAttributesAreNotEmptyAndVersionsAreSemver) {
  EXPECT_THAT(
      CreateErrors("resourceslices", Slice({{{"name", "gpu-0"},
                                             {"attributes",
                                              {{"links", {{"ints", Json::array()}}},
                                               {"fw", {{"versions", {"1.0.0", "v2"}}}}}}}})),
      ElementsAre("spec.devices[0].attributes[fw].versions[1]: Invalid value: \"v2\": "
                  "must be a string compatible with semver.org spec 2.0.0",
                  "spec.devices[0].attributes[links].ints: Invalid value: []: must not "
                  "be empty if specified"));
}

TEST(ResourceSliceValidationTest, CountersAndImmutableFields) {
  Json slice = Slice(Json::array());
  slice["spec"].erase("devices");
  slice["spec"]["sharedCounters"] = {
      {{"name", "gpu-0"}, {"counters", {{"memory", {{"value", "1"}}}}}}, {{"name", "gpu-0"}}};
  EXPECT_THAT(CreateErrors("resourceslices", slice),
              ElementsAre("spec.sharedCounters[1].counters: Required value",
                          "spec.sharedCounters[1]: Duplicate value: \"gpu-0\""));
  Json old = Slice(Json::array());
  Json moved = old;
  moved["spec"]["nodeName"] = "node-2";
  EXPECT_THAT(ResourceFieldErrorTexts(Res("resourceslices"), moved, &old),
              ElementsAre("spec.nodeName: Invalid value: \"node-2\": field is immutable"));
}

TEST(ResourceApiPrintingTest, ClaimStateAndSliceColumns) {
  Json pending = Claim({Exact("a")});
  Json reserved = pending;
  reserved["metadata"]["name"] = "r";
  reserved["status"] = {{"allocation", Json::object()},
                        {"reservedFor", {{{"resource", "pods"}, {"name", "p"}, {"uid", "u"}}}}};
  Json table = ToTable(Res("resourceclaims"), {&pending, &reserved}, 1, IncludeObject::kNone, 0);
  ASSERT_EQ(table["columnDefinitions"].size(), 3u);
  EXPECT_EQ(table["columnDefinitions"][1]["name"], "State");
  EXPECT_EQ(table["rows"][0]["cells"][1], "pending");
  EXPECT_EQ(table["rows"][1]["cells"][1], "allocated,reserved");

  Json slice = Slice(Json::array());
  table = ToTable(Res("resourceslices"), {&slice}, 1, IncludeObject::kNone, 0);
  std::vector<std::string> names;
  for (const auto& c : table["columnDefinitions"]) names.push_back(c["name"]);
  EXPECT_THAT(names, ElementsAre("Name", "Node", "Driver", "Pool", "Age"));
  EXPECT_EQ(table["rows"][0]["cells"][1], "node-1");
  EXPECT_EQ(table["rows"][0]["cells"][2], "gpu.example.com");
  EXPECT_EQ(table["rows"][0]["cells"][3], "node-1");

  auto by_node = ParseFieldSelector(Res("resourceslices"), "spec.nodeName=node-1");
  ASSERT_TRUE(by_node.ok()) << by_node.error().message;
  EXPECT_TRUE((*by_node)(slice));
  auto by_driver = ParseFieldSelector(Res("resourceslices"), "spec.driver=other.example.com");
  ASSERT_TRUE(by_driver.ok());
  EXPECT_FALSE((*by_driver)(slice));
  EXPECT_FALSE(ParseFieldSelector(Res("resourceclaims"), "spec.driver=x").ok());
}

TEST(ResourceApiErrorTest, ManyErrorsAreOneInvalidMessage) {
  Json obj = {{"metadata", {{"name", "bad"}}}};
  const FieldErrorList errors = {{FieldErrorType::kRequired, "a", ""},
                                 {FieldErrorType::kForbidden, "b", "x"}};
  ApiError e = ResourceInvalid(Res("resourceclaims"), obj, errors);
  EXPECT_EQ(e.code, ErrorCode::kInvalid);
  EXPECT_EQ(e.message,
            "ResourceClaim.resource.k8s.io \"bad\" is invalid: [a: Required value, b: "
            "Forbidden: x]");
  // The errors travel with the message as data, for the Status's causes.
  auto causes = e.field_errors;
  ASSERT_NE(causes, nullptr);
  EXPECT_EQ(*causes, errors);
}

}  // namespace
}  // namespace berth::apiserver
