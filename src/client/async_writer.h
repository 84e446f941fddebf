// AsyncWriter: API writes the scheduler does not wait for (pod status patches), made in order
// on one background thread so the scheduling thread never blocks on the network. Failures are
// reported to the log callback; the queue is bounded (a writer that cannot keep up drops the
// newest write and says so, as client-go's event broadcaster does).
//
// Threads: Submit from any thread; tasks run on the writer's thread. The destructor runs the
// tasks already queued, then joins.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "berth/api/result.h"

namespace berth::client {

class AsyncWriter {
 public:
  using Task = std::function<VoidResult()>;
  explicit AsyncWriter(std::function<void(const std::string&)> log, size_t max_queued = 10000);
  ~AsyncWriter();
  // `what` names the write in the failure message ("patching pod default/x status").
  void Submit(std::string what, Task task);
  // Waits until every write submitted so far has run (tests).
  void Flush();

 private:
  void Run();
  std::function<void(const std::string&)> log_;
  const size_t max_queued_;
  std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::deque<std::pair<std::string, Task>> queue_;
  bool busy_ = false;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace berth::client
