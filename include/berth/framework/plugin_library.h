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
// configuration is read, and refuses a library built for an SDK version outside
// [kOldestCompatibleSdkVersion, kSdkVersion], a
// library built with another compiler or C++ standard library (BerthPluginBuildInfo: the
// plugin interfaces are C++ classes, so both sides must agree on their layout and mangling), a
// library without the entry point, and a plugin name that is already registered. The library
// resolves the SDK's symbols (those marked BERTH_EXPORT) from the berth binary.
#pragma once

#include <cstdint>

#include "berth/export.h"
#include "berth/framework/registry.h"

// The SDK's version, bumped whenever a change to include/berth/ breaks binary compatibility of
// plugins. The macro lets a plugin's source adapt at compile time
// (`#if BERTH_SDK_VERSION >= 2`); kSdkVersion is what a plugin library reports when loaded.
// Version 9 only adds to 8 (berth/framework/dra.h and the resource.k8s.io types), and 10 to 9
// (FilterRemedySearch and its types in berth/framework/remedy.h), so libraries built against
// SDK 8 still load: kOldestCompatibleSdkVersion is the oldest version accepted.
#define BERTH_SDK_VERSION 10

namespace berth {

inline constexpr uint32_t kSdkVersion = BERTH_SDK_VERSION;
inline constexpr uint32_t kOldestCompatibleSdkVersion = 8;

}  // namespace berth

// The compiler and C++ standard library a translation unit is built with, recorded by
// BERTH_PLUGIN_LIBRARY in the library and compared by the loader with the berth binary's own.
// A plain C struct, so that it can be read whatever the library was built with. Fields:
//   sdk_version       BERTH_SDK_VERSION
//   compiler          "gcc" or "clang" (another compiler: "unknown")
//   compiler_major    __GNUC__ / __clang_major__
//   compiler_minor    __GNUC_MINOR__ / __clang_minor__ (reported, not compared)
//   cxx11_abi         _GLIBCXX_USE_CXX11_ABI (std::string's layout), -1 without libstdc++
//   libstdcxx_major   _GLIBCXX_RELEASE, libstdc++'s major version, 0 without libstdc++
struct BerthPluginBuildInfo {
  uint32_t sdk_version;
  const char* compiler;
  uint32_t compiler_major;
  uint32_t compiler_minor;
  int32_t cxx11_abi;
  uint32_t libstdcxx_major;
};

#if defined(__clang__)
#define BERTH_BUILD_COMPILER "clang", __clang_major__, __clang_minor__
#elif defined(__GNUC__)
#define BERTH_BUILD_COMPILER "gcc", __GNUC__, __GNUC_MINOR__
#else
#define BERTH_BUILD_COMPILER "unknown", 0, 0
#endif
#if defined(_GLIBCXX_RELEASE)
#define BERTH_BUILD_STDLIB _GLIBCXX_USE_CXX11_ABI, _GLIBCXX_RELEASE
#else
#define BERTH_BUILD_STDLIB -1, 0
#endif
// The build info of the translation unit that expands it.
#define BERTH_BUILD_INFO \
  ::BerthPluginBuildInfo { BERTH_SDK_VERSION, BERTH_BUILD_COMPILER, BERTH_BUILD_STDLIB }

// The entry points of a plugin library: berth_plugin_sdk_version, berth_plugin_build_info and
// berth_plugin_register (extern "C", so the loader finds them by name).
#define BERTH_PLUGIN_LIBRARY(registry)                                                         \
  static void BerthRegisterPlugins(::berth::Registry& registry);                               \
  extern "C" BERTH_EXPORT uint32_t berth_plugin_sdk_version() { return ::berth::kSdkVersion; } \
  extern "C" BERTH_EXPORT const ::BerthPluginBuildInfo* berth_plugin_build_info() {            \
    static const ::BerthPluginBuildInfo info = BERTH_BUILD_INFO;                               \
    return &info;                                                                              \
  }                                                                                            \
  extern "C" BERTH_EXPORT void berth_plugin_register(void* target) {                           \
    BerthRegisterPlugins(*static_cast<::berth::Registry*>(target));                            \
  }                                                                                            \
  static void BerthRegisterPlugins(::berth::Registry& registry)
