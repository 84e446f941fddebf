// DeviceTaintRule defaulting and validation (resource.k8s.io/v1), with kube-apiserver's field
// paths and messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "apiserver/resource_validation.h"
#include "apiserver/resources.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const ResourceInfo& Rules() { return *FindResource("resource.k8s.io", "v1", "devicetaintrules"); }

Json Rule(Json selector, Json taint) {
  Json rule = {{"metadata", {{"name", "rule"}}}, {"spec", {{"taint", std::move(taint)}}}};
  if (!selector.is_null()) rule["spec"]["deviceSelector"] = std::move(selector);
  return rule;
}

std::vector<std::string> CreateErrors(Json obj) {
  DefaultResourceObject(Rules(), obj, true, "2026-01-01T00:00:00Z");
  return ToStrings(ResourceFieldErrors(Rules(), obj, nullptr));
}

Json Condition(const char* status, const char* reason) {
  return {{"type", "EvictionInProgress"},
          {"status", status},
          {"reason", reason},
          {"lastTransitionTime", "2026-01-01T00:00:00Z"}};
}

TEST(DeviceTaintRuleValidationTest, IsServedClusterScopedWithStatus) {
  const ResourceInfo& r = Rules();
  EXPECT_EQ(r.kind, "DeviceTaintRule");
  EXPECT_FALSE(r.namespaced);
  EXPECT_THAT(r.subresources, ElementsAre("status"));
}

TEST(DeviceTaintRuleValidationTest, CreateDropsStatusAndSetsTimeAdded) {
  Json rule = Rule(Json::object(), {{"key", "example.com/k"}, {"effect", "NoSchedule"}});
  rule["status"] = {{"conditions", {Condition("True", "Set")}}};
  DefaultResourceObject(Rules(), rule, true, "2026-01-01T00:00:00Z");
  EXPECT_FALSE(rule.contains("status"));
  EXPECT_EQ(rule["spec"]["taint"]["timeAdded"], "2026-01-01T00:00:00Z");
  // A given time is kept.
  Json given =
      Rule(Json::object(),
           {{"key", "k"}, {"effect", "NoSchedule"}, {"timeAdded", "2020-01-01T00:00:00Z"}});
  DefaultResourceObject(Rules(), given, true, "2026-01-01T00:00:00Z");
  EXPECT_EQ(given["spec"]["taint"]["timeAdded"], "2020-01-01T00:00:00Z");
}

TEST(DeviceTaintRuleValidationTest, ValidRulesHaveNoErrors) {
  EXPECT_THAT(CreateErrors(Rule(nullptr, {{"key", "example.com/k"}, {"effect", "NoExecute"}})),
              IsEmpty());
  EXPECT_THAT(CreateErrors(Rule(
                  {{"driver", "gpu.example.com"}, {"pool", "node-a/part-1"}, {"device", "gpu-0"}},
                  {{"key", "k"}, {"value", "v"}, {"effect", "None"}})),
              IsEmpty());
}

TEST(DeviceTaintRuleValidationTest, BadSelectorAndTaintAreNamed) {
  EXPECT_THAT(CreateErrors(Rule({{"driver", ""}}, {{"effect", "NoSchedule"}})),
              ElementsAre("spec.deviceSelector.driver: Required value",
                          "spec.taint.key: Invalid value: \"\": name part must be non-empty"));
  EXPECT_THAT(CreateErrors(Rule({{"device", "GPU_0"}}, {{"key", "k"}, {"effect", "Sometimes"}})),
              ElementsAre(::testing::StartsWith("spec.deviceSelector.device: Invalid value: "
                                                "\"GPU_0\": a lowercase RFC 1123 label"),
                          "spec.taint.effect: Unsupported value: \"Sometimes\": supported "
                          "values: \"NoExecute\", \"NoSchedule\", \"None\""));
  EXPECT_THAT(CreateErrors(Rule(Json::object(), {{"key", "k"}})),
              ElementsAre("spec.taint.effect: Required value"));
}

// An update that changes the effect but keeps the time gets a new time; a stored effect is
// not checked again.
TEST(DeviceTaintRuleValidationTest, AnEffectChangeRenewsTimeAdded) {
  Json old = Rule(Json::object(),
                  {{"key", "k"}, {"effect", "NoSchedule"}, {"timeAdded", "2020-01-01T00:00:00Z"}});
  Json next = old;
  next["spec"]["taint"]["effect"] = "NoExecute";
  PrepareResourceUpdate(Rules(), old, next, "2026-01-01T00:00:00Z");
  EXPECT_EQ(next["spec"]["taint"]["timeAdded"], "2026-01-01T00:00:00Z");
  Json timed = old;
  timed["spec"]["taint"]["effect"] = "NoExecute";
  timed["spec"]["taint"]["timeAdded"] = "2025-01-01T00:00:00Z";
  PrepareResourceUpdate(Rules(), old, timed, "2026-01-01T00:00:00Z");
  EXPECT_EQ(timed["spec"]["taint"]["timeAdded"], "2025-01-01T00:00:00Z");
  Json same = old;
  same["spec"]["taint"]["value"] = "v";
  PrepareResourceUpdate(Rules(), old, same, "2026-01-01T00:00:00Z");
  EXPECT_EQ(same["spec"]["taint"]["timeAdded"], "2020-01-01T00:00:00Z");
  Json legacy = Rule(Json::object(), {{"key", "k"}, {"effect", "Legacy"}});
  Json relabeled = legacy;
  relabeled["metadata"]["labels"] = {{"a", "b"}};
  EXPECT_THAT(ToStrings(ResourceFieldErrors(Rules(), relabeled, &legacy)), IsEmpty());
}

TEST(DeviceTaintRuleValidationTest, StatusConditionsAreChecked) {
  Json old = Rule(Json::object(), {{"key", "k"}, {"effect", "NoSchedule"}});
  Json next = old;
  next["status"]["conditions"] = {Condition("Maybe", "Not-Valid"), Condition("True", "")};
  EXPECT_THAT(
      ToStrings(ResourceFieldErrors(Rules(), next, &old)),
      ElementsAre("status.conditions[0].status: Unsupported value: \"Maybe\": supported values: "
                  "\"False\", \"True\", \"Unknown\"",
                  ::testing::StartsWith("status.conditions[0].reason: Invalid value: "
                                        "\"Not-Valid\": a condition reason must start"),
                  "status.conditions[1].reason: Required value: must be set",
                  "status.conditions[1].type: Duplicate value: \"EvictionInProgress\""));
  Json many = old;
  for (int i = 0; i < 9; ++i) {
    Json c = Condition("True", "Set");
    c["type"] = "T" + std::to_string(i);
    many["status"]["conditions"].push_back(c);
  }
  EXPECT_THAT(ToStrings(ResourceFieldErrors(Rules(), many, &old)),
              ElementsAre("status.conditions: Too many: 9: must have at most 8 items"));
}

}  // namespace
}  // namespace berth::apiserver
