#include "framework/parallelizer.h"

#include <algorithm>
#include <cmath>

namespace berth {

ThreadPoolParallelizer::ThreadPoolParallelizer(int parallelism) {
  int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int workers = std::max(1, std::min(parallelism, hw)) - 1;
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { Worker(); });
}

ThreadPoolParallelizer::~ThreadPoolParallelizer() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPoolParallelizer::RunChunks() {
  for (;;) {
    int start = next_.fetch_add(chunk_, std::memory_order_relaxed);
    if (start >= n_) return;
    int end = std::min(n_, start + chunk_);
    for (int i = start; i < end; ++i) (*fn_)(i);
  }
}

void ThreadPoolParallelizer::Worker() {
  uint64_t seen = 0;
  for (;;) {
    // Spin for a short while: the next loop of the same cycle usually follows within
    // microseconds.
    for (int i = 0; i < 4000 && epoch_.load(std::memory_order_acquire) == seen; ++i) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
    {
      std::unique_lock lock(mu_);
      if (epoch_.load() == seen && !stop_) {
        ++sleeping_;
        work_cv_.wait(lock, [&] { return stop_ || epoch_.load() != seen; });
        --sleeping_;
      }
      if (stop_) return;
      seen = epoch_.load();
      active_.fetch_add(1);
    }
    RunChunks();
    if (active_.fetch_sub(1) == 1) {
      // Under the lock, so a caller about to wait cannot miss it.
      std::lock_guard lock(mu_);
      done_cv_.notify_one();
    }
  }
}

void ThreadPoolParallelizer::Until(int n, const std::function<void(int)>& fn) {
  if (n <= 0) return;
  // Small loops are cheaper inline than waking workers.
  if (threads_.empty() || n < 8) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  {
    std::lock_guard lock(mu_);
    fn_ = &fn;
    n_ = n;
    chunk_ = std::max(1, static_cast<int>(std::sqrt(static_cast<double>(n))));
    next_.store(0, std::memory_order_relaxed);
    epoch_.fetch_add(1, std::memory_order_release);
    if (sleeping_ > 0) work_cv_.notify_all();
  }
  RunChunks();
  // A worker still on its last chunk usually finishes within microseconds: spin before sleeping.
  // Workers that woke late find no chunks left and finish at once.
  auto done = [&] { return active_.load() == 0 && next_.load() >= n_; };
  for (int i = 0; i < 2000 && !done(); ++i) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
  }
  std::unique_lock lock(mu_);
  done_cv_.wait(lock, done);
  fn_ = nullptr;
}

}  // namespace berth
