#include "framework/parallelizer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace berth {
namespace {

TEST(ThreadPoolParallelizerTest, EveryIndexRunsExactlyOnce) {
  ThreadPoolParallelizer pool(16);
  EXPECT_GE(pool.parallelism(), 1);
  // Many rounds of different sizes back to back: the spinning hand-over between rounds must
  // neither lose nor repeat work.
  for (int round = 0; round < 2000; ++round) {
    const int n = (round * 37) % 700;
    std::vector<std::atomic<int>> hits(n);
    pool.Until(n, [&](int i) { hits[i].fetch_add(1); });
    for (int i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "round " << round << " i " << i;
  }
}

TEST(ThreadPoolParallelizerTest, ResultsAreVisibleAfterUntilReturns) {
  ThreadPoolParallelizer pool(2);
  std::vector<int> out(5000, 0);
  pool.Until(5000, [&](int i) { out[i] = i * 2; });
  long sum = 0;
  for (int v : out) sum += v;
  EXPECT_EQ(sum, 2L * (4999L * 5000L / 2));
}

TEST(ThreadPoolParallelizerTest, ZeroAndTinyLoops) {
  ThreadPoolParallelizer pool(4);
  int calls = 0;
  pool.Until(0, [&](int) { ++calls; });
  EXPECT_EQ(calls, 0);
  pool.Until(3, [&](int) { ++calls; });  // small loops run inline
  EXPECT_EQ(calls, 3);
}

TEST(ThreadPoolParallelizerTest, DestroyWhileWorkersSleep) {
  for (int i = 0; i < 20; ++i) {
    ThreadPoolParallelizer pool(2);
    std::atomic<int> n{0};
    pool.Until(100, [&](int) { n.fetch_add(1); });
    EXPECT_EQ(n.load(), 100);
  }
}

}  // namespace
}  // namespace berth
