// Older KubeSchedulerConfiguration versions (kubescheduler.config.k8s.io/v1alpha1, v1alpha2,
// v1beta1, v1beta2, v1beta3), translated into the equivalent v1 document with each version's
// own defaults, so a file keeps the behaviour it had:
//
//   * v1alpha2, v1beta1, v1beta2 list plugins per extension point over their version's default
//     sets and score weights (in_tree_plugins.h); the translation merges the file into those
//     defaults as that version did and writes every point out explicitly.
//   * v1beta3 had v1's MultiPoint defaults and weights; it is v1 with removed plugins dropped.
//   * v1alpha1 had one profile, `schedulerName`, `algorithmSource` (a Policy file, translated
//     with policy.h, or a ConfigMap, read through the API by `berth scheduler`),
//     `hardPodAffinitySymmetricWeight`, `disablePreemption`.
//   * Renamed plugins: NodeResourcesLeastAllocated / NodeResourcesMostAllocated /
//     RequestedToCapacityRatio become NodeResourcesFit scoring strategies with their args;
//     DefaultPodTopologySpread is SelectorSpread; the in-tree cloud volume limits (counted by
//     NodeVolumeLimits under CSI migration) are dropped. SelectorSpread, NodeLabel,
//     ServiceAffinity and NodePreferAvoidPods run as Berth's legacy plugins. The renames are the
//     in-tree table's kRenamed and kRemoved rows.
//
// Every translated, defaulted or dropped item gets a note (printed by `berth config convert`).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/result.h"
#include "berth/framework/registry.h"

namespace berth::config {

struct LegacyConfigTranslation {
  nlohmann::json config;  // kubescheduler.config.k8s.io/v1
  std::vector<std::string> notes;
  // v1alpha1 algorithmSource.policy.configMap: read by `berth scheduler` through the API.
  std::string policy_configmap_namespace, policy_configmap_name;
};

// True for a KubeSchedulerConfiguration of an apiVersion older than v1.
bool IsLegacyConfigVersion(const nlohmann::json& doc);

// `source` names the file in errors; `base_dir` resolves a relative algorithmSource policy path.
Result<LegacyConfigTranslation> TranslateLegacyConfig(const nlohmann::json& doc,
                                                      std::string_view source,
                                                      const std::string& base_dir,
                                                      const Registry& registry);

}  // namespace berth::config
