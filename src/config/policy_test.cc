// Legacy Policy translation: each mapping, defaults, custom names, the extender spelling, errors,
// and that the printed v1 equivalent loads to the same configuration.
#include "config/policy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "berth/config/plugin_args.h"
#include "config/load.h"
#include "config/plugin_args_codec.h"
#include "testing/config_helpers.h"

namespace berth::config {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Registry PolicyRegistry() {
  return testing::DefaultPluginsRegistry(
      {"CustomPredicatePolicy", "CumtomPriorityPolicy", "NodeLabel"});
}

std::vector<std::string> At(const Profile& p, PluginSet Plugins::*point) {
  return testing::PluginsAt(p, point);
}

Result<SchedulerConfiguration> LoadPolicy(const std::string& text) {
  static const Registry* registry = new Registry(PolicyRegistry());
  return LoadConfig(text, "policy.json", *registry);
}

TEST(PolicyTest, PredicatesPrioritiesAndExtender) {
  auto c = LoadPolicy(R"({"kind":"Policy","apiVersion":"v1",
    "predicates":[{"name":"HostName"},{"name":"MatchNodeSelector"},{"name":"PodFitsResources"}],
    "priorities":[{"name":"LeastRequestedPriority","weight":1}],
    "extenders":[{"urlPrefix":"http://127.0.0.1:8888/","filterVerb":"filter","enableHttps":false}]})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->profiles.size(), 1u);
  const Profile& p = c->profiles[0];
  EXPECT_EQ(p.scheduler_name, "default-scheduler");
  EXPECT_THAT(At(p, &Plugins::filter),
              ElementsAre("PrioritySort", "SchedulingGates", "DefaultPreemption", "DefaultBinder",
                          "NodeUnschedulable", "NodeName", "NodeAffinity", "NodeResourcesFit",
                          "TaintToleration"));
  EXPECT_THAT(At(p, &Plugins::score),
              ElementsAre("PrioritySort", "SchedulingGates", "DefaultPreemption", "DefaultBinder",
                          "NodeResourcesFit"));
  const auto* fit = dynamic_cast<const NodeResourcesFitArgs*>(p.ArgsFor("NodeResourcesFit"));
  ASSERT_NE(fit, nullptr);
  EXPECT_EQ(fit->scoring_strategy.type, "LeastAllocated");
  ASSERT_EQ(c->extenders.size(), 1u);
  EXPECT_EQ(c->extenders[0].url_prefix, "http://127.0.0.1:8888/");
  EXPECT_EQ(c->extenders[0].filter_verb, "filter");
  EXPECT_EQ(c->extenders[0].http_timeout_ms, 5000);
}

