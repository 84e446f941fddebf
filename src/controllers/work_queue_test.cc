#include "controllers/work_queue.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "controllers/controller_base.h"
#include "controllers/expectations.h"

namespace berth::controllers {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(WorkQueueTest, DeduplicatesAndRequeuesKeysAddedWhileProcessing) {
  FakeClock clock;
  WorkQueue q(&clock);
  q.Add("ns/a");
  q.Add("ns/a");
  q.Add("ns/b");
  EXPECT_EQ(q.Len(), 2u);
  auto a = q.TryGet();
  ASSERT_EQ(a, "ns/a");
  q.Add("ns/a");  // while processing: not handed to another worker
  EXPECT_EQ(q.TryGet(), "ns/b");
  EXPECT_EQ(q.TryGet(), std::nullopt);
  q.Done("ns/a");  // queued again now
  EXPECT_EQ(q.TryGet(), "ns/a");
  q.Done("ns/a");
  q.Done("ns/b");
  EXPECT_EQ(q.TryGet(), std::nullopt);
}

TEST(WorkerLoopTest, RetriesFailedSyncsAndLogsThemExceptConflicts) {
  FakeClock clock;
  WorkQueue q(&clock);
  std::mutex mu;
  std::condition_variable cv;
  std::set<std::string> synced;
  std::vector<std::string> logged;
  WorkerLoop loop(
      &q,
      [&](const std::string& key) -> VoidResult {
        {
          std::lock_guard lock(mu);
          synced.insert(key);
        }
        cv.notify_all();
        if (key == "ns/conflict")
          return Error{"the object has been modified", ErrorCode::kConflict};
        return Error{"forbidden", ErrorCode::kForbidden};
      },
      [&](const std::string& line) { logged.push_back(line); });
  q.Add("ns/conflict");
  q.Add("ns/forbidden");
  loop.Start(1);
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, seconds(30), [&] { return synced.size() == 2; }));
  }
  loop.Stop();  // joins the worker: its log lines are written
  EXPECT_EQ(logged, std::vector<std::string>{"syncing ns/forbidden: forbidden"});
  // Both are retried after their backoff, the conflict included.
  EXPECT_EQ(q.NumRequeues("ns/conflict"), 1);
  EXPECT_EQ(q.NumRequeues("ns/forbidden"), 1);
}

TEST(WorkQueueTest, AddAfterWaitsForTheClockAndKeepsTheEarliest) {
  FakeClock clock;
  WorkQueue q(&clock);
  q.AddAfter("k", seconds(10));
  q.AddAfter("k", seconds(3));
  EXPECT_EQ(q.Delayed(), 1u);
  clock.Advance(seconds(2));
  q.Tick();
  EXPECT_EQ(q.TryGet(), std::nullopt);
  clock.Advance(seconds(1));
  q.Tick();
  EXPECT_EQ(q.TryGet(), "k");
}

TEST(WorkQueueTest, PerItemExponentialBackoffAndForget) {
  FakeClock clock;
  ControllerRateLimiter limiter(&clock, {.qps = 1e9, .burst = 1000000});
  EXPECT_EQ(limiter.When("k"), milliseconds(5));
  EXPECT_EQ(limiter.When("k"), milliseconds(10));
  EXPECT_EQ(limiter.When("k"), milliseconds(20));
  EXPECT_EQ(limiter.When("other"), milliseconds(5));
  EXPECT_EQ(limiter.NumRequeues("k"), 3);
  for (int i = 0; i < 40; ++i) limiter.When("k");
  EXPECT_EQ(limiter.When("k"), seconds(1000));  // capped
  limiter.Forget("k");
  EXPECT_EQ(limiter.When("k"), milliseconds(5));
}

