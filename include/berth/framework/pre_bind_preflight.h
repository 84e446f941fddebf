// PreBindPreFlight: an optional interface a PreBind plugin may implement to say, before the
// binding cycle waits at Permit or runs PreBind, whether its PreBind has work to do for a pod
// (kube-scheduler's PreBindPreFlight). When any PreBind plugin has work, or the pod will wait
// at Permit, the scheduler records the chosen node as the pod's status.nominatedNodeName first
// (the NominatedNodeNameForExpectation behaviour), so other components (an autoscaler, another
// scheduler) see where a pod that takes a while to bind is going.
//
// A plugin without this interface counts as one that has work. A new interface, not a change
// to PreBindPlugin: plugins built against an SDK without it keep working unchanged.
#pragma once

#include <string>

#include "berth/export.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/node_info.h"
#include "berth/framework/status.h"

namespace berth {

class BERTH_EXPORT PreBindPreFlight {
 public:
  virtual ~PreBindPreFlight() = default;
  // Called on a binding thread, before WaitOnPermit, for the node Reserve chose, with the
  // cycle's state. Returns Skip when PreBind has nothing to do for the pod, Success when it
  // has, Error (or Unschedulable, treated as an error) to fail the binding cycle.
  virtual Status PreBindPreFlightCheck(CycleState& state, const PodInfo& pod,
                                       const std::string& node) = 0;
};

}  // namespace berth
