// NodePreferAvoidPods (Score; legacy, opt-in): the Policy era's NodePreferAvoidPodsPriority,
// kept for old configurations. A node whose scheduler.alpha.kubernetes.io/preferAvoidPods
// annotation names the pod's controlling ReplicationController or ReplicaSet (kind and UID)
// scores 0; every other node, and every pod without such a controller, scores 100. A missing
// or unreadable annotation counts as no preference.
#pragma once

#include <string_view>

#include "berth/framework/registry.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kNodePreferAvoidPodsName = config::names::kNodePreferAvoidPods;

PluginRegistration NodePreferAvoidPodsRegistration();

}  // namespace berth
