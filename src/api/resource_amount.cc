#include "api/resource_amount.h"

#include <fmt/format.h>

namespace berth {

std::string FormatAmount(std::string_view resource, int64_t v) {
  if (resource == "cpu") return v % 1000 == 0 ? fmt::format("{}", v / 1000) : fmt::format("{}m", v);
  if (resource == "memory" || resource == "ephemeral-storage" || resource == "storage") {
    constexpr int64_t kMi = 1024 * 1024;
    return fmt::format("{}Mi", (v + kMi - 1) / kMi);
  }
  return std::to_string(v);
}

}  // namespace berth
