// SelectorSpread (PreScore, Score; legacy, opt-in): spreading before topology spread
// constraints — kept for old configurations (SelectorSpreadPriority, ServiceSpreadingPriority,
// the SelectorSpread / DefaultPodTopologySpread plugins). Prefers nodes, and zones, with fewer
// pods matched by the selector of the pod's Services and controller (the same selector as
// PodTopologySpread's system defaults, DefaultSelector). Score: matching pods on the node;
// NormalizeScore: 100 x (most - count) / most per node, blended 1/3 node + 2/3 zone when nodes
// carry zone labels (region + zone). Pods with their own topologySpreadConstraints score 0 on
// every node (skipped, as upstream).
#pragma once

#include <string_view>

#include "berth/framework/registry.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kSelectorSpreadName = config::names::kSelectorSpread;

PluginRegistration SelectorSpreadRegistration();

}  // namespace berth
