// Semantic versions as Kubernetes' CEL semver library parses them (blang/semver v4).
#include <string>

#include "cel/value.h"

namespace berth::cel {
namespace {

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool Identifier(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok =
        (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool Number(std::string_view s, uint64_t& out) {
  if (!AllDigits(s) || (s.size() > 1 && s[0] == '0') || s.size() > 19) return false;
  out = std::stoull(std::string(s));
  return true;
}

std::vector<std::string_view> SplitDots(std::string_view s) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    parts.push_back(s.substr(start, dot == std::string_view::npos ? dot : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

// Kubernetes' normalisation: drop a 'v', pad "1" and "1.2" with ".0", strip leading zeros.
std::string Normalize(std::string_view s) {
  if (s.starts_with('v')) s.remove_prefix(1);
  size_t tail = s.find_first_of("-+");
  std::string_view core = s.substr(0, tail);
  std::string_view rest = tail == std::string_view::npos ? std::string_view() : s.substr(tail);
  auto parts = SplitDots(core);
  std::string out;
  for (size_t i = 0; i < 3; ++i) {
    std::string_view p = i < parts.size() ? parts[i] : "0";
    while (p.size() > 1 && p[0] == '0') p.remove_prefix(1);
    if (i) out += '.';
    out += p;
  }
  for (size_t i = 3; i < parts.size(); ++i) out += "." + std::string(parts[i]);
  return out + std::string(rest);
}

}  // namespace

bool ParseSemver(std::string_view text, bool normalize, Semver& out) {
  std::string normalized;
  if (normalize) {
    normalized = Normalize(text);
    text = normalized;
  }
  out = Semver{};
  size_t plus = text.find('+');
  if (plus != std::string_view::npos) {
    out.build = std::string(text.substr(plus + 1));
    for (auto id : SplitDots(out.build)) {
      if (!Identifier(id)) return false;
    }
    text = text.substr(0, plus);
  }
  size_t dash = text.find('-');
  if (dash != std::string_view::npos) {
    for (auto id : SplitDots(text.substr(dash + 1))) {
      if (!Identifier(id) || (AllDigits(id) && id.size() > 1 && id[0] == '0')) return false;
      out.pre.emplace_back(id);
    }
    text = text.substr(0, dash);
  }
  auto parts = SplitDots(text);
  return parts.size() == 3 && Number(parts[0], out.major) && Number(parts[1], out.minor) &&
         Number(parts[2], out.patch);
}

int CompareSemver(const Semver& a, const Semver& b) {
  auto sign = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (int c = sign(a.major, b.major)) return c;
  if (int c = sign(a.minor, b.minor)) return c;
  if (int c = sign(a.patch, b.patch)) return c;
  // A version without pre-release ranks above one with.
  if (a.pre.empty() || b.pre.empty()) {
    return a.pre.empty() == b.pre.empty() ? 0 : (a.pre.empty() ? 1 : -1);
  }
  for (size_t i = 0; i < a.pre.size() && i < b.pre.size(); ++i) {
    const std::string &x = a.pre[i], &y = b.pre[i];
    bool nx = AllDigits(x), ny = AllDigits(y);
    if (nx && ny) {
      if (int c = sign(x.size(), y.size())) return c;
      if (int c = sign(x, y)) return c;
    } else if (nx != ny) {
      return nx ? -1 : 1;  // numeric identifiers rank below alphanumeric ones
    } else if (int c = sign(x, y)) {
      return c;
    }
  }
  return sign(a.pre.size(), b.pre.size());
}

std::string SemverString(const Semver& v) {
  std::string out =
      std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
  for (size_t i = 0; i < v.pre.size(); ++i) out += (i ? "." : "-") + v.pre[i];
  if (!v.build.empty()) out += "+" + v.build;
  return out;
}

}  // namespace berth::cel
