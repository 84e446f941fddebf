// DefaultPreemption (PostFilter): when no node fits a pod, finds lower-priority pods whose
// eviction would let it fit, evicts them on the best node and nominates the pod to that node,
// as kube-scheduler's default preemption does.
//
// Args: config::DefaultPreemptionArgs (minCandidateNodesPercentage / minCandidateNodesAbsolute);
// a null args pointer means the defaults (10 / 100).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "berth/framework/registry.h"
#include "config/feature_gates.h"
#include "config/plugin_names.h"
#include "plugins/defaultpreemption/preemption.h"

namespace berth {

inline constexpr std::string_view kDefaultPreemptionName = config::names::kDefaultPreemption;

// Extenders with a preempt verb (Handle::extenders) narrow the candidates after the dry run.
// `gates`: SchedulerAsyncPreemption (the victims' deletions do not hold up the cycle; plugin.h).
PluginRegistration DefaultPreemptionRegistration(const config::FeatureGates& gates);

}  // namespace berth
