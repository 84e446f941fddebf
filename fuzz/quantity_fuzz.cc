// libFuzzer target: resource quantities ("500m", "1.5Gi", "1e3", ...). A quantity either parses
// or is an error; a parsed one must print to text that parses to the same amount.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "berth/api/quantity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto q = berth::Quantity::Parse(text);
  if (!q.ok()) return 0;
  auto again = berth::Quantity::Parse(q->String());
  if (!again.ok() || again->MilliValue() != q->MilliValue()) std::abort();
  return 0;
}
