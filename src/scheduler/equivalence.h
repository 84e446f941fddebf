// Equivalent pods: when two pods give every plugin of a profile the same inputs, a node's
// Filter verdict and raw Score for one hold for the other until that node changes. The
// scheduler keeps those per-node results across cycles for runs of such pods (the replicas of
// one workload), so a cycle re-evaluates only the nodes the last binds changed.
//
// Pure functions; any thread.
#pragma once

#include <span>
#include <string_view>

#include "berth/api/objects.h"

namespace berth {

// True when `a` and `b` are alike in everything the in-tree Filter and Score plugins read from
// a pod: namespace, labels, owner references, the whole spec and the resources of containers
// resized in place, and the node features they need (NodeDeclaredFeatures). Names, UIDs,
// annotations and the rest of the status may differ.
bool SameSchedulingInputs(const Pod& a, const Pod& b);

// True when the pod uses a volume source that the volume plugins look up in cluster state
// (claims, ephemeral claims, CSI and the in-tree disks): their verdicts then depend on more
// than the node.
bool UsesModeledVolumes(const Pod& pod);

// In-tree plugins whose Filter verdict and raw Score on a node depend only on the pod and that
// node (and, for ImageLocality, on how many nodes hold each image) for a pod without modeled
// volumes; PodTopologySpread and InterPodAffinity only where they skip (see
// SpreadingPluginNames).
std::span<const std::string_view> NodeLocalPluginNames();
// The plugins of NodeLocalPluginNames that count pods across nodes when they run: where they
// run, their Filter and Score run afresh every cycle (their Filter must come after every other
// Filter plugin that runs).
std::span<const std::string_view> SpreadingPluginNames();

}  // namespace berth
