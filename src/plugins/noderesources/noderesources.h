// NodeResourcesFit and NodeResourcesBalancedAllocation: the in-tree resource plugins.
//
// NodeResourcesFit (PreFilter, Filter, PreScore, Score) rejects nodes whose free allocatable
// cannot hold the pod's requests and scores feasible nodes with the configured strategy
// (LeastAllocated, MostAllocated or RequestedToCapacityRatio) as kube-scheduler does.
// NodeResourcesBalancedAllocation (PreScore, Score) favours nodes whose resource fractions stay
// close to each other once the pod is placed.
//
// Args: config::NodeResourcesFitArgs and config::NodeResourcesBalancedAllocationArgs; a null
// args pointer means kube-scheduler's defaults.
#pragma once

#include <string_view>

#include "berth/framework/registry.h"
#include "config/feature_gates.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kNodeResourcesFitName = config::names::kNodeResourcesFit;
inline constexpr std::string_view kNodeResourcesBalancedAllocationName =
    config::names::kNodeResourcesBalancedAllocation;

// `gates`: PodLevelResources off makes both plugins ignore pod-level spec.resources, as
// kube-scheduler does with the gate off.
PluginRegistration NodeResourcesFitRegistration(const config::FeatureGates& gates = {});
PluginRegistration NodeResourcesBalancedAllocationRegistration(
    const config::FeatureGates& gates = {});

}  // namespace berth
