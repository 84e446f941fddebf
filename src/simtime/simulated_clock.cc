#include "simtime/simulated_clock.h"

#include <algorithm>
#include <thread>

namespace berth::simtime {
namespace {

std::atomic<SimulatedClock*> active_clock{nullptr};

}  // namespace

SimulatedClock::~SimulatedClock() {
  SimulatedClock* self = this;
  active_clock.compare_exchange_strong(self, nullptr);
}

void SimulatedClock::AdvanceTo(TimePoint t) {
  const int64_t target = t.time_since_epoch().count();
  if (target > now_.load()) now_.store(target);
  NoteActivity();
  std::vector<Participant*> ps;
  {
    std::lock_guard lock(mu_);
    ps = participants_;
  }
  for (Participant* p : ps) p->Wake();
}

void SimulatedClock::Register(Participant* p) {
  std::lock_guard lock(mu_);
  participants_.push_back(p);
  NoteActivity();
}

void SimulatedClock::Unregister(Participant* p) {
  std::lock_guard lock(mu_);
  participants_.erase(std::remove(participants_.begin(), participants_.end(), p),
                      participants_.end());
  NoteActivity();
}

void SimulatedClock::BeginTransit() {
  transit_.fetch_add(1, std::memory_order_acq_rel);
  NoteActivity();
}

void SimulatedClock::EndTransit() {
  transit_.fetch_sub(1, std::memory_order_acq_rel);
  NoteActivity();
}

void SimulatedClock::ResetTransit() {
  transit_.store(0);
  NoteActivity();
}

SimulatedClock::Probe SimulatedClock::Poll() const {
  Probe probe;
  const uint64_t before = epoch();
  bool idle = in_transit() <= 0;
  if (!idle) probe.busy = "watch events in transit";
  {
    std::lock_guard lock(mu_);
    for (const Participant* p : participants_) {
      if (!p->Idle()) {
        if (idle) probe.busy = p->Describe();
        idle = false;
      }
      if (auto due = p->NextDue(); due && (!probe.next_due || *due < *probe.next_due)) {
        probe.next_due = due;
      }
    }
  }
  probe.quiescent = idle && in_transit() <= 0 && epoch() == before;
  return probe;
}

void SimulatedClock::WaitForActivity(uint64_t seen, std::chrono::microseconds timeout) const {
  // Short spins, then sleeps: the cluster's threads hand work over within microseconds.
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (int spins = 0; epoch() == seen && std::chrono::steady_clock::now() < until; ++spins) {
    if (spins < 50) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
}

void SimulatedClock::SetActive(SimulatedClock* clock) { active_clock.store(clock); }

SimulatedClock* SimulatedClock::Active() { return active_clock.load(std::memory_order_acquire); }

SimulatedClock* AsSimulated(const Clock* clock) {
  return const_cast<SimulatedClock*>(dynamic_cast<const SimulatedClock*>(clock));
}

void NoteWatchEventQueued() {
  if (SimulatedClock* c = SimulatedClock::Active()) c->BeginTransit();
}

void NoteWatchEventHandled() {
  if (SimulatedClock* c = SimulatedClock::Active()) c->EndTransit();
}

ParticipantRegistration::ParticipantRegistration(const Clock* clock, Participant* p)
    : clock_(AsSimulated(clock)), participant_(p) {
  if (clock_) clock_->Register(p);
}

ParticipantRegistration::~ParticipantRegistration() {
  if (clock_) clock_->Unregister(participant_);
}

}  // namespace berth::simtime
