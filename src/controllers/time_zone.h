// TimeZone: the UTC offsets of one IANA time zone, read from the system's compiled zone files
// (tzdata's TZif files under /usr/share/zoneinfo), for the CronJob controller's schedules.
//
// Offsets come from the file's transitions (64-bit section); after the last transition the
// last offset holds (Debian's "fat" files list transitions until 2037). The POSIX rule in the
// file's footer is not read.
//
// Threads: a loaded TimeZone is immutable; Load is thread-safe (zones are cached).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/result.h"

namespace berth::controllers {

class TimeZone {
 public:
  // UTC.
  TimeZone();
  // "UTC" (or "Etc/UTC") without a file; "" or "Local" for the process's zone ($TZ, else
  // /etc/localtime, else UTC); any other name from `zoneinfo_dir`.
  static Result<TimeZone> Load(std::string_view name,
                               const std::string& zoneinfo_dir = "/usr/share/zoneinfo");
  // Parses a TZif file's contents.
  static Result<TimeZone> FromTzif(std::string name, std::string_view data);

  // Seconds east of UTC at the instant `unix_seconds`.
  int64_t OffsetAt(int64_t unix_seconds) const;
  const std::string& name() const { return data_->name; }

 private:
  struct Data {
    std::string name = "UTC";
    std::vector<int64_t> transitions;  // ascending
    std::vector<int32_t> offsets;      // in effect from transitions[i]
    int32_t initial = 0;               // before the first transition
  };
  std::shared_ptr<const Data> data_;
};

}  // namespace berth::controllers
