// Why a pod's claims are not bound, as notes for `berth explain` (claim_notes.cc).
#pragma once

#include <string>
#include <vector>

#include "berth/framework/cluster.h"

namespace berth::volumebinding {

// One line per claim of the pod that does not exist or is not bound, saying why; nothing for a
// claim that only waits for the pod to be placed (a WaitForFirstConsumer class).
std::vector<std::string> ClaimNotes(const ClusterListers& cluster, const Pod& pod);

}  // namespace berth::volumebinding
