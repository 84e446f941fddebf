// libFuzzer target: DRA CEL selectors. Any input either fails to compile with a positioned
// error or evaluates (to a bool or an error) within the cost limit, without crashing.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "cel/dra.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace berth::cel::dra;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  static const PreparedDevice device =
      PreparedDevice::Prepare({"gpu.example.com",
                               {{"model", std::string("a100")},
                                {"index", int64_t{3}},
                                {"fw", VersionString{"1.2.3"}},
                                {"other.example.com/ok", true}},
                               {{"memory", berth::Quantity::Parse("80Gi").value()}}})
          .value();
  auto sel = Selector::Compile(text);
  if (!sel.ok()) {
    if (sel.error().message.empty()) std::abort();
    return 0;
  }
  uint64_t cost = 0;
  auto m = sel->Matches(device, &cost);
  // Cancellation happens within one step of the limit (a step's own charge may overshoot).
  if (cost > kSelectorMaxCost * 2) std::abort();
  return 0;
}
