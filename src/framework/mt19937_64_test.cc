#include "framework/mt19937_64.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>

namespace berth {
namespace {

// Decisions under --seed depend on every draw: the engine must give std::mt19937_64's
// sequence output for output, across many refills of its state.
TEST(Mt19937_64, SameSequenceAsTheStandardEngine) {
  for (uint64_t seed : {uint64_t{0}, uint64_t{1}, uint64_t{42}, uint64_t{5489},
                        uint64_t{0xffffffffffffffffULL}, uint64_t{0x8000000000000000ULL}}) {
    SCOPED_TRACE(seed);
    Mt19937_64 ours(seed);
    std::mt19937_64 standard(seed);
    for (int i = 0; i < 10 * 312 + 7; ++i) ASSERT_EQ(ours(), standard()) << "draw " << i;
  }
}

// The 10,000th output of std::mt19937_64 from the default seed, as the C++ standard gives it.
TEST(Mt19937_64, TenThousandthOutputOfTheDefaultSeed) {
  Mt19937_64 engine(5489);
  uint64_t last = 0;
  for (int i = 0; i < 10000; ++i) last = engine();
  EXPECT_EQ(last, 9981545732273789042ULL);
}

// As a standard engine: a distribution over it draws what it draws over std::mt19937_64,
// interleaved with raw draws.
TEST(Mt19937_64, DistributionsDrawAsOverTheStandardEngine) {
  Mt19937_64 ours(7);
  std::mt19937_64 standard(7);
  for (int i = 0; i < 5000; ++i) {
    const int64_t n = 1 + (i * 7919) % 100003;
    if (i % 3 == 0) {
      ASSERT_EQ(ours(), standard());
    } else {
      ASSERT_EQ(std::uniform_int_distribution<int64_t>(0, n - 1)(ours),
                std::uniform_int_distribution<int64_t>(0, n - 1)(standard));
    }
  }
}

}  // namespace
}  // namespace berth
