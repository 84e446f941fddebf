// DeadlineTimer: runs callbacks at points in time of a Clock, on a thread of its own (started
// with the first callback). The scheduler uses it for Permit timeouts, so that a pod waiting at
// Permit holds no thread: its timeout is an entry here, its continuation a closure.
//
// The clock may be injected (a FakeClock that tests move): the thread looks at it at least
// every 100 ms of real time. Callbacks run one at a time, outside the timer's lock; At may be
// called from any thread, a callback included. The destructor drops what has not run.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

#include "berth/framework/clock.h"

namespace berth {

class DeadlineTimer {
 public:
  explicit DeadlineTimer(const Clock& clock) : clock_(clock) {}
  ~DeadlineTimer();
  DeadlineTimer(const DeadlineTimer&) = delete;
  DeadlineTimer& operator=(const DeadlineTimer&) = delete;

  void At(TimePoint when, std::function<void()> fn);
  // Entries not yet run (for tests).
  size_t pending() const;

 private:
  struct Entry {
    TimePoint when;
    uint64_t seq;  // keeps entries of one time in the order they were added
    std::function<void()> fn;
    bool operator>(const Entry& o) const { return when != o.when ? when > o.when : seq > o.seq; }
  };
  void Loop();

  const Clock& clock_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> entries_;
  uint64_t next_seq_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace berth
