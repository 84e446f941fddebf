#include "scheduler/binding_executor.h"

#include <thread>

namespace berth {

BindingExecutor::BindingExecutor(int max_threads, std::chrono::milliseconds idle_exit)
    : max_threads_(max_threads < 1 ? 1 : max_threads), idle_exit_(idle_exit) {}

BindingExecutor::~BindingExecutor() {
  std::unique_lock lock(mu_);
  stopping_ = true;
  work_cv_.notify_all();
  exit_cv_.wait(lock, [&] { return threads_ == 0; });
}

int BindingExecutor::threads() const {
  std::lock_guard lock(mu_);
  return threads_;
}

void BindingExecutor::Submit(std::function<void()> task) {
  std::lock_guard lock(mu_);
  queue_.push_back(std::move(task));
  if (idle_ == 0 && threads_ < max_threads_) {
    ++threads_;
    std::thread([this] { Worker(); }).detach();
  } else {
    work_cv_.notify_one();
  }
}

void BindingExecutor::Worker() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (!queue_.empty()) {
      auto task = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      task();
      lock.lock();
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

}  // namespace berth
