// Private types of the Scheduler shared by its .cc files.
#pragma once

#include <memory>
#include <string>

#include "scheduler/scheduler.h"

namespace berth {

struct Scheduler::ScheduleResult {
  std::string host;
};

// Everything the binding cycle needs, moved from the scheduling cycle.
struct Scheduler::BindingTask {
  Framework* fw = nullptr;
  CycleState state;
  QueuedPodInfo qpi;
  PodInfoPtr assumed;
  std::string host;
  SchedulingAttempt attempt;
};

}  // namespace berth
