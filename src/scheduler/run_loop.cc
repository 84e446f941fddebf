// The scheduler's own loops: Run for the daemon, RunUntilIdle for simulation. Nobody else pops
// its queue, flushes its backoff or jumps its clock.
#include <condition_variable>
#include <mutex>
#include <thread>

#include "scheduler/scheduler.h"

namespace berth {

void Scheduler::Run(std::stop_token stop, const RunOptions& options) {
  // A stop closes the queue, which ends the blocking pop below.
  std::stop_callback close(stop, [this] { queue_->Close(); });
  std::jthread timer([this, options](std::stop_token timer_stop) {
    std::mutex mu;
    std::condition_variable_any wake;
    auto last_leftover_check = std::chrono::steady_clock::now();
    std::unique_lock lock(mu);
    for (;;) {
      wake.wait_for(lock, timer_stop, options.backoff_flush, [] { return false; });
      if (timer_stop.stop_requested()) return;
      queue_->FlushBackoffQCompleted();
      const auto now = std::chrono::steady_clock::now();
      if (now - last_leftover_check > options.unschedulable_flush) {
        last_leftover_check = now;
        queue_->FlushUnschedulableLeftover(options.max_in_unschedulable);
      }
    }
  });
  // Blocks for the next pod; ScheduleOne also returns when woken for a reload, which it applies
  // before its next wait.
  while (!stop.stop_requested()) {
    if (!ScheduleOne(true) && queue_->closed()) break;
  }
}  // the timer is asked to stop and joined here

void Scheduler::RunUntilIdle(FakeClock& clock, const IdleRunHooks& hooks) {
  for (int round = 0; round < hooks.max_rounds; ++round) {
    for (;;) {
      if (hooks.before_cycle) hooks.before_cycle();
      if (!ScheduleOne(false)) break;
      if (hooks.after_cycle && !hooks.after_cycle()) return;
      if (HasWaitingBindings()) CompleteWaitingBindings();
    }
    // Pods wait at Permit: a second passes, and their waits resolve or time out.
    if (HasWaitingBindings()) {
      clock.Advance(std::chrono::seconds(1));
      CompleteWaitingBindings();
      continue;
    }
    auto next = queue_->NextBackoffExpiry();
    if (!next) return;
    if (*next > clock.Now()) clock.Set(*next);
    queue_->FlushBackoffQCompleted();
  }
}

void Scheduler::GiveUp(const Pod& pod) { queue_->Delete(pod); }

void Scheduler::WarmUp() {
  cache_.UpdateSnapshot(&snapshot_, reuse_.changes());
  if (reuse_.enabled()) reuse_.TrackNodeChanges(snapshot_);
}

}  // namespace berth
