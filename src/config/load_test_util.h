// Test helpers of the configuration loader's tests: a registry with the in-tree plugins and one
// out-of-tree plugin with args, loading from YAML text, and plugin lists as names.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/codec.h"
#include "config/load.h"
#include "config/plugin_args_codec.h"

namespace berth::config::load_test {

using nlohmann::json;
using ::testing::ElementsAre;

inline constexpr const char* kDefaultPluginNames[] = {"SchedulingGates",
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

inline Result<std::shared_ptr<const PluginArgs>> DecodeCustomArgs(const json* raw,
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

inline Registry TestRegistry() {
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

inline const Registry& Reg() {
  static const Registry* registry = new Registry(TestRegistry());
  return *registry;
}

inline Result<SchedulerConfiguration> Load(const std::string& body) {
  return LoadConfig(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + body,
      "sched.yaml", Reg());
}

inline SchedulerConfiguration MustLoad(const std::string& body) {
  auto c = Load(body);
  EXPECT_TRUE(c.ok()) << c.error().message;
  return c.ok() ? c.value() : SchedulerConfiguration{};
}

inline std::vector<std::string> Names(const std::vector<PluginRef>& refs) {
  std::vector<std::string> out;
  for (const PluginRef& r : refs) out.push_back(r.name);
  return out;
}

inline std::vector<std::string> ConfigNames(const Profile& profile) {
  std::vector<std::string> out;
  for (const PluginConfig& c : profile.plugin_config) out.push_back(c.name);
  return out;
}

inline int32_t WeightOf(const PluginSet& set, std::string_view name) {
  for (const PluginRef& r : set.enabled) {
    if (r.name == name) return r.weight;
  }
  return -1;
}

inline void ExpectUpstreamDefaults(const SchedulerConfiguration& c) {
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

}  // namespace berth::config::load_test
