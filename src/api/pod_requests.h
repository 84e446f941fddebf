// Pod requests as kube-scheduler computes them with its PodLevelResources gate off: the
// containers' aggregate and overhead, spec.resources ignored. Berth-internal; the SDK's
// ComputePodRequests (berth/api/resources.h) is the gate-on computation.
#pragma once

#include "berth/api/resources.h"

namespace berth {

PodRequests ComputePodRequestsIgnoringPodLevel(const Pod& pod);
// Whether spec.resources requests cpu, memory or hugepages (what the gate changes).
bool HasPodLevelRequests(const Pod& pod);

}  // namespace berth
