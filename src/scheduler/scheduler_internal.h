// Private types of the Scheduler shared by its .cc files.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/scheduler.h"

namespace berth {

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
