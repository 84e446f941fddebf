#include "cel/regex.h"

#include <mutex>
#include <string>
#include <unordered_map>

namespace berth::cel {

Result<std::shared_ptr<const re2::RE2>> CompileRegex(std::string_view pattern) {
  // Selectors repeat a handful of patterns over thousands of devices: compile each once.
  static std::mutex mu;
  static std::unordered_map<std::string, std::shared_ptr<const re2::RE2>> cache;
  std::string key(pattern);
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  re2::RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_shared<const re2::RE2>(key, options);
  if (!re->ok()) {
    return Error{"error parsing regexp: " + re->error() + ": `" + key + "`", ErrorCode::kInvalid};
  }
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= 256) cache.clear();
  cache.emplace(std::move(key), re);
  return re;
}

}  // namespace berth::cel
