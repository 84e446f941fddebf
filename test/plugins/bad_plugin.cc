// Libraries that must be refused: built for another SDK version (BAD_VERSION), built with
// another compiler and standard library (BAD_ABI: a crafted build info, as a library built with
// another toolchain would record), or registering a name that is taken (CLASH: "NodeName").
#include <berth/framework/plugin_library.h>

#include <cstdint>

#if defined(BAD_VERSION)
extern "C" BERTH_EXPORT uint32_t berth_plugin_sdk_version() { return ::berth::kSdkVersion + 1000; }
extern "C" BERTH_EXPORT void berth_plugin_register(void*) {}
#elif defined(BAD_ABI)
extern "C" BERTH_EXPORT uint32_t berth_plugin_sdk_version() { return ::berth::kSdkVersion; }
extern "C" BERTH_EXPORT const BerthPluginBuildInfo* berth_plugin_build_info() {
  static const BerthPluginBuildInfo info{BERTH_SDK_VERSION, "othercc", 99, 1, 0, 99};
  return &info;
}
extern "C" BERTH_EXPORT void berth_plugin_register(void*) {}
#elif defined(SDK8)
// Not refused: a library built against SDK 8, which SDKs 9 and 10 only add to (as one compiled with
// the SDK 8 headers would record).
extern "C" BERTH_EXPORT uint32_t berth_plugin_sdk_version() { return 8; }
extern "C" BERTH_EXPORT const BerthPluginBuildInfo* berth_plugin_build_info() {
  static const BerthPluginBuildInfo info{8, BERTH_BUILD_COMPILER, BERTH_BUILD_STDLIB};
  return &info;
}
extern "C" BERTH_EXPORT void berth_plugin_register(void* target) {
  berth::PluginRegistration reg;
  reg.name = "Sdk8Plugin";
  (void)static_cast<berth::Registry*>(target)->Add(reg);
}
#elif defined(CLASH)
BERTH_PLUGIN_LIBRARY(registry) {
  berth::PluginRegistration reg;
  reg.name = "NodeName";
  (void)registry.Add(reg);
}
#else
// No entry point at all.
extern "C" int berth_not_a_plugin() { return 0; }
#endif
