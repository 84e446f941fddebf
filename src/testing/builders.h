// The builders moved into the SDK (include/berth/testing/builders.h); in-tree tests keep this
// include.
#pragma once

#include "berth/testing/builders.h"  // IWYU pragma: export
