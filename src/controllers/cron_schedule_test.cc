#include "controllers/cron_schedule.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

namespace berth::controllers {
namespace {

int64_t Utc(int y, int mo, int d, int h = 0, int mi = 0, int s = 0) {
  const std::chrono::sys_days day = std::chrono::year{y} /
                                    std::chrono::month{static_cast<unsigned>(mo)} /
                                    std::chrono::day{static_cast<unsigned>(d)};
  return day.time_since_epoch().count() * 86400LL + h * 3600 + mi * 60 + s;
}

int64_t NextOf(const std::string& spec, int64_t from) {
  auto s = CronSchedule::Parse(spec);
  EXPECT_TRUE(s.ok()) << spec << ": " << (s.ok() ? "" : s.error().message);
  if (!s.ok()) return -1;
  auto next = s->Next(from);
  EXPECT_TRUE(next.has_value()) << spec;
  return next.value_or(-1);
}

bool HaveZone(const std::string& name) {
  return std::filesystem::exists("/usr/share/zoneinfo/" + name);
}

TEST(CronScheduleTest, EveryMinuteRunsAtTheNextWholeMinute) {
  EXPECT_EQ(NextOf("* * * * *", Utc(2026, 11, 28, 12, 0, 30)), Utc(2026, 11, 28, 12, 1));
  // Strictly after: a time on the schedule gives the next one.
  EXPECT_EQ(NextOf("* * * * *", Utc(2026, 11, 28, 12, 0, 0)), Utc(2026, 11, 28, 12, 1));
  EXPECT_EQ(NextOf("* * * * *", Utc(2026, 12, 31, 23, 59, 59)), Utc(2027, 1, 1));
}

TEST(CronScheduleTest, ListsRangesAndSteps) {
  EXPECT_EQ(NextOf("*/15 * * * *", Utc(2026, 11, 28, 12, 7)), Utc(2026, 11, 28, 12, 15));
  EXPECT_EQ(NextOf("*/15 * * * *", Utc(2026, 11, 28, 12, 45)), Utc(2026, 11, 28, 13, 0));
  EXPECT_EQ(NextOf("5,40 8-9 * * *", Utc(2026, 11, 28, 9, 41)), Utc(2026, 11, 29, 8, 5));
  // "N/step" runs from N to the maximum.
  EXPECT_EQ(NextOf("50/5 * * * *", Utc(2026, 11, 28, 12, 56)), Utc(2026, 11, 28, 13, 50));
  EXPECT_EQ(NextOf("10-20/5 3 * * *", Utc(2026, 11, 28, 3, 16)), Utc(2026, 11, 28, 3, 20));
  EXPECT_EQ(NextOf("0 0 1 jan-mar/2 *", Utc(2026, 11, 28)), Utc(2027, 1, 1));
  EXPECT_EQ(NextOf("0 0 1 JAN-MAR/2 *", Utc(2027, 1, 1)), Utc(2027, 3, 1));
}

TEST(CronScheduleTest, WeekdaysAndTheDayFieldsOr) {
  // 2026-11-28 is a Saturday.
  EXPECT_EQ(NextOf("0 9 * * 1-5", Utc(2026, 11, 28, 10)), Utc(2026, 11, 30, 9));
  EXPECT_EQ(NextOf("0 9 * * MON-FRI", Utc(2026, 11, 28, 10)), Utc(2026, 11, 30, 9));
  EXPECT_EQ(NextOf("0 0 * * sun", Utc(2026, 11, 28, 10)), Utc(2026, 11, 29));
  // Both day fields restricted: either one (the 1st, or a Wednesday).
  EXPECT_EQ(NextOf("0 0 1 * 3", Utc(2026, 11, 28)), Utc(2026, 12, 1));
  EXPECT_EQ(NextOf("0 0 1 * 3", Utc(2026, 12, 1)), Utc(2026, 12, 2));
  // One of them `*` or `?`: both must match (the 13th that is a Friday).
  EXPECT_EQ(NextOf("0 0 13 * 5", Utc(2026, 11, 28)), Utc(2026, 12, 4));
  EXPECT_EQ(NextOf("0 0 13 ? 5", Utc(2026, 11, 28)), Utc(2026, 12, 4));
  EXPECT_EQ(NextOf("0 0 13 * ?", Utc(2026, 11, 28)), Utc(2026, 12, 13));
}

TEST(CronScheduleTest, MacrosAndEvery) {
  EXPECT_EQ(NextOf("@hourly", Utc(2026, 11, 28, 12, 30)), Utc(2026, 11, 28, 13));
  EXPECT_EQ(NextOf("@daily", Utc(2026, 11, 28, 12, 30)), Utc(2026, 11, 29));
  EXPECT_EQ(NextOf("@midnight", Utc(2026, 11, 28, 12, 30)), Utc(2026, 11, 29));
  EXPECT_EQ(NextOf("@weekly", Utc(2026, 11, 28, 12, 30)), Utc(2026, 11, 29));
  EXPECT_EQ(NextOf("@monthly", Utc(2026, 11, 28, 12, 30)), Utc(2026, 12, 1));
  EXPECT_EQ(NextOf("@yearly", Utc(2026, 11, 28, 12, 30)), Utc(2027, 1, 1));
  EXPECT_EQ(NextOf("@annually", Utc(2026, 11, 28, 12, 30)), Utc(2027, 1, 1));
  EXPECT_EQ(NextOf("@every 90s", Utc(2026, 11, 28, 12, 30)), Utc(2026, 11, 28, 12, 31, 30));
  EXPECT_EQ(NextOf("@every 1h30m", Utc(2026, 11, 28, 12, 30)), Utc(2026, 11, 28, 14));
  EXPECT_EQ(NextOf("@every 100ms", Utc(2026, 11, 28, 12, 30)), Utc(2026, 11, 28, 12, 30, 1));
}

TEST(CronScheduleTest, LeapDaysAndImpossibleDates) {
  EXPECT_EQ(NextOf("0 0 29 2 *", Utc(2026, 11, 28)), Utc(2028, 2, 29));
  auto never = CronSchedule::Parse("0 0 30 2 *");
  ASSERT_TRUE(never.ok());
  EXPECT_FALSE(never->Next(Utc(2026, 11, 28)).has_value());
}

TEST(CronScheduleTest, RejectsWhatUpstreamRejects) {
  for (const char* bad : {"",
                          "* * * *",
                          "* * * * * *",
                          "60 * * * *",
                          "* 24 * * *",
                          "* * 0 * *",
                          "* * 32 * *",
                          "* * * 13 *",
                          "* * * * 7",
                          "5-1 * * * *",
                          "*/0 * * * *",
                          "a * * * *",
                          "-1 * * * *",
                          "1-2-3 * * * *",
                          "*/2/3 * * * *",
                          "@fortnightly",
                          "@every",
                          "@every 5x",
                          "TZ=Nowhere/Atlantis * * * * *",
                          "TZ=../etc/passwd * * * * *"}) {
    EXPECT_FALSE(CronSchedule::Parse(bad).ok()) << "'" << bad << "'";
  }
}

TEST(CronScheduleTest, TimeZonePrefixReadsTheFieldsInThatZone) {
  if (!HaveZone("Asia/Tokyo") || !HaveZone("Europe/Berlin")) GTEST_SKIP() << "no tzdata";
  // 09:00 in Tokyo (UTC+9, no daylight saving) is 00:00 UTC.
  EXPECT_EQ(NextOf("TZ=Asia/Tokyo 0 9 * * *", Utc(2026, 11, 28, 12)), Utc(2026, 11, 29, 0));
  EXPECT_EQ(NextOf("CRON_TZ=Asia/Tokyo 0 9 * * *", Utc(2026, 11, 28, 12)), Utc(2026, 11, 29, 0));
  // Berlin: UTC+1 in winter, UTC+2 from 2027-03-28 01:00 UTC.
  EXPECT_EQ(NextOf("TZ=Europe/Berlin 0 12 * * *", Utc(2026, 11, 28, 12)), Utc(2026, 11, 29, 11));
  EXPECT_EQ(NextOf("TZ=Europe/Berlin 0 12 * * *", Utc(2027, 3, 28, 0)), Utc(2027, 3, 28, 10));
  EXPECT_EQ(NextOf("TZ=Europe/Berlin 0 0 * * *", Utc(2027, 6, 1, 12)), Utc(2027, 6, 1, 22));
  // 02:30 does not exist on the day clocks go forward: the next day's 02:30 runs, as a
  // skipped hour is stepped over.
  EXPECT_EQ(NextOf("TZ=Europe/Berlin 30 2 * * *", Utc(2027, 3, 27, 2)), Utc(2027, 3, 29, 0, 30));
  // A default zone applies without a prefix.
  auto berlin = TimeZone::Load("Europe/Berlin");
  ASSERT_TRUE(berlin.ok());
  auto s = CronSchedule::Parse("0 12 * * *", *berlin);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->Next(Utc(2026, 11, 28, 12)), Utc(2026, 11, 29, 11));
}

TEST(TimeZoneTest, OffsetsFollowTheZoneFilesTransitions) {
  if (!HaveZone("Europe/Berlin") || !HaveZone("America/New_York")) GTEST_SKIP() << "no tzdata";
  auto berlin = TimeZone::Load("Europe/Berlin");
  ASSERT_TRUE(berlin.ok()) << berlin.error().message;
  EXPECT_EQ(berlin->OffsetAt(Utc(2026, 1, 15)), 3600);
  EXPECT_EQ(berlin->OffsetAt(Utc(2026, 7, 15)), 7200);
  EXPECT_EQ(berlin->OffsetAt(Utc(2026, 3, 29, 0, 59, 59)), 3600);
  EXPECT_EQ(berlin->OffsetAt(Utc(2026, 3, 29, 1)), 7200);
  auto ny = TimeZone::Load("America/New_York");
  ASSERT_TRUE(ny.ok());
  EXPECT_EQ(ny->OffsetAt(Utc(2026, 1, 15)), -5 * 3600);
  EXPECT_EQ(ny->OffsetAt(Utc(2026, 7, 15)), -4 * 3600);
  EXPECT_EQ(TimeZone::Load("UTC")->OffsetAt(Utc(2026, 7, 15)), 0);
  EXPECT_FALSE(TimeZone::Load("Mars/Olympus_Mons").ok());
  EXPECT_FALSE(TimeZone::FromTzif("x", "not a zone file").ok());
}

}  // namespace
}  // namespace berth::controllers
