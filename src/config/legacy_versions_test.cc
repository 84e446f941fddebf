// Older configuration versions: each version's defaults and weights, renamed and removed plugins,
// v1alpha1's algorithmSource, and the fixtures users carry (custom plugins with args).
#include "config/legacy_versions.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "berth/config/plugin_args.h"
#include "config/load.h"
#include "config/plugin_args_codec.h"
#include "testing/config_helpers.h"

namespace berth::config {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const Registry& Reg() {
  static const Registry* registry =
      new Registry(testing::DefaultPluginsRegistry({"HelloWorldPlugin"}));
  return *registry;
}

std::vector<std::string> Names(const PluginSet& s) {
  std::vector<std::string> out;
  for (const auto& e : s.enabled) out.push_back(e.name);
  return out;
}

std::vector<std::string> At(const Profile& p, PluginSet Plugins::*point) {
  return testing::PluginsAt(p, point);
}

std::map<std::string, int32_t> Weights(const PluginSet& s) {
  std::map<std::string, int32_t> out;
  for (const auto& e : s.enabled) out[e.name] = e.weight;
  return out;
}

TEST(LegacyVersionsTest, V1beta2DefaultsAndWeights) {
  auto c = LoadConfig(
      "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n",
      "old.yaml", Reg());
  ASSERT_TRUE(c.ok()) << c.error().message;
  const Plugins& p = c->profiles[0].plugins;
  EXPECT_THAT(At(c->profiles[0], &Plugins::filter),
              ElementsAre("NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                          "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits",
                          "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity"));
  EXPECT_THAT(Names(p.bind), ElementsAre("DefaultBinder"));
  auto w = Weights(p.multi_point);
  EXPECT_EQ(w["TaintToleration"], 1);  // v1 gives 3
  EXPECT_EQ(w["NodeAffinity"], 1);     // v1 gives 2
  EXPECT_EQ(w["InterPodAffinity"], 1);
  EXPECT_EQ(w["PodTopologySpread"], 2);
  EXPECT_EQ(w["NodeResourcesFit"], 1);
  EXPECT_EQ(c->profiles[0].scheduler_name, "default-scheduler");
}

TEST(LegacyVersionsTest, V1beta1RenamedPluginsAndCustomScorePlugin) {
  auto c = LoadConfig(R"(apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled:
      - name: "*"
      enabled:
      - name: HelloWorldPlugin
  pluginConfig:
  - name: HelloWorldPlugin
    args: {xxx: "xxx", yyy: "123", zzz: 3}
)",
                      "v1beta1.yaml", Reg());
  ASSERT_TRUE(c.ok()) << c.error().message;
  const Profile& prof = c->profiles[0];
  EXPECT_THAT(At(prof, &Plugins::score), ElementsAre("HelloWorldPlugin"));
  auto filters = At(prof, &Plugins::filter);
  EXPECT_NE(std::find(filters.begin(), filters.end(), "NodeResourcesFit"), filters.end());
  bool found = false;
  for (const auto& pc : prof.plugin_config) {
    if (pc.name != "HelloWorldPlugin") continue;
    found = true;
    ASSERT_NE(pc.raw_args, nullptr);
    EXPECT_EQ((*pc.raw_args)["zzz"], 3);
    EXPECT_EQ((*pc.raw_args)["yyy"], "123");
  }
  EXPECT_TRUE(found);

  auto most = LoadConfig(R"(apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    score:
      disabled: [{name: NodeResourcesLeastAllocated}]
      enabled: [{name: NodeResourcesMostAllocated, weight: 5}]
  pluginConfig:
  - name: NodeResourcesMostAllocated
    args: {resources: [{name: cpu, weight: 2}]}
)",
                         "v1beta1.yaml", Reg());
  ASSERT_TRUE(most.ok()) << most.error().message;
  auto w = Weights(most->profiles[0].plugins.multi_point);
  EXPECT_EQ(w["NodeResourcesFit"], 5);
  EXPECT_EQ(w["NodePreferAvoidPods"], 10000);  // the legacy plugin, with its old weight
  const auto* fit =
      dynamic_cast<const NodeResourcesFitArgs*>(most->profiles[0].ArgsFor("NodeResourcesFit"));
  ASSERT_NE(fit, nullptr);
  EXPECT_EQ(fit->scoring_strategy.type, "MostAllocated");
  ASSERT_EQ(fit->scoring_strategy.resources.size(), 1u);
  EXPECT_EQ(fit->scoring_strategy.resources[0].weight, 2);
}

