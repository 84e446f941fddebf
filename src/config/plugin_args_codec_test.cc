#include "config/plugin_args_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::config {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

template <class T>
const T& As(const ArgsResult& r) {
  const auto* args = dynamic_cast<const T*>(r.value().get());
  EXPECT_NE(args, nullptr);
  return *args;
}

json Encoded(const PluginArgs& args) {
  json out = json::object();
  args.Encode(out);
  return out;
}

// ------------------------------------------------------------------ defaults

TEST(PluginArgsDefaultsTest, DefaultPreemption) {
  auto r = DecodeDefaultPreemptionArgs(nullptr, "args");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& a = As<DefaultPreemptionArgs>(r);
  EXPECT_EQ(a.min_candidate_nodes_percentage, 10);
  EXPECT_EQ(a.min_candidate_nodes_absolute, 100);
  EXPECT_EQ(Encoded(a), json::parse(R"({"apiVersion": "kubescheduler.config.k8s.io/v1",
      "kind": "DefaultPreemptionArgs", "minCandidateNodesPercentage": 10,
      "minCandidateNodesAbsolute": 100})"));
}

TEST(PluginArgsDefaultsTest, InterPodAffinity) {
  auto r = DecodeInterPodAffinityArgs(nullptr, "args");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& a = As<InterPodAffinityArgs>(r);
  EXPECT_EQ(a.hard_pod_affinity_weight, 1);
  EXPECT_FALSE(a.ignore_preferred_terms_of_existing_pods);
  EXPECT_EQ(Encoded(a)["hardPodAffinityWeight"], 1);
  EXPECT_EQ(Encoded(a)["ignorePreferredTermsOfExistingPods"], false);
}

TEST(PluginArgsDefaultsTest, NodeAffinity) {
  auto r = DecodeNodeAffinityArgs(nullptr, "args");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(As<NodeAffinityArgs>(r).added_affinity.has_value());
  EXPECT_EQ(Encoded(*r.value()), json::parse(R"({"apiVersion": "kubescheduler.config.k8s.io/v1",
      "kind": "NodeAffinityArgs"})"));
}

