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
    BindingExecutor ex(4, std::chrono::milliseconds(50));
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
  BindingExecutor ex(8, std::chrono::milliseconds(20));
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

}  // namespace
}  // namespace berth
