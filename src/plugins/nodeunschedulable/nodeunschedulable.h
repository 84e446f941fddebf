// NodeUnschedulable: rejects cordoned nodes (spec.unschedulable) unless the pod tolerates the
// node.kubernetes.io/unschedulable:NoSchedule taint (Filter, UnschedulableAndUnresolvable
// "node(s) were unschedulable"). Tolerations are matched under the
// TaintTolerationComparisonOperators gate, as TaintToleration matches them.
#pragma once

#include <string_view>

#include "berth/framework/registry.h"
#include "config/feature_gates.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kNodeUnschedulableName = config::names::kNodeUnschedulable;

// At every gate's default (TaintTolerationComparisonOperators off).
PluginRegistration NodeUnschedulableRegistration();
PluginRegistration NodeUnschedulableRegistration(const config::FeatureGates& gates);

}  // namespace berth
