// What would place a pod InterPodAffinity rejected (berth explain, FilterRemedySearch): for
// required anti-affinity (the pod's or a bound pod's), moving the bound pods that keep them
// apart; for required pod affinity, a matching pod in the rejected node's topology domain (a
// bound pod relabelled, or a new pod there), the node relabelled into a domain where matching
// pods run, or, when no pod matches anywhere, the pod labelled to match its own terms.
#pragma once

#include <span>

#include "berth/framework/cluster.h"
#include "berth/framework/remedy.h"

namespace berth::interpodaffinity {

// Which rejection a node got is read from the status code Filter returns: pod affinity
// UnschedulableAndUnresolvable, anti-affinity (the pod's or bound pods') Unschedulable.
RemedyProposal ProposeRemedies(const ClusterListers& cluster, const Pod& pod,
                               std::span<const RejectedNode> rejected, size_t max_per_group);

}  // namespace berth::interpodaffinity
