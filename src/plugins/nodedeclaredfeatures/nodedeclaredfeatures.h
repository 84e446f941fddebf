// NodeDeclaredFeatures: keeps a pod off nodes that do not declare, in status.declaredFeatures,
// the node features the pod's spec needs (api/declared_features.h; a feature past its version
// bound for the scheduler's version is not needed). PreFilter infers the
// features once (a pod that needs none skips the plugin); Filter checks each node's list
// (UnschedulableAndUnresolvable "node(s) didn't match Pod's required features": evicting pods
// does not give a node a feature). Its queueing hints move the pod when a node is added or its
// declared features change, and when the pod's own update changes what it needs.
#pragma once

#include <span>
#include <string_view>

#include "api/declared_features.h"
#include "berth/framework/registry.h"
#include "config/feature_gates.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kNodeDeclaredFeaturesName = config::names::kNodeDeclaredFeatures;
inline constexpr std::string_view kNodeDeclaredFeaturesReason =
    "node(s) didn't match Pod's required features";

// What the plugin infers from: the features (sorted by name) and the scheduler version their
// bounds are compared with (a pod does not need a feature past its bound). Berth's own by
// default; tests give others.
struct NodeDeclaredFeaturesOptions {
  std::span<const declared_features::Feature> features = declared_features::AllFeatures();
  std::string_view scheduler_version = declared_features::kSchedulerVersion;
};

// `gates`: with NodeDeclaredFeatures off (locked on in v1.37) the plugin skips every pod. The
// factory fails when `options.scheduler_version` is not a version.
PluginRegistration NodeDeclaredFeaturesRegistration(const config::FeatureGates& gates,
                                                    NodeDeclaredFeaturesOptions options = {});

}  // namespace berth
