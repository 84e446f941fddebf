#include "plugins/registry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/testing/builders.h"
#include "berth/testing/fake_handle.h"
#include "config/in_tree_plugins.h"

namespace berth {
namespace {

using config::ConfigVersion;
using config::InTreePlugin;
using config::PluginStatus;

// The name a default set entry runs as: a renamed plugin runs as what it became; a removed one
// does not run.
std::string RunsAs(std::string_view name) {
  const InTreePlugin* row = config::FindInTreePlugin(name);
  if (row == nullptr) return std::string(name);
  if (row->status == PluginStatus::kRenamed) return std::string(row->renamed_to);
  if (row->status == PluginStatus::kRemoved) return "";
  return std::string(name);
}

TEST(InTreeRegistryTest, RegistersExactlyTheTablesRegisteredRows) {
  const Registry registry = InTreeRegistry();
  std::vector<std::string> rows;
  for (const InTreePlugin& p : config::InTreePlugins()) {
    if (p.Registered()) {
      rows.emplace_back(p.name);
    } else {
      EXPECT_EQ(registry.Find(p.name), nullptr) << p.name;
    }
  }
  std::vector<std::string> names = registry.Names();
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(names, rows);
}

TEST(InTreeRegistryTest, EveryDefaultSetPluginOfEveryVersionHasAFactory) {
  const Registry registry = InTreeRegistry();
  for (ConfigVersion v : config::AllConfigVersions()) {
    for (const config::DefaultPointSet& set : config::DefaultPluginSets(v)) {
      for (const config::DefaultPlugin& p : set.plugins) {
        const std::string name = RunsAs(p.name);
        if (name.empty()) continue;
        const PluginRegistration* reg = registry.Find(name);
        ASSERT_NE(reg, nullptr) << config::ConfigVersionName(v) << " " << set.point << " "
                                << p.name;
        EXPECT_TRUE(static_cast<bool>(reg->factory)) << name;
      }
    }
  }
}

TEST(InTreeRegistryTest, EveryPolicyPredicateAndPriorityHasAFactory) {
  const Registry registry = InTreeRegistry();
  for (const config::PolicyPredicate& m : config::PolicyPredicates()) {
    for (std::string_view plugin : m.plugins) {
      const PluginRegistration* reg = registry.Find(plugin);
      ASSERT_NE(reg, nullptr) << m.name;
      EXPECT_TRUE(static_cast<bool>(reg->factory)) << m.name;
    }
  }
  for (const config::PolicyPriority& m : config::PolicyPriorities()) {
    if (m.plugin.empty()) continue;
    const PluginRegistration* reg = registry.Find(m.plugin);
    ASSERT_NE(reg, nullptr) << m.name;
    EXPECT_TRUE(static_cast<bool>(reg->factory)) << m.name;
  }
}

// Each registered plugin builds with its defaulted args and calls itself by its table name.
TEST(InTreeRegistryTest, EveryPluginBuildsUnderItsTableName) {
  const Registry registry = InTreeRegistry();
  testing::FakeHandle handle;
  // Args without a default: NetworkTraffic needs its Prometheus server (not queried here).
  const nlohmann::json network_traffic = {{"prometheusAddress", "http://127.0.0.1:9090"}};
  for (const InTreePlugin& p : config::InTreePlugins()) {
    if (!p.Registered()) continue;
    const PluginRegistration* reg = registry.Find(p.name);
    ASSERT_NE(reg, nullptr) << p.name;
    if (p.decode_args != nullptr) EXPECT_TRUE(static_cast<bool>(reg->decode_args)) << p.name;
    std::shared_ptr<const PluginArgs> args;
    if (reg->decode_args) {
      const bool needs_args = p.name == config::names::kNetworkTraffic;
      auto decoded = reg->decode_args(needs_args ? &network_traffic : nullptr, "args");
      ASSERT_TRUE(decoded.ok()) << p.name << ": " << decoded.error().message;
      args = std::move(decoded).value();
    }
    auto plugin = reg->factory(args.get(), handle);
    ASSERT_TRUE(plugin.ok()) << p.name << ": " << plugin.error().message;
    EXPECT_EQ((*plugin)->Name(), p.name);
  }
}

}  // namespace
}  // namespace berth

namespace berth {
namespace {

// The registry hands its gates to the factories: with PodLevelResources off, the registry's
// NodeResourcesFit ignores spec.resources of the pod.
Code FitDecision(const Registry& registry) {
  testing::FakeHandle handle;
  auto plugin = registry.Find("NodeResourcesFit")->factory(nullptr, handle);
  EXPECT_TRUE(plugin.ok());
  auto* pre = dynamic_cast<PreFilterPlugin*>(plugin->get());
  auto* filter = dynamic_cast<FilterPlugin*>(plugin->get());
  Pod pod = *testing::MakePod().Name("p").Req({{"cpu", "1"}}).Obj();
  pod.spec.resources.emplace().requests = testing::RL({{"cpu", "8"}});
  PodInfoPtr info = PodInfo::Create(std::make_shared<const Pod>(std::move(pod)));
  CycleState state;
  PreFilterResult result;
  EXPECT_TRUE(pre->PreFilter(state, *info, {}, &result).IsSuccess());
  NodeInfo ni = testing::MakeNodeInfo(
      testing::MakeNode().Name("n").Capacity({{"cpu", "4"}, {"pods", "10"}}).Obj(), {});
  return filter->Filter(state, *info, ni).code();
}

TEST(InTreeRegistryTest, FactoriesGetTheFeatureGates) {
  EXPECT_EQ(FitDecision(InTreeRegistry()), Code::kUnschedulableAndUnresolvable);
  config::FeatureGates gates;
  std::vector<std::string> warnings;
  ASSERT_TRUE(
      gates.Set("PodLevelResources=false,InPlacePodLevelResourcesVerticalScaling=false", &warnings)
          .ok());
  EXPECT_EQ(FitDecision(InTreeRegistry(gates)), Code::kSuccess);
}

}  // namespace
}  // namespace berth
