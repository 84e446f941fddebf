// The in-tree plugin registry, built in one function from the in-tree table
// (config/in_tree_plugins.h: names, args decoders) and each plugin's factory.
#pragma once

#include "berth/framework/registry.h"
#include "config/feature_gates.h"

namespace berth {

// Every in-tree plugin the table registers, with its args decoder and factory. Callable from any
// thread; each call builds a new Registry.
Registry InTreeRegistry();
// The same with the plugins built under `gates` (--feature-gates): a gate a plugin honours
// changes what its factory builds.
Registry InTreeRegistry(const config::FeatureGates& gates);

}  // namespace berth