TEST(PluginArgsDefaultsTest, NodeResourcesFit) {
  auto r = DecodeNodeResourcesFitArgs(nullptr, "args");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(Encoded(*r.value()), json::parse(R"({"apiVersion": "kubescheduler.config.k8s.io/v1",
      "kind": "NodeResourcesFitArgs", "scoringStrategy": {"type": "LeastAllocated",
      "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]}})"));
}

TEST(PluginArgsDefaultsTest, NodeResourcesBalancedAllocation) {
  auto r = DecodeNodeResourcesBalancedAllocationArgs(nullptr, "args");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(Encoded(*r.value())["resources"],
            json::parse(R"([{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}])"));
}

TEST(PluginArgsDefaultsTest, PodTopologySpread) {
  auto r = DecodePodTopologySpreadArgs(nullptr, "args");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& a = As<PodTopologySpreadArgs>(r);
  EXPECT_EQ(a.defaulting_type, "System");
  EXPECT_TRUE(a.default_constraints.empty());
  EXPECT_EQ(Encoded(a), json::parse(R"({"apiVersion": "kubescheduler.config.k8s.io/v1",
      "kind": "PodTopologySpreadArgs", "defaultingType": "System"})"));
}

TEST(PluginArgsDefaultsTest, VolumeBinding) {
  auto r = DecodeVolumeBindingArgs(nullptr, "args");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& a = As<VolumeBindingArgs>(r);
  EXPECT_EQ(a.bind_timeout_seconds, 600);
  EXPECT_TRUE(a.shape.empty());
  EXPECT_EQ(Encoded(a), json::parse(R"({"apiVersion": "kubescheduler.config.k8s.io/v1",
      "kind": "VolumeBindingArgs", "bindTimeoutSeconds": 600})"));
}

TEST(PluginArgsDefaultsTest, DynamicResources) {
  auto r = DecodeDynamicResourcesArgs(nullptr, "args");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& a = As<DynamicResourcesArgs>(r);
  EXPECT_EQ(a.filter_timeout_ms, 10'000);
  EXPECT_EQ(a.binding_timeout_ms, 600'000);
  EXPECT_EQ(Encoded(a), json::parse(R"({"apiVersion": "kubescheduler.config.k8s.io/v1",
      "kind": "DynamicResourcesArgs", "filterTimeout": "10s", "bindingTimeout": "10m0s"})"));
}

// kube-scheduler's ValidateDynamicResourcesArgs: a zero filterTimeout disables the limit, a
// negative one is invalid; bindingTimeout is at least a second.
TEST(PluginArgsValidationTest, DynamicResourcesTimeouts) {
  const json zero_raw = json::parse(R"({"filterTimeout": "0s", "bindingTimeout": "1s"})");
  auto zero = DecodeDynamicResourcesArgs(&zero_raw, "args");
  ASSERT_TRUE(zero.ok()) << zero.error().message;
  EXPECT_EQ(As<DynamicResourcesArgs>(zero).filter_timeout_ms, 0);
  EXPECT_EQ(As<DynamicResourcesArgs>(zero).binding_timeout_ms, 1000);
  const json negative = json::parse(R"({"filterTimeout": "-1s"})");
  auto bad = DecodeDynamicResourcesArgs(&negative, "args");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message,
              HasSubstr("args.filterTimeout: invalid value \"-1s\": must be zero or positive"));
  const json short_binding = json::parse(R"({"bindingTimeout": "500ms"})");
  auto bad2 = DecodeDynamicResourcesArgs(&short_binding, "args");
  ASSERT_FALSE(bad2.ok());
  EXPECT_THAT(bad2.error().message,
              HasSubstr("args.bindingTimeout: invalid value \"500ms\": must be at least 1 second"));
  DynamicResourcesArgs built;
  built.filter_timeout_ms = -5;
  EXPECT_FALSE(ValidateDynamicResourcesArgs(built, "args").ok());
}

TEST(PluginArgsDefaultsTest, VolumeBindingWithStorageCapacityScoring) {
  auto r = VolumeBindingArgsDecoder(true)(nullptr, "args");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& a = As<VolumeBindingArgs>(r);
  ASSERT_EQ(a.shape.size(), 2u);
  EXPECT_EQ(a.shape[0].utilization, 0);
  EXPECT_EQ(a.shape[0].score, 10);
  EXPECT_EQ(a.shape[1].utilization, 100);
  EXPECT_EQ(a.shape[1].score, 0);
}

// ------------------------------------------------------------------ decoding values

TEST(PluginArgsDecodeTest, DefaultPreemptionKeepsGivenValueAndDefaultsOther) {
  json raw = {{"minCandidateNodesPercentage", 50}};
  auto r = DecodeDefaultPreemptionArgs(&raw, "args");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(As<DefaultPreemptionArgs>(r).min_candidate_nodes_percentage, 50);
  EXPECT_EQ(As<DefaultPreemptionArgs>(r).min_candidate_nodes_absolute, 100);
}

TEST(PluginArgsDecodeTest, InterPodAffinityExplicitZeroStays) {
  json raw = {{"hardPodAffinityWeight", 0}, {"ignorePreferredTermsOfExistingPods", true}};
  auto r = DecodeInterPodAffinityArgs(&raw, "args");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(As<InterPodAffinityArgs>(r).hard_pod_affinity_weight, 0);
  EXPECT_TRUE(As<InterPodAffinityArgs>(r).ignore_preferred_terms_of_existing_pods);
}

TEST(PluginArgsDecodeTest, BalancedAllocationWeightsDefaultToOne) {
  json raw = json::parse(R"({"resources": [{"name": "cpu"}, {"name": "scalar.io/scalar0"},
      {"name": "scalar.io/scalar1", "weight": 1}]})");
  auto r = DecodeNodeResourcesBalancedAllocationArgs(&raw, "args");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& res = As<NodeResourcesBalancedAllocationArgs>(r).resources;
  ASSERT_EQ(res.size(), 3u);
  EXPECT_EQ(res[0].name, "cpu");
  EXPECT_EQ(res[1].name, "scalar.io/scalar0");
  for (const auto& spec : res) EXPECT_EQ(spec.weight, 1);
}

