// Private types of the Scheduler shared by its .cc files.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/mt19937_64.h"
#include "scheduler/scheduler.h"

namespace berth {

// Whether Random::Intn(count) would return 0, drawing from `random` (the same sequence)
// exactly as it does (libstdc++'s uniform_int_distribution over a 64-bit engine: Lemire's
// multiply-and-shift with its rejection step), so the generator ends in the same state. Inline for
// SelectHost: when every node is scored, most nodes tie and it runs once per node.
inline bool DrawsZero(Mt19937_64& random, uint64_t count) {
  unsigned __int128 product = static_cast<unsigned __int128>(random()) * count;
  auto low = static_cast<uint64_t>(product);
  if (low < count) {
    const uint64_t threshold = -count % count;
    while (low < threshold) {
      product = static_cast<unsigned __int128>(random()) * count;
      low = static_cast<uint64_t>(product);
    }
  }
  return (product >> 64) == 0;
}

struct Scheduler::ScheduleResult {
  std::string host;
};

// One configuration at run time: what a reload replaces as a whole. Members are destroyed in
// reverse order: the requeue policy and the frameworks before the extenders they point at.
struct Scheduler::Generation {
  uint64_t number = 0;  // 0: the configuration the scheduler was created with
  // Owned for a reload; the first generation's belongs to the caller (SchedulerOptions).
  std::shared_ptr<const config::SchedulerConfiguration> owned_config;
  const config::SchedulerConfiguration* config = nullptr;
  std::vector<std::shared_ptr<Extender>> owned_extenders;
  std::vector<Extender*> extenders;  // owned_extenders, as the frameworks' handles see them
  std::vector<std::unique_ptr<Framework>> profiles;
  std::map<std::string, Framework*, std::less<>> by_name;
  std::unique_ptr<RequeuePolicy> requeue;  // the queue's decider, built from profiles

  Framework* ProfileFor(const Pod& pod) const {
    auto it = by_name.find(pod.spec.scheduler_name);
    return it == by_name.end() ? nullptr : it->second;
  }
};

// Everything the binding cycle needs, moved from the scheduling cycle.
struct Scheduler::BindingTask {
  Framework* fw = nullptr;
  // Keeps fw and the extenders the binding cycle uses alive across a reload.
  std::shared_ptr<const Generation> generation;
  CycleState state;
  QueuedPodInfo qpi;
  PodInfoPtr assumed;
  std::string host;
  SchedulingAttempt attempt;
  // A PreBindPreFlight that failed: the binding cycle fails with it (after any Permit wait).
  std::optional<Status> preflight_failure;
};

}  // namespace berth
