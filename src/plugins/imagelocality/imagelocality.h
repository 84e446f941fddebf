// ImageLocality: favours nodes that already hold the pod's container images (Score).
//
// Each container and init container whose image (":latest" appended when untagged) is on the
// node adds size * (nodes holding the image / nodes in the snapshot); the sum is clamped to
// [23 MiB, 1000 MiB * number of containers] and mapped linearly onto 0..100.
// PreScore only precomputes the normalized image names; Score works without it.
#pragma once

#include <string_view>

#include "berth/framework/registry.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kImageLocalityName = config::names::kImageLocality;

PluginRegistration ImageLocalityRegistration();

}  // namespace berth