TEST(PolicyTest, AbsentListsMeanTheLegacyDefaults) {
  auto c = LoadPolicy(R"({"kind":"Policy","apiVersion":"v1","hardPodAffinitySymmetricWeight":10})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const Profile& p = c->profiles[0];
  for (const char* f : {"NodeUnschedulable", "NodeResourcesFit", "NodeName", "NodePorts",
                        "NodeAffinity", "VolumeRestrictions", "TaintToleration", "NodeVolumeLimits",
                        "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity"}) {
    auto filters = At(p, &Plugins::filter);
    EXPECT_NE(std::find(filters.begin(), filters.end(), f), filters.end()) << f;
  }
  std::map<std::string, int32_t> weights;
  for (const auto& e : p.plugins.multi_point.enabled) weights[e.name] = e.weight;
  // As with DefaultPodTopologySpread on: EvenPodsSpread (2) is PodTopologySpread, whose
  // system defaults do SelectorSpread's spreading.
  EXPECT_EQ(weights["PodTopologySpread"], 2);
  EXPECT_EQ(weights.count("SelectorSpread"), 0u);
  EXPECT_EQ(weights["NodeResourcesFit"], 1);
  EXPECT_EQ(weights["NodeResourcesBalancedAllocation"], 1);
  EXPECT_EQ(weights["ImageLocality"], 1);
  const auto* ipa = dynamic_cast<const InterPodAffinityArgs*>(p.ArgsFor("InterPodAffinity"));
  ASSERT_NE(ipa, nullptr);
  EXPECT_EQ(ipa->hard_pod_affinity_weight, 10);
}

TEST(PolicyTest, EmptyListsKeepOnlyTheMandatoryFilters) {
  auto c = LoadPolicy(R"({"kind":"Policy","apiVersion":"v1","predicates":[],"priorities":[]})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_THAT(At(c->profiles[0], &Plugins::filter),
              ElementsAre("PrioritySort", "SchedulingGates", "DefaultPreemption", "DefaultBinder",
                          "NodeUnschedulable", "TaintToleration"));
  EXPECT_THAT(At(c->profiles[0], &Plugins::score),
              ElementsAre("PrioritySort", "SchedulingGates", "DefaultPreemption", "DefaultBinder"));
}

TEST(PolicyTest, CustomNamesRunRegisteredPlugins) {
  auto pred = LoadPolicy(
      R"({"kind":"Policy","apiVersion":"v1","predicates":[{"name":"CustomPredicatePolicy"}],"priorities":[]})");
  ASSERT_TRUE(pred.ok()) << pred.error().message;
  auto filters = At(pred->profiles[0], &Plugins::filter);
  EXPECT_NE(std::find(filters.begin(), filters.end(), "CustomPredicatePolicy"), filters.end());
  auto prio = LoadPolicy(
      R"({"kind":"Policy","apiVersion":"v1","priorities":[{"name":"CumtomPriorityPolicy","weight":1}]})");
  ASSERT_TRUE(prio.ok()) << prio.error().message;
  bool found = false;
  for (const auto& e : prio->profiles[0].plugins.multi_point.enabled)
    found = found || (e.name == "CumtomPriorityPolicy" && e.weight == 1);
  EXPECT_TRUE(found);
}

TEST(PolicyTest, LabelArgumentsBecomeTheNodeLabelPlugin) {
  auto c = LoadPolicy(R"({"kind":"Policy","apiVersion":"v1",
    "predicates":[{"name":"zone-required","argument":{"labelsPresence":{"labels":["zone"],"presence":true}}},
                  {"name":"no-retiring","argument":{"labelsPresence":{"labels":["retiring"],"presence":false}}}],
    "priorities":[{"name":"prefer-ssd","weight":2,"argument":{"labelPreference":{"label":"ssd","presence":true}}},
                  {"name":"avoid-gpu","weight":3,"argument":{"labelPreference":{"label":"gpu","presence":false}}}]})");
  ASSERT_TRUE(c.ok()) << c.error().message;
  const Profile& p = c->profiles[0];
  auto filters = At(p, &Plugins::filter);
  EXPECT_NE(std::find(filters.begin(), filters.end(), "NodeLabel"), filters.end());
  int32_t weight = 0;
  for (const auto& e : p.plugins.multi_point.enabled)
    if (e.name == "NodeLabel") weight = e.weight;
  EXPECT_EQ(weight, 5);  // the priorities' weights add up
  const nlohmann::json* args = nullptr;
  for (const auto& pc : p.plugin_config)
    if (pc.name == "NodeLabel") args = pc.raw_args.get();
  ASSERT_NE(args, nullptr);
  EXPECT_EQ((*args)["presentLabels"], nlohmann::json({"zone"}));
  EXPECT_EQ((*args)["absentLabels"], nlohmann::json({"retiring"}));
  EXPECT_EQ((*args)["presentLabelsPreference"], nlohmann::json({"ssd"}));
  EXPECT_EQ((*args)["absentLabelsPreference"], nlohmann::json({"gpu"}));
}

