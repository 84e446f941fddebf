#include "config/load.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "api/codec.h"
#include "config/load_test_util.h"
#include "config/plugin_args_codec.h"

namespace berth::config {
namespace {

using load_test::ConfigNames;
using load_test::CustomArgs;
using load_test::ExpectUpstreamDefaults;
using load_test::MustLoad;
using load_test::Names;
using load_test::Reg;
using load_test::WeightOf;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

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

}  // namespace
}  // namespace berth::config
