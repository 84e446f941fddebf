// CronSchedule: a CronJob's spec.schedule, as kube-controller-manager reads it (robfig/cron v3's
// ParseStandard):
//   - five fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12 or JAN-DEC),
//     day of week (0-6 or SUN-SAT); each a list of `*`, `?`, `N`, `N-M`, with an optional
//     `/step` (`N/step` runs from N to the field's maximum);
//   - when both day fields are restricted, a day matching either runs (cron's OR); when one
//     is `*` or `?`, both must match;
//   - the macros @yearly (@annually), @monthly, @weekly, @daily (@midnight), @hourly, and
//     @every <duration> (Go's syntax: 1h30m, 90s);
//   - a `TZ=<zone>` or `CRON_TZ=<zone>` prefix names the zone the fields are read in (the
//     controller adds it for spec.timeZone); without one, the zone given to Parse.
//
// Next(t) is the first activation strictly after t, searching five years ahead as upstream.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "berth/api/result.h"
#include "controllers/time_zone.h"

namespace berth::controllers {

class CronSchedule {
 public:
  static Result<CronSchedule> Parse(std::string_view spec, const TimeZone& default_zone = {});

  // The first activation after `unix_seconds` (whole seconds), or nullopt if none comes within
  // five years (e.g. "0 0 30 2 *").
  std::optional<int64_t> Next(int64_t unix_seconds) const;
  const TimeZone& zone() const { return zone_; }

 private:
  bool DayMatches(int day, int weekday) const;

  // Bit i set: value i matches.
  uint64_t minutes_ = 0, hours_ = 0, days_ = 0, months_ = 0, weekdays_ = 0;
  // The day field was `*` or `?` (upstream's starBit).
  bool days_star_ = false, weekdays_star_ = false;
  int64_t every_ = 0;  // seconds, for @every
  TimeZone zone_;
};

}  // namespace berth::controllers