TEST(PolicyTest, ResourceStrategies) {
  auto most = LoadPolicy(
      R"({"kind":"Policy","apiVersion":"v1","priorities":[{"name":"MostRequestedPriority","weight":2}]})");
  ASSERT_TRUE(most.ok()) << most.error().message;
  const auto* fit =
      dynamic_cast<const NodeResourcesFitArgs*>(most->profiles[0].ArgsFor("NodeResourcesFit"));
  ASSERT_NE(fit, nullptr);
  EXPECT_EQ(fit->scoring_strategy.type, "MostAllocated");
  auto rtc = LoadPolicy(R"({"kind":"Policy","apiVersion":"v1","priorities":[
    {"name":"RequestedToCapacityRatioPriority","weight":2,"argument":{"requestedToCapacityRatioArguments":{
      "shape":[{"utilization":0,"score":0},{"utilization":100,"score":10}],
      "resources":[{"name":"cpu","weight":1}]}}}]})");
  ASSERT_TRUE(rtc.ok()) << rtc.error().message;
  fit = dynamic_cast<const NodeResourcesFitArgs*>(rtc->profiles[0].ArgsFor("NodeResourcesFit"));
  ASSERT_NE(fit, nullptr);
  EXPECT_EQ(fit->scoring_strategy.type, "RequestedToCapacityRatio");
  ASSERT_EQ(fit->scoring_strategy.shape.size(), 2u);
  EXPECT_EQ(fit->scoring_strategy.shape[1].score, 10);
  auto both = LoadPolicy(R"({"kind":"Policy","apiVersion":"v1","priorities":[
    {"name":"LeastRequestedPriority","weight":1},{"name":"MostRequestedPriority","weight":1}]})");
  ASSERT_FALSE(both.ok());
  EXPECT_THAT(both.error().message, HasSubstr("priorities[1].name"));
}

TEST(PolicyTest, BadInputNamesTheEntry) {
  struct Case {
    std::string text, want;
  };
  for (
      const Case& c : std::vector<Case>{
          {R"({"kind":"Policy","apiVersion":"v1","predicates":[{"name":"Foo"}]})",
           "policy.json: predicates[0].name: unknown predicate \"Foo\""},
          {R"({"kind":"Policy","apiVersion":"v1","priorities":[{"name":"ImageLocalityPriority"}]})",
           "policy.json: priorities[0].weight"},
          {R"({"kind":"Policy","apiVersion":"v1","predicates":[{"name":"CheckServiceAffinity",
               "argument":{"serviceAffinity":{"labels":"zone"}}}]})",
           "predicates[0].argument.serviceAffinity.labels"},
          {R"({"kind":"Policy","apiVersion":"v1","extenders":[{"urlPrefix":"http://x","httpTimeout":"5s"}]})",
           "extenders[0].httpTimeout"},
          {R"({"kind":"Policy","apiVersion":"v1","predicate":[]})",
           "policy.json: predicate: unknown field"},
          {R"({"kind":"Policy","apiVersion":"v1","predicates":[{"name":"HostName"})",
           "policy.json"},
      }) {
    auto r = LoadPolicy(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_THAT(r.error().message, HasSubstr(c.want)) << c.text;
  }
}

TEST(PolicyTest, ConvertedOutputLoadsToTheSameConfiguration) {
  static const Registry registry = PolicyRegistry();
  const std::string policy = R"({"kind":"Policy","apiVersion":"v1",
    "predicates":[{"name":"GeneralPredicates"},{"name":"PodToleratesNodeTaints"}],
    "priorities":[{"name":"BalancedResourceAllocation","weight":3},{"name":"ImageLocalityPriority","weight":2}],
    "extenders":[{"urlPrefix":"http://127.0.0.1:8888","prioritizeVerb":"p","weight":4,"httpTimeout":2000000000,"nodeCacheCapable":true}]})";
  auto direct = LoadConfig(policy, "policy.json", registry);
  ASSERT_TRUE(direct.ok()) << direct.error().message;
  auto t = TranslatePolicy(json::parse(policy), "policy.json", registry);
  ASSERT_TRUE(t.ok());
  const std::string yaml = AnnotatedYaml("a legacy Policy", t->notes, t->config);
  EXPECT_THAT(yaml, HasSubstr("# Translated from a legacy Policy:"));
  EXPECT_THAT(yaml, HasSubstr("priority ImageLocalityPriority -> ImageLocality (score, weight 2)"));
  auto reloaded = LoadConfig(yaml, "converted.yaml", registry);
  ASSERT_TRUE(reloaded.ok()) << reloaded.error().message;
  EXPECT_EQ(EncodeConfiguration(*direct), EncodeConfiguration(*reloaded));
  EXPECT_EQ(reloaded->extenders[0].http_timeout_ms, 2000);
  EXPECT_TRUE(reloaded->extenders[0].node_cache_capable);
}

}  // namespace
}  // namespace berth::config
