// AsyncWriter: API writes the scheduler does not wait for (pod status patches, preemption
// victims' deletions), made on background threads so the scheduling thread never blocks on the
// network. With one thread (the default) writes are made in the order submitted; with more,
// several at once in no particular order (independent writes: victims, as upstream deletes them
// in parallel). Failures are reported to the log callback; the queue is bounded (a writer that
// cannot keep up drops the newest write and says so, as client-go's event broadcaster does).
//
// Threads: Submit from any thread; tasks run on the writer's threads. The destructor runs the
// tasks already queued, then joins.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "berth/api/result.h"

namespace berth::client {

class AsyncWriter {
 public:
  using Task = std::function<VoidResult()>;
  explicit AsyncWriter(std::function<void(const std::string&)> log, size_t max_queued = 10000,
                       int threads = 1);
  ~AsyncWriter();
  // `what` names the write in the failure message ("patching pod default/x status"). False
  // when the write was dropped (the queue is full): `task` will not run.
  bool Submit(std::string what, Task task);
  // Waits until every write submitted so far has run (tests).
  void Flush();

 private:
  void Run();
  std::function<void(const std::string&)> log_;
  const size_t max_queued_;
  std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::deque<std::pair<std::string, Task>> queue_;
  int busy_ = 0;  // tasks running
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace berth::client
