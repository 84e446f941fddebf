#include "api/json_text.h"

#include <algorithm>
#include <cstring>

namespace berth {
namespace {

// True if `s` goes into a JSON string literal as it is, without escapes.
bool IsPlain(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20;
  });
}

}  // namespace

void AppendJsonString(std::string_view s, std::string* out) {
  static constexpr char kHex[] = "0123456789abcdef";
  // Names rarely need escapes: a plain string goes in with one append of its quoted form.
  if (IsPlain(s)) {
    char quoted[128];
    if (s.size() + 2 <= sizeof(quoted)) {
      quoted[0] = '"';
      std::memcpy(quoted + 1, s.data(), s.size());
      quoted[s.size() + 1] = '"';
      out->append(quoted, s.size() + 2);
      return;
    }
    out->push_back('"');
    out->append(s);
    out->push_back('"');
    return;
  }
  out->push_back('"');
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (c == '\n') {
      out->append("\\n");
    } else if (c == '\t') {
      out->append("\\t");
    } else if (c == '\r') {
      out->append("\\r");
    } else if (u < 0x20) {
      out->append("\\u00");
      out->push_back(kHex[u >> 4]);
      out->push_back(kHex[u & 15]);
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

}  // namespace berth