TEST(PluginArgsDecodeTest, FitStrategyWithoutResourcesGetsDefaults) {
  json raw = json::parse(R"({"scoringStrategy": {"type": "MostAllocated"}})");
  auto r = DecodeNodeResourcesFitArgs(&raw, "args");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& s = As<NodeResourcesFitArgs>(r).scoring_strategy;
  EXPECT_EQ(s.type, "MostAllocated");
  ASSERT_EQ(s.resources.size(), 2u);
  EXPECT_EQ(s.resources[0].name, "cpu");
  EXPECT_EQ(s.resources[1].name, "memory");
}

TEST(PluginArgsDecodeTest, FitRequestedToCapacityRatio) {
  json raw = json::parse(R"({
      "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "NodeResourcesFitArgs",
      "ignoredResources": ["example.com/foo"], "ignoredResourceGroups": ["example.com"],
      "scoringStrategy": {"type": "RequestedToCapacityRatio",
        "resources": [{"name": "cpu", "weight": 3}, {"name": "example.com/gpu", "weight": 0}],
        "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                               {"utilization": 100, "score": 10}]}}})");
  auto r = DecodeNodeResourcesFitArgs(&raw, "args");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& a = As<NodeResourcesFitArgs>(r);
  EXPECT_EQ(a.ignored_resources, std::vector<std::string>{"example.com/foo"});
  EXPECT_EQ(a.ignored_resource_groups, std::vector<std::string>{"example.com"});
  EXPECT_EQ(a.scoring_strategy.type, "RequestedToCapacityRatio");
  ASSERT_EQ(a.scoring_strategy.resources.size(), 2u);
  EXPECT_EQ(a.scoring_strategy.resources[0].weight, 3);
  EXPECT_EQ(a.scoring_strategy.resources[1].weight, 1);  // 0 means 1
  ASSERT_EQ(a.scoring_strategy.shape.size(), 2u);
  EXPECT_EQ(a.scoring_strategy.shape[1].score, 10);
  // Encoding gives back what was decoded (with the defaulted weight).
  json expected = raw;
  expected["scoringStrategy"]["resources"][1]["weight"] = 1;
  EXPECT_EQ(Encoded(a), expected);
}

TEST(PluginArgsDecodeTest, PodTopologySpreadListConstraints) {
  json raw = json::parse(R"({"defaultingType": "List", "defaultConstraints": [
      {"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
      {"maxSkew": 2, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway"}]})");
  auto r = DecodePodTopologySpreadArgs(&raw, "args");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& a = As<PodTopologySpreadArgs>(r);
  EXPECT_EQ(a.defaulting_type, "List");
  ASSERT_EQ(a.default_constraints.size(), 2u);
  EXPECT_EQ(a.default_constraints[1].max_skew, 2);
  EXPECT_EQ(a.default_constraints[1].topology_key, "zone");
  EXPECT_EQ(a.default_constraints[1].when_unsatisfiable, "ScheduleAnyway");
  json encoded = Encoded(a);
  auto round = DecodePodTopologySpreadArgs(&encoded, "args");
  ASSERT_TRUE(round.ok()) << round.error().message;
  EXPECT_EQ(Encoded(*round.value()), encoded);
}

TEST(PluginArgsDecodeTest, NodeAffinityAddedAffinity) {
  json raw = json::parse(R"({"addedAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "label-1", "operator": "In", "values": ["label-1-val"]}]}]},
      "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1, "preference":
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}}]}})");
  auto r = DecodeNodeAffinityArgs(&raw, "args");
  ASSERT_TRUE(r.ok()) << r.error().message;
  const auto& a = As<NodeAffinityArgs>(r);
  ASSERT_TRUE(a.added_affinity.has_value());
  ASSERT_TRUE(a.added_affinity->required.has_value());
  ASSERT_EQ(a.added_affinity->required->terms.size(), 1u);
  EXPECT_EQ(a.added_affinity->required->terms[0].match_expressions[0].key, "label-1");
  ASSERT_EQ(a.added_affinity->preferred.size(), 1u);
  EXPECT_EQ(a.added_affinity->preferred[0].weight, 1);
  EXPECT_EQ(a.added_affinity->preferred[0].preference.match_fields[0].values[0], "node-1");
}

