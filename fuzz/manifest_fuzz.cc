// libFuzzer target: manifests as `berth simulate -f` reads them (YAML or JSON, several
// documents, Lists). Any input either decodes or gives an error; nothing may crash or hang.
#include <cstdint>
#include <string_view>

#include "api/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)berth::DecodeObjects(text, "fuzz.yaml");
  return 0;
}
