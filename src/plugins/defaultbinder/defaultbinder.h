// DefaultBinder: binds the pod through the cluster client (pods/binding). A failed API call is
// an Error status carrying the client's message.
#pragma once

#include <string_view>

#include "berth/framework/registry.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kDefaultBinderName = config::names::kDefaultBinder;

PluginRegistration DefaultBinderRegistration();

}  // namespace berth