TEST(PluginArgsDecodeTest, VolumeBindingShapeWithGate) {
  json raw = json::parse(R"({"bindTimeoutSeconds": 0, "shape": [{"utilization": 0, "score": 0},
      {"utilization": 100, "score": 10}]})");
  auto r = VolumeBindingArgsDecoder(true)(&raw, "args");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(As<VolumeBindingArgs>(r).bind_timeout_seconds, 0);
  EXPECT_EQ(As<VolumeBindingArgs>(r).shape.size(), 2u);
}

TEST(PluginArgsDecodeTest, InTreeDecoderLookup) {
  for (const char* name :
       {"DefaultPreemption", "InterPodAffinity", "NodeAffinity", "NodeResourcesFit",
        "NodeResourcesBalancedAllocation", "PodTopologySpread", "VolumeBinding"}) {
    ArgsDecoder decoder = InTreeArgsDecoder(name);
    ASSERT_TRUE(static_cast<bool>(decoder)) << name;
    auto r = decoder(nullptr, "args");
    ASSERT_TRUE(r.ok()) << name;
    EXPECT_EQ(std::string(r.value()->Kind()), std::string(name) + "Args");
  }
  EXPECT_FALSE(static_cast<bool>(InTreeArgsDecoder("PrioritySort")));
  EXPECT_FALSE(static_cast<bool>(InTreeArgsDecoder("NoSuchPlugin")));
}

// ------------------------------------------------------------------ errors

struct ErrorCase {
  const char* name;
  ArgsDecoder decoder;
  const char* raw;
  const char* message;
};

class PluginArgsErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(PluginArgsErrorTest, ReportsPathAndProblem) {
  const ErrorCase& c = GetParam();
  json raw = json::parse(c.raw);
  auto r = c.decoder(&raw, "profiles[0].pluginConfig[1].args");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, c.message);
}

