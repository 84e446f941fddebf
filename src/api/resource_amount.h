// Amounts of a resource as people read them in explanations: "16650m" or "4" for cpu, "24Mi"
// (rounded up) for memory and storage, the plain count for the rest.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace berth {

std::string FormatAmount(std::string_view resource, int64_t v);

}  // namespace berth
