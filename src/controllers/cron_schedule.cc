#include "controllers/cron_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <vector>

namespace berth::controllers {
namespace {

constexpr int64_t kDay = 86400;

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    size_t at = s.find(sep, start);
    out.push_back(
        s.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

std::vector<std::string_view> Fields(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

Error Invalid(std::string message) { return Error{std::move(message), ErrorCode::kInvalid}; }

struct Bounds {
  int min, max;
  const std::array<const char*, 12>* names;  // names[i] is value min_name + i
  int first_named;
};

constexpr std::array<const char*, 12> kMonths = {"jan", "feb", "mar", "apr", "may", "jun",
                                                 "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr std::array<const char*, 12> kWeekdays = {"sun", "mon", "tue", "wed", "thu", "fri",
                                                   "sat", "",    "",    "",    "",    ""};

Result<int> IntOrName(std::string_view s, const Bounds& b) {
  if (b.names) {
    std::string lower(s);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (size_t i = 0; i < b.names->size(); ++i) {
      if (*(*b.names)[i] && lower == (*b.names)[i]) return b.first_named + static_cast<int>(i);
    }
  }
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      })) {
    return Invalid(fmt::format("failed to parse int from {}", s));
  }
  return std::stoi(std::string(s));
}

// One comma-separated part of a field: its bits, and whether it was `*` or `?`.
Result<std::pair<uint64_t, bool>> ParseRange(std::string_view expr, const Bounds& b) {
  auto range_step = Split(expr, '/');
  if (range_step.size() > 2) return Invalid(fmt::format("too many slashes: {}", expr));
  auto low_high = Split(range_step[0], '-');
  if (low_high.size() > 2) return Invalid(fmt::format("too many hyphens: {}", expr));
  int start, end, step = 1;
  bool star = false;
  if (low_high[0] == "*" || low_high[0] == "?") {
    if (low_high.size() > 1) return Invalid(fmt::format("invalid range: {}", expr));
    start = b.min;
    end = b.max;
    star = true;
  } else {
    auto low = IntOrName(low_high[0], b);
    if (!low.ok()) return low.error();
    start = end = *low;
    if (low_high.size() == 2) {
      auto high = IntOrName(low_high[1], b);
      if (!high.ok()) return high.error();
      end = *high;
    }
  }
  if (range_step.size() == 2) {
    auto s = IntOrName(range_step[1], Bounds{0, 0, nullptr, 0});
    if (!s.ok()) return s.error();
    step = *s;
    // "N/step" means "N-max/step".
    if (!star && low_high.size() == 1) end = b.max;
    if (step > 1) star = false;
  }
  if (start < b.min)
    return Invalid(
        fmt::format("beginning of range ({}) below minimum ({}): {}", start, b.min, expr));
  if (end > b.max)
    return Invalid(fmt::format("end of range ({}) above maximum ({}): {}", end, b.max, expr));
  if (start > end)
    return Invalid(
        fmt::format("beginning of range ({}) beyond end of range ({}): {}", start, end, expr));
  if (step == 0) return Invalid(fmt::format("step of range should be a positive number: {}", expr));
  uint64_t bits = 0;
  for (int v = start; v <= end; v += step) bits |= uint64_t{1} << v;
  return std::make_pair(bits, star);
}

Result<uint64_t> ParseField(std::string_view field, const Bounds& b, bool* star) {
  uint64_t bits = 0;
  for (std::string_view part : Split(field, ',')) {
    auto r = ParseRange(part, b);
    if (!r.ok()) return r.error();
    bits |= r->first;
    if (star && r->second) *star = true;
  }
  return bits;
}

uint64_t All(int min, int max) {
  uint64_t bits = 0;
  for (int v = min; v <= max; ++v) bits |= uint64_t{1} << v;
  return bits;
}

// Go's time.ParseDuration, for @every (non-negative; whole seconds are kept).
Result<int64_t> ParseGoDurationSeconds(std::string_view s) {
  if (s.empty()) return Invalid("time: invalid duration \"\"");
  if (s == "0") return 0;
  double total = 0;
  size_t i = 0;
  while (i < s.size()) {
    size_t start = i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == start) return Invalid(fmt::format("time: invalid duration \"{}\"", s));
    const double value = std::stod(std::string(s.substr(start, i - start)));
    size_t unit_start = i;
    while (i < s.size() && !std::isdigit(static_cast<unsigned char>(s[i])) && s[i] != '.') ++i;
    const std::string_view unit = s.substr(unit_start, i - unit_start);
    double scale;
    if (unit == "h")
      scale = 3600;
    else if (unit == "m")
      scale = 60;
    else if (unit == "s")
      scale = 1;
    else if (unit == "ms")
      scale = 1e-3;
    else if (unit == "us" || unit == "µs")
      scale = 1e-6;
    else if (unit == "ns")
      scale = 1e-9;
    else
      return Invalid(fmt::format("time: unknown unit \"{}\" in duration \"{}\"", unit, s));
    total += value * scale;
  }
  return static_cast<int64_t>(std::floor(total));
}