const ErrorCase kErrorCases[] = {
    // DefaultPreemption
    {"PreemptionNegativePercentage", DecodeDefaultPreemptionArgs,
     R"({"minCandidateNodesPercentage": -1})",
     "profiles[0].pluginConfig[1].args.minCandidateNodesPercentage: invalid value -1: not in valid "
     "range [0, 100]"},
    {"PreemptionPercentageOver100", DecodeDefaultPreemptionArgs,
     R"({"minCandidateNodesPercentage": 900})",
     "profiles[0].pluginConfig[1].args.minCandidateNodesPercentage: invalid value 900: not in "
     "valid range [0, 100]"},
    {"PreemptionNegativeAbsolute", DecodeDefaultPreemptionArgs,
     R"({"minCandidateNodesPercentage": 20, "minCandidateNodesAbsolute": -1})",
     "profiles[0].pluginConfig[1].args.minCandidateNodesAbsolute: invalid value -1: not in valid "
     "range [0, inf)"},
    {"PreemptionAllZero", DecodeDefaultPreemptionArgs,
     R"({"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0})",
     "profiles[0].pluginConfig[1].args.minCandidateNodesPercentage: invalid value 0: cannot be "
     "zero at the same time as minCandidateNodesAbsolute"},
    {"PreemptionUnknownField", DecodeDefaultPreemptionArgs, R"({"minCandidateNodes": 1})",
     "profiles[0].pluginConfig[1].args.minCandidateNodes: unknown field"},
    {"PreemptionWrongType", DecodeDefaultPreemptionArgs, R"({"minCandidateNodesAbsolute": "many"})",
     "profiles[0].pluginConfig[1].args.minCandidateNodesAbsolute: expected an integer, got a "
     "string"},
    {"PreemptionWrongKind", DecodeDefaultPreemptionArgs, R"({"kind": "InterPodAffinityArgs"})",
     "profiles[0].pluginConfig[1].args.kind: unsupported value \"InterPodAffinityArgs\": "
     "supported values: \"DefaultPreemptionArgs\""},
    {"PreemptionWrongApiVersion", DecodeDefaultPreemptionArgs,
     R"({"apiVersion": "kubescheduler.config.k8s.io/v1beta3"})",
     "profiles[0].pluginConfig[1].args.apiVersion: unsupported value "
     "\"kubescheduler.config.k8s.io/v1beta3\": supported values: "
     "\"kubescheduler.config.k8s.io/v1\""},
    {"ArgsNotAnObject", DecodeDefaultPreemptionArgs, R"([1])",
     "profiles[0].pluginConfig[1].args: expected an object, got a list"},
    // InterPodAffinity
    {"HardWeightBelowMin", DecodeInterPodAffinityArgs, R"({"hardPodAffinityWeight": -1})",
     "profiles[0].pluginConfig[1].args.hardPodAffinityWeight: invalid value -1: not in valid "
     "range [0, 100]"},
    {"HardWeightAboveMax", DecodeInterPodAffinityArgs, R"({"hardPodAffinityWeight": 101})",
     "profiles[0].pluginConfig[1].args.hardPodAffinityWeight: invalid value 101: not in valid "
     "range [0, 100]"},
    {"IgnorePreferredNotBool", DecodeInterPodAffinityArgs,
     R"({"ignorePreferredTermsOfExistingPods": "yes"})",
     "profiles[0].pluginConfig[1].args.ignorePreferredTermsOfExistingPods: expected a boolean, "
     "got a string"},
    // NodeResourcesFit
    {"FitUnsupportedType", DecodeNodeResourcesFitArgs, R"({"scoringStrategy": {"type": "Foo"}})",
     "profiles[0].pluginConfig[1].args.scoringStrategy.type: unsupported value \"Foo\": supported "
     "values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""},
    {"FitStrategyWithoutType", DecodeNodeResourcesFitArgs,
     R"({"scoringStrategy": {"resources": [{"name": "cpu", "weight": 1}]}})",
     "profiles[0].pluginConfig[1].args.scoringStrategy.type: unsupported value \"\": supported "
     "values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""},
    {"FitWeightOver100", DecodeNodeResourcesFitArgs,
     R"({"scoringStrategy": {"type": "LeastAllocated",
         "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 101}]}})",
     "profiles[0].pluginConfig[1].args.scoringStrategy.resources[1].weight: invalid value 101: "
     "resource weight of memory not in valid range (0, 100]"},
    {"FitNegativeWeight", DecodeNodeResourcesFitArgs,
     R"({"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": -1}]}})",
     "profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weight: invalid value -1: "
     "resource weight of cpu not in valid range (0, 100]"},
    {"FitInvalidIgnoredResource", DecodeNodeResourcesFitArgs,
     R"({"ignoredResources": ["foo/bar/baz"]})",
     "profiles[0].pluginConfig[1].args.ignoredResources[0]: invalid value \"foo/bar/baz\": a "
     "qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
     "end with an alphanumeric character with an optional DNS subdomain prefix and '/' (e.g. "
     "'example.com/MyName')"},
    {"FitIgnoredGroupWithSlash", DecodeNodeResourcesFitArgs,
     R"({"ignoredResourceGroups": ["example.com/aaa"]})",
     "profiles[0].pluginConfig[1].args.ignoredResourceGroups[0]: invalid value "
     "\"example.com/aaa\": resource group name can't contain '/'"},
    {"FitRtcrMissing", DecodeNodeResourcesFitArgs,
     R"({"scoringStrategy": {"type": "RequestedToCapacityRatio"}})",
     "profiles[0].pluginConfig[1].args.scoringStrategy.requestedToCapacityRatio: required value: "
     "must be specified when type is RequestedToCapacityRatio"},
    {"FitRtcrEmptyShape", DecodeNodeResourcesFitArgs,
     R"({"scoringStrategy": {"type": "RequestedToCapacityRatio",
         "requestedToCapacityRatio": {"shape": []}}})",
     "profiles[0].pluginConfig[1].args.scoringStrategy.requestedToCapacityRatio.shape: required "
     "value: at least one point must be specified"},
    {"FitRtcrUnsorted", DecodeNodeResourcesFitArgs,
     R"({"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio":
         {"shape": [{"utilization": 30, "score": 1}, {"utilization": 20, "score": 2}]}}})",
     "profiles[0].pluginConfig[1].args.scoringStrategy.requestedToCapacityRatio.shape[1]."
     "utilization: invalid value 20: values must be sorted in increasing order"},
    {"FitRtcrScoreOutOfRange", DecodeNodeResourcesFitArgs,
     R"({"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio":
         {"shape": [{"utilization": 10, "score": 11}]}}})",
     "profiles[0].pluginConfig[1].args.scoringStrategy.requestedToCapacityRatio.shape[0].score: "
     "invalid value 11: not in valid range [0, 10]"},
    {"FitRtcrUtilizationOutOfRange", DecodeNodeResourcesFitArgs,
     R"({"scoringStrategy": {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio":
         {"shape": [{"utilization": 110, "score": 1}]}}})",
     "profiles[0].pluginConfig[1].args.scoringStrategy.requestedToCapacityRatio.shape[0]."
     "utilization: invalid value 110: not in valid range [0, 100]"},
    {"FitRtcrForbiddenForOtherTypes", DecodeNodeResourcesFitArgs,
     R"({"scoringStrategy": {"type": "LeastAllocated", "requestedToCapacityRatio":
         {"shape": [{"utilization": 10, "score": 1}]}}})",
     "profiles[0].pluginConfig[1].args.scoringStrategy.requestedToCapacityRatio: forbidden: must "
     "be nil when type is not RequestedToCapacityRatio"},
    {"FitUnknownStrategyField", DecodeNodeResourcesFitArgs,
     R"({"scoringStrategy": {"type": "LeastAllocated", "shape": []}})",
     "profiles[0].pluginConfig[1].args.scoringStrategy.shape: unknown field"},
    {"FitUnknownResourceField", DecodeNodeResourcesFitArgs,
     R"({"scoringStrategy": {"type": "LeastAllocated", "resources": [{"name": "cpu", "w": 1}]}})",
     "profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].w: unknown field"},
    // NodeResourcesBalancedAllocation
    {"BalancedWeightNotOne", DecodeNodeResourcesBalancedAllocationArgs,
     R"({"resources": [{"name": "cpu", "weight": 2}, {"name": "memory", "weight": 1}]})",
     "profiles[0].pluginConfig[1].args.resources[0].weight: invalid value 2: must be 1"},
    {"BalancedRepeatedResource", DecodeNodeResourcesBalancedAllocationArgs,
     R"({"resources": [{"name": "cpu", "weight": 1}, {"name": "cpu", "weight": 1}]})",
     "profiles[0].pluginConfig[1].args.resources[1].name: duplicate value \"cpu\""},
    // PodTopologySpread
    {"PtsMaxSkewNotPositive", DecodePodTopologySpreadArgs,
     R"({"defaultingType": "List", "defaultConstraints":
         [{"maxSkew": -1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}]})",
     "profiles[0].pluginConfig[1].args.defaultConstraints[0].maxSkew: invalid value -1: not in "
     "valid range (0, inf)"},
    {"PtsEmptyTopologyKey", DecodePodTopologySpreadArgs,
     R"({"defaultingType": "List", "defaultConstraints":
         [{"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": "DoNotSchedule"}]})",
     "profiles[0].pluginConfig[1].args.defaultConstraints[0].topologyKey: required value: can not "
     "be empty"},
    {"PtsEmptyWhenUnsatisfiable", DecodePodTopologySpreadArgs,
     R"({"defaultingType": "List", "defaultConstraints":
         [{"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": ""}]})",
     "profiles[0].pluginConfig[1].args.defaultConstraints[0].whenUnsatisfiable: required value: "
     "can not be empty"},
    {"PtsUnsupportedAction", DecodePodTopologySpreadArgs,
     R"({"defaultingType": "List", "defaultConstraints":
         [{"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "unknown action"}]})",
     "profiles[0].pluginConfig[1].args.defaultConstraints[0].whenUnsatisfiable: unsupported value "
     "\"unknown action\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\""},
    {"PtsDuplicatedConstraints", DecodePodTopologySpreadArgs,
     R"({"defaultingType": "List", "defaultConstraints":
         [{"maxSkew": 1, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"},
          {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "DoNotSchedule"}]})",
     "profiles[0].pluginConfig[1].args.defaultConstraints[1]: duplicate value \"{node, "
     "DoNotSchedule}\""},
    {"PtsLabelSelectorPresent", DecodePodTopologySpreadArgs,
     R"({"defaultingType": "List", "defaultConstraints":
         [{"maxSkew": 1, "topologyKey": "key", "whenUnsatisfiable": "DoNotSchedule",
           "labelSelector": {"matchLabels": {"a": "b"}}}]})",
     "profiles[0].pluginConfig[1].args.defaultConstraints[0].labelSelector: forbidden: constraint "
     "must not define a selector, as they deduced for each pod"},
    {"PtsWrongDefaultingType", DecodePodTopologySpreadArgs, R"({"defaultingType": "unknown"})",
     "profiles[0].pluginConfig[1].args.defaultingType: unsupported value \"unknown\": supported "
     "values: \"System\", \"List\""},
    {"PtsSystemWithConstraints", DecodePodTopologySpreadArgs,
     R"({"defaultConstraints":
         [{"maxSkew": 1, "topologyKey": "key", "whenUnsatisfiable": "DoNotSchedule"}]})",
     "profiles[0].pluginConfig[1].args.defaultingType: invalid value \"System\": when "
     ".defaultConstraints are not empty"},
    // NodeAffinity
    {"AffinityInvalidKey", DecodeNodeAffinityArgs,
     R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms":
         [{"matchExpressions": [{"key": "invalid/label/key", "operator": "In",
                                 "values": ["label-1-val"]}]}]}}})",
     "profiles[0].pluginConfig[1].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
     ".nodeSelectorTerms[0].matchExpressions[0].key: invalid value \"invalid/label/key\": a "
     "qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and "
     "end with an alphanumeric character with an optional DNS subdomain prefix and '/' (e.g. "
     "'example.com/MyName')"},
    {"AffinityFieldNeedsOneValue", DecodeNodeAffinityArgs,
     R"({"addedAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 1,
         "preference": {"matchFields": [{"key": "metadata.name", "operator": "In",
                                         "values": ["node-1", "node-2"]}]}}]}})",
     "profiles[0].pluginConfig[1].args.addedAffinity."
     "preferredDuringSchedulingIgnoredDuringExecution"
     "[0].preference.matchFields[0].values: invalid value [\"node-1\", \"node-2\"]: must have one "
     "element"},
    {"AffinityInWithoutValues", DecodeNodeAffinityArgs,
     R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms":
         [{"matchExpressions": [{"key": "zone", "operator": "In", "values": []}]}]}}})",
     "profiles[0].pluginConfig[1].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
     ".nodeSelectorTerms[0].matchExpressions[0].values: invalid value []: for 'in', 'notin' "
     "operators, values set can't be empty"},
    {"AffinityGtNotInteger", DecodeNodeAffinityArgs,
     R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms":
         [{"matchExpressions": [{"key": "cores", "operator": "Gt", "values": ["many"]}]}]}}})",
     "profiles[0].pluginConfig[1].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
     ".nodeSelectorTerms[0].matchExpressions[0].values[0]: invalid value \"many\": for 'Gt', 'Lt' "
     "operators, the value must be an integer"},
    {"AffinityExistsWithValues", DecodeNodeAffinityArgs,
     R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms":
         [{"matchExpressions": [{"key": "zone", "operator": "Exists", "values": ["a"]}]}]}}})",
     "profiles[0].pluginConfig[1].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
     ".nodeSelectorTerms[0].matchExpressions[0].values: invalid value [\"a\"]: values set must be "
     "empty for exists and does not exist"},
    {"AffinityBadLabelValue", DecodeNodeAffinityArgs,
     R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms":
         [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a b"]}]}]}}})",
     "profiles[0].pluginConfig[1].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution"
     ".nodeSelectorTerms[0].matchExpressions[0].values[0]: invalid value \"a b\": a valid label "
     "must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
     "start and end with an "
     "alphanumeric character"},
    // VolumeBinding
    {"BindTimeoutNegative", DecodeVolumeBindingArgs, R"({"bindTimeoutSeconds": -10})",
     "profiles[0].pluginConfig[1].args.bindTimeoutSeconds: invalid value -10: invalid "
     "BindTimeoutSeconds, should not be a negative value"},
    {"ShapeWithoutGate", DecodeVolumeBindingArgs,
     R"({"shape": [{"utilization": 1, "score": 1}, {"utilization": 3, "score": 3}]})",
     "profiles[0].pluginConfig[1].args.shape: invalid value: unexpected field `shape`, remove it "
     "or turn on the feature gate StorageCapacityScoring"},
    {"EmptyShapeWithoutGate", DecodeVolumeBindingArgs, R"({"shape": []})",
     "profiles[0].pluginConfig[1].args.shape: invalid value: unexpected field `shape`, remove it "
     "or turn on the feature gate StorageCapacityScoring"},
    {"UnsortedShapeWithGate", VolumeBindingArgsDecoder(true),
     R"({"shape": [{"utilization": 3, "score": 3}, {"utilization": 1, "score": 1}]})",
     "profiles[0].pluginConfig[1].args.shape[1].utilization: invalid value 1: values must be "
     "sorted in increasing order"},
};

