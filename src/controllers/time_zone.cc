#include "controllers/time_zone.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

namespace berth::controllers {
namespace {

constexpr size_t kHeaderSize = 44;

uint32_t Be32(std::string_view d, size_t at) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(d[at])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(d[at + 1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(d[at + 2])) << 8) |
         static_cast<uint32_t>(static_cast<uint8_t>(d[at + 3]));
}

int64_t Be64(std::string_view d, size_t at) {
  return static_cast<int64_t>((static_cast<uint64_t>(Be32(d, at)) << 32) | Be32(d, at + 4));
}

struct Counts {
  uint32_t isut, isstd, leap, time, type, chars;
  // The size of the data block after the header, with `time_size`-byte times.
  size_t Block(size_t time_size) const {
    return time * time_size + time + type * 6 + chars + leap * (time_size + 4) + isstd + isut;
  }
};

Result<Counts> ReadHeader(std::string_view d, size_t at) {
  if (d.size() < at + kHeaderSize || d.substr(at, 4) != "TZif") {
    return Error{"not a TZif file", ErrorCode::kInvalid};
  }
  return Counts{Be32(d, at + 20), Be32(d, at + 24), Be32(d, at + 28),
                Be32(d, at + 32), Be32(d, at + 36), Be32(d, at + 40)};
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("unknown time zone file {}", path), ErrorCode::kNotFound};
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool SafeName(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.find("..") != std::string_view::npos)
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' ||
           c == '+';
  });
}

Result<TimeZone> LoadUncached(std::string_view name, const std::string& dir) {
  if (name == "UTC" || name == "Etc/UTC" || name == "Etc/GMT" || name == "GMT") {
    return TimeZone();
  }
  std::string path;
  if (name.empty() || name == "Local") {
    const char* tz = std::getenv("TZ");
    if (tz && *tz) {
      std::string_view env = tz;
      if (env.front() == ':') env.remove_prefix(1);
      if (env.empty() || env == "UTC") return TimeZone();
      return LoadUncached(env, dir);
    }
    path = "/etc/localtime";
    auto data = ReadFile(path);
    if (!data.ok()) return TimeZone();  // no zone configured: UTC, as the C library
    return TimeZone::FromTzif("Local", *data);
  }
  if (!SafeName(name)) {
    return Error{fmt::format("unknown time zone {}", name), ErrorCode::kInvalid};
  }
  auto data = ReadFile(dir + "/" + std::string(name));
  if (!data.ok()) return Error{fmt::format("unknown time zone {}", name), ErrorCode::kInvalid};
  return TimeZone::FromTzif(std::string(name), *data);
}

}  // namespace

TimeZone::TimeZone() : data_(std::make_shared<Data>()) {}

Result<TimeZone> TimeZone::FromTzif(std::string name, std::string_view d) {
  auto v1 = ReadHeader(d, 0);
  if (!v1.ok()) return v1.error();
  size_t at = kHeaderSize;
  Counts c = *v1;
  size_t time_size = 4;
  if (d[4] >= '2') {
    // Version 2+: a second header and block with 64-bit times follow the first.
    at += c.Block(4);
    auto v2 = ReadHeader(d, at);
    if (!v2.ok()) return v2.error();
    c = *v2;
    at += kHeaderSize;
    time_size = 8;
  }
  if (d.size() < at + c.Block(time_size) || c.type == 0) {
    return Error{"truncated TZif file", ErrorCode::kInvalid};
  }
  auto data = std::make_shared<Data>();
  data->name = std::move(name);
  const size_t types_at = at + c.time * time_size + c.time;
  auto type_offset = [&](size_t type) -> Result<int32_t> {
    if (type >= c.type) return Error{"bad TZif type index", ErrorCode::kInvalid};
    return static_cast<int32_t>(Be32(d, types_at + type * 6));
  };
  for (uint32_t i = 0; i < c.time; ++i) {
    const int64_t t =
        time_size == 8 ? Be64(d, at + i * 8) : static_cast<int32_t>(Be32(d, at + i * 4));
    auto off = type_offset(static_cast<uint8_t>(d[at + c.time * time_size + i]));
    if (!off.ok()) return off.error();
    data->transitions.push_back(t);
    data->offsets.push_back(*off);
  }
  // Before the first transition: time type 0 (RFC 8536 section 3.2).
  data->initial = *type_offset(0);
  TimeZone zone;
  zone.data_ = std::move(data);
  return zone;
}

Result<TimeZone> TimeZone::Load(std::string_view name, const std::string& zoneinfo_dir) {
  static std::mutex mu;
  static std::map<std::string, TimeZone> cache;
  const std::string key = zoneinfo_dir + "\n" + std::string(name);
  {
    std::lock_guard lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto zone = LoadUncached(name, zoneinfo_dir);
  if (!zone.ok()) return zone;
  std::lock_guard lock(mu);
  cache.emplace(key, *zone);
  return zone;
}

int64_t TimeZone::OffsetAt(int64_t unix_seconds) const {
  const auto& t = data_->transitions;
  auto it = std::upper_bound(t.begin(), t.end(), unix_seconds);
  if (it == t.begin()) return data_->initial;
  return data_->offsets[static_cast<size_t>(it - t.begin()) - 1];
}

}  // namespace berth::controllers
