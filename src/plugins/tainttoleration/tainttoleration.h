// TaintToleration: keeps pods off nodes with NoSchedule / NoExecute taints they do not
// tolerate (Filter, UnschedulableAndUnresolvable "node(s) had untolerated taint(s)") and prefers
// nodes with fewer untolerated PreferNoSchedule taints (PreScore, Score, NormalizeScore:
// 100 - 100 * count / max_count). With the TaintTolerationComparisonOperators gate on,
// tolerations with operators Lt and Gt compare the taint's value as an integer
// (TolerationToleratesTaint).
#pragma once

#include <string_view>

#include "berth/framework/registry.h"
#include "config/feature_gates.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kTaintTolerationName = config::names::kTaintToleration;
inline constexpr std::string_view kTaintTolerationReason = "node(s) had untolerated taint(s)";

// At every gate's default (TaintTolerationComparisonOperators off).
PluginRegistration TaintTolerationRegistration();
PluginRegistration TaintTolerationRegistration(const config::FeatureGates& gates);

}  // namespace berth
