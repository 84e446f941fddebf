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
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kNodeResourcesFitName = config::names::kNodeResourcesFit;
inline constexpr std::string_view kNodeResourcesBalancedAllocationName =
    config::names::kNodeResourcesBalancedAllocation;

PluginRegistration NodeResourcesFitRegistration();
PluginRegistration NodeResourcesBalancedAllocationRegistration();

}  // namespace berth
