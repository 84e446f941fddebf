// What would place a pod NodeResourcesFit rejected (berth explain, FilterRemedySearch): on a
// rejected node, what to free by evicting or shrinking the pods there (never more than they
// request; with the lower-priority pods preemption would evict), and when no node is large
// enough for the pod, a node like the largest with room for it; as notes, each resource the pod
// requests beyond every node's allocatable.
#pragma once

#include <functional>
#include <span>

#include "berth/api/resources.h"
#include "berth/framework/cluster.h"
#include "berth/framework/remedy.h"

namespace berth::noderesources {

// `requests_of`: a pod's requests as Filter counts them (pod-level resources, resizes).
RemedyProposal ProposeFitRemedies(const ClusterListers& cluster, const Pod& pod,
                                  std::span<const RejectedNode> rejected, size_t max_per_group,
                                  const std::function<Resource(const Pod&)>& requests_of);

}  // namespace berth::noderesources
