#include "scheduler/binding_executor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

namespace berth {
namespace {

TEST(BindingExecutorTest, BlockedTasksDoNotStarveOthersAndTheCapHolds) {
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<int> done{0};
  {
    BindingExecutor ex(4, 2, std::chrono::milliseconds(5), std::chrono::milliseconds(50));
    for (int i = 0; i < 3; ++i)
      ex.Submit([gate, &done] {
        gate.wait();
        ++done;
      });  // Permit waits
    std::promise<void> quick;
    ex.Submit([&quick] { quick.set_value(); });
    EXPECT_EQ(quick.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
    for (int i = 0; i < 20; ++i) ex.Submit([&done] { ++done; });
    EXPECT_LE(ex.threads(), 4);
    release.set_value();
  }  // the destructor drains everything queued
  EXPECT_EQ(done.load(), 23);
}

TEST(BindingExecutorTest, IdleThreadsRetire) {
  BindingExecutor ex(8, 8, std::chrono::milliseconds(5), std::chrono::milliseconds(20));
  std::atomic<int> n{0};
  for (int i = 0; i < 8; ++i)
    ex.Submit([&n] {
      ++n;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    });
  for (int i = 0; i < 200 && ex.threads() > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(n.load(), 8);
  EXPECT_EQ(ex.threads(), 0);
}

TEST(BindingExecutorTest, FastTasksStayOnTheCoreThreads) {
  BindingExecutor ex(16, 2, std::chrono::milliseconds(200), std::chrono::seconds(5));
  std::atomic<int> n{0};
  for (int i = 0; i < 200; ++i) ex.Submit([&n] { ++n; });
  for (int i = 0; i < 500 && n.load() < 200; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(n.load(), 200);
  EXPECT_LE(ex.threads(), 2);  // none waited the grace period
}

TEST(BindingExecutorTest, ABacklogThatMovesGetsNoExtraThreads) {
  BindingExecutor ex(16, 2, std::chrono::milliseconds(20), std::chrono::seconds(5));
  std::atomic<int> n{0};
  // 2 threads, 200 tasks of 1 ms: the queue waits far longer than the grace period, but
  // a task finishes every millisecond.
  for (int i = 0; i < 200; ++i)
    ex.Submit([&n] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ++n;
    });
  for (int i = 0; i < 1000 && n.load() < 200; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  EXPECT_EQ(n.load(), 200);
  EXPECT_LE(ex.threads(), 2);
}

TEST(BindingExecutorTest, StuckCoreThreadsGetHelpAfterTheGracePeriod) {
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  {
    BindingExecutor ex(6, 2, std::chrono::milliseconds(10), std::chrono::seconds(5));
    for (int i = 0; i < 5; ++i) ex.Submit([gate] { gate.wait(); });  // five Permit waits
    std::promise<void> quick;
    ex.Submit([&quick] { quick.set_value(); });
    // Two core threads and three more added one grace period apart reach the quick task.
    EXPECT_EQ(quick.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
    EXPECT_EQ(ex.threads(), 6);
    release.set_value();
  }
}

}  // namespace
}  // namespace berth
