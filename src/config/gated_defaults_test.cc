// ApplyGatedDefaultPlugins: GangScheduling joins the default profile where kube-scheduler's
// applyFeatureGates puts it, only with its gate on.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "config/feature_gates.h"
#include "config/load.h"

namespace berth::config {
namespace {

std::vector<std::string> MultiPoint(const SchedulerConfiguration& c, size_t profile = 0) {
  std::vector<std::string> out;
  for (const auto& p : c.profiles[profile].plugins.multi_point.enabled) out.push_back(p.name);
  return out;
}

SchedulerConfiguration WithProfiles(const std::vector<PluginSet>& multi_points) {
  SchedulerConfiguration c;
  for (const PluginSet& custom : multi_points) {
    Profile p;
    Plugins mine;
    mine.multi_point = custom;
    p.plugins = MergePlugins(DefaultPlugins(), mine);
    c.profiles.push_back(p);
  }
  return c;
}

FeatureGates Gates(const std::string& value) {
  FeatureGates g;
  std::vector<std::string> warnings;
  EXPECT_TRUE(g.Set(value, &warnings).ok());
  return g;
}

TEST(GatedDefaultPluginsTest, GangSchedulingFollowsTheDefaultsWithItsGate) {
  PluginSet custom;
  custom.enabled.push_back({"CustomPlugin", 0});
  SchedulerConfiguration c = WithProfiles({custom});
  std::vector<std::string> before = MultiPoint(c);
  ApplyGatedDefaultPlugins(c, FeatureGates());  // gates at their v1.37 defaults: off
  EXPECT_EQ(MultiPoint(c), before);

  ApplyGatedDefaultPlugins(c, Gates("GenericWorkload=true,GangScheduling=true"));
  std::vector<std::string> want = before;
  want.insert(want.end() - 1, "GangScheduling");  // after the defaults, before CustomPlugin
  EXPECT_EQ(MultiPoint(c), want);
  EXPECT_EQ(MultiPoint(c)[want.size() - 3], "NodeDeclaredFeatures");
  // Applied again (a reload): not twice.
  ApplyGatedDefaultPlugins(c, Gates("GenericWorkload=true,GangScheduling=true"));
  EXPECT_EQ(MultiPoint(c), want);
}

TEST(GatedDefaultPluginsTest, AProfileThatDisablesItOrEveryDefaultKeepsItOut) {
  PluginSet off, none;
  off.disabled.push_back("GangScheduling");
  none.disabled.push_back("*");
  none.enabled.push_back({"CustomPlugin", 0});
  SchedulerConfiguration c = WithProfiles({off, none});
  ApplyGatedDefaultPlugins(c, Gates("GenericWorkload=true,GangScheduling=true"));
  for (size_t i = 0; i < 2; ++i)
    for (const auto& name : MultiPoint(c, i)) EXPECT_NE(name, "GangScheduling") << i;
}

}  // namespace
}  // namespace berth::config
