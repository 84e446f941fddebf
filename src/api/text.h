// Small text helpers shared by decoders.
#pragma once

#include <cctype>
#include <string_view>

namespace berth {

// ASCII case-insensitive equality: how Go's encoding/json matches field names, and how the
// legacy scheduler APIs decoded theirs.
inline bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  }
  return true;
}

}  // namespace berth
