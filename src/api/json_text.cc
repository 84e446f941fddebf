#include "api/json_text.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>

namespace berth {
namespace {

// True if `s` goes into a JSON string literal as it is, without escapes. Eight bytes at a
// time: every stored object's every string passes through here.
bool IsPlain(std::string_view s) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL, kHighs = 0x8080808080808080ULL;
  // Some byte of x is zero (the classic test: exact for "some", which is all that is asked).
  auto has_zero = [&](uint64_t x) { return ((x - kOnes) & ~x & kHighs) != 0; };
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    // A byte below 0x20 (bytes of 0x80 and up are left out by ~w), a quote or a backslash.
    const bool control = ((w - 0x2020202020202020ULL) & ~w & kHighs) != 0;
    if (control || has_zero(w ^ (kOnes * '"')) || has_zero(w ^ (kOnes * '\\'))) return false;
  }
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) return false;
  }
  return true;
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
    } else if (c == '\b') {
      out->append("\\b");
    } else if (c == '\f') {
      out->append("\\f");
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

void AppendJson(const nlohmann::json& value, std::string* out) {
  using Type = nlohmann::json::value_t;
  switch (value.type()) {
    case Type::object: {
      const auto& members = value.get_ref<const nlohmann::json::object_t&>();
      out->push_back('{');
      bool first = true;
      for (const auto& [key, member] : members) {
        if (!first) out->push_back(',');
        first = false;
        AppendJsonString(key, out);
        out->push_back(':');
        AppendJson(member, out);
      }
      out->push_back('}');
      return;
    }
    case Type::array: {
      out->push_back('[');
      bool first = true;
      for (const auto& element : value.get_ref<const nlohmann::json::array_t&>()) {
        if (!first) out->push_back(',');
        first = false;
        AppendJson(element, out);
      }
      out->push_back(']');
      return;
    }
    case Type::string:
      AppendJsonString(value.get_ref<const std::string&>(), out);
      return;
    case Type::boolean:
      out->append(value.get<bool>() ? "true" : "false");
      return;
    case Type::null:
      out->append("null");
      return;
    case Type::number_integer:
    case Type::number_unsigned: {
      char digits[24];
      auto end = value.is_number_unsigned()
                     ? std::to_chars(digits, digits + sizeof(digits),
                                     value.get<nlohmann::json::number_unsigned_t>())
                     : std::to_chars(digits, digits + sizeof(digits),
                                     value.get<nlohmann::json::number_integer_t>());
      out->append(digits, end.ptr);
      return;
    }
    default:
      // Floating-point numbers (nlohmann's own shortest form), binary and discarded values:
      // rare in API objects, written by nlohmann.
      out->append(value.dump());
      return;
  }
}

}  // namespace berth
