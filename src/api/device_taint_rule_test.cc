#include "api/device_taint_rule.h"

#include <gtest/gtest.h>

namespace berth {
namespace {

TEST(DeviceTaintRuleTest, DecodesTheSelectorAndTheTaint) {
  auto rule = DecodeDeviceTaintRule(nlohmann::json::parse(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
    "metadata": {"name": "maintenance"},
    "spec": {"deviceSelector": {"driver": "gpu.example.com", "pool": "node-a"},
             "taint": {"key": "example.com/maintenance", "value": "planned",
                       "effect": "NoExecute", "timeAdded": "2026-01-02T03:04:05Z"}}})"),
                                    "rule.yaml");
  ASSERT_TRUE(rule.ok()) << rule.error().message;
  EXPECT_EQ(rule->metadata.name, "maintenance");
  ASSERT_TRUE(rule->selector.has_value());
  EXPECT_EQ(rule->selector->driver, "gpu.example.com");
  EXPECT_EQ(rule->selector->pool, "node-a");
  EXPECT_FALSE(rule->selector->device.has_value());
  EXPECT_EQ(rule->taint.key, "example.com/maintenance");
  EXPECT_EQ(rule->taint.value, "planned");
  EXPECT_EQ(rule->taint.effect, "NoExecute");
  EXPECT_EQ(rule->taint.time_added, 1767323045);
  EXPECT_TRUE(RuleSelects(*rule, "gpu.example.com", "node-a", "gpu-7"));
  EXPECT_FALSE(RuleSelects(*rule, "gpu.example.com", "node-b", "gpu-7"));
  EXPECT_FALSE(RuleSelects(*rule, "nic.example.com", "node-a", "gpu-7"));
}

// A null selector (as `deviceSelector:` with no value in YAML) is no selector: no device. An
// empty one selects every device.
TEST(DeviceTaintRuleTest, ANullSelectorSelectsNoDeviceAnEmptyOneEvery) {
  auto rule = DecodeDeviceTaintRule(
      nlohmann::json::parse(R"({"metadata": {"name": "all"}, "spec": {"deviceSelector": null,
        "taint": {"key": "k", "effect": "NoSchedule"}}})"),
      "rule");
  ASSERT_TRUE(rule.ok());
  EXPECT_FALSE(rule->selector.has_value());
  EXPECT_FALSE(RuleSelects(*rule, "any.example.com", "any", "any"));
  auto empty = DecodeDeviceTaintRule(
      nlohmann::json::parse(R"({"metadata": {"name": "all"}, "spec": {"deviceSelector": {},
        "taint": {"key": "k", "effect": "NoSchedule"}}})"),
      "rule");
  ASSERT_TRUE(empty.ok());
  ASSERT_TRUE(empty->selector.has_value());
  EXPECT_TRUE(RuleSelects(*empty, "any.example.com", "any", "any"));
}

TEST(DeviceTaintRuleTest, AWronglyTypedFieldIsNamed) {
  auto rule = DecodeDeviceTaintRule(nlohmann::json::parse(R"({"metadata": {"name": "bad"},
        "spec": {"deviceSelector": {"pool": ["a"]}, "taint": {"key": "k", "effect": "NoSchedule"}}})"),
                                    "rule.yaml");
  ASSERT_FALSE(rule.ok());
  EXPECT_NE(rule.error().message.find("spec.deviceSelector.pool"), std::string::npos)
      << rule.error().message;
}

}  // namespace
}  // namespace berth
