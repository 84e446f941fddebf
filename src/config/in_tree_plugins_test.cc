#include "config/in_tree_plugins.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "config/load.h"
#include "config/plugin_args_codec.h"

namespace berth::config {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::map<std::string, int32_t> ScoreWeights(ConfigVersion version) {
  std::map<std::string, int32_t> out;
  for (const DefaultPointSet& set : DefaultPluginSets(version))
    for (const DefaultPlugin& p : set.plugins)
      if (p.weight > 0) out[std::string(p.name)] = p.weight;
  return out;
}

TEST(InTreePluginsTest, NamesAreUniqueAndFound) {
  std::set<std::string_view> seen;
  for (const InTreePlugin& p : InTreePlugins()) {
    EXPECT_TRUE(seen.insert(p.name).second) << p.name;
    EXPECT_EQ(FindInTreePlugin(p.name), &p);
  }
  EXPECT_EQ(FindInTreePlugin("NoSuchPlugin"), nullptr);
  // The gang-scheduling plugins are in-tree but in no default profile.
  EXPECT_TRUE(seen.count("Coscheduling"));
  EXPECT_TRUE(seen.count("GangScheduling"));
  EXPECT_EQ(seen.size(), 35u);
}

TEST(InTreePluginsTest, VersionsParseFromApiVersions) {
  for (ConfigVersion v : AllConfigVersions()) {
    const std::string api = std::string(kConfigGroup) + std::string(ConfigVersionName(v));
    EXPECT_EQ(ParseConfigApiVersion(api), v) << api;
  }
  EXPECT_EQ(ParseConfigApiVersion(kConfigApiVersion), ConfigVersion::kV1);
  EXPECT_EQ(ParseConfigApiVersion("kubescheduler.config.k8s.io/v2"), std::nullopt);
  EXPECT_EQ(ParseConfigApiVersion("v1beta2"), std::nullopt);
  EXPECT_EQ(ParseConfigApiVersion("other.group/v1"), std::nullopt);
}

// The default set of each version names only table rows: plugins Berth registers, or names the
// older versions' translation renames or drops.
TEST(InTreePluginsTest, EveryDefaultSetPluginIsATableRow) {
  for (ConfigVersion v : AllConfigVersions()) {
    for (const DefaultPointSet& set : DefaultPluginSets(v)) {
      for (const DefaultPlugin& p : set.plugins) {
        const InTreePlugin* row = FindInTreePlugin(p.name);
        ASSERT_NE(row, nullptr) << ConfigVersionName(v) << " " << set.point << " " << p.name;
        if (v == ConfigVersion::kV1 || v == ConfigVersion::kV1beta3) {
          EXPECT_EQ(row->status, PluginStatus::kDefault) << p.name;
        } else if (!row->Registered()) {
          EXPECT_TRUE(row->status == PluginStatus::kRenamed ||
                      row->status == PluginStatus::kRemoved)
              << p.name;
        }
      }
    }
  }
}

TEST(InTreePluginsTest, DefaultStatusIsExactlyTheV1DefaultSet) {
  std::vector<std::string_view> v1;
  for (const DefaultPointSet& set : DefaultPluginSets(ConfigVersion::kV1))
    for (const DefaultPlugin& p : set.plugins) v1.push_back(p.name);
  std::vector<std::string_view> rows;
  for (const InTreePlugin& p : InTreePlugins())
    if (p.status == PluginStatus::kDefault) rows.push_back(p.name);
  EXPECT_EQ(rows, v1);
  // The loader's defaults are the table's.
  const Plugins defaults = DefaultPlugins();
  std::vector<std::string_view> loaded;
  for (const PluginRef& ref : defaults.multi_point.enabled) loaded.push_back(ref.name);
  EXPECT_EQ(loaded, v1);
}

TEST(InTreePluginsTest, RenamesPointAtRegisteredPlugins) {
  for (const InTreePlugin& p : InTreePlugins()) {
    if (p.status == PluginStatus::kRenamed) {
      const InTreePlugin* to = FindInTreePlugin(p.renamed_to);
      ASSERT_NE(to, nullptr) << p.name;
      EXPECT_TRUE(to->Registered()) << p.name;
    } else {
      EXPECT_TRUE(p.renamed_to.empty()) << p.name;
      EXPECT_TRUE(p.fit_strategy.empty()) << p.name;
    }
    if (p.status == PluginStatus::kRemoved) EXPECT_FALSE(p.note.empty()) << p.name;
  }
  EXPECT_EQ(FindInTreePlugin(names::kNodeResourcesMostAllocated)->fit_strategy, "MostAllocated");
}

// kube-scheduler's v1 weights (and v1beta3's, the same): 3/2/2/2/1/1/1, 1200 per node at most.
TEST(InTreePluginsTest, V1WeightsMatchUpstream) {
  for (ConfigVersion v : {ConfigVersion::kV1, ConfigVersion::kV1beta3}) {
    EXPECT_EQ(ScoreWeights(v), (std::map<std::string, int32_t>{
                                   {"TaintToleration", 3},
                                   {"NodeAffinity", 2},
                                   {"PodTopologySpread", 2},
                                   {"InterPodAffinity", 2},
                                   {"NodeResourcesFit", 1},
                                   {"NodeResourcesBalancedAllocation", 1},
                                   {"ImageLocality", 1},
                               }))
        << ConfigVersionName(v);
    int32_t total = 0;
    for (const auto& [name, weight] : ScoreWeights(v)) total += weight;
    EXPECT_EQ(total * 100, 1200);
    EXPECT_EQ(DefaultWeight(v, names::kTaintToleration), 3);
    EXPECT_EQ(DefaultWeight(v, names::kNodeName), 0);
    EXPECT_THAT(DefaultPoints(v, names::kNodeName), ElementsAre("multiPoint"));
  }
}

// v1beta2 (1.27): every score plugin weighs 1 but PodTopologySpread 2.
TEST(InTreePluginsTest, V1beta2WeightsMatchUpstream) {
  EXPECT_EQ(ScoreWeights(ConfigVersion::kV1beta2), (std::map<std::string, int32_t>{
                                                       {"NodeResourcesBalancedAllocation", 1},
                                                       {"ImageLocality", 1},
                                                       {"InterPodAffinity", 1},
                                                       {"NodeResourcesFit", 1},
                                                       {"NodeAffinity", 1},
                                                       {"PodTopologySpread", 2},
                                                       {"TaintToleration", 1},
                                                   }));
  EXPECT_THAT(DefaultPoints(ConfigVersion::kV1beta2, names::kTaintToleration),
              ElementsAre("preFilter", "filter", "preScore", "score"));
}

// v1alpha1..v1beta1 (1.21-1.22): NodeResourcesLeastAllocated scores, NodePreferAvoidPods weighs
// 10000 (as the Policy era's NodePreferAvoidPodsPriority), PodTopologySpread 2, the rest 1.
TEST(InTreePluginsTest, V1beta1WeightsMatchUpstream) {
  for (ConfigVersion v :
       {ConfigVersion::kV1alpha1, ConfigVersion::kV1alpha2, ConfigVersion::kV1beta1}) {
    EXPECT_EQ(ScoreWeights(v), (std::map<std::string, int32_t>{
                                   {"NodeResourcesBalancedAllocation", 1},
                                   {"ImageLocality", 1},
                                   {"InterPodAffinity", 1},
                                   {"NodeResourcesLeastAllocated", 1},
                                   {"NodeAffinity", 1},
                                   {"NodePreferAvoidPods", 10000},
                                   {"PodTopologySpread", 2},
                                   {"TaintToleration", 1},
                               }))
        << ConfigVersionName(v);
    EXPECT_THAT(DefaultPoints(v, names::kVolumeBinding),
                ElementsAre("preFilter", "filter", "reserve", "preBind"));
    EXPECT_THAT(DefaultPoints(v, names::kSchedulingGates), IsEmpty());
  }
}

TEST(InTreePluginsTest, EveryPolicyPredicateMapsToRegisteredPlugins) {
  std::set<std::string_view> defaults, mandatory;
  for (const PolicyPredicate& m : PolicyPredicates()) {
    for (std::string_view plugin : m.plugins) {
      const InTreePlugin* row = FindInTreePlugin(plugin);
      ASSERT_NE(row, nullptr) << m.name << " -> " << plugin;
      EXPECT_TRUE(row->Registered()) << m.name << " -> " << plugin;
    }
    if (m.plugins.empty()) EXPECT_FALSE(m.note.empty()) << m.name;
    if (m.in_default_set) defaults.insert(m.name);
    if (m.mandatory) mandatory.insert(m.name);
  }
  EXPECT_EQ(mandatory,
            (std::set<std::string_view>{"CheckNodeUnschedulable", "PodToleratesNodeTaints"}));
  // Upstream's legacy default predicates (1.19-1.22).
  EXPECT_EQ(defaults, (std::set<std::string_view>{
                          "CheckNodeUnschedulable", "GeneralPredicates", "NoDiskConflict",
                          "PodToleratesNodeTaints", "MaxEBSVolumeCount", "MaxGCEPDVolumeCount",
                          "MaxCSIVolumeCountPred", "MaxAzureDiskVolumeCount", "CheckVolumeBinding",
                          "NoVolumeZoneConflict", "EvenPodsSpread", "MatchInterPodAffinity"}));
}

TEST(InTreePluginsTest, EveryPolicyPriorityMapsToARegisteredPlugin) {
  std::map<std::string, int64_t> defaults;
  for (const PolicyPriority& m : PolicyPriorities()) {
    if (m.plugin.empty()) {
      EXPECT_FALSE(m.note.empty()) << m.name;
      continue;
    }
    const InTreePlugin* row = FindInTreePlugin(m.plugin);
    ASSERT_NE(row, nullptr) << m.name;
    EXPECT_TRUE(row->Registered()) << m.name;
    if (m.default_weight > 0) defaults[std::string(m.name)] = m.default_weight;
  }
  // Upstream's legacy default priorities and weights; SelectorSpreadPriority's spreading is
  // PodTopologySpread's system defaults (EvenPodsSpreadPriority), as with
  // DefaultPodTopologySpread.
  EXPECT_EQ(defaults, (std::map<std::string, int64_t>{
                          {"InterPodAffinityPriority", 1},
                          {"LeastRequestedPriority", 1},
                          {"BalancedResourceAllocation", 1},
                          {"NodePreferAvoidPodsPriority", 10000},
                          {"NodeAffinityPriority", 1},
                          {"TaintTolerationPriority", 1},
                          {"ImageLocalityPriority", 1},
                          {"EvenPodsSpreadPriority", 2},
                      }));
  for (std::string_view base : PolicyBasePlugins()) {
    ASSERT_NE(FindInTreePlugin(base), nullptr) << base;
    EXPECT_EQ(FindInTreePlugin(base)->status, PluginStatus::kDefault) << base;
  }
}

// The decoder column: each decoder returns its plugin's defaulted args kind.
TEST(InTreePluginsTest, DecodersDecodeTheirPluginsArgs) {
  int decoders = 0;
  for (const InTreePlugin& p : InTreePlugins()) {
    ArgsDecoder decoder = InTreeArgsDecoder(p.name);
    EXPECT_EQ(static_cast<bool>(decoder), p.decode_args != nullptr) << p.name;
    if (!decoder) continue;
    ++decoders;
    EXPECT_TRUE(p.Registered()) << p.name;
    auto args = decoder(nullptr, "args");
    ASSERT_TRUE(args.ok()) << p.name << ": " << args.error().message;
    EXPECT_EQ(std::string(args.value()->Kind()), std::string(p.name) + "Args");
  }
  EXPECT_EQ(decoders, 8);
}

}  // namespace
}  // namespace berth::config
