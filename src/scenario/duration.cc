// Go-style durations for scenario files and reports.
#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "scenario/scenario_spec.h"

namespace berth::scenario {

Result<Duration> ParseDuration(std::string_view text, const std::string& where) {
  auto bad = [&] {
    return Error{
        fmt::format("{}: invalid duration \"{}\" (e.g. 30s, 2m, 1h30m, 500ms)", where, text),
        ErrorCode::kInvalid};
  };
  if (text.empty()) return bad();
  if (text == "0") return Duration::zero();
  bool negative = false;
  if (text[0] == '-' || text[0] == '+') {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  double total_ns = 0;
  while (!text.empty()) {
    size_t n = 0;
    while (n < text.size() && (std::isdigit(static_cast<unsigned char>(text[n])) || text[n] == '.'))
      ++n;
    if (n == 0) return bad();
    const std::string number(text.substr(0, n));
    char* end = nullptr;
    const double value = std::strtod(number.c_str(), &end);
    if (!end || *end) return bad();
    text.remove_prefix(n);
    size_t u = 0;
    while (u < text.size() && std::isalpha(static_cast<unsigned char>(text[u]))) ++u;
    const std::string_view unit = text.substr(0, u);
    text.remove_prefix(u);
    double scale = 0;
    if (unit == "ns") scale = 1;
    if (unit == "us" || unit == "µs") scale = 1e3;
    if (unit == "ms") scale = 1e6;
    if (unit == "s") scale = 1e9;
    if (unit == "m") scale = 60e9;
    if (unit == "h") scale = 3600e9;
    if (scale == 0) return bad();
    total_ns += value * scale;
  }
  if (total_ns > 1e18) return bad();
  const auto ns = static_cast<int64_t>(std::llround(total_ns));
  return Duration(negative ? -ns : ns);
}

std::string FormatDuration(Duration d) {
  int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  if (ms == 0) return "0s";
  std::string out;
  if (ms < 0) {
    out = "-";
    ms = -ms;
  }
  const int64_t h = ms / 3600000, m = (ms / 60000) % 60, s = (ms / 1000) % 60, frac = ms % 1000;
  if (h) out += fmt::format("{}h", h);
  if (h || m) out += fmt::format("{}m", m);
  if (frac) {
    std::string f = fmt::format("{:03d}", frac);
    while (!f.empty() && f.back() == '0') f.pop_back();
    out += fmt::format("{}.{}s", s, f);
  } else {
    out += fmt::format("{}s", s);
  }
  return out;
}

}  // namespace berth::scenario
