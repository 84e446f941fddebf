// What a pod's owner says about its place on a node.
#pragma once

#include <algorithm>

#include "berth/api/objects.h"

namespace berth {

// Whether the pod comes back on the same node when it is evicted: a static pod's mirror (the
// kubelet runs it whatever the API says) or a DaemonSet's pod (recreated there). Such pods free
// no room by leaving, and do not make a node "in use" for a workload.
inline bool ReturnsToItsNode(const Pod& pod) {
  if (pod.metadata.annotations.count("kubernetes.io/config.mirror")) return true;
  return std::any_of(
      pod.metadata.owner_references.begin(), pod.metadata.owner_references.end(),
      [](const OwnerReference& ref) { return ref.controller && ref.kind == "DaemonSet"; });
}

}  // namespace berth
