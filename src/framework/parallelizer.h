// ThreadPoolParallelizer: runs a loop body over [0, n) on a fixed pool of worker threads plus
// the calling thread. Work is handed out in chunks through an atomic counter, so an uneven loop
// balances itself. Until() calls must not overlap (the scheduling thread is the only caller).
// A scheduling cycle makes several short parallel loops in a row; idle workers spin briefly
// (about 20 µs) before they sleep, so back-to-back loops do not pay a wake-up through the
// kernel each time, while a worker idle between pods does not hold a core.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "berth/framework/handle.h"

namespace berth {

class ThreadPoolParallelizer final : public Parallelizer {
 public:
  // `parallelism` workers in total, capped by the machine's hardware threads (more threads
  // than cores only adds context switches to a CPU-bound loop).
  explicit ThreadPoolParallelizer(int parallelism);
  ~ThreadPoolParallelizer() override;

  void Until(int n, const std::function<void(int)>& fn) override;
  int parallelism() const override { return static_cast<int>(threads_.size()) + 1; }

 private:
  void Worker();
  // Runs chunks of the round described by (fn, n, chunk) until none are left.
  void RunChunks(const std::function<void(int)>& fn, int n, int chunk);

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  // The current round, guarded by mu_: a worker copies it when it joins the round, since the
  // caller may start the next round while a late worker is still reading.
  const std::function<void(int)>* fn_ = nullptr;
  int n_ = 0;
  int chunk_ = 1;
  std::atomic<int> next_{0};
  std::atomic<int> active_{0};  // workers inside the current round
  std::atomic<uint64_t> epoch_{0};
  int sleeping_ = 0;
  bool stop_ = false;
};

}  // namespace berth