TEST(WorkQueueTest, OverallBucketDelaysPastTheBurst) {
  FakeClock clock;
  ControllerRateLimiter limiter(&clock);  // 10 a second, burst 100
  for (int i = 0; i < 100; ++i) EXPECT_EQ(limiter.When("k" + std::to_string(i)), milliseconds(5));
  // The 101st waits a tenth of a second for its token, the 102nd two tenths.
  EXPECT_EQ(limiter.When("x"), milliseconds(100));
  EXPECT_EQ(limiter.When("y"), milliseconds(200));
  clock.Advance(seconds(10));  // the bucket refills
  EXPECT_EQ(limiter.When("z"), milliseconds(5));
}

TEST(WorkQueueTest, AddRateLimitedDelaysByTheBackoff) {
  FakeClock clock;
  WorkQueue q(&clock);
  q.AddRateLimited("k");
  EXPECT_EQ(q.TryGet(), std::nullopt);
  clock.Advance(milliseconds(5));
  EXPECT_EQ(q.TryGet(), "k");
  q.Done("k");
  EXPECT_EQ(q.NumRequeues("k"), 1);
  q.Forget("k");
  EXPECT_EQ(q.NumRequeues("k"), 0);
}

TEST(WorkQueueTest, ShutDownReleasesWaiters) {
  FakeClock clock;
  WorkQueue q(&clock);
  std::optional<std::string> got = "unset";
  std::thread t([&] { got = q.Get(); });
  q.ShutDown();
  t.join();
  EXPECT_EQ(got, std::nullopt);
}

TEST(ExpectationsTest, CreationsAndDeletionsAreCountedOnceAndExpire) {
  FakeClock clock;
  Expectations e(&clock);
  EXPECT_TRUE(e.Satisfied("rs"));
  e.ExpectCreations("rs", 2);
  EXPECT_FALSE(e.Satisfied("rs"));
  e.CreationObserved("rs");
  EXPECT_FALSE(e.Satisfied("rs"));
  e.CreationObserved("rs");
  EXPECT_TRUE(e.Satisfied("rs"));
  e.ExpectDeletions("rs", {"ns/p1", "ns/p2"});
  e.DeletionObserved("rs", "ns/p1");
  e.DeletionObserved("rs", "ns/p1");  // seen again (deletionTimestamp, then deleted)
  EXPECT_FALSE(e.Satisfied("rs"));
  clock.Advance(Expectations::kTtl + seconds(1));
  EXPECT_TRUE(e.Satisfied("rs"));  // a lost event does not block the set forever
}

}  // namespace
}  // namespace berth::controllers

namespace berth::controllers {
namespace {

// Under a simulated clock the queue is a participant: busy while a key is ready or being
// processed, due at its earliest delayed key, and a blocked Get wakes when the clock jumps.
TEST(WorkQueueSimulatedClockTest, ReportsIdleAndNextDueAndWakesOnJumps) {
  simtime::SimulatedClock clock(TimePoint(std::chrono::seconds(1000)));
  WorkQueue q(&clock);
  EXPECT_TRUE(clock.Poll().quiescent);
  q.Add("a");
  EXPECT_FALSE(clock.Poll().quiescent);  // ready
  auto key = q.Get();
  ASSERT_EQ(key, "a");
  EXPECT_FALSE(clock.Poll().quiescent);  // processing
  q.Done("a");
  EXPECT_TRUE(clock.Poll().quiescent);

  q.AddAfter("b", std::chrono::seconds(30));
  auto probe = clock.Poll();
  EXPECT_TRUE(probe.quiescent);  // delayed keys are timers, not work
  EXPECT_EQ(probe.next_due, TimePoint(std::chrono::seconds(1030)));

  std::optional<std::string> got;
  std::thread worker([&] { got = q.Get(); });
  clock.AdvanceTo(TimePoint(std::chrono::seconds(1030)));
  worker.join();  // woken by the jump, not by Get's one-second bound alone
  EXPECT_EQ(got, "b");
  q.Done("b");
  EXPECT_TRUE(clock.Poll().quiescent);
  EXPECT_FALSE(clock.Poll().next_due.has_value());
}

}  // namespace
}  // namespace berth::controllers
