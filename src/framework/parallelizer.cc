#include "framework/parallelizer.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace berth {

namespace {
constexpr auto kSpin = std::chrono::microseconds(20);
}  // namespace

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

void ThreadPoolParallelizer::RunChunks(const std::function<void(int)>& fn, int n, int chunk) {
  for (;;) {
    int start = next_.fetch_add(chunk, std::memory_order_relaxed);
    if (start >= n) return;
    int end = std::min(n, start + chunk);
    for (int i = start; i < end; ++i) fn(i);
  }
}

void ThreadPoolParallelizer::Worker() {
  uint64_t seen = 0;
  const std::function<void(int)>* fn = nullptr;
  int n = 0, chunk = 1;
  for (;;) {
    // Spin for a short while: the next loop of the same cycle usually follows within
    // microseconds. The bound is time, not iterations: a pause costs 10 to 150 ns depending on
    // the CPU, and a worker spinning for half a millisecond after every loop takes a core from
    // whatever else runs (the API server of `berth up`, an extender) between pods.
    const auto spin_until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 0; epoch_.load(std::memory_order_acquire) == seen; ++i) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
      if ((i & 15) == 15 && std::chrono::steady_clock::now() >= spin_until) break;
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
      // A worker that wakes after the caller has finished the round (fn_ cleared) has nothing
      // to do; joining a round and reading its parameters happen under the lock the caller
      // holds when it decides the round is over, so neither can overlap the next round.
      if (fn_ == nullptr) continue;
      fn = fn_;
      n = n_;
      chunk = chunk_;
      active_.fetch_add(1);
    }
    RunChunks(*fn, n, chunk);
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
  const int chunk = std::max(1, static_cast<int>(std::sqrt(static_cast<double>(n))));
  {
    std::lock_guard lock(mu_);
    fn_ = &fn;
    n_ = n;
    chunk_ = chunk;
    next_.store(0, std::memory_order_relaxed);
    epoch_.fetch_add(1, std::memory_order_release);
    if (sleeping_ > 0) work_cv_.notify_all();
  }
  RunChunks(fn, n, chunk);
  // A worker still on its last chunk usually finishes within microseconds: spin before sleeping.
  // Workers that woke late find no chunks left and finish at once.
  auto done = [&] { return active_.load() == 0 && next_.load() >= n; };
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
