// NodeUnschedulable: rejects cordoned nodes (spec.unschedulable) unless the pod tolerates the
// node.kubernetes.io/unschedulable:NoSchedule taint (Filter, UnschedulableAndUnresolvable
// "node(s) were unschedulable").
#pragma once

#include <string_view>

#include "berth/framework/registry.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kNodeUnschedulableName = config::names::kNodeUnschedulable;

PluginRegistration NodeUnschedulableRegistration();

}  // namespace berth
