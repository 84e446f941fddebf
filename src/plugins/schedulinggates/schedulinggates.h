// SchedulingGates: keeps pods with a non-empty spec.schedulingGates out of the active queue
// (PreEnqueue, UnschedulableAndUnresolvable "waiting for scheduling gates: [g1 g2]").
#pragma once

#include <string_view>

#include "berth/framework/registry.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kSchedulingGatesName = config::names::kSchedulingGates;

PluginRegistration SchedulingGatesRegistration();

}  // namespace berth
