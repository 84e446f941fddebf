#include "config/decode_util.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "api/validation.h"
#include "berth/framework/typed_args.h"

namespace berth::config::internal {

void Problems::Add(std::string_view path, std::string_view problem) {
  if (first_) return;
  first_ = path.empty() ? std::string(problem) : fmt::format("{}: {}", path, problem);
}

void Problems::AddMessage(std::string message) {
  if (!first_) first_ = std::move(message);
}

std::string ChildPath(std::string_view parent, std::string_view field) {
  if (parent.empty()) return std::string(field);
  return fmt::format("{}.{}", parent, field);
}

std::string IndexPath(std::string_view parent, size_t index) {
  return fmt::format("{}[{}]", parent, index);
}

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

std::string Unsupported(std::string_view value, std::initializer_list<std::string_view> supported) {
  std::string out = fmt::format("unsupported value {}: supported values: ", Quote(value));
  bool first = true;
  for (std::string_view s : supported) {
    if (!first) out += ", ";
    first = false;
    out += Quote(s);
  }
  return out;
}

namespace {

// One wording of JSON types for every args error, the SDK's TypedArgs included.
using typed_args_internal::TypeName;

std::string Expected(std::string_view what, const nlohmann::json& got) {
  return fmt::format("expected {}, got {}", what, TypeName(got));
}

}  // namespace

Fields::Fields(const nlohmann::json* value, std::string path, Problems& problems,
               std::initializer_list<std::string_view> known)
    : path_(std::move(path)), problems_(problems) {
  if (value == nullptr || value->is_null()) return;
  if (!value->is_object()) {
    problems_.Add(path_, Expected("an object", *value));
    return;
  }
  object_ = value;
  for (const auto& [key, unused] : value->items()) {
    bool is_known = false;
    for (std::string_view k : known) {
      if (k == key) {
        is_known = true;
        break;
      }
    }
    if (!is_known) problems_.Add(ChildPath(path_, key), "unknown field");
  }
}

const nlohmann::json* Fields::Get(std::string_view key) const {
  if (object_ == nullptr) return nullptr;
  auto it = object_->find(key);
  if (it == object_->end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<std::string> ReadString(const nlohmann::json& v, std::string_view path,
                                      Problems& problems) {
  if (!v.is_string()) {
    problems.Add(path, Expected("a string", v));
    return std::nullopt;
  }
  return v.get<std::string>();
}

std::optional<int64_t> ReadInt(const nlohmann::json& v, std::string_view path, int64_t min,
                               int64_t max, Problems& problems) {
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    int64_t n = v.get<int64_t>();
    if (n < min || n > max) {
      problems.Add(path, fmt::format("invalid value {}: out of range", n));
      return std::nullopt;
    }
    return n;
  }
  if (v.is_number_unsigned()) {
    uint64_t n = v.get<uint64_t>();
    if (n > static_cast<uint64_t>(max)) {
      problems.Add(path, fmt::format("invalid value {}: out of range", n));
      return std::nullopt;
    }
    return static_cast<int64_t>(n);
  }
  if (v.is_number_float()) {
    // YAML may spell a whole number as 10.0; anything fractional is not an integer.
    double d = v.get<double>();
    if (std::trunc(d) == d && d >= static_cast<double>(min) && d <= static_cast<double>(max)) {
      return static_cast<int64_t>(d);
    }
    problems.Add(path, fmt::format("invalid value {}: expected an integer", v.dump()));
    return std::nullopt;
  }
  problems.Add(path, Expected("an integer", v));
  return std::nullopt;
}

std::optional<std::string> Fields::String(std::string_view key) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return std::nullopt;
  return ReadString(*v, PathOf(key), problems_);
}

std::optional<bool> Fields::Bool(std::string_view key) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_boolean()) {
    problems_.Add(PathOf(key), Expected("a boolean", *v));
    return std::nullopt;
  }
  return v->get<bool>();
}

std::optional<int64_t> Fields::Int64(std::string_view key) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return std::nullopt;
  return ReadInt(*v, PathOf(key), std::numeric_limits<int64_t>::min(),
                 std::numeric_limits<int64_t>::max(), problems_);
}

std::optional<int32_t> Fields::Int32(std::string_view key) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return std::nullopt;
  auto n = ReadInt(*v, PathOf(key), std::numeric_limits<int32_t>::min(),
                   std::numeric_limits<int32_t>::max(), problems_);
  if (!n) return std::nullopt;
  return static_cast<int32_t>(*n);
}

std::optional<double> Fields::Number(std::string_view key) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_number()) {
    problems_.Add(PathOf(key), Expected("a number", *v));
    return std::nullopt;
  }
  return v->get<double>();
}

std::optional<int64_t> Fields::DurationMs(std::string_view key) {
  auto s = String(key);
  if (!s) return std::nullopt;
  auto ns = ParseGoDurationNs(*s);
  if (!ns) {
    problems_.Add(PathOf(key),
                  fmt::format("invalid value {}: not a duration (e.g. \"15s\")", Quote(*s)));
    return std::nullopt;
  }
  return *ns / 1'000'000;
}

