// Libraries that must be refused: built for another SDK version (BAD_VERSION), or registering
// a name that is taken (CLASH: "NodeName").
#include <berth/framework/plugin_library.h>

#include <cstdint>

#if defined(BAD_VERSION)
extern "C" __attribute__((visibility("default"))) uint32_t berth_plugin_sdk_version() {
  return ::berth::kSdkVersion + 1000;
}
extern "C" __attribute__((visibility("default"))) void berth_plugin_register(void*) {}
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
