#include "api/kube_version.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace berth {
namespace {

bool IsBlank(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentifierChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

std::optional<uint64_t> ParseNumber(std::string_view s) {
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return n;
}

std::vector<std::string_view> Split(std::string_view s) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t dot = s.find('.');
    out.push_back(s.substr(0, dot));
    if (dot == std::string_view::npos) return out;
    s.remove_prefix(dot + 1);
  }
}

// Dot-separated non-empty identifiers of [0-9A-Za-z-].
bool ValidIdentifiers(std::string_view s) {
  for (std::string_view id : Split(s)) {
    if (id.empty() || !std::all_of(id.begin(), id.end(), IsIdentifierChar)) return false;
  }
  return true;
}

// The "-pre.release+build" that follows a semantic version's numbers, blanks after it allowed.
bool ParseExtra(std::string_view extra, KubeVersion& v) {
  while (!extra.empty() && IsBlank(extra.back())) extra.remove_suffix(1);
  if (extra.empty()) return true;
  std::string_view pre, build;
  const size_t plus = extra.find('+');
  if (plus != std::string_view::npos) {
    build = extra.substr(plus + 1);
    extra = extra.substr(0, plus);
    if (!ValidIdentifiers(build)) return false;
  }
  if (!extra.empty()) {
    if (extra.front() != '-') return false;
    pre = extra.substr(1);
    if (!ValidIdentifiers(pre)) return false;
    // A numeric pre-release identifier may not have a leading zero.
    for (std::string_view id : Split(pre)) {
      if (ParseNumber(id) && id.size() > 1 && id.front() == '0') return false;
    }
  }
  v.pre_release = std::string(pre);
  v.build_metadata = std::string(build);
  return true;
}

std::optional<KubeVersion> Parse(std::string_view text, bool semantic) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  if (!text.empty() && text.front() == 'v') text.remove_prefix(1);
  // The numbers: digits, then ".digits" repeated.
  size_t end = 0;
  while (end < text.size()) {
    size_t run = end;
    while (run < text.size() && IsDigit(text[run])) ++run;
    if (run == end) break;
    end = run;
    if (end + 1 < text.size() && text[end] == '.' && IsDigit(text[end + 1])) {
      ++end;
    } else {
      break;
    }
  }
  if (end == 0) return std::nullopt;
  const std::vector<std::string_view> parts = Split(text.substr(0, end));
  if (semantic ? parts.size() != 3 : parts.size() < 2) return std::nullopt;
  KubeVersion v;
  v.semantic = semantic;
  for (size_t i = 0; i < parts.size(); ++i) {
    if ((i == 0 || semantic) && parts[i].size() > 1 && parts[i].front() == '0') return std::nullopt;
    auto n = ParseNumber(parts[i]);
    if (!n) return std::nullopt;
    v.components.push_back(*n);
  }
  if (semantic && !ParseExtra(text.substr(end), v)) return std::nullopt;
  return v;
}

bool OnlyZeros(const std::vector<uint64_t>& c, size_t from) {
  return std::all_of(c.begin() + static_cast<std::ptrdiff_t>(from), c.end(),
                     [](uint64_t n) { return n == 0; });
}

int ComparePreReleases(std::string_view a, std::string_view b) {
  const std::vector<std::string_view> pa = Split(a), pb = Split(b);
  for (size_t i = 0; i < pa.size() && i < pb.size(); ++i) {
    auto na = ParseNumber(pa[i]);
    auto nb = ParseNumber(pb[i]);
    if (na && nb) {
      if (*na != *nb) return *na < *nb ? -1 : 1;
      continue;
    }
    if (pa[i] != pb[i]) return pa[i] < pb[i] ? -1 : 1;
  }
  if (pa.size() != pb.size()) return pa.size() < pb.size() ? -1 : 1;
  return 0;
}

}  // namespace

std::optional<KubeVersion> ParseSemanticKubeVersion(std::string_view text) {
  return Parse(text, true);
}

std::optional<KubeVersion> ParseGenericKubeVersion(std::string_view text) {
  return Parse(text, false);
}

std::optional<KubeVersion> ParseKubeVersion(std::string_view text) {
  if (auto v = ParseSemanticKubeVersion(text)) return v;
  return ParseGenericKubeVersion(text);
}

int CompareKubeVersions(const KubeVersion& a, const KubeVersion& b) {
  const size_t common = std::min(a.components.size(), b.components.size());
  for (size_t i = 0; i < common; ++i) {
    if (a.components[i] != b.components[i]) return a.components[i] < b.components[i] ? -1 : 1;
  }
  if (!OnlyZeros(a.components, common)) return 1;
  if (!OnlyZeros(b.components, common)) return -1;
  if (!a.semantic || !b.semantic) return 0;
  if (a.pre_release == b.pre_release) return 0;
  if (a.pre_release.empty()) return 1;
  if (b.pre_release.empty()) return -1;
  return ComparePreReleases(a.pre_release, b.pre_release);
}

}  // namespace berth
