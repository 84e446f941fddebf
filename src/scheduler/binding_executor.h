// BindingExecutor: runs binding cycles off the scheduling thread on a bounded, elastic set of
// threads. A binding cycle can block for long (a Permit wait, an API call), so a fixed pool
// could starve; instead a thread is added when every thread is busy, up to `max_threads`, and
// an idle thread retires after a while. Tasks beyond the cap queue.
//
// Threads: Submit from any thread. The destructor runs every queued task, then waits for the
// threads to finish (clean shutdown drains binding cycles).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

namespace berth {

class BindingExecutor {
 public:
  explicit BindingExecutor(int max_threads = 64,
                           std::chrono::milliseconds idle_exit = std::chrono::seconds(10));
  ~BindingExecutor();
  BindingExecutor(const BindingExecutor&) = delete;
  BindingExecutor& operator=(const BindingExecutor&) = delete;

  void Submit(std::function<void()> task);
  int threads() const;

 private:
  void Worker();

  const int max_threads_;
  const std::chrono::milliseconds idle_exit_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_, exit_cv_;
  std::deque<std::function<void()>> queue_;
  int threads_ = 0;
  int idle_ = 0;
  bool stopping_ = false;
};

}  // namespace berth
