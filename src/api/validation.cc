#include "api/validation.h"

#include <fmt/format.h>

namespace berth::validation {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], non-empty.
bool IsNamePart(std::string_view s) {
  if (s.empty() || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// [a-z0-9]([-a-z0-9]*[a-z0-9])? of any length (a subdomain's parts are bounded by its own length).
bool IsLabelShape(std::string_view s) {
  if (s.empty() || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

}  // namespace

bool IsDNS1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view label = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (!IsLabelShape(label)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool IsDNS1123Label(std::string_view s) { return s.size() <= 63 && IsLabelShape(s); }

bool IsDNS1035Label(std::string_view s) {
  return IsDNS1123Label(s) && s.front() >= 'a' && s.front() <= 'z';
}

bool IsQualifiedName(std::string_view s) {
  std::string_view name = s;
  size_t slash = s.find('/');
  if (slash != std::string_view::npos) {
    std::string_view prefix = s.substr(0, slash);
    name = s.substr(slash + 1);
    if (name.find('/') != std::string_view::npos) return false;
    if (prefix.empty() || !IsDNS1123Subdomain(prefix)) return false;
  }
  return name.size() <= 63 && IsNamePart(name);
}

bool IsValidLabelValue(std::string_view s) {
  if (s.empty()) return true;
  return s.size() <= 63 && IsNamePart(s);
}

namespace {

constexpr std::string_view kNamePartRule =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";

}  // namespace

std::string QualifiedNameProblem(std::string_view value) {
  std::string_view name = value;
  size_t slash = value.find('/');
  if (slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos) {
      return fmt::format(
          "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. "
          "'example.com/MyName')",
          kNamePartRule);
    }
    std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) return "prefix part must be non-empty";
    if (prefix.size() > 253) return "prefix part must be no more than 253 characters";
    if (!IsDNS1123Subdomain(prefix)) {
      return "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
             "characters, '-' or '.', and must start and end with an alphanumeric character";
    }
  }
  if (name.empty()) return "name part must be non-empty";
  if (name.size() > 63) return "name part must be no more than 63 characters";
  if (!IsNamePart(name)) return fmt::format("name part {}", kNamePartRule);
  return "";
}

std::string LabelValueProblem(std::string_view value) {
  if (value.size() > 63) return "must be no more than 63 characters";
  if (!value.empty() && !IsNamePart(value)) {
    return fmt::format("a valid label must be an empty string or {}", kNamePartRule.substr(5));
  }
  return "";
}

}  // namespace berth::validation
