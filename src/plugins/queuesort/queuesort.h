// PrioritySort: the default QueueSort. A pod sorts before another if its priority is higher, or,
// at equal priority, if it was added to the queue earlier (QueuedPodInfo::timestamp).
#pragma once

#include <string_view>

#include "berth/framework/registry.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kPrioritySortName = config::names::kPrioritySort;

PluginRegistration PrioritySortRegistration();

}  // namespace berth
