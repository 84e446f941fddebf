#include "cel/regex.h"

#include <mutex>
#include <string>
#include <unordered_map>

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
