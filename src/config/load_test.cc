#include "config/load.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "api/codec.h"
#include "config/plugin_args_codec.h"

namespace berth::config {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kDefaultPluginNames[] = {"SchedulingGates",
                                               "PrioritySort",
                                               "NodeUnschedulable",
                                               "NodeName",
                                               "TaintToleration",
                                               "NodeAffinity",
                                               "NodePorts",
                                               "NodeResourcesFit",
                                               "VolumeRestrictions",
                                               "NodeVolumeLimits",
                                               "VolumeBinding",
                                               "VolumeZone",
                                               "PodTopologySpread",
                                               "InterPodAffinity",
                                               "DynamicResources",
                                               "DefaultPreemption",
                                               "NodeResourcesBalancedAllocation",
                                               "ImageLocality",
                                               "DefaultBinder",
                                               "NodeDeclaredFeatures"};

// Args of the out-of-tree test plugin "CustomArgsPlugin".
struct CustomArgs final : PluginArgs {
  int64_t value = 7;
  std::string_view Kind() const override { return "CustomArgs"; }
  void Encode(json& out) const override { out["value"] = value; }
};

Result<std::shared_ptr<const PluginArgs>> DecodeCustomArgs(const json* raw,
                                                           const std::string& path) {
  auto args = std::make_shared<CustomArgs>();
  if (raw != nullptr) {
    for (const auto& [key, value] : raw->items()) {
      if (key != "value") return Error{path + "." + key + ": unknown field"};
      if (!value.is_number_integer()) return Error{path + ".value: expected an integer"};
      args->value = value.get<int64_t>();
    }
  }
  return std::shared_ptr<const PluginArgs>(std::move(args));
}

Registry TestRegistry() {
  Registry registry;
  for (const char* name : kDefaultPluginNames) {
    EXPECT_TRUE(registry.Add({name, {}, InTreeArgsDecoder(name)}).ok());
  }
  for (const char* name : {"CustomPlugin", "CustomPlugin2", "BarPlugin", "OtherSort"}) {
    EXPECT_TRUE(registry.Add({name, {}, {}}).ok());
  }
  EXPECT_TRUE(registry.Add({"CustomArgsPlugin", {}, DecodeCustomArgs}).ok());
  return registry;
}

const Registry& Reg() {
  static const Registry* registry = new Registry(TestRegistry());
  return *registry;
}

Result<SchedulerConfiguration> Load(const std::string& body) {
  return LoadConfig(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + body,
      "sched.yaml", Reg());
}

SchedulerConfiguration MustLoad(const std::string& body) {
  auto c = Load(body);
  EXPECT_TRUE(c.ok()) << c.error().message;
  return c.ok() ? c.value() : SchedulerConfiguration{};
}

std::vector<std::string> Names(const std::vector<PluginRef>& refs) {
  std::vector<std::string> out;
  for (const PluginRef& r : refs) out.push_back(r.name);
  return out;
}

std::vector<std::string> ConfigNames(const Profile& profile) {
  std::vector<std::string> out;
  for (const PluginConfig& c : profile.plugin_config) out.push_back(c.name);
  return out;
}

int32_t WeightOf(const PluginSet& set, std::string_view name) {
  for (const PluginRef& r : set.enabled) {
    if (r.name == name) return r.weight;
  }
  return -1;
}

// ------------------------------------------------------------------ registry

TEST(RegistryTest, AddFindNames) {
  Registry registry;
  EXPECT_TRUE(registry.Add({"B", {}, {}}).ok());
  EXPECT_TRUE(registry.Add({"A", {}, DecodeDefaultPreemptionArgs}).ok());
  auto dup = registry.Add({"A", {}, {}});
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().message, "plugin \"A\" is already registered");
  EXPECT_FALSE(registry.Add({"", {}, {}}).ok());
  ASSERT_NE(registry.Find("A"), nullptr);
  EXPECT_TRUE(static_cast<bool>(registry.Find("A")->decode_args));
  EXPECT_EQ(registry.Find("C"), nullptr);
  EXPECT_THAT(registry.Names(), ElementsAre("A", "B"));
}

// ------------------------------------------------------------------ defaults

