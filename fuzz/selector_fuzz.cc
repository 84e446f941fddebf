// libFuzzer target: label and field selectors as the API server reads them from query strings
// (`?labelSelector=app in (a,b),!canary`, `?fieldSelector=spec.nodeName=`).
#include <cstdint>
#include <string_view>

#include "apiserver/resources.h"
#include "apiserver/selectors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)berth::apiserver::ParseLabelSelector(text);
  if (const auto* pods = berth::apiserver::FindResource("", "v1", "pods"))
    (void)berth::apiserver::ParseFieldSelector(*pods, text);
  return 0;
}
