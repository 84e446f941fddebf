// Loading plugin libraries (berth/framework/plugin_library.h) into a registry.
//
// Threads: call from the main thread before configurations are read. Libraries stay loaded for
// the life of the process (their code backs plugin objects).
#pragma once

#include <string>
#include <vector>

#include "berth/api/result.h"
#include "berth/framework/plugin_library.h"
#include "berth/framework/registry.h"
#include "config/feature_gates.h"

namespace berth::pluginlib {

// Loads `path` and adds its plugins to `registry`. Errors are one line naming the library: the
// file cannot be loaded, it has no entry point, it was built for another SDK version or with
// another compiler or standard library (CheckBuildInfo), or one of its plugin names is already
// registered (nothing of that library is added then).
VoidResult LoadPluginLibrary(const std::string& path, Registry* registry);

// The berth binary's own build info (its compiler and standard library, BERTH_SDK_VERSION).
BerthPluginBuildInfo BinaryBuildInfo();

// Whether a library built as `library` may be loaded into a binary built as `binary`: an SDK
// version the binary's is compatible with (from kOldestCompatibleSdkVersion up to its own),
// compiler and compiler major version, std::string ABI (_GLIBCXX_USE_CXX11_ABI) and libstdc++ major
// version. The error names both sides.
VoidResult CheckBuildInfo(const BerthPluginBuildInfo& library, const BerthPluginBuildInfo& binary);

// Loads every library in order; the first error stops.
VoidResult LoadPluginLibraries(const std::vector<std::string>& paths, Registry* registry);

// The registry a command runs with: the in-tree plugins, the plugins compiled into this binary
// (berth::Main's), then those of the libraries. A name clash is an error naming the plugin.
// The in-tree plugins are built under `gates` (--feature-gates).
Result<Registry> BuildRegistry(const std::vector<std::string>& libraries,
                               const std::vector<PluginRegistration>& compiled_in = {},
                               const config::FeatureGates& gates = {});
// The same under the --feature-gates occurrences `feature_gates` (config::ParseFeatureGatesFlags:
// its errors name the flag); upstream's warnings for GA and deprecated gates go to `warnings`.
Result<Registry> BuildRegistry(const std::vector<std::string>& libraries,
                               const std::vector<PluginRegistration>& compiled_in,
                               const std::vector<std::string>& feature_gates,
                               std::vector<std::string>* warnings);

}  // namespace berth::pluginlib
