// Typed arguments of the in-tree plugins (the *Args kinds of kubescheduler.config.k8s.io/v1),
// with kube-scheduler's defaults: what a profile's pluginConfig decodes into. Part of the SDK so
// that code outside Berth can read an in-tree plugin's configuration (a plugin that follows
// NodeResourcesFit's scoring strategy, a custom scheduler that builds or checks a profile):
// `dynamic_cast<const berth::config::NodeResourcesFitArgs*>(args)`. Values, not handles: read
// them on any thread. Decoding, defaults and validation are Berth's (the berth binary, or
// Berth::main when compiled in), as are the Encode definitions and these types' vtables; a
// library loaded with --plugin-library resolves them from the berth binary.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/objects.h"
#include "berth/export.h"
#include "berth/framework/registry.h"

namespace berth::config {

struct BERTH_EXPORT ResourceSpec {
  std::string name;
  int64_t weight = 1;
};

struct BERTH_EXPORT UtilizationShapePoint {
  int32_t utilization = 0;  // 0..100
  int32_t score = 0;        // 0..10
};

struct BERTH_EXPORT NodeResourcesFitArgs final : PluginArgs {
  std::vector<std::string> ignored_resources;
  std::vector<std::string> ignored_resource_groups;
  struct ScoringStrategy {
    std::string type = "LeastAllocated";  // LeastAllocated, MostAllocated, RequestedToCapacityRatio
    std::vector<ResourceSpec> resources = {{"cpu", 1}, {"memory", 1}};
    std::vector<UtilizationShapePoint> shape;  // requestedToCapacityRatio.shape
  } scoring_strategy;

  std::string_view Kind() const override { return "NodeResourcesFitArgs"; }
  void Encode(nlohmann::json& out) const override;
};

struct BERTH_EXPORT NodeResourcesBalancedAllocationArgs final : PluginArgs {
  std::vector<ResourceSpec> resources = {{"cpu", 1}, {"memory", 1}};

  std::string_view Kind() const override { return "NodeResourcesBalancedAllocationArgs"; }
  void Encode(nlohmann::json& out) const override;
};

struct BERTH_EXPORT NodeAffinityArgs final : PluginArgs {
  std::optional<NodeAffinity> added_affinity;

  std::string_view Kind() const override { return "NodeAffinityArgs"; }
  void Encode(nlohmann::json& out) const override;
};

struct BERTH_EXPORT PodTopologySpreadArgs final : PluginArgs {
  std::vector<TopologySpreadConstraint> default_constraints;
  std::string defaulting_type = "System";  // System or List

  std::string_view Kind() const override { return "PodTopologySpreadArgs"; }
  void Encode(nlohmann::json& out) const override;
};

struct BERTH_EXPORT InterPodAffinityArgs final : PluginArgs {
  int32_t hard_pod_affinity_weight = 1;
  bool ignore_preferred_terms_of_existing_pods = false;

  std::string_view Kind() const override { return "InterPodAffinityArgs"; }
  void Encode(nlohmann::json& out) const override;
};

struct BERTH_EXPORT VolumeBindingArgs final : PluginArgs {
  int64_t bind_timeout_seconds = 600;
  std::vector<UtilizationShapePoint> shape;

  std::string_view Kind() const override { return "VolumeBindingArgs"; }
  void Encode(nlohmann::json& out) const override;
};

struct BERTH_EXPORT DefaultPreemptionArgs final : PluginArgs {
  int32_t min_candidate_nodes_percentage = 10;
  int32_t min_candidate_nodes_absolute = 100;

  std::string_view Kind() const override { return "DefaultPreemptionArgs"; }
  void Encode(nlohmann::json& out) const override;
};

// DynamicResources (kube-scheduler's DynamicResourcesArgs). Durations in milliseconds.
struct BERTH_EXPORT DynamicResourcesArgs final : PluginArgs {
  // How long Filter may spend allocating devices for one pod on one node; 0 disables the limit.
  int64_t filter_timeout_ms = 10'000;
  // How long PreBind waits for a device's binding conditions (DRADeviceBindingConditions).
  int64_t binding_timeout_ms = 600'000;

  std::string_view Kind() const override { return "DynamicResourcesArgs"; }
  void Encode(nlohmann::json& out) const override;
};

}  // namespace berth::config
