// What the scheduling queue's tests plug into it in place of a framework's plugins.
#pragma once

#include "queue/scheduling_queue.h"

namespace berth {

// Priority first, then the queue timestamp (PrioritySort's order).
inline bool ByPriority(const QueuedPodInfo& a, const QueuedPodInfo& b) {
  if (a.pod().Priority() != b.pod().Priority()) return a.pod().Priority() > b.pod().Priority();
  return a.timestamp < b.timestamp;
}

// A pod with scheduling gates is held back, stamped as kube-scheduler's framework does.
inline Status GatesPreEnqueue(const Pod& pod) {
  if (pod.spec.scheduling_gates.empty()) return Status::Success();
  Status s = Status::Unresolvable("waiting for scheduling gates");
  s.WithPlugin("SchedulingGates");
  return s;
}

}  // namespace berth
