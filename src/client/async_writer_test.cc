#include "client/async_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

namespace berth::client {
namespace {

TEST(AsyncWriterTest, RunsInOrderAndLogsFailuresNamingTheWrite) {
  std::mutex mu;
  std::vector<std::string> logged;
  std::vector<int> ran;
  {
    AsyncWriter w([&](const std::string& m) {
      std::lock_guard lock(mu);
      logged.push_back(m);
    });
    for (int i = 0; i < 50; ++i) {
      w.Submit("write " + std::to_string(i), [&, i]() -> VoidResult {
        std::lock_guard lock(mu);
        ran.push_back(i);
        if (i == 7) return Error{"server said no", ErrorCode::kConflict};
        return {};
      });
    }
    w.Flush();
    std::lock_guard lock(mu);
    ASSERT_EQ(ran.size(), 50u);
    for (int i = 0; i < 50; ++i) EXPECT_EQ(ran[i], i);
    EXPECT_EQ(logged, std::vector<std::string>{"write 7: server said no"});
  }
}

TEST(AsyncWriterTest, SeveralThreadsWriteAtOnce) {
  // Four writes that each wait until four are running at once: only a writer with four threads
  // finishes them (the deadline keeps a failure from hanging the test).
  std::mutex mu;
  std::condition_variable cv;
  int running = 0, peak = 0;
  {
    AsyncWriter w(nullptr, 100, 4);
    for (int i = 0; i < 4; ++i) {
      w.Submit("victim " + std::to_string(i), [&]() -> VoidResult {
        std::unique_lock lock(mu);
        peak = std::max(peak, ++running);
        cv.notify_all();
        cv.wait_for(lock, std::chrono::seconds(10), [&] { return running == 4; });
        return {};
      });
    }
    w.Flush();
  }
  EXPECT_EQ(peak, 4);
}

TEST(AsyncWriterTest, BoundedQueueDropsAndSaysSo) {
  std::mutex gate;
  gate.lock();
  std::vector<std::string> logged;
  std::mutex mu;
  {
    AsyncWriter w(
        [&](const std::string& m) {
          std::lock_guard lock(mu);
          logged.push_back(m);
        },
        2);
    w.Submit("blocker", [&]() -> VoidResult {
      std::lock_guard g(gate);
      return {};
    });
    // The blocker may or may not have been taken off the queue yet: fill it past the bound.
    for (int i = 0; i < 4; ++i) w.Submit("w" + std::to_string(i), [] { return VoidResult(); });
    gate.unlock();
    w.Flush();
  }
  std::lock_guard lock(mu);
  ASSERT_FALSE(logged.empty());
  EXPECT_NE(logged.back().find("dropped"), std::string::npos);
}

}  // namespace
}  // namespace berth::client
