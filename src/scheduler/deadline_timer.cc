#include "scheduler/deadline_timer.h"

#include <algorithm>

namespace berth {

DeadlineTimer::~DeadlineTimer() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void DeadlineTimer::At(TimePoint when, std::function<void()> fn) {
  std::lock_guard lock(mu_);
  if (stopping_) return;
  entries_.push({when, next_seq_++, std::move(fn)});
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
  cv_.notify_all();
}

size_t DeadlineTimer::pending() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

void DeadlineTimer::Loop() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (entries_.empty()) {
      cv_.wait(lock);
      continue;
    }
    const Duration left = entries_.top().when - clock_.Now();
    if (left > Duration::zero()) {
      // Bounded, so that an injected clock moved forward is noticed.
      cv_.wait_for(lock, std::min<Duration>(left, std::chrono::milliseconds(100)));
      continue;
    }
    std::function<void()> fn = entries_.top().fn;
    entries_.pop();
    lock.unlock();
    fn();
    lock.lock();
  }
}

}  // namespace berth
