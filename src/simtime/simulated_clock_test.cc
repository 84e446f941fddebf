#include "simtime/simulated_clock.h"

#include <gtest/gtest.h>

#include <thread>

namespace berth::simtime {
namespace {

// A participant whose state the test sets.
class FakeParticipant final : public Participant {
 public:
  bool Idle() const override { return idle; }
  std::optional<TimePoint> NextDue() const override { return due; }
  void Wake() override { ++woken; }
  std::string Describe() const override { return "fake"; }
  bool idle = true;
  std::optional<TimePoint> due;
  int woken = 0;
};

TimePoint At(int seconds) { return TimePoint(std::chrono::seconds(seconds)); }

TEST(SimulatedClockTest, MovesOnlyForwardAndWakesParticipants) {
  SimulatedClock clock(At(100));
  FakeParticipant p;
  ParticipantRegistration reg(&clock, &p);
  EXPECT_EQ(clock.Now(), At(100));
  clock.AdvanceTo(At(160));
  EXPECT_EQ(clock.Now(), At(160));
  EXPECT_EQ(p.woken, 1);
  clock.AdvanceTo(At(150));  // never back
  EXPECT_EQ(clock.Now(), At(160));
}

TEST(SimulatedClockTest, QuiescentOnlyWhenEveryParticipantIsIdleAndNothingIsInTransit) {
  SimulatedClock clock(At(0));
  FakeParticipant a, b;
  ParticipantRegistration ra(&clock, &a), rb(&clock, &b);
  a.due = At(30);
  b.due = At(10);
  auto probe = clock.Poll();
  EXPECT_TRUE(probe.quiescent);
  EXPECT_EQ(probe.next_due, At(10));

  b.idle = false;
  probe = clock.Poll();
  EXPECT_FALSE(probe.quiescent);
  EXPECT_EQ(probe.busy, "fake");
  b.idle = true;

  clock.BeginTransit();  // a watch event queued, not yet handled
  EXPECT_FALSE(clock.Poll().quiescent);
  clock.EndTransit();
  EXPECT_TRUE(clock.Poll().quiescent);
}

TEST(SimulatedClockTest, UnregisteredParticipantsAreNotProbed) {
  SimulatedClock clock(At(0));
  FakeParticipant a;
  a.idle = false;
  {
    ParticipantRegistration ra(&clock, &a);
    EXPECT_FALSE(clock.Poll().quiescent);
  }
  EXPECT_TRUE(clock.Poll().quiescent);
}

TEST(SimulatedClockTest, ARealClockRegistersNothing) {
  RealClock real;
  FakeParticipant a;
  ParticipantRegistration ra(&real, &a);
  EXPECT_EQ(ra.clock(), nullptr);
  EXPECT_EQ(AsSimulated(&real), nullptr);
}

TEST(SimulatedClockTest, TransitsCountOnlyAgainstTheActiveClock) {
  SimulatedClock clock(At(0));
  NoteWatchEventQueued();  // no active clock: not counted
  EXPECT_EQ(clock.in_transit(), 0);
  SimulatedClock::SetActive(&clock);
  NoteWatchEventQueued();
  EXPECT_EQ(clock.in_transit(), 1);
  NoteWatchEventHandled();
  EXPECT_EQ(clock.in_transit(), 0);
  SimulatedClock::SetActive(nullptr);
}

TEST(SimulatedClockTest, WaitForActivityReturnsOnAnotherThreadsChange) {
  SimulatedClock clock(At(0));
  const uint64_t seen = clock.epoch();
  std::thread t([&] { clock.NoteActivity(); });
  clock.WaitForActivity(seen, std::chrono::seconds(30));
  t.join();
  EXPECT_NE(clock.epoch(), seen);
}

}  // namespace
}  // namespace berth::simtime
