// The zone a node belongs to for the scheduler's node order (kube-scheduler's GetZoneKey).
#pragma once

#include <string>

#include "berth/api/objects.h"

namespace berth {

// Region and zone from the node's labels (the beta failure-domain labels first, then the
// topology.kubernetes.io ones); "" when it has neither. Nodes with equal keys share a zone.
std::string NodeZoneKey(const Node& node);

}  // namespace berth
