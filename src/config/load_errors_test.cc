#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "api/codec.h"
#include "config/load.h"
#include "config/load_test_util.h"
#include "config/plugin_args_codec.h"

namespace berth::config {
namespace {

using load_test::Load;
using load_test::Reg;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ------------------------------------------------------------------ errors

struct LoadErrorCase {
  const char* name;
  const char* body;  // appended after apiVersion and kind
  const char* message;
};

class LoadErrorTest : public ::testing::TestWithParam<LoadErrorCase> {};

TEST_P(LoadErrorTest, ReportsOneLineWithPath) {
  const LoadErrorCase& c = GetParam();
  auto r = Load(c.body);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, c.message);
  EXPECT_EQ(r.error().message.find('\n'), std::string::npos);
}

const LoadErrorCase kLoadErrorCases[] = {
    {"UnknownTopLevelField", "foo: 1\n", "sched.yaml: foo: unknown field"},
    {"RemovedTopLevelField", "healthzBindAddress: 0.0.0.0:10251\n",
     "sched.yaml: healthzBindAddress: unknown field"},
    {"ParallelismZero", "parallelism: 0\n",
     "sched.yaml: parallelism: invalid value 0: should be an integer value greater than zero"},
    {"ParallelismNotInteger", "parallelism: many\n",
     "sched.yaml: parallelism: expected an integer, got a string"},
    {"PercentageTooHigh", "percentageOfNodesToScore: 101\n",
     "sched.yaml: percentageOfNodesToScore: invalid value 101: not in valid range [0-100]"},
    {"ProfilePercentageNegative", "profiles:\n- percentageOfNodesToScore: -1\n",
     "sched.yaml: profiles[0].percentageOfNodesToScore: invalid value -1: not in valid range "
     "[0-100]"},
    {"InitialBackoffZero", "podInitialBackoffSeconds: 0\n",
     "sched.yaml: podInitialBackoffSeconds: invalid value 0: must be greater than 0"},
    {"MaxBackoffBelowInitial", "podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 3\n",
     "sched.yaml: podMaxBackoffSeconds: invalid value 3: must be greater than or equal to "
     "podInitialBackoffSeconds"},
    {"ResourceLockNotLeases", "leaderElection:\n  resourceLock: endpoints\n",
     "sched.yaml: leaderElection.resourceLock: invalid value \"endpoints\": resourceLock value "
     "must be \"leases\""},
    {"LeaseNotLongerThanRenew", "leaderElection:\n  leaseDuration: 5s\n",
     "sched.yaml: leaderElection.leaseDuration: invalid value \"5s\": must be greater than "
     "renewDeadline (10s)"},
    {"NegativeRetryPeriod", "leaderElection:\n  retryPeriod: -1s\n",
     "sched.yaml: leaderElection.retryPeriod: invalid value \"-1s\": must be greater than zero"},
    {"BadDuration", "leaderElection:\n  leaseDuration: 15\n",
     "sched.yaml: leaderElection.leaseDuration: expected a string, got a number"},
    {"BadDurationText", "leaderElection:\n  leaseDuration: 15 seconds\n",
     "sched.yaml: leaderElection.leaseDuration: invalid value \"15 seconds\": not a duration "
     "(e.g. \"15s\")"},
    {"NegativeBurst", "clientConnection:\n  burst: -1\n",
     "sched.yaml: clientConnection.burst: invalid value -1: must be non-negative"},
    {"UnknownClientConnectionField", "clientConnection:\n  timeout: 1s\n",
     "sched.yaml: clientConnection.timeout: unknown field"},
    {"UnknownProfileField", "profiles:\n- schedulerName: a\n  plugin: {}\n",
     "sched.yaml: profiles[0].plugin: unknown field"},
    {"UnknownExtensionPoint", "profiles:\n- plugins:\n    scores: {}\n",
     "sched.yaml: profiles[0].plugins.scores: unknown field"},
    {"UnknownPluginSetField", "profiles:\n- plugins:\n    score:\n      enable: []\n",
     "sched.yaml: profiles[0].plugins.score.enable: unknown field"},
    {"WeightNotInteger",
     "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: A\n      - name: B\n"
     "        weight: high\n",
     "sched.yaml: profiles[0].plugins.score.enabled[1].weight: expected an integer, got a "
     "string"},
    {"SecondProfileWithoutName", "profiles:\n- schedulerName: a\n- {}\n",
     "sched.yaml: profiles[1].schedulerName: required value"},
    {"EmptySchedulerName", "profiles:\n- schedulerName: ''\n",
     "sched.yaml: profiles[0].schedulerName: required value"},
    {"DuplicateSchedulerName", "profiles:\n- schedulerName: a\n- schedulerName: a\n",
     "sched.yaml: profiles[1].schedulerName: duplicate value \"a\" (also "
     "profiles[0].schedulerName)"},
    {"DifferentQueueSort",
     "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    queueSort:\n      "
     "enabled:\n      - name: OtherSort\n",
     "sched.yaml: profiles[1].plugins.queueSort: invalid value: must be the same for all "
     "profiles"},
    {"DifferentQueueSortArgs",
     "profiles:\n- schedulerName: a\n  plugins:\n    queueSort:\n      enabled:\n      - name: "
     "OtherSort\n  pluginConfig:\n  - name: OtherSort\n    args: {x: 1}\n- schedulerName: b\n"
     "  plugins:\n    queueSort:\n      enabled:\n      - name: OtherSort\n  pluginConfig:\n  - "
     "name: OtherSort\n    args: {x: 2}\n",
     "sched.yaml: profiles[1].pluginConfig[0].args: invalid value: queueSort must be the same for "
     "all profiles"},
    {"TwoQueueSortPlugins",
     "profiles:\n- plugins:\n    queueSort:\n      enabled:\n      - name: PrioritySort\n      - "
     "name: OtherSort\n",
     "sched.yaml: profiles[0].plugins.queueSort.enabled: invalid value 2: only one queue sort "
     "plugin can be enabled"},
    {"RemovedPluginEnabled",
     "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: NodePorts\n      - name: "
     "EBSLimits\n",
     "sched.yaml: profiles[0].plugins.filter.enabled[1]: invalid value \"EBSLimits\": invalid "
     "plugin name, removed in kubescheduler.config.k8s.io/v1"},
    {"RemovedPluginInMultiPoint",
     "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: AzureDiskLimits\n",
     "sched.yaml: profiles[0].plugins.multiPoint.enabled[0]: invalid value \"AzureDiskLimits\": "
     "invalid plugin name, removed in kubescheduler.config.k8s.io/v1"},
    {"RemovedPluginConfig", "profiles:\n- pluginConfig:\n  - name: GCEPDLimits\n",
     "sched.yaml: profiles[0].pluginConfig[0]: invalid value \"GCEPDLimits\": invalid plugin "
     "name, removed in kubescheduler.config.k8s.io/v1"},
    {"DuplicatePluginConfig",
     "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n  - name: InterPodAffinity\n",
     "sched.yaml: profiles[0].pluginConfig[1]: duplicate value \"InterPodAffinity\""},
    {"ArgsUnsupportedValue",
     "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n  - name: NodeResourcesFit\n"
     "    args:\n      scoringStrategy:\n        type: Foo\n",
     "sched.yaml: profiles[0].pluginConfig[1].args.scoringStrategy.type: unsupported value "
     "\"Foo\": supported values: \"LeastAllocated\", \"MostAllocated\", "
     "\"RequestedToCapacityRatio\""},
    {"ArgsUnknownField",
     "profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args:\n      minCandidate: 1\n",
     "sched.yaml: profiles[0].pluginConfig[0].args.minCandidate: unknown field"},
    {"ArgsWrongKind",
     "profiles:\n- pluginConfig:\n  - name: VolumeBinding\n    args:\n      kind: "
     "DefaultPreemptionArgs\n",
     "sched.yaml: profiles[0].pluginConfig[0].args.kind: unsupported value "
     "\"DefaultPreemptionArgs\": supported values: \"VolumeBindingArgs\""},
    {"OutOfTreeArgsError",
     "profiles:\n- pluginConfig:\n  - name: CustomArgsPlugin\n    args:\n      valu: 1\n",
     "sched.yaml: profiles[0].pluginConfig[0].args.valu: unknown field"},
    {"UnknownPluginConfigField", "profiles:\n- pluginConfig:\n  - name: A\n    arg: {}\n",
     "sched.yaml: profiles[0].pluginConfig[0].arg: unknown field"},
    {"PluginConfigNotAList", "profiles:\n- pluginConfig: {}\n",
     "sched.yaml: profiles[0].pluginConfig: expected a list"},
    {"ExtenderWithoutUrl", "extenders:\n- filterVerb: filter\n",
     "sched.yaml: extenders[0].urlPrefix: required value"},
    {"ExtenderPrioritizeWithoutWeight",
     "extenders:\n- urlPrefix: http://a\n  prioritizeVerb: prioritize\n",
     "sched.yaml: extenders[0].weight: invalid value 0: must have a positive weight applied to "
     "it"},
    {"TwoBinders",
     "extenders:\n- urlPrefix: http://a\n  bindVerb: bind\n- urlPrefix: http://b\n  bindVerb: "
     "bind\n",
     "sched.yaml: extenders: invalid value \"found 2 extenders implementing bind\": only one "
     "extender can implement bind"},
    {"ManagedResourceNotExtended",
     "extenders:\n- urlPrefix: http://a\n  managedResources:\n  - name: cpu\n",
     "sched.yaml: extenders[0].managedResources[0].name: invalid value \"cpu\": is an invalid "
     "extended resource name"},
    {"ManagedResourceInvalidName",
     "extenders:\n- urlPrefix: http://a\n  managedResources:\n  - name: a/b/c\n",
     "sched.yaml: extenders[0].managedResources[0].name: invalid value \"a/b/c\": a qualified "
     "name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
     "an alphanumeric character with an optional DNS subdomain prefix and '/' (e.g. "
     "'example.com/MyName')"},
    {"ManagedResourceDuplicate",
     "extenders:\n- urlPrefix: http://a\n  managedResources:\n  - name: example.com/foo\n- "
     "urlPrefix: http://b\n  managedResources:\n  - name: example.com/foo\n",
     "sched.yaml: extenders[1].managedResources[0].name: invalid value \"example.com/foo\": "
     "duplicate extender managed resource name"},
    {"ExtenderBadTimeout", "extenders:\n- urlPrefix: http://a\n  httpTimeout: 5\n",
     "sched.yaml: extenders[0].httpTimeout: expected a string, got a number"},
    {"ExtenderNegativeTimeout", "extenders:\n- urlPrefix: http://a\n  httpTimeout: -5s\n",
     "sched.yaml: extenders[0].httpTimeout: invalid value \"-5s\": must not be negative"},
    {"ExtenderBadCertData",
     "extenders:\n- urlPrefix: http://a\n  tlsConfig:\n    certData: not base64!\n",
     "sched.yaml: extenders[0].tlsConfig.certData: invalid value: not valid base64 data"},
    {"ExtenderUnknownField", "extenders:\n- urlPrefix: http://a\n  enableHttps: true\n",
     "sched.yaml: extenders[0].enableHttps: unknown field"},
};

INSTANTIATE_TEST_SUITE_P(All, LoadErrorTest, ::testing::ValuesIn(kLoadErrorCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(LoadErrorTest, TypeMeta) {
  // Older versions are translated (legacy_versions.h); unknown ones are errors.
  auto wrong_version =
      LoadConfig("apiVersion: kubescheduler.config.k8s.io/v2\nkind: KubeSchedulerConfiguration\n",
                 "sched.yaml", Reg());
  ASSERT_FALSE(wrong_version.ok());
  EXPECT_EQ(wrong_version.error().message,
            "sched.yaml: apiVersion: unsupported value \"kubescheduler.config.k8s.io/v2\": "
            "supported values: \"kubescheduler.config.k8s.io/v1\"");
  // A Policy document is a legacy Policy (policy.h), which has its own apiVersion.
  auto wrong_kind =
      LoadConfig("apiVersion: kubescheduler.config.k8s.io/v1\nkind: Policy\n", "sched.yaml", Reg());
  ASSERT_FALSE(wrong_kind.ok());
  EXPECT_EQ(wrong_kind.error().message,
            "sched.yaml: apiVersion: unsupported value \"kubescheduler.config.k8s.io/v1\" for kind "
            "Policy: supported \"v1\"");
  auto other_kind = LoadConfig("apiVersion: kubescheduler.config.k8s.io/v1\nkind: Scheduler\n",
                               "sched.yaml", Reg());
  ASSERT_FALSE(other_kind.ok());
  EXPECT_EQ(other_kind.error().message,
            "sched.yaml: kind: unsupported value \"Scheduler\": supported values: "
            "\"KubeSchedulerConfiguration\"");
  auto no_kind = LoadConfig("apiVersion: kubescheduler.config.k8s.io/v1\n", "sched.yaml", Reg());
  ASSERT_FALSE(no_kind.ok());
  EXPECT_EQ(no_kind.error().message,
            "sched.yaml: kind: required value: must be \"KubeSchedulerConfiguration\"");
  auto no_version = LoadConfig("kind: KubeSchedulerConfiguration\n", "sched.yaml", Reg());
  ASSERT_FALSE(no_version.ok());
  EXPECT_EQ(no_version.error().message,
            "sched.yaml: apiVersion: required value: must be \"kubescheduler.config.k8s.io/v1\"");
  auto empty = LoadConfig("", "sched.yaml", Reg());
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().message,
            "sched.yaml: expected one KubeSchedulerConfiguration document, found 0");
  auto two = LoadConfig(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n---\n"
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
      "sched.yaml", Reg());
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.error().message,
            "sched.yaml: expected one KubeSchedulerConfiguration document, found 2");
  auto broken = LoadConfig("profiles: [\n", "sched.yaml", Reg());
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(broken.error().message, HasSubstr("sched.yaml"));
  auto list = LoadConfig("[1, 2]\n", "sched.yaml", Reg());
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().message, "sched.yaml: expected a KubeSchedulerConfiguration object");
}

TEST(LoadErrorTest, MissingFileNamesIt) {
  auto r = LoadConfigFile("/nonexistent/sched.yaml", Reg());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("/nonexistent/sched.yaml"));
}

}  // namespace
}  // namespace berth::config
