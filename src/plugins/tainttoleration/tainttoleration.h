// TaintToleration: keeps pods off nodes with NoSchedule / NoExecute taints they do not
// tolerate (Filter, UnschedulableAndUnresolvable "node(s) had untolerated taint(s)") and prefers
// nodes with fewer untolerated PreferNoSchedule taints (PreScore, Score, NormalizeScore:
// 100 - 100 * count / max_count).
#pragma once

#include <string_view>

#include "berth/framework/registry.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kTaintTolerationName = config::names::kTaintToleration;
inline constexpr std::string_view kTaintTolerationReason = "node(s) had untolerated taint(s)";

PluginRegistration TaintTolerationRegistration();

}  // namespace berth