struct Civil {
  int year, month, day, hour, minute, second, weekday;
};

Civil ToCivil(int64_t unix_seconds, const TimeZone& zone) {
  const int64_t local = unix_seconds + zone.OffsetAt(unix_seconds);
  int64_t days = local / kDay;
  int64_t secs = local % kDay;
  if (secs < 0) {
    secs += kDay;
    --days;
  }
  const std::chrono::sys_days sd{std::chrono::days{days}};
  const std::chrono::year_month_day ymd{sd};
  return Civil{static_cast<int>(ymd.year()),
               static_cast<int>(static_cast<unsigned>(ymd.month())),
               static_cast<int>(static_cast<unsigned>(ymd.day())),
               static_cast<int>(secs / 3600),
               static_cast<int>(secs / 60 % 60),
               static_cast<int>(secs % 60),
               static_cast<int>(std::chrono::weekday{sd}.c_encoding())};
}

// The instant of a local time (month and day may overflow, as Go's time.Date normalises them).
// A local time a transition skips or repeats resolves to one of its candidate offsets.
int64_t FromCivil(int year, int month, int day, int hour, int minute, const TimeZone& zone) {
  year += (month - 1) >= 0 ? (month - 1) / 12 : -((12 - month) / 12);
  month = ((month - 1) % 12 + 12) % 12 + 1;
  const std::chrono::sys_days first = std::chrono::year{year} /
                                      std::chrono::month{static_cast<unsigned>(month)} /
                                      std::chrono::day{1};
  const int64_t local =
      (first.time_since_epoch().count() + day - 1) * kDay + hour * 3600 + minute * 60;
  const int64_t guess = local - zone.OffsetAt(local);
  return local - zone.OffsetAt(guess);
}

}  // namespace

