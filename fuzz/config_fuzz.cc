// libFuzzer target: KubeSchedulerConfiguration files (every apiVersion Berth reads, legacy
// Policy files included) decoded, defaulted and validated against the in-tree plugins.
#include <cstdint>
#include <string_view>

#include "config/load.h"
#include "plugins/registry.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const berth::Registry registry = berth::InTreeRegistry();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)berth::config::LoadConfig(text, "fuzz.yaml", registry);
  return 0;
}