void ExpectUpstreamDefaults(const SchedulerConfiguration& c) {
  EXPECT_EQ(c.parallelism, 16);
  EXPECT_TRUE(c.enable_profiling);
  EXPECT_TRUE(c.enable_contention_profiling);
  EXPECT_TRUE(c.leader_election.leader_elect);
  EXPECT_EQ(c.leader_election.lease_duration_ms, 15000);
  EXPECT_EQ(c.leader_election.renew_deadline_ms, 10000);
  EXPECT_EQ(c.leader_election.retry_period_ms, 2000);
  EXPECT_EQ(c.leader_election.resource_lock, "leases");
  EXPECT_EQ(c.leader_election.resource_namespace, "kube-system");
  EXPECT_EQ(c.leader_election.resource_name, "kube-scheduler");
  EXPECT_EQ(c.client_connection.qps, 50);
  EXPECT_EQ(c.client_connection.burst, 100);
  EXPECT_EQ(c.client_connection.content_type, "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(c.percentage_of_nodes_to_score, 0);
  EXPECT_EQ(c.pod_initial_backoff_seconds, 1);
  EXPECT_EQ(c.pod_max_backoff_seconds, 10);
  EXPECT_FALSE(c.delay_cache_until_active);
  EXPECT_TRUE(c.extenders.empty());
  ASSERT_EQ(c.profiles.size(), 1u);
  const Profile& p = c.profiles[0];
  EXPECT_EQ(p.scheduler_name, "default-scheduler");
  EXPECT_FALSE(p.percentage_of_nodes_to_score.has_value());
  EXPECT_THAT(Names(p.plugins.multi_point.enabled),
              ElementsAre("SchedulingGates", "PrioritySort", "NodeUnschedulable", "NodeName",
                          "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
                          "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone",
                          "PodTopologySpread", "InterPodAffinity", "DynamicResources",
                          "DefaultPreemption", "NodeResourcesBalancedAllocation", "ImageLocality",
                          "DefaultBinder", "NodeDeclaredFeatures"));
  EXPECT_EQ(WeightOf(p.plugins.multi_point, "TaintToleration"), 3);
  EXPECT_EQ(WeightOf(p.plugins.multi_point, "NodeAffinity"), 2);
  EXPECT_EQ(WeightOf(p.plugins.multi_point, "NodeResourcesFit"), 1);
  EXPECT_EQ(WeightOf(p.plugins.multi_point, "PodTopologySpread"), 2);
  EXPECT_EQ(WeightOf(p.plugins.multi_point, "InterPodAffinity"), 2);
  EXPECT_EQ(WeightOf(p.plugins.multi_point, "NodeResourcesBalancedAllocation"), 1);
  EXPECT_EQ(WeightOf(p.plugins.multi_point, "ImageLocality"), 1);
  EXPECT_EQ(WeightOf(p.plugins.multi_point, "PrioritySort"), 0);
  EXPECT_TRUE(p.plugins.multi_point.disabled.empty());
  EXPECT_TRUE(p.plugins.filter.enabled.empty());
  EXPECT_TRUE(p.plugins.score.enabled.empty());
  EXPECT_THAT(ConfigNames(p),
              ElementsAre("DefaultPreemption", "DynamicResources", "InterPodAffinity",
                          "NodeAffinity", "NodeResourcesBalancedAllocation", "NodeResourcesFit",
                          "PodTopologySpread", "VolumeBinding"));
  auto* dra = dynamic_cast<const DynamicResourcesArgs*>(p.ArgsFor("DynamicResources"));
  ASSERT_NE(dra, nullptr);
  EXPECT_EQ(dra->filter_timeout_ms, 10'000);
  auto* fit = dynamic_cast<const NodeResourcesFitArgs*>(p.ArgsFor("NodeResourcesFit"));
  ASSERT_NE(fit, nullptr);
  EXPECT_EQ(fit->scoring_strategy.type, "LeastAllocated");
  auto* pts = dynamic_cast<const PodTopologySpreadArgs*>(p.ArgsFor("PodTopologySpread"));
  ASSERT_NE(pts, nullptr);
  EXPECT_EQ(pts->defaulting_type, "System");
  auto* vb = dynamic_cast<const VolumeBindingArgs*>(p.ArgsFor("VolumeBinding"));
  ASSERT_NE(vb, nullptr);
  EXPECT_EQ(vb->bind_timeout_seconds, 600);
  EXPECT_EQ(p.ArgsFor("PrioritySort"), nullptr);
}

TEST(DefaultsTest, DefaultConfiguration) { ExpectUpstreamDefaults(DefaultConfiguration(Reg())); }

TEST(DefaultsTest, EmptyFile) { ExpectUpstreamDefaults(MustLoad("")); }

TEST(DefaultsTest, ProfileWithoutSchedulerName) {
  ExpectUpstreamDefaults(MustLoad("profiles:\n- {}\n"));
}

TEST(DefaultsTest, EmptyProfileListGetsOneProfile) {
  ExpectUpstreamDefaults(MustLoad("profiles: []\n"));
}

TEST(DefaultsTest, ExplicitZerosTakeDefaultsWhereKubeSchedulerDoes) {
  auto c = MustLoad(R"(
leaderElection:
  leaseDuration: 0s
  renewDeadline: "0"
  resourceLock: ""
clientConnection:
  qps: 0
  burst: 0
  contentType: ""
)");
  EXPECT_EQ(c.leader_election.lease_duration_ms, 15000);
  EXPECT_EQ(c.leader_election.renew_deadline_ms, 10000);
  EXPECT_EQ(c.leader_election.resource_lock, "leases");
  EXPECT_EQ(c.client_connection.qps, 50);
  EXPECT_EQ(c.client_connection.burst, 100);
  EXPECT_EQ(c.client_connection.content_type, "application/vnd.kubernetes.protobuf");
}

TEST(DefaultsTest, ContentionProfilingFollowsProfiling) {
  auto off = MustLoad("enableProfiling: false\n");
  EXPECT_FALSE(off.enable_profiling);
  EXPECT_FALSE(off.enable_contention_profiling);
  auto mixed = MustLoad("enableProfiling: false\nenableContentionProfiling: true\n");
  EXPECT_TRUE(mixed.enable_contention_profiling);
}

TEST(DefaultsTest, AllTopLevelFieldsAreRead) {
  auto c = MustLoad(R"(
parallelism: 8
percentageOfNodesToScore: 10
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 30
delayCacheUntilActive: true
enableProfiling: true
enableContentionProfiling: false
leaderElection:
  leaderElect: false
  leaseDuration: 30s
  renewDeadline: 20s
  retryPeriod: 1500ms
  resourceLock: leases
  resourceName: my-scheduler
  resourceNamespace: my-ns
clientConnection:
  kubeconfig: /etc/kubeconfig
  acceptContentTypes: application/json
  contentType: application/json
  qps: 12.5
  burst: 25
profiles:
- percentageOfNodesToScore: 50
)");
  EXPECT_EQ(c.parallelism, 8);
  EXPECT_EQ(c.percentage_of_nodes_to_score, 10);
  EXPECT_EQ(c.pod_initial_backoff_seconds, 2);
  EXPECT_EQ(c.pod_max_backoff_seconds, 30);
  EXPECT_TRUE(c.delay_cache_until_active);
  EXPECT_FALSE(c.enable_contention_profiling);
  EXPECT_FALSE(c.leader_election.leader_elect);
  EXPECT_EQ(c.leader_election.lease_duration_ms, 30000);
  EXPECT_EQ(c.leader_election.renew_deadline_ms, 20000);
  EXPECT_EQ(c.leader_election.retry_period_ms, 1500);
  EXPECT_EQ(c.leader_election.resource_name, "my-scheduler");
  EXPECT_EQ(c.leader_election.resource_namespace, "my-ns");
  EXPECT_EQ(c.client_connection.kubeconfig, "/etc/kubeconfig");
  EXPECT_EQ(c.client_connection.accept_content_types, "application/json");
  EXPECT_EQ(c.client_connection.content_type, "application/json");
  EXPECT_FLOAT_EQ(c.client_connection.qps, 12.5f);
  EXPECT_EQ(c.client_connection.burst, 25);
  ASSERT_EQ(c.profiles.size(), 1u);
  EXPECT_EQ(c.profiles[0].scheduler_name, "default-scheduler");
  EXPECT_EQ(c.profiles[0].percentage_of_nodes_to_score, 50);
}

TEST(DefaultsTest, TwoProfilesKeepUserConfigFirstAndAppendDefaults) {
  auto c = MustLoad(R"(
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: FooPlugin
- schedulerName: custom-scheduler
  plugins:
    bind:
      enabled:
      - name: BarPlugin
      disabled:
      - name: DefaultBinder
)");
  ASSERT_EQ(c.profiles.size(), 2u);
  EXPECT_THAT(ConfigNames(c.profiles[0]),
              ElementsAre("FooPlugin", "DefaultPreemption", "DynamicResources", "InterPodAffinity",
                          "NodeAffinity", "NodeResourcesBalancedAllocation", "NodeResourcesFit",
                          "PodTopologySpread", "VolumeBinding"));
  EXPECT_EQ(c.profiles[0].plugin_config[0].args, nullptr);
  EXPECT_EQ(c.profiles[0].plugin_config[0].raw_args, nullptr);
  const Profile& custom = c.profiles[1];
  EXPECT_EQ(custom.scheduler_name, "custom-scheduler");
  EXPECT_THAT(Names(custom.plugins.bind.enabled), ElementsAre("BarPlugin"));
  EXPECT_THAT(custom.plugins.bind.disabled, ElementsAre("DefaultBinder"));
  EXPECT_EQ(custom.plugins.multi_point.enabled.size(), 20u);
}

// ------------------------------------------------------------------ merge rules

struct MergeCase {
  const char* name;
  PluginSet defaults, custom, expected;
};

class MergePluginSetTest : public ::testing::TestWithParam<MergeCase> {};

TEST_P(MergePluginSetTest, Merges) {
  const MergeCase& c = GetParam();
  PluginSet got = MergePluginSet(c.defaults, c.custom);
  ASSERT_EQ(got.enabled.size(), c.expected.enabled.size());
  for (size_t i = 0; i < got.enabled.size(); ++i) {
    EXPECT_EQ(got.enabled[i].name, c.expected.enabled[i].name) << i;
    EXPECT_EQ(got.enabled[i].weight, c.expected.enabled[i].weight) << i;
  }
  EXPECT_EQ(got.disabled, c.expected.disabled);
}

const MergeCase kMergeCases[] = {
    {"DisableDefaultPlugin",
     {{{"DefaultPlugin1"}, {"DefaultPlugin2"}}, {}},
     {{}, {"DefaultPlugin1"}},
     {{{"DefaultPlugin2"}}, {"DefaultPlugin1"}}},
    {"AppendCustomPlugin",
     {{{"DefaultPlugin1"}, {"DefaultPlugin2"}}, {}},
     {{{"CustomPlugin"}}, {}},
     {{{"DefaultPlugin1"}, {"DefaultPlugin2"}, {"CustomPlugin"}}, {}}},
    {"InsertAfterDefaultPlugins2",
     {{{"DefaultPlugin1"}, {"DefaultPlugin2"}}, {}},
     {{{"CustomPlugin"}, {"DefaultPlugin2"}}, {"DefaultPlugin2"}},
     {{{"DefaultPlugin1"}, {"CustomPlugin"}, {"DefaultPlugin2"}}, {"DefaultPlugin2"}}},
    {"InsertBeforeAllPlugins",
     {{{"DefaultPlugin1"}, {"DefaultPlugin2"}}, {}},
     {{{"CustomPlugin"}, {"DefaultPlugin1"}, {"DefaultPlugin2"}}, {"*"}},
     {{{"CustomPlugin"}, {"DefaultPlugin1"}, {"DefaultPlugin2"}}, {"*"}}},
    {"ReorderDefaultPlugins",
     {{{"DefaultPlugin1"}, {"DefaultPlugin2"}}, {}},
     {{{"DefaultPlugin2"}, {"DefaultPlugin1"}}, {"*"}},
     {{{"DefaultPlugin2"}, {"DefaultPlugin1"}}, {"*"}}},
    {"CustomPluginOverrideDefaultPlugin",
     {{{"Plugin1"}, {"Plugin2"}, {"Plugin3"}}, {}},
     {{{"Plugin1", 2}, {"Plugin3", 3}}, {}},
     {{{"Plugin1", 2}, {"Plugin2"}, {"Plugin3", 3}}, {}}},
    {"OrderPreserveAfterOverride",
     {{{"Plugin1"}, {"Plugin2"}, {"Plugin3"}}, {}},
     {{{"Plugin2", 2}, {"Plugin1", 1}}, {}},
     {{{"Plugin1", 1}, {"Plugin2", 2}, {"Plugin3"}}, {}}},
    {"RepeatedCustomPlugin",
     {{{"Plugin1"}, {"Plugin2"}, {"Plugin3"}}, {}},
     {{{"Plugin1"}, {"Plugin2", 2}, {"Plugin3"}, {"Plugin2", 4}}, {}},
     {{{"Plugin1"}, {"Plugin2", 4}, {"Plugin3"}, {"Plugin2", 2}}, {}}},
    {"AppendDisabledMultiPointPlugins",
     {{{"DefaultPlugin1"}, {"DefaultPlugin2"}}, {}},
     {{{"CustomPlugin"}, {"CustomPlugin2"}}, {"DefaultPlugin2"}},
     {{{"DefaultPlugin1"}, {"CustomPlugin"}, {"CustomPlugin2"}}, {"DefaultPlugin2"}}},
    {"DisabledInDefaultSetIsKept",
     {{{"DefaultPlugin"}}, {"DefaultPlugin2"}},
     {{{"CustomPlugin"}}, {}},
     {{{"DefaultPlugin"}, {"CustomPlugin"}}, {"DefaultPlugin2"}}},
    {"OnlyDisabled", {{{"DefaultPlugin"}}, {}}, {{}, {"DefaultPlugin"}}, {{}, {"DefaultPlugin"}}},
    {"NoCustom", {{{"A"}, {"B"}}, {}}, {}, {{{"A"}, {"B"}}, {}}},
};

INSTANTIATE_TEST_SUITE_P(Upstream, MergePluginSetTest, ::testing::ValuesIn(kMergeCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(MergeTest, IsolatedProfileDisablesAllMultiPointDefaults) {
  auto c = MustLoad(R"(
percentageOfNodesToScore: 100
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      disabled:
      - name: '*'
    queueSort:
      enabled:
      - name: PrioritySort
    preFilter:
      enabled:
      - name: NodeResourcesFit
    filter:
      enabled:
      - name: NodeResourcesFit
    score:
      enabled:
      - name: ImageLocality
        weight: 1
    bind:
      enabled:
      - name: DefaultBinder
)");
  ASSERT_EQ(c.profiles.size(), 1u);
  const Plugins& p = c.profiles[0].plugins;
  EXPECT_TRUE(p.multi_point.enabled.empty());
  EXPECT_THAT(p.multi_point.disabled, ElementsAre("*"));
  EXPECT_THAT(Names(p.queue_sort.enabled), ElementsAre("PrioritySort"));
  EXPECT_THAT(Names(p.pre_filter.enabled), ElementsAre("NodeResourcesFit"));
  EXPECT_THAT(Names(p.filter.enabled), ElementsAre("NodeResourcesFit"));
  EXPECT_THAT(Names(p.score.enabled), ElementsAre("ImageLocality"));
  EXPECT_EQ(p.score.enabled[0].weight, 1);
  EXPECT_THAT(Names(p.bind.enabled), ElementsAre("DefaultBinder"));
  // Only enabled plugins with args get defaulted args.
  EXPECT_THAT(ConfigNames(c.profiles[0]), ElementsAre("NodeResourcesFit"));
}

TEST(MergeTest, ReenablingADefaultWithNewWeightKeepsPosition) {
  auto c = MustLoad(R"(
profiles:
- plugins:
    multiPoint:
      enabled:
      - name: CustomPlugin
      - name: TaintToleration
        weight: 5
)");
  const PluginSet& mp = c.profiles[0].plugins.multi_point;
  ASSERT_EQ(mp.enabled.size(), 21u);
  EXPECT_EQ(mp.enabled[4].name, "TaintToleration");
  EXPECT_EQ(mp.enabled[4].weight, 5);
  EXPECT_EQ(mp.enabled.back().name, "CustomPlugin");
}

TEST(MergeTest, DisabledMultiPointDefaultAndSpecificPoint) {
  auto c = MustLoad(R"(
profiles:
- plugins:
    multiPoint:
      disabled:
      - name: ImageLocality
    score:
      enabled:
      - name: CustomPlugin
        weight: 3
      disabled:
      - name: NodeResourcesBalancedAllocation
)");
  const Plugins& p = c.profiles[0].plugins;
  EXPECT_EQ(WeightOf(p.multi_point, "ImageLocality"), -1);
  EXPECT_THAT(p.multi_point.disabled, ElementsAre("ImageLocality"));
  EXPECT_THAT(Names(p.score.enabled), ElementsAre("CustomPlugin"));
  EXPECT_EQ(p.score.enabled[0].weight, 3);
  EXPECT_THAT(p.score.disabled, ElementsAre("NodeResourcesBalancedAllocation"));
  // Args defaults follow what is enabled anywhere: NodeResourcesBalancedAllocation is still
  // enabled through MultiPoint.
  EXPECT_NE(c.profiles[0].ArgsFor("NodeResourcesBalancedAllocation"), nullptr);
}

TEST(MergeTest, DisablingADefaultDropsItsDefaultArgs) {
  auto c = MustLoad(R"(
profiles:
- plugins:
    multiPoint:
      disabled:
      - name: DefaultPreemption
      - name: VolumeBinding
)");
  EXPECT_THAT(
      ConfigNames(c.profiles[0]),
      ElementsAre("DynamicResources", "InterPodAffinity", "NodeAffinity",
                  "NodeResourcesBalancedAllocation", "NodeResourcesFit", "PodTopologySpread"));
}

// ------------------------------------------------------------------ pluginConfig

TEST(PluginConfigTest, UserArgsAreDecodedAndDefaulted) {
  auto c = MustLoad(R"(
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources:
        - name: cpu
          weight: 2
  - name: InterPodAffinity
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: InterPodAffinityArgs
      hardPodAffinityWeight: 5
)");
  const Profile& p = c.profiles[0];
  EXPECT_THAT(ConfigNames(p),
              ElementsAre("NodeResourcesFit", "InterPodAffinity", "DefaultPreemption",
                          "DynamicResources", "NodeAffinity", "NodeResourcesBalancedAllocation",
                          "PodTopologySpread", "VolumeBinding"));
  auto* fit = dynamic_cast<const NodeResourcesFitArgs*>(p.ArgsFor("NodeResourcesFit"));
  ASSERT_NE(fit, nullptr);
  EXPECT_EQ(fit->scoring_strategy.type, "MostAllocated");
  ASSERT_EQ(fit->scoring_strategy.resources.size(), 1u);
  EXPECT_EQ(fit->scoring_strategy.resources[0].weight, 2);
  auto* ipa = dynamic_cast<const InterPodAffinityArgs*>(p.ArgsFor("InterPodAffinity"));
  ASSERT_NE(ipa, nullptr);
  EXPECT_EQ(ipa->hard_pod_affinity_weight, 5);
}

TEST(PluginConfigTest, OutOfTreeArgs) {
  auto c = MustLoad(R"(
profiles:
- plugins:
    multiPoint:
      enabled:
      - name: CustomArgsPlugin
  pluginConfig:
  - name: NotRegistered
    args:
      anything: [1, 2]
  - name: PrioritySort
    args:
      foo: bar
)");
  const Profile& p = c.profiles[0];
  // A decoder-backed out-of-tree plugin gets its defaulted args like in-tree ones.
  auto* custom = dynamic_cast<const CustomArgs*>(p.ArgsFor("CustomArgsPlugin"));
  ASSERT_NE(custom, nullptr);
  EXPECT_EQ(custom->value, 7);
  // Args of plugins without a decoder pass through verbatim, as kube-scheduler passes unknown
  // args through.
  ASSERT_EQ(p.plugin_config[0].name, "NotRegistered");
  ASSERT_NE(p.plugin_config[0].raw_args, nullptr);
  EXPECT_EQ(*p.plugin_config[0].raw_args, json::parse(R"({"anything": [1, 2]})"));
  EXPECT_EQ(p.plugin_config[0].args, nullptr);
  ASSERT_EQ(p.plugin_config[1].name, "PrioritySort");
  EXPECT_EQ(*p.plugin_config[1].raw_args, json::parse(R"({"foo": "bar"})"));

  auto given = MustLoad(R"(
profiles:
- pluginConfig:
  - name: CustomArgsPlugin
    args:
      value: 42
)");
  auto* args = dynamic_cast<const CustomArgs*>(given.profiles[0].ArgsFor("CustomArgsPlugin"));
  ASSERT_NE(args, nullptr);
  EXPECT_EQ(args->value, 42);
}

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

// ------------------------------------------------------------------ extenders

TEST(ExtendersTest, AllFieldsDecoded) {
  auto c = MustLoad(R"(
extenders:
- urlPrefix: https://extender.example.com/scheduler
  filterVerb: filter
  preemptVerb: preempt
  prioritizeVerb: prioritize
  bindVerb: bind
  weight: 3
  enableHTTPS: true
  tlsConfig:
    insecure: true
    serverName: extender.example.com
    certFile: /etc/cert
    keyFile: /etc/key
    caFile: /etc/ca
    certData: Y2VydA==
    keyData: a2V5
    caData: Y2E=
  httpTimeout: 30s
  nodeCacheCapable: true
  managedResources:
  - name: example.com/gpu
    ignoredByScheduler: true
  - name: example.com/fpga
  ignorable: true
- urlPrefix: http://second
)");
  ASSERT_EQ(c.extenders.size(), 2u);
  const Extender& e = c.extenders[0];
  EXPECT_EQ(e.url_prefix, "https://extender.example.com/scheduler");
  EXPECT_EQ(e.filter_verb, "filter");
  EXPECT_EQ(e.preempt_verb, "preempt");
  EXPECT_EQ(e.prioritize_verb, "prioritize");
  EXPECT_EQ(e.bind_verb, "bind");
  EXPECT_EQ(e.weight, 3);
  EXPECT_TRUE(e.enable_https);
  ASSERT_TRUE(e.tls_config.has_value());
  EXPECT_TRUE(e.tls_config->insecure);
  EXPECT_EQ(e.tls_config->server_name, "extender.example.com");
  EXPECT_EQ(e.tls_config->cert_file, "/etc/cert");
  EXPECT_EQ(e.tls_config->key_file, "/etc/key");
  EXPECT_EQ(e.tls_config->ca_file, "/etc/ca");
  EXPECT_EQ(e.tls_config->cert_data, "Y2VydA==");
  EXPECT_EQ(e.tls_config->key_data, "a2V5");
  EXPECT_EQ(e.tls_config->ca_data, "Y2E=");
  EXPECT_EQ(e.http_timeout_ms, 30000);
  EXPECT_TRUE(e.node_cache_capable);
  ASSERT_EQ(e.managed_resources.size(), 2u);
  EXPECT_EQ(e.managed_resources[0].name, "example.com/gpu");
  EXPECT_TRUE(e.managed_resources[0].ignored_by_scheduler);
  EXPECT_FALSE(e.managed_resources[1].ignored_by_scheduler);
  EXPECT_TRUE(e.ignorable);
  const Extender& second = c.extenders[1];
  EXPECT_EQ(second.http_timeout_ms, 5000);
  EXPECT_FALSE(second.tls_config.has_value());
  EXPECT_EQ(second.weight, 0);  // no prioritizeVerb, so no weight needed
}

TEST(ExtendersTest, ZeroTimeoutMeansDefault) {
  auto c = MustLoad("extenders:\n- urlPrefix: http://a\n  httpTimeout: 0s\n");
  EXPECT_EQ(c.extenders[0].http_timeout_ms, 5000);
}

// ------------------------------------------------------------------ encoding

TEST(EncodeTest, DefaultsDocument) {
  json doc = EncodeConfiguration(DefaultConfiguration(Reg()));
  EXPECT_EQ(doc["apiVersion"], "kubescheduler.config.k8s.io/v1");
  EXPECT_EQ(doc["kind"], "KubeSchedulerConfiguration");
  EXPECT_EQ(doc["parallelism"], 16);
  EXPECT_EQ(doc["leaderElection"], json::parse(R"({"leaderElect": true, "leaseDuration": "15s",
      "renewDeadline": "10s", "retryPeriod": "2s", "resourceLock": "leases",
      "resourceName": "kube-scheduler", "resourceNamespace": "kube-system"})"));
  EXPECT_EQ(doc["clientConnection"], json::parse(R"({"kubeconfig": "", "acceptContentTypes": "",
      "contentType": "application/vnd.kubernetes.protobuf", "qps": 50, "burst": 100})"));
  EXPECT_FALSE(doc.contains("extenders"));
  const json& profile = doc["profiles"][0];
  EXPECT_EQ(profile["schedulerName"], "default-scheduler");
  EXPECT_EQ(profile["plugins"].size(), 1u);  // only multiPoint is non-empty
  EXPECT_EQ(profile["plugins"]["multiPoint"]["enabled"][4],
            json::parse(R"({"name": "TaintToleration", "weight": 3})"));
  EXPECT_EQ(profile["plugins"]["multiPoint"]["enabled"][0], json::parse(R"({"name":
      "SchedulingGates"})"));
  ASSERT_EQ(profile["pluginConfig"].size(), 8u);
  EXPECT_EQ(profile["pluginConfig"][0], json::parse(R"({"name": "DefaultPreemption", "args": {
      "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "DefaultPreemptionArgs",
      "minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}})"));
}

void ExpectRoundTrip(const SchedulerConfiguration& config) {
  json first = EncodeConfiguration(config);
  std::string yaml = JsonToYaml(first);
  auto again = LoadConfig(yaml, "printed.yaml", Reg());
  ASSERT_TRUE(again.ok()) << again.error().message << "\n" << yaml;
  EXPECT_EQ(EncodeConfiguration(again.value()), first) << yaml;
}

TEST(EncodeTest, PrintDefaultsRoundTrips) { ExpectRoundTrip(DefaultConfiguration(Reg())); }

TEST(EncodeTest, CustomConfigurationRoundTrips) {
  ExpectRoundTrip(MustLoad(R"(
parallelism: 4
percentageOfNodesToScore: 30
leaderElection:
  leaderElect: false
  leaseDuration: 1m30s
  renewDeadline: 1500ms
clientConnection:
  qps: 0.1
profiles:
- schedulerName: default-scheduler
  percentageOfNodesToScore: 100
  plugins:
    multiPoint:
      enabled:
      - name: CustomArgsPlugin
      - name: TaintToleration
        weight: 5
      disabled:
      - name: ImageLocality
    score:
      disabled:
      - name: '*'
  pluginConfig:
  - name: NotRegistered
    args:
      flag: "true"
      count: "10"
      empty: ""
      list: []
  - name: NodeResourcesFit
    args:
      ignoredResources: [example.com/foo]
      scoringStrategy:
        type: RequestedToCapacityRatio
        resources:
        - name: cpu
          weight: 2
        requestedToCapacityRatio:
          shape:
          - utilization: 0
            score: 10
          - utilization: 100
            score: 0
  - name: PodTopologySpread
    args:
      defaultingType: List
      defaultConstraints:
      - maxSkew: 1
        topologyKey: topology.kubernetes.io/zone
        whenUnsatisfiable: ScheduleAnyway
  - name: NodeAffinity
    args:
      addedAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
          - matchExpressions:
            - key: pool
              operator: In
              values: ["1", "true"]
- schedulerName: second
  plugins:
    multiPoint:
      disabled:
      - name: '*'
extenders:
- urlPrefix: http://a
  prioritizeVerb: prioritize
  weight: 2
  httpTimeout: 2m
  tlsConfig:
    caData: Y2E=
  managedResources:
  - name: example.com/gpu
)"));
}

TEST(EncodeTest, YamlQuotesAmbiguousStrings) {
  json doc = json::parse(
      R"({"star": "*", "t": "true", "n": "10", "e": "", "plain": "abc", "num": 10, "f": 0.5,
          "b": false, "list": [], "obj": {}, "nul": null, "no": "no", "dur": "15s"})");
  std::string yaml = JsonToYaml(doc);
  EXPECT_THAT(yaml, HasSubstr("t: \"true\""));
  EXPECT_THAT(yaml, HasSubstr("\"n\": \"10\""));
  EXPECT_THAT(yaml, HasSubstr("e: \"\""));
  EXPECT_THAT(yaml, HasSubstr("\"no\": \"no\""));
  EXPECT_THAT(yaml, HasSubstr("plain: abc"));
  EXPECT_THAT(yaml, HasSubstr("num: 10"));
  EXPECT_THAT(yaml, HasSubstr("dur: 15s"));
  auto parsed = ParseDocuments(yaml, "x");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ((*parsed)[0], doc) << yaml;
}

TEST(EncodeTest, ConfigFileRoundTripThroughDisk) {
  std::string path = ::testing::TempDir() + "/berth_config_load_test.yaml";
  {
    std::ofstream out(path);
    out << EncodeConfigurationYaml(DefaultConfiguration(Reg()));
  }
  auto c = LoadConfigFile(path, Reg());
  ASSERT_TRUE(c.ok()) << c.error().message;
  ExpectUpstreamDefaults(c.value());
  std::remove(path.c_str());
}

// ------------------------------------------------------------------ dispatch by kind/apiVersion

TEST(DispatchTest, PolicyIsTranslated) {
  json policy = json::parse(R"({"kind": "Policy", "apiVersion": "v1", "priorities": []})");
  auto v1 = ToV1Document(policy, "policy.json", "", Reg());
  ASSERT_TRUE(v1.ok()) << v1.error().message;
  EXPECT_EQ(v1->translated_from, "Policy");
  EXPECT_EQ(v1->doc["apiVersion"], kConfigApiVersion);
  EXPECT_FALSE(v1->notes.empty());
}

TEST(DispatchTest, OlderVersionsAreTranslated) {
  for (const char* version : {"v1alpha2", "v1beta1", "v1beta2", "v1beta3"}) {
    const std::string api = std::string("kubescheduler.config.k8s.io/") + version;
    json doc = {{"apiVersion", api}, {"kind", "KubeSchedulerConfiguration"}};
    auto v1 = ToV1Document(doc, "old.yaml", "", Reg());
    ASSERT_TRUE(v1.ok()) << version << ": " << v1.error().message;
    EXPECT_EQ(v1->translated_from, api);
    EXPECT_EQ(v1->doc["apiVersion"], kConfigApiVersion) << version;
    EXPECT_TRUE(DecodeConfiguration(v1->doc, Reg()).ok()) << version;
  }
}

TEST(DispatchTest, V1AndUnknownDocumentsGoToTheV1Decoder) {
  json v1_doc = {{"apiVersion", kConfigApiVersion}, {"kind", "KubeSchedulerConfiguration"}};
  auto v1 = ToV1Document(v1_doc, "sched.yaml", "", Reg());
  ASSERT_TRUE(v1.ok());
  EXPECT_TRUE(v1->translated_from.empty());
  EXPECT_EQ(v1->doc, v1_doc);
  json other = {{"apiVersion", "kubescheduler.config.k8s.io/v2"},
                {"kind", "KubeSchedulerConfiguration"}};
  auto passed = ToV1Document(other, "sched.yaml", "", Reg());
  ASSERT_TRUE(passed.ok());
  EXPECT_TRUE(passed->translated_from.empty());
  auto loaded = LoadConfig(passed->doc.dump(), "sched.yaml", Reg());
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.error().message, HasSubstr("sched.yaml: apiVersion: unsupported value"));
}

TEST(DispatchTest, TranslatedDocumentErrorsNameTheirOrigin) {
  auto loaded = LoadConfig(
      "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n"
      "parallelism: 0\n",
      "old.yaml", Reg());
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message,
            "old.yaml: translated kubescheduler.config.k8s.io/v1beta2: parallelism: invalid value "
            "0: should be an integer value greater than zero");
}

}  // namespace
}  // namespace berth::config
