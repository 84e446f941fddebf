// Injected time and randomness. Everything that waits, backs off, times out or breaks ties takes
// a Clock and a Random, so simulation and tests are deterministic.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

#include "berth/export.h"

namespace berth {

using Duration = std::chrono::nanoseconds;
using TimePoint = std::chrono::time_point<std::chrono::system_clock, Duration>;

class BERTH_EXPORT Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
};

class BERTH_EXPORT RealClock final : public Clock {
 public:
  TimePoint Now() const override {
    return std::chrono::time_point_cast<Duration>(std::chrono::system_clock::now());
  }
};

// A clock that moves only when told to.
class BERTH_EXPORT FakeClock final : public Clock {
 public:
  explicit FakeClock(TimePoint start = TimePoint{}) : now_(start) {}
  TimePoint Now() const override { return now_; }
  void Advance(Duration d) { now_ += d; }
  void Set(TimePoint t) { now_ = t; }

 private:
  TimePoint now_;
};

// Seeded pseudo-random source. Not thread-safe: used from the scheduling thread only.
class BERTH_EXPORT Random {
 public:
  explicit Random(uint64_t seed = 1) : engine_(seed) {}
  // Uniform in [0, n); n must be > 0.
  int64_t Intn(int64_t n) { return std::uniform_int_distribution<int64_t>(0, n - 1)(engine_); }
  uint64_t Next() { return engine_(); }

 private:
  std::mt19937_64 engine_;
};

}  // namespace berth
