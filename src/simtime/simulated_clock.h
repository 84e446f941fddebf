// SimulatedClock: one clock for a whole cluster in one process (`berth scenario run`), moved
// only by its owner, and only when the cluster is quiescent.
//
// Components that wait on time (work queues, the node lifecycle controller's ticker) register
// as Participants when the Clock they were given is a SimulatedClock: they say whether they
// are idle and when their next timer is due, and are woken when the clock jumps. Watch events
// in transit between the API server and the informers are counted (BeginTransit when the
// server queues one on a stream, EndTransit once an informer has handled it) through the
// process's active clock (SetActive), since the informers are not handed a clock.
//
// Quiescence is read with an activity epoch: every Participant state change and every transit
// change bumps it; a probe that saw every participant idle and nothing in transit, with the
// same epoch before and after, saw a moment where the whole cluster was idle.
//
// Threads: every method is thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "berth/framework/clock.h"

namespace berth::simtime {

class SimulatedClock;

// A component with work or timers, probed by the simulated clock's owner.
class Participant {
 public:
  virtual ~Participant() = default;
  // No work ready or in progress (timers not yet due do not count).
  virtual bool Idle() const = 0;
  // The earliest timer, if any.
  virtual std::optional<TimePoint> NextDue() const = 0;
  // The clock moved: re-check timers now (notify the waiting threads).
  virtual void Wake() = 0;
  // For diagnostics (what kept the cluster busy).
  virtual std::string Describe() const = 0;
};

class SimulatedClock final : public Clock {
 public:
  explicit SimulatedClock(TimePoint start) : now_(start.time_since_epoch().count()) {}
  ~SimulatedClock() override;

  TimePoint Now() const override { return TimePoint(Duration(now_.load())); }
  // Moves the clock to `t` (never back) and wakes every participant.
  void AdvanceTo(TimePoint t);

  void Register(Participant* p);
  void Unregister(Participant* p);

  // Records a change of some participant's state (work added, finished, a timer set).
  void NoteActivity() { epoch_.fetch_add(1, std::memory_order_acq_rel); }
  uint64_t epoch() const { return epoch_.load(std::memory_order_acquire); }

  // Watch events queued on a stream and not yet handled by the informer reading it.
  void BeginTransit();
  void EndTransit();
  int64_t in_transit() const { return transit_.load(std::memory_order_acquire); }
  // Forgets events counted as in transit that can no longer arrive (a stream cut with events
  // queued on it: its informer resumes from the last one it handled).
  void ResetTransit();

  struct Probe {
    bool quiescent = false;
    std::optional<TimePoint> next_due;  // the earliest timer of any participant
    std::string busy;                   // what was not idle (diagnostics)
  };
  // Whether everything was idle at one moment (see above), and the next timer.
  Probe Poll() const;

  // Blocks up to `timeout` (real time) for the epoch to move past `seen`.
  void WaitForActivity(uint64_t seen, std::chrono::microseconds timeout) const;

  // The clock whose transits the API server and the informers count; null: none (the
  // default: nothing is counted outside scenarios). One scenario per process at a time.
  static void SetActive(SimulatedClock* clock);
  static SimulatedClock* Active();

 private:
  std::atomic<int64_t> now_;
  std::atomic<uint64_t> epoch_{0};
  std::atomic<int64_t> transit_{0};
  mutable std::mutex mu_;
  std::vector<Participant*> participants_;
};

// The SimulatedClock behind `clock`, if it is one.
SimulatedClock* AsSimulated(const Clock* clock);

// Counts one watch event queued / handled against the active clock (no-ops without one).
void NoteWatchEventQueued();
void NoteWatchEventHandled();

// Registers a participant for its lifetime (when the clock is simulated).
class ParticipantRegistration {
 public:
  ParticipantRegistration() = default;
  ParticipantRegistration(const Clock* clock, Participant* p);
  ~ParticipantRegistration();
  ParticipantRegistration(const ParticipantRegistration&) = delete;
  ParticipantRegistration& operator=(const ParticipantRegistration&) = delete;
  SimulatedClock* clock() const { return clock_; }

 private:
  SimulatedClock* clock_ = nullptr;
  Participant* participant_ = nullptr;
};

}  // namespace berth::simtime
