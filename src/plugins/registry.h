// The in-tree plugin registry, built in one function.
#pragma once

#include "berth/framework/registry.h"

namespace berth {

// Every in-tree plugin with its args decoder and factory.
Registry InTreeRegistry();

}  // namespace berth
