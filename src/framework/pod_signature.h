// Parts of pod signatures (berth/framework/pod_signer.h) that several plugins share: each
// compares what the plugins read from two pods, ignoring what does not change their verdicts
// or scores (the order of tolerations, host ports and volumes, volume names).
//
// Pure functions; any thread.
#pragma once

#include "berth/api/objects.h"

namespace berth::signature {

// The same tolerations, in any order (TaintToleration, NodeUnschedulable).
bool SameTolerations(const Pod& a, const Pod& b);
// The same host ports among all containers and init containers (NodePorts).
bool SameHostPorts(const Pod& a, const Pod& b);
// The same volume sources, in any order and whatever the volumes' names (the volume plugins).
// Sources the scheduler does not model (configMap, secret, emptyDir, ...) are left out.
bool SameVolumeSources(const Pod& a, const Pod& b);

}  // namespace berth::signature