INSTANTIATE_TEST_SUITE_P(All, PluginArgsErrorTest, ::testing::ValuesIn(kErrorCases),
                         [](const auto& info) { return std::string(info.param.name); });

// ------------------------------------------------------------------ typed validation

TEST(PluginArgsValidateTest, TypedArgsBuiltInCode) {
  DefaultPreemptionArgs preemption;
  EXPECT_TRUE(ValidateDefaultPreemptionArgs(preemption, "args").ok());
  preemption.min_candidate_nodes_percentage = 101;
  EXPECT_EQ(ValidateDefaultPreemptionArgs(preemption, "args").error().message,
            "args.minCandidateNodesPercentage: invalid value 101: not in valid range [0, 100]");

  NodeResourcesFitArgs fit;
  EXPECT_TRUE(ValidateNodeResourcesFitArgs(fit, "args").ok());
  fit.scoring_strategy.type = "RequestedToCapacityRatio";
  fit.scoring_strategy.shape = {{0, 10}, {100, 0}};
  EXPECT_TRUE(ValidateNodeResourcesFitArgs(fit, "args").ok());

  PodTopologySpreadArgs pts;
  EXPECT_TRUE(ValidatePodTopologySpreadArgs(pts, "").ok());
  pts.defaulting_type = "List";
  TopologySpreadConstraint constraint;
  constraint.max_skew = 1;
  constraint.topology_key = "zone";
  constraint.when_unsatisfiable = "ScheduleAnyway";
  pts.default_constraints.push_back(constraint);
  EXPECT_TRUE(ValidatePodTopologySpreadArgs(pts, "").ok());

  InterPodAffinityArgs ipa;
  ipa.hard_pod_affinity_weight = 100;
  EXPECT_TRUE(ValidateInterPodAffinityArgs(ipa, "").ok());

  NodeResourcesBalancedAllocationArgs balanced;
  EXPECT_TRUE(ValidateNodeResourcesBalancedAllocationArgs(balanced, "").ok());

  VolumeBindingArgs vb;
  EXPECT_TRUE(ValidateVolumeBindingArgs(vb, "").ok());
  EXPECT_FALSE(ValidateVolumeBindingArgs(vb, "", /*storage_capacity_scoring=*/true).ok());

  NodeAffinityArgs na;
  EXPECT_TRUE(ValidateNodeAffinityArgs(na, "").ok());
}

}  // namespace
}  // namespace berth::config
