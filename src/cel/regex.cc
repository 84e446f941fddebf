#include "cel/regex.h"

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace berth::cel {
namespace {

// Constructs RE2 accepts and ECMAScript would read differently or not at all.
bool Unsupported(std::string_view p) {
  for (size_t i = 0; i + 1 < p.size(); ++i) {
    if (p[i] == '\\') {
      char c = p[i + 1];
      if ((c >= '1' && c <= '9') || c == 'p' || c == 'P' || c == 'z' || c == 'Q' || c == 'k') {
        return true;
      }
      ++i;
    } else if (p[i] == '(' && p[i + 1] == '?') {
      if (i + 2 < p.size() && p[i + 2] == ':') continue;
      return true;  // inline flags, named groups, look-arounds
    }
  }
  return false;
}

// std::regex backtracks; a repeated group that itself repeats or alternates ((a+)+, (a|a)*)
// can take time exponential in the subject's length, which RE2 never does. Such patterns are
// refused rather than risked.
bool NestedRepetition(std::string_view p) {
  std::vector<bool> inner_repeats;  // per open group: whether it contains * + {n,} or |
  bool last_group_repeats = false;  // the group that just closed
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\') {
      ++i;
      last_group_repeats = false;
      continue;
    }
    if (in_class) {
      in_class = c != ']';
      continue;
    }
    // Unbounded repetition: * + and {n,}. A bounded {n} or {n,m} multiplies the work by a
    // constant only.
    bool repeat = c == '*' || c == '+';
    if (c == '{') {
      size_t close = p.find('}', i);
      repeat = close != std::string_view::npos && close > i + 1 && p[close - 1] == ',';
    }
    if (repeat && last_group_repeats) return true;
    if ((repeat || c == '|') && !inner_repeats.empty()) inner_repeats.back() = true;
    last_group_repeats = false;
    if (c == '[') {
      in_class = true;
    } else if (c == '(') {
      inner_repeats.push_back(false);
    } else if (c == ')' && !inner_repeats.empty()) {
      last_group_repeats = inner_repeats.back();
      inner_repeats.pop_back();
      if (last_group_repeats && !inner_repeats.empty()) inner_repeats.back() = true;
    }
  }
  return false;
}

}  // namespace

Result<std::shared_ptr<const std::regex>> CompileRegex(std::string_view pattern) {
  // Selectors repeat a handful of patterns over thousands of devices: compile each once.
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_ptr<const std::regex>> cache;
  std::string key(pattern);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  auto flags = std::regex::ECMAScript;
  std::string_view body = pattern;
  if (body.starts_with("(?i)")) {
    flags |= std::regex::icase;
    body.remove_prefix(4);
  }
  if (Unsupported(body)) {
    return Error{"error parsing regexp: unsupported syntax in `" + key + "`", ErrorCode::kInvalid};
  }
  if (NestedRepetition(body)) {
    return Error{"error parsing regexp: nested repetition is not supported: `" + key + "`",
                 ErrorCode::kInvalid};
  }
  std::shared_ptr<const std::regex> re;
  try {
    re = std::make_shared<const std::regex>(std::string(body), flags);
  } catch (const std::regex_error& e) {
    return Error{"error parsing regexp: " + std::string(e.what()) + ": `" + key + "`",
                 ErrorCode::kInvalid};
  }
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= 256) cache.clear();
  cache.emplace(std::move(key), re);
  return re;
}

}  // namespace berth::cel
