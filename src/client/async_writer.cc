#include "client/async_writer.h"

#include <algorithm>

namespace berth::client {

AsyncWriter::AsyncWriter(std::function<void(const std::string&)> log, size_t max_queued,
                         int threads)
    : log_(std::move(log)), max_queued_(max_queued) {
  for (int i = 0; i < std::max(1, threads); ++i) threads_.emplace_back([this] { Run(); });
}

AsyncWriter::~AsyncWriter() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

bool AsyncWriter::Submit(std::string what, Task task) {
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= max_queued_) {
      if (log_) log_(what + ": dropped, " + std::to_string(max_queued_) + " writes are waiting");
      return false;
    }
    queue_.emplace_back(std::move(what), std::move(task));
  }
  cv_.notify_one();
  return true;
}

void AsyncWriter::Flush() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return queue_.empty() && busy_ == 0; });
}

void AsyncWriter::Run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, drained
    auto [what, task] = std::move(queue_.front());
    queue_.pop_front();
    ++busy_;
    lock.unlock();
    VoidResult r = task();
    if (!r.ok() && log_) log_(what + ": " + r.error().message);
    lock.lock();
    --busy_;
    if (queue_.empty() && busy_ == 0) idle_cv_.notify_all();
  }
}

}  // namespace berth::client
