// NodeDeclaredFeatures: keeps a pod off nodes that do not declare, in status.declaredFeatures,
// the node features the pod's spec needs (api/declared_features.h). PreFilter infers the
// features once (a pod that needs none skips the plugin); Filter checks each node's list
// (UnschedulableAndUnresolvable "node(s) didn't match Pod's required features": evicting pods
// does not give a node a feature). Its queueing hints move the pod when a node is added or its
// declared features change, and when the pod's own update changes what it needs.
#pragma once

#include <string_view>

#include "berth/framework/registry.h"
#include "config/feature_gates.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kNodeDeclaredFeaturesName = config::names::kNodeDeclaredFeatures;
inline constexpr std::string_view kNodeDeclaredFeaturesReason =
    "node(s) didn't match Pod's required features";

// `gates`: with NodeDeclaredFeatures off (locked on in v1.37) the plugin skips every pod.
PluginRegistration NodeDeclaredFeaturesRegistration(const config::FeatureGates& gates);

}  // namespace berth
