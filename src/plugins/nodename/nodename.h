// NodeName: a pod with spec.nodeName fits only that node (Filter, UnschedulableAndUnresolvable
// "node(s) didn't match the requested node name").
#pragma once

#include <string_view>

#include "berth/framework/registry.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kNodeNameName = config::names::kNodeName;

PluginRegistration NodeNameRegistration();

}  // namespace berth
