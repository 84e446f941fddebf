#include "config/feature_gates.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace berth::config {
namespace {

std::string SetError(std::string_view value) {
  FeatureGates gates;
  std::vector<std::string> warnings;
  VoidResult r = gates.Set(value, &warnings);
  return r.ok() ? "" : r.error().message;
}

TEST(FeatureGateTable, SortedAndUnique) {
  auto gates = KnownFeatureGates();
  EXPECT_TRUE(std::is_sorted(gates.begin(), gates.end(),
                             [](const auto& a, const auto& b) { return a.name < b.name; }));
  EXPECT_EQ(std::adjacent_find(gates.begin(), gates.end(),
                               [](const auto& a, const auto& b) { return a.name == b.name; }),
            gates.end());
  for (const FeatureGateDependency& dep : FeatureGateDependencies()) {
    EXPECT_NE(FindFeatureGate(dep.feature), nullptr) << dep.feature;
    for (std::string_view need : dep.requires_enabled)
      EXPECT_NE(FindFeatureGate(need), nullptr) << need;
  }
}

TEST(FeatureGateTable, V137DefaultsAndStages) {
  const FeatureGateSpec* plr = FindFeatureGate("PodLevelResources");
  ASSERT_NE(plr, nullptr);
  EXPECT_TRUE(plr->default_value);
  EXPECT_EQ(plr->stage, FeatureStage::kBeta);
  EXPECT_FALSE(plr->lock_to_default);
  EXPECT_TRUE(plr->honoured);

  const FeatureGateSpec* hints = FindFeatureGate("SchedulerQueueingHints");
  ASSERT_NE(hints, nullptr);
  EXPECT_EQ(hints->stage, FeatureStage::kGA);
  EXPECT_TRUE(hints->lock_to_default);

  const FeatureGateSpec* workload = FindFeatureGate("GenericWorkload");
  ASSERT_NE(workload, nullptr);
  EXPECT_FALSE(workload->default_value);
  EXPECT_EQ(workload->stage, FeatureStage::kBeta);

  FeatureGates defaults;
  EXPECT_TRUE(defaults.Enabled("PodLevelResources"));
  EXPECT_TRUE(defaults.Enabled("SchedulerPopFromBackoffQ"));
  EXPECT_FALSE(defaults.Enabled("TaintTolerationComparisonOperators"));
  EXPECT_FALSE(defaults.Enabled("GangScheduling"));
  EXPECT_FALSE(defaults.Enabled("NoSuchGate"));
  EXPECT_EQ(defaults.FlagValue(), "");
}

TEST(FeatureGates, ParsesListWithWhitespaceAndEmptyItems) {
  FeatureGates gates;
  std::vector<std::string> warnings;
  ASSERT_TRUE(gates
                  .Set(" TaintTolerationComparisonOperators = true ,, SchedulerPopFromBackoffQ=F,",
                       &warnings)
                  .ok());
  EXPECT_TRUE(gates.Enabled("TaintTolerationComparisonOperators"));
  EXPECT_FALSE(gates.Enabled("SchedulerPopFromBackoffQ"));
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(gates.FlagValue(),
            "SchedulerPopFromBackoffQ=false,TaintTolerationComparisonOperators=true");
}

TEST(FeatureGates, RepeatedFlagsAccumulateAndLaterWins) {
  std::vector<std::string> warnings;
  auto gates = ParseFeatureGatesFlags(
      {"OpportunisticBatching=false,StorageCapacityScoring=false", "OpportunisticBatching=1"},
      &warnings);
  ASSERT_TRUE(gates.ok()) << gates.error().message;
  EXPECT_TRUE(gates->Enabled("OpportunisticBatching"));
  EXPECT_FALSE(gates->Enabled("StorageCapacityScoring"));
}

TEST(FeatureGates, UnknownGate) {
  EXPECT_EQ(SetError("Bogus=true"), "unrecognized feature gate: Bogus");
}

TEST(FeatureGates, MissingValue) {
  EXPECT_EQ(SetError("PodLevelResources"), "missing bool value for PodLevelResources");
}

TEST(FeatureGates, NonBooleanValue) {
  EXPECT_EQ(SetError("PodLevelResources=yes"),
            "invalid value of PodLevelResources=yes, err: strconv.ParseBool: parsing \"yes\": "
            "invalid syntax");
}

TEST(FeatureGates, LockedGateRefusesOtherValue) {
  EXPECT_EQ(SetError("SchedulerQueueingHints=false"),
            "cannot set feature gate SchedulerQueueingHints to false, feature is locked to true");
  EXPECT_EQ(SetError("DynamicResourceAllocation=false,InPlacePodVerticalScaling=false"),
            "[cannot set feature gate DynamicResourceAllocation to false, feature is locked to "
            "true, cannot set feature gate InPlacePodVerticalScaling to false, feature is locked "
            "to true]");
}

TEST(FeatureGates, LockedGateAcceptsItsDefaultWithGAWarning) {
  FeatureGates gates;
  std::vector<std::string> warnings;
  ASSERT_TRUE(gates.Set("SchedulerQueueingHints=true", &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "Setting GA feature gate SchedulerQueueingHints=true. It will be removed in a future "
            "release.");
}

TEST(FeatureGates, DeprecatedGateWarns) {
  FeatureGates gates;
  std::vector<std::string> warnings;
  ASSERT_TRUE(gates.Set("KMSv1=true", &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "Setting deprecated feature gate KMSv1=true. It will be removed in a future release.");
}

TEST(FeatureGates, DependencyOnDisabledGate) {
  EXPECT_EQ(SetError("GangScheduling=true"),
            "GangScheduling is enabled, but depends on features that are disabled: "
            "[GenericWorkload]");
  // PodLevelResources off while the beta in-place pod-level resizing stays on: upstream refuses.
  EXPECT_EQ(SetError("PodLevelResources=false"),
            "InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features that are "
            "disabled: [PodLevelResources]");
  EXPECT_EQ(SetError("PodLevelResources=false,InPlacePodLevelResourcesVerticalScaling=false"), "");
  EXPECT_EQ(SetError("GenericWorkload=true,GangScheduling=true"), "");
}

TEST(FeatureGates, AllAlphaSetsUnsetAlphaGatesOnly) {
  FeatureGates gates;
  std::vector<std::string> warnings;
  // GangScheduling would need the beta GenericWorkload, which AllAlpha leaves off.
  EXPECT_EQ(SetError("AllAlpha=true"),
            "GangScheduling is enabled, but depends on features that are disabled: "
            "[GenericWorkload]");
  VoidResult r = gates.Set("AllAlpha=true,CompositePodGroup=false,GangScheduling=false", &warnings);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_TRUE(gates.Enabled("TaintTolerationComparisonOperators"));
  EXPECT_FALSE(gates.Enabled("CompositePodGroup"));
  EXPECT_FALSE(gates.Enabled("GenericWorkload"));  // beta
}

TEST(FeatureGates, FailedSetLeavesGatesUnchanged) {
  FeatureGates gates;
  std::vector<std::string> warnings;
  ASSERT_TRUE(gates.Set("OpportunisticBatching=false", &warnings).ok());
  EXPECT_FALSE(gates.Set("OpportunisticBatching=true,Bogus=true", &warnings).ok());
  EXPECT_FALSE(gates.Enabled("OpportunisticBatching"));
}

TEST(FeatureGates, FlagErrorNamesTheFlag) {
  std::vector<std::string> warnings;
  auto gates = ParseFeatureGatesFlags({"Bogus=true"}, &warnings);
  ASSERT_FALSE(gates.ok());
  EXPECT_EQ(gates.error().message,
            "invalid argument \"Bogus=true\" for \"--feature-gates\" flag: unrecognized feature "
            "gate: Bogus");
}

}  // namespace
}  // namespace berth::config
