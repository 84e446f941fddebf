#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "scheduler/scheduler_internal.h"

namespace berth {
namespace {

// SelectHost's tie-break draws as Random::Intn does: the same answers and the generator left
// in the same state, so decisions under a seed do not change. Counts above 2^62 take the
// rejection step about a quarter of the time.
TEST(DrawsZeroTest, AnswersAndConsumesAsIntn) {
  Mt19937_64 ours(17);
  Random theirs(17);
  std::vector<uint64_t> counts;
  for (uint64_t c = 1; c <= 5000; ++c) counts.push_back(c);
  for (uint64_t c : {(uint64_t{1} << 62) + 1, (uint64_t{1} << 62) + 12345, (uint64_t{3} << 61) + 7})
    for (int i = 0; i < 200; ++i) counts.push_back(c);
  int zeros = 0;
  for (uint64_t c : counts) {
    const bool zero = DrawsZero(ours, c);
    ASSERT_EQ(zero, theirs.Intn(static_cast<int64_t>(c)) == 0) << c;
    zeros += zero;
  }
  EXPECT_EQ(ours(), theirs.Next());
  EXPECT_GT(zeros, 1);
}

}  // namespace
}  // namespace berth
