// WorkQueue: the rate-limited work queue of a controller, keyed by object ("namespace/name"),
// with client-go's semantics (k8s.io/client-go/util/workqueue):
//   - a key added while it waits is not queued twice (dirty set);
//   - a key being processed (between Get and Done) is not handed to a second worker: added
//     meanwhile, it is queued again when Done is called;
//   - AddAfter holds a key until its time (the earliest of several requests wins);
//   - AddRateLimited waits the larger of a per-key exponential backoff (5 ms doubling up to
//     1000 s, reset by Forget) and an overall token bucket (10 a second, burst 100), as
//     DefaultControllerRateLimiter.
//
// Time comes from the injected Clock. Get waits in real time for the next delayed key; under a
// FakeClock, tests advance the clock and call Tick(), then TryGet(). Under a SimulatedClock
// (simtime/simulated_clock.h) the queue registers as a participant: idle when nothing is
// ready or being processed, due at its earliest delayed key, woken when the clock jumps.
//
// Threads: every method is thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "berth/framework/clock.h"
#include "simtime/simulated_clock.h"

namespace berth::controllers {

struct RateLimiterOptions {
  Duration base_delay = std::chrono::milliseconds(5);
  Duration max_delay = std::chrono::seconds(1000);
  double qps = 10;  // the overall bucket
  int burst = 100;
};

// The delay AddRateLimited applies: the larger of the two limiters (client-go's MaxOf).
class ControllerRateLimiter {
 public:
  ControllerRateLimiter(const Clock* clock, RateLimiterOptions options = {});
  // The delay for another attempt at `key` (counts a failure of it).
  Duration When(const std::string& key);
  void Forget(const std::string& key);
  int NumRequeues(const std::string& key) const;

 private:
  const Clock* clock_;
  RateLimiterOptions options_;
  std::map<std::string, int> failures_;
  // Token bucket as golang.org/x/time/rate's Reserve: tokens may go negative, the delay is
  // how long until the reservation's token exists.
  double tokens_;
  TimePoint last_;
};

class WorkQueue {
 public:
  explicit WorkQueue(const Clock* clock, RateLimiterOptions options = {});
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  void Add(const std::string& key);
  void AddAfter(const std::string& key, Duration delay);
  void AddRateLimited(const std::string& key);
  // Stops the backoff of `key` (its sync succeeded).
  void Forget(const std::string& key);
  int NumRequeues(const std::string& key) const;

  // The next key to process, waiting for one; nullopt once ShutDown was called.
  std::optional<std::string> Get();
  // The next key if one is ready now (delayed keys whose time has come included).
  std::optional<std::string> TryGet();
  // Marks `key` processed; queues it again if it was added meanwhile.
  void Done(const std::string& key);

  // Moves delayed keys whose time has come into the queue and wakes waiters (for a FakeClock).
  void Tick();
  void ShutDown();
  bool ShuttingDown() const;
  // Keys ready to be handed out (not delayed, not being processed).
  size_t Len() const;
  // Keys waiting for their time.
  size_t Delayed() const;

 private:
  void AddLocked(const std::string& key);
  void PromoteDueLocked();
  void NoteActivity() {
    if (sim_) sim_->NoteActivity();
  }
  class SimProbe;

  const Clock* clock_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  ControllerRateLimiter limiter_;
  std::deque<std::string> queue_;
  std::set<std::string> dirty_, processing_;
  std::map<std::string, TimePoint> waiting_;  // key -> when it is due
  bool shutting_down_ = false;
  simtime::SimulatedClock* sim_ = nullptr;
  std::unique_ptr<SimProbe> probe_;
  std::unique_ptr<simtime::ParticipantRegistration> registration_;
};

}  // namespace berth::controllers
