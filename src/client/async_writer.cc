#include "client/async_writer.h"

namespace berth::client {

AsyncWriter::AsyncWriter(std::function<void(const std::string&)> log, size_t max_queued)
    : log_(std::move(log)), max_queued_(max_queued), thread_([this] { Run(); }) {}

AsyncWriter::~AsyncWriter() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void AsyncWriter::Submit(std::string what, Task task) {
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= max_queued_) {
      if (log_) log_(what + ": dropped, " + std::to_string(max_queued_) + " writes are waiting");
      return;
    }
    queue_.emplace_back(std::move(what), std::move(task));
  }
  cv_.notify_one();
}

void AsyncWriter::Flush() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

void AsyncWriter::Run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, drained
    auto [what, task] = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    VoidResult r = task();
    if (!r.ok() && log_) log_(what + ": " + r.error().message);
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_cv_.notify_all();
  }
}

}  // namespace berth::client
