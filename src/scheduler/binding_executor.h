// BindingExecutor: runs binding cycles off the scheduling thread on a bounded, elastic set of
// threads. A binding cycle can block for long (a Permit wait, an API call), so a fixed pool
// could starve; instead threads are added as the work needs them, up to `max_threads`, and an
// idle thread retires after a while. Tasks beyond the cap queue.
//
// Up to `core_threads`, a thread is added as soon as every thread is busy. Beyond that, only
// when the threads are stuck rather than busy: the oldest queued task has waited `grace` and
// no task finished meanwhile (Permit waits, an API server that stopped answering). A backlog
// of binds that finish in a few milliseconds each is then worked off by the core threads:
// more threads would not make the API server answer faster, and each costs its stack and its
// allocator cache. The core is still large: a binding thread spends most of its cycle waiting
// for its binding's answer, so the binds in flight, not the threads' work, set the pace, and a
// busy kube-apiserver takes 100-200 ms per bind (about 90 in flight for 600 binds a second).
// Binds that wait together go to the API server together (client::WriteCombiner).
//
// Threads: Submit from any thread. A monitor thread, started with the first task that has to
// wait, adds the threads beyond the core. The destructor runs every queued task, then waits for
// the threads to finish (clean shutdown drains binding cycles).
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

namespace berth {

class BindingExecutor {
 public:
  explicit BindingExecutor(int max_threads = 64, int core_threads = 48,
                           std::chrono::milliseconds grace = std::chrono::milliseconds(5),
                           std::chrono::milliseconds idle_exit = std::chrono::seconds(10));
  ~BindingExecutor();
  BindingExecutor(const BindingExecutor&) = delete;
  BindingExecutor& operator=(const BindingExecutor&) = delete;

  void Submit(std::function<void()> task);
  // Worker threads running now (the monitor not included).
  int threads() const;

 private:
  using SteadyClock = std::chrono::steady_clock;
  struct Queued {
    std::function<void()> task;
    SteadyClock::time_point since;
  };
  void StartWorkerLocked();
  void Worker();
  void Monitor();

  const int max_threads_, core_threads_;
  const std::chrono::milliseconds grace_, idle_exit_;
  mutable std::mutex mu_;
  std::condition_variable work_cv_, exit_cv_, monitor_cv_;
  std::deque<Queued> queue_;
  int threads_ = 0;
  int idle_ = 0;
  int starting_ = 0;  // started, not yet looking at the queue: count as idle
  SteadyClock::time_point last_completion_{}, last_added_{};
  bool monitor_running_ = false;
  bool stopping_ = false;
};

}  // namespace berth
