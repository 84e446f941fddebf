// Mt19937_64: the 64-bit Mersenne Twister with a refill that vectorises.
#pragma once

#include <cstddef>
#include <cstdint>

namespace berth {

// The 64-bit Mersenne Twister: std::mt19937_64's sequence, output for output, from the same
// seed. Its state is refilled two words at a time: when every node of a large cluster is
// scored, most nodes tie and the tie-break draws once per tied node, so the refill is a
// measurable part of a cycle.
class Mt19937_64 {
 public:
  using result_type = uint64_t;
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return ~uint64_t{0}; }

  explicit Mt19937_64(uint64_t seed) {
    state_[0] = seed;
    for (size_t i = 1; i < kN; ++i)
      state_[i] = 6364136223846793005ULL * (state_[i - 1] ^ (state_[i - 1] >> 62)) + i;
    index_ = kN;
  }

  uint64_t operator()() {
    if (index_ >= kN) Refill();
    uint64_t y = state_[index_++];
    y ^= (y >> 29) & 0x5555555555555555ULL;
    y ^= (y << 17) & 0x71d67fffeda60000ULL;
    y ^= (y << 37) & 0xfff7eee000000000ULL;
    return y ^ (y >> 43);
  }

 private:
  static constexpr size_t kN = 312;
  static constexpr size_t kM = 156;
  static constexpr uint64_t kUpper = 0xffffffff80000000ULL;
  static constexpr uint64_t kLower = 0x7fffffffULL;
  static constexpr uint64_t kMatrix = 0xb5026f5aa96619e9ULL;
  using Pair = uint64_t __attribute__((vector_size(16)));

  // Word i from words i, i + 1 and `far`: two at a time where both inputs of the pair are
  // words not yet replaced in this refill (or all replaced before it).
  void TwistPair(size_t i, size_t far) {
    Pair cur, next, other;
    __builtin_memcpy(&cur, &state_[i], sizeof(Pair));
    __builtin_memcpy(&next, &state_[i + 1], sizeof(Pair));
    __builtin_memcpy(&other, &state_[far], sizeof(Pair));
    const Pair y = (cur & kUpper) | (next & kLower);
    const Pair out = other ^ (y >> 1) ^ (-(y & 1) & kMatrix);
    __builtin_memcpy(&state_[i], &out, sizeof(Pair));
  }
  static uint64_t Twist(uint64_t cur, uint64_t next, uint64_t far) {
    const uint64_t y = (cur & kUpper) | (next & kLower);
    return far ^ (y >> 1) ^ (-(y & 1) & kMatrix);
  }
  void Refill() {
    // Words [0, kN - kM) take the old words kM ahead; [kN - kM, kN) the new ones kN - kM behind.
    for (size_t i = 0; i < kN - kM; i += 2) TwistPair(i, i + kM);
    for (size_t i = kN - kM; i + 2 < kN; i += 2) TwistPair(i, i + kM - kN);
    state_[kN - 2] = Twist(state_[kN - 2], state_[kN - 1], state_[kM - 2]);
    state_[kN - 1] = Twist(state_[kN - 1], state_[0], state_[kM - 1]);
    index_ = 0;
  }

  uint64_t state_[kN];
  size_t index_;
};

}  // namespace berth
