#include "scheduler/binding_executor.h"

#include <algorithm>
#include <thread>

namespace berth {

BindingExecutor::BindingExecutor(int max_threads, int core_threads, std::chrono::milliseconds grace,
                                 std::chrono::milliseconds idle_exit)
    : max_threads_(std::max(max_threads, 1)),
      core_threads_(std::clamp(core_threads, 1, max_threads_)),
      grace_(grace),
      idle_exit_(idle_exit) {}

BindingExecutor::~BindingExecutor() {
  std::unique_lock lock(mu_);
  stopping_ = true;
  work_cv_.notify_all();
  monitor_cv_.notify_all();
  exit_cv_.wait(lock, [&] { return threads_ == 0 && !monitor_running_; });
}

int BindingExecutor::threads() const {
  std::lock_guard lock(mu_);
  return threads_;
}

void BindingExecutor::Submit(std::function<void()> task) {
  std::lock_guard lock(mu_);
  queue_.push_back({std::move(task), SteadyClock::now()});
  if (idle_ > 0) work_cv_.notify_one();
  if (static_cast<size_t>(idle_ + starting_) >= queue_.size()) return;  // a thread will take it
  if (threads_ < core_threads_) {
    StartWorkerLocked();
  } else if (threads_ < max_threads_) {
    if (!monitor_running_) {
      monitor_running_ = true;
      std::thread([this] { Monitor(); }).detach();
    }
    monitor_cv_.notify_one();
  }
}

void BindingExecutor::StartWorkerLocked() {
  ++threads_;
  ++starting_;
  std::thread([this] { Worker(); }).detach();
}

void BindingExecutor::Worker() {
  std::unique_lock lock(mu_);
  --starting_;
  for (;;) {
    if (!queue_.empty()) {
      auto task = std::move(queue_.front().task);
      queue_.pop_front();
      lock.unlock();
      task();
      lock.lock();
      last_completion_ = SteadyClock::now();
      continue;
    }
    if (stopping_) break;
    ++idle_;
    bool woke = work_cv_.wait_for(lock, idle_exit_, [&] { return !queue_.empty() || stopping_; });
    --idle_;
    if (!woke) break;  // idle too long: retire
  }
  --threads_;
  // Notified under the lock: the destructor cannot return (and free this object) before this
  // thread has released the mutex.
  exit_cv_.notify_all();
}

void BindingExecutor::Monitor() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (queue_.empty()) {
      if (monitor_cv_.wait_for(lock, idle_exit_) == std::cv_status::timeout && queue_.empty())
        break;  // nothing to watch for a while: retire (Submit starts it again)
      continue;
    }
    if (threads_ >= max_threads_ || static_cast<size_t>(idle_ + starting_) >= queue_.size()) {
      monitor_cv_.wait_for(lock, grace_);
      continue;
    }
    // Stuck, not busy: the oldest task has waited the grace period, no task finished in it,
    // and no thread was added in it (one thread per grace period at most).
    const auto now = SteadyClock::now();
    const auto waited = now - std::max({queue_.front().since, last_completion_, last_added_});
    if (waited >= grace_) {
      last_added_ = now;
      StartWorkerLocked();
      continue;
    }
    monitor_cv_.wait_for(lock, grace_ - waited);
  }
  monitor_running_ = false;
  exit_cv_.notify_all();
}

}  // namespace berth