std::optional<std::string> Fields::Base64(std::string_view key) {
  auto s = String(key);
  if (!s) return std::nullopt;
  if (!IsValidBase64(*s)) {
    problems_.Add(PathOf(key), "invalid value: not valid base64 data");
    return std::nullopt;
  }
  return s;
}

std::optional<std::vector<const nlohmann::json*>> Fields::List(std::string_view key) {
  const nlohmann::json* v = Get(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_array()) {
    problems_.Add(PathOf(key), Expected("a list", *v));
    return std::nullopt;
  }
  std::vector<const nlohmann::json*> out;
  out.reserve(v->size());
  for (const auto& e : *v) out.push_back(&e);
  return out;
}

std::optional<std::vector<std::string>> Fields::StringList(std::string_view key) {
  auto list = List(key);
  if (!list) return std::nullopt;
  std::vector<std::string> out;
  for (size_t i = 0; i < list->size(); ++i) {
    auto s = ReadString(*(*list)[i], IndexPath(PathOf(key), i), problems_);
    if (!s) return std::nullopt;
    out.push_back(std::move(*s));
  }
  return out;
}

// ------------------------------------------------------------------ durations

std::optional<int64_t> ParseGoDurationNs(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return 0;
  if (s.empty()) return std::nullopt;
  // Accumulated in long double: durations beyond ~292 years are out of range anyway, and the
  // mantissa keeps nanosecond precision for any realistic value.
  long double total = 0;
  while (!s.empty()) {
    size_t i = 0;
    long double whole = 0;
    bool digits = false;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      whole = whole * 10 + (s[i] - '0');
      digits = true;
      ++i;
    }
    long double frac = 0, scale = 1;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        frac = frac * 10 + (s[i] - '0');
        scale *= 10;
        digits = true;
        ++i;
      }
    }
    if (!digits) return std::nullopt;
    size_t unit_start = i;
    while (i < s.size() && !(s[i] >= '0' && s[i] <= '9') && s[i] != '.') ++i;
    std::string_view unit = s.substr(unit_start, i - unit_start);
    long double mult;
    if (unit == "ns") {
      mult = 1;
    } else if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") {
      mult = 1e3L;
    } else if (unit == "ms") {
      mult = 1e6L;
    } else if (unit == "s") {
      mult = 1e9L;
    } else if (unit == "m") {
      mult = 60e9L;
    } else if (unit == "h") {
      mult = 3600e9L;
    } else {
      return std::nullopt;  // missing or unknown unit
    }
    total += (whole + frac / scale) * mult;
    if (total > static_cast<long double>(std::numeric_limits<int64_t>::max())) {
      return std::nullopt;
    }
    s.remove_prefix(i);
  }
  int64_t ns = static_cast<int64_t>(total);
  return negative ? -ns : ns;
}

std::string FormatGoDurationMs(int64_t ms) {
  if (ms == 0) return "0s";
  std::string sign = ms < 0 ? "-" : "";
  uint64_t u = ms < 0 ? static_cast<uint64_t>(-(ms + 1)) + 1 : static_cast<uint64_t>(ms);
  if (u < 1000) return fmt::format("{}{}ms", sign, u);
  uint64_t hours = u / 3'600'000;
  uint64_t minutes = (u / 60'000) % 60;
  uint64_t seconds = (u / 1000) % 60;
  uint64_t millis = u % 1000;
  std::string sec = std::to_string(seconds);
  if (millis != 0) {
    std::string frac = fmt::format("{:03}", millis);
    while (frac.back() == '0') frac.pop_back();
    sec += "." + frac;
  }
  if (hours > 0) return fmt::format("{}{}h{}m{}s", sign, hours, minutes, sec);
  if (minutes > 0) return fmt::format("{}{}m{}s", sign, minutes, sec);
  return fmt::format("{}{}s", sign, sec);
}

// ------------------------------------------------------------------ names

std::string QualifiedNameProblem(std::string_view name) {
  return validation::QualifiedNameProblem(name);
}

std::string LabelValueProblem(std::string_view value) {
  return validation::LabelValueProblem(value);
}

bool IsExtendedResourceName(std::string_view name) {
  // Native resources: unprefixed names and anything in the kubernetes.io namespaces.
  if (name.find('/') == std::string_view::npos) return false;
  if (name.find("kubernetes.io/") != std::string_view::npos) return false;
  if (name.starts_with("requests.")) return false;
  // A quota may be written for it as "requests.<name>", which must be a qualified name too.
  return QualifiedNameProblem(fmt::format("requests.{}", name)).empty();
}

bool IsValidBase64(std::string_view s) {
  size_t n = 0, padding = 0;
  for (char c : s) {
    if (c == '\r' || c == '\n') continue;
    if (c == '=') {
      ++padding;
    } else {
      bool alphabet = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '+' || c == '/';
      if (!alphabet || padding > 0) return false;
    }
    ++n;
  }
  return n % 4 == 0 && padding <= 2;
}

}  // namespace berth::config::internal
