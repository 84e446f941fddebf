// SchedulingGates: keeps pods with a non-empty spec.schedulingGates out of the active queue
// (PreEnqueue, UnschedulableAndUnresolvable "waiting for scheduling gates: [g1 g2]").
#pragma once

#include <string_view>

#include "berth/framework/registry.h"

namespace berth {

inline constexpr std::string_view kSchedulingGatesName = "SchedulingGates";

PluginRegistration SchedulingGatesRegistration();

}  // namespace berth