TEST(LegacyVersionsTest, V1beta3IsV1WithoutRemovedPlugins) {
  auto c = LoadConfig(R"(apiVersion: kubescheduler.config.k8s.io/v1beta3
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: sample-scheduler
  plugins:
    multiPoint:
      disabled: [{name: EBSLimits}]
    score:
      enabled: [{name: HelloWorldPlugin, weight: 4}]
)",
                      "v1beta3.yaml", Reg());
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->profiles[0].scheduler_name, "sample-scheduler");
  auto w = Weights(c->profiles[0].plugins.multi_point);
  EXPECT_EQ(w["TaintToleration"], 3);
  EXPECT_EQ(Weights(c->profiles[0].plugins.score)["HelloWorldPlugin"], 4);
}

TEST(LegacyVersionsTest, V1alpha1WithAPolicyFile) {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("berth-v1a1-{}", getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "policy.yaml") << R"(kind: Policy
apiVersion: v1
extenders:
- urlPrefix: http://127.0.0.1:8888/
  filterVerb: filter
  weight: 1
  enableHttps: false
  nodeCacheCapable: true
)";
  std::ofstream(dir / "sched.yaml") << R"(apiVersion: kubescheduler.config.k8s.io/v1alpha1
kind: KubeSchedulerConfiguration
schedulerName: my-scheduler
clientConnection:
  kubeconfig: /etc/kubernetes/scheduler.conf
algorithmSource:
  policy:
    file:
      path: policy.yaml
leaderElection:
  leaderElect: true
  lockObjectName: my-scheduler
  lockObjectNamespace: kube-system
)";
  auto c = LoadConfigFile((dir / "sched.yaml").string(), Reg());
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->profiles[0].scheduler_name, "my-scheduler");
  EXPECT_EQ(c->client_connection.kubeconfig, "/etc/kubernetes/scheduler.conf");
  EXPECT_EQ(c->leader_election.resource_name, "my-scheduler");
  ASSERT_EQ(c->extenders.size(), 1u);
  EXPECT_TRUE(c->extenders[0].node_cache_capable);
  EXPECT_EQ(c->extenders[0].filter_verb, "filter");
  // The Policy named no predicates: the legacy default filters run.
  auto filters = Names(c->profiles[0].plugins.multi_point);
  EXPECT_NE(std::find(filters.begin(), filters.end(), "VolumeBinding"), filters.end());
  std::filesystem::remove_all(dir);
}

TEST(LegacyVersionsTest, ErrorsNameTheFileAndField) {
  auto label = LoadConfig(R"(apiVersion: kubescheduler.config.k8s.io/v1beta1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    filter:
      enabled: [{weight: 3}]
)",
                          "old.yaml", Reg());
  ASSERT_FALSE(label.ok());
  EXPECT_THAT(label.error().message,
              HasSubstr("old.yaml: profiles[0].plugins.filter.enabled[0].name"));
  auto missing = LoadConfig(R"(apiVersion: kubescheduler.config.k8s.io/v1alpha1
kind: KubeSchedulerConfiguration
algorithmSource: {policy: {file: {path: /nonexistent/policy.json}}}
)",
                            "old.yaml", Reg());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("/nonexistent/policy.json"));
  // v1 stays strict about fields it does not know.
  auto strict = LoadConfig(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "healthzBindAddress: 0.0.0.0:10251\n",
      "new.yaml", Reg());
  ASSERT_FALSE(strict.ok());
  auto lenient = LoadConfig(
      "apiVersion: kubescheduler.config.k8s.io/v1beta1\nkind: KubeSchedulerConfiguration\n"
      "healthzBindAddress: 0.0.0.0:10251\n",
      "old.yaml", Reg());
  EXPECT_TRUE(lenient.ok()) << lenient.error().message;
}

}  // namespace
}  // namespace berth::config