Result<CronSchedule> CronSchedule::Parse(std::string_view spec, const TimeZone& default_zone) {
  spec = Trim(spec);
  if (spec.empty()) return Invalid("empty spec string");
  CronSchedule s;
  s.zone_ = default_zone;
  if (spec.substr(0, 3) == "TZ=" || spec.substr(0, 8) == "CRON_TZ=") {
    const size_t eq = spec.find('=');
    const size_t space = spec.find(' ');
    if (space == std::string_view::npos) return Invalid(fmt::format("missing fields: {}", spec));
    auto zone = TimeZone::Load(spec.substr(eq + 1, space - eq - 1));
    if (!zone.ok())
      return Invalid(fmt::format("provided bad location {}: {}",
                                 spec.substr(eq + 1, space - eq - 1), zone.error().message));
    s.zone_ = *zone;
    spec = Trim(spec.substr(space));
  }
  if (spec.front() == '@') {
    s.minutes_ = 1;
    s.hours_ = 1;
    s.days_ = All(1, 31);
    s.months_ = All(1, 12);
    s.weekdays_ = All(0, 6);
    s.days_star_ = s.weekdays_star_ = true;
    if (spec == "@yearly" || spec == "@annually") {
      s.days_ = uint64_t{1} << 1;
      s.months_ = uint64_t{1} << 1;
      s.days_star_ = false;
    } else if (spec == "@monthly") {
      s.days_ = uint64_t{1} << 1;
      s.days_star_ = false;
    } else if (spec == "@weekly") {
      s.weekdays_ = 1;
      s.weekdays_star_ = false;
    } else if (spec == "@daily" || spec == "@midnight") {
    } else if (spec == "@hourly") {
      s.hours_ = All(0, 23);
    } else if (spec.substr(0, 7) == "@every ") {
      auto d = ParseGoDurationSeconds(Trim(spec.substr(7)));
      if (!d.ok())
        return Invalid(fmt::format("failed to parse duration {}: {}", spec, d.error().message));
      s.every_ = std::max<int64_t>(*d, 1);
    } else {
      return Invalid(fmt::format("unrecognized descriptor: {}", spec));
    }
    return s;
  }
  const auto fields = Fields(spec);
  if (fields.size() != 5) {
    return Invalid(fmt::format("expected exactly 5 fields, found {}: {}", fields.size(), spec));
  }
  auto minutes = ParseField(fields[0], Bounds{0, 59, nullptr, 0}, nullptr);
  if (!minutes.ok()) return minutes.error();
  auto hours = ParseField(fields[1], Bounds{0, 23, nullptr, 0}, nullptr);
  if (!hours.ok()) return hours.error();
  auto days = ParseField(fields[2], Bounds{1, 31, nullptr, 0}, &s.days_star_);
  if (!days.ok()) return days.error();
  auto months = ParseField(fields[3], Bounds{1, 12, &kMonths, 1}, nullptr);
  if (!months.ok()) return months.error();
  auto weekdays = ParseField(fields[4], Bounds{0, 6, &kWeekdays, 0}, &s.weekdays_star_);
  if (!weekdays.ok()) return weekdays.error();
  s.minutes_ = *minutes;
  s.hours_ = *hours;
  s.days_ = *days;
  s.months_ = *months;
  s.weekdays_ = *weekdays;
  return s;
}

bool CronSchedule::DayMatches(int day, int weekday) const {
  const bool dom = (days_ >> day) & 1;
  const bool dow = (weekdays_ >> weekday) & 1;
  if (days_star_ || weekdays_star_) return dom && dow;
  return dom || dow;
}

std::optional<int64_t> CronSchedule::Next(int64_t unix_seconds) const {
  if (every_ > 0) return unix_seconds + every_;
  // As robfig/cron's SpecSchedule.Next: from the next second, move the first field that does
  // not match to its next value (zeroing the smaller ones once), and start over when a larger
  // field wraps.
  int64_t t = unix_seconds + 1;
  bool added = false;
  const int year_limit = ToCivil(t, zone_).year + 5;
  while (true) {
    Civil c = ToCivil(t, zone_);
    if (c.year > year_limit) return std::nullopt;
    bool wrapped = false;
    while (!((months_ >> c.month) & 1)) {
      added = true;
      t = FromCivil(c.year, c.month + 1, 1, 0, 0, zone_);
      c = ToCivil(t, zone_);
      if (c.month == 1) {
        wrapped = true;
        break;
      }
    }
    if (wrapped) continue;
    while (!DayMatches(c.day, c.weekday)) {
      added = true;
      t = FromCivil(c.year, c.month, c.day + 1, 0, 0, zone_);
      c = ToCivil(t, zone_);
      if (c.day == 1) {
        wrapped = true;
        break;
      }
    }
    if (wrapped) continue;
    while (!((hours_ >> c.hour) & 1)) {
      if (!added) {
        added = true;
        t = FromCivil(c.year, c.month, c.day, c.hour, 0, zone_);
      }
      t += 3600;
      c = ToCivil(t, zone_);
      if (c.hour == 0) {
        wrapped = true;
        break;
      }
    }
    if (wrapped) continue;
    while (!((minutes_ >> c.minute) & 1)) {
      if (!added) {
        added = true;
        t -= c.second;
      }
      t += 60;
      c = ToCivil(t, zone_);
      if (c.minute == 0) {
        wrapped = true;
        break;
      }
    }
    if (wrapped) continue;
    // Seconds: the standard schedule runs at second 0 only.
    if (c.second != 0) {
      t += 60 - c.second;  // the seconds wrapped: start over at the next minute
      continue;
    }
    return t;
  }
}

}  // namespace berth::controllers
