// Plugins in a shared library, loaded at run time by `berth scheduler`, `berth up` and
// `berth simulate` with `--plugin-library PATH` (repeatable). A library built against this SDK
// defines its registrations once:
//
//   #include <berth/framework/plugin_library.h>
//   BERTH_PLUGIN_LIBRARY(registry) {
//     registry.Add(MyPluginRegistration());
//   }
//
// Berth calls the entry point once per process and library, on the main thread, before any
// configuration is read, and refuses a library built for another SDK version (kSdkVersion), a
// library without the entry point, and a plugin name that is already registered. The library
// must be built with the same compiler and standard library as Berth (the plugin interfaces
// are C++ classes) and resolves the SDK's symbols from the berth binary.
#pragma once

#include <cstdint>

#include "berth/framework/registry.h"

// The SDK's version, bumped whenever a change to include/berth/ breaks binary compatibility of
// plugins. The macro lets a plugin's source adapt at compile time
// (`#if BERTH_SDK_VERSION >= 2`); kSdkVersion is what a plugin library reports when loaded.
#define BERTH_SDK_VERSION 7

namespace berth {

inline constexpr uint32_t kSdkVersion = BERTH_SDK_VERSION;

}  // namespace berth

#define BERTH_PLUGIN_LIBRARY(registry)                                                         \
  static void BerthRegisterPlugins(::berth::Registry& registry);                               \
  extern "C" __attribute__((visibility("default"))) uint32_t berth_plugin_sdk_version() {      \
    return ::berth::kSdkVersion;                                                               \
  }                                                                                            \
  extern "C" __attribute__((visibility("default"))) void berth_plugin_register(void* target) { \
    BerthRegisterPlugins(*static_cast<::berth::Registry*>(target));                            \
  }                                                                                            \
  static void BerthRegisterPlugins(::berth::Registry& registry)
