// libFuzzer target: the extender wire documents a scheduler and an extender read from each other
// over HTTP (arguments, filter answers, priority lists), through the one reader of each. A
// priority list that decodes must survive encoding and decoding again.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "berth/extender/v1.h"
#include "extender/wire_internal.h"
#include "extender/wire_read.h"

namespace v1 = berth::extender::v1;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)v1::DecodeExtenderArgs(text);
  (void)v1::read::Args(text);
  (void)v1::DecodeFilterAnswer(text);
  (void)v1::DecodeExtenderFilterResult(text);
  auto list = v1::DecodeHostPriorityList(text);
  if (list.ok()) {
    auto again = v1::DecodeHostPriorityList(v1::Encode(*list));
    if (!again.ok() || again->size() != list->size()) std::abort();
    for (size_t i = 0; i < list->size(); ++i)
      if ((*again)[i].host != (*list)[i].host || (*again)[i].score != (*list)[i].score)
        std::abort();
  }
  return 0;
}
