// NodePorts: rejects nodes where a host port the pod asks for is already in use
// (Unschedulable "node(s) didn't have free ports for the requested pod ports").
//
// PreFilter collects the host ports (hostPort > 0) of the app containers and of the sidecar
// init containers (restartPolicy Always), which run for the pod's whole life; it returns Skip
// when there are none. An empty hostIP means 0.0.0.0, which conflicts with every address.
#pragma once

#include <string_view>

#include "berth/framework/registry.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kNodePortsName = config::names::kNodePorts;

PluginRegistration NodePortsRegistration();

}  // namespace berth
