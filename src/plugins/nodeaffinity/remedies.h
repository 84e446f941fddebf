// What would place a pod NodeAffinity rejected (berth explain, FilterRemedySearch): the labels
// a rejected node lacks for the pod's nodeSelector, its required node affinity (of the terms,
// the one needing the fewest changes) and the profile's addedAffinity. Never a label that
// describes the machine: a pod that names its node by hostname wants that node, not another
// relabelled.
#pragma once

#include <optional>
#include <span>

#include "berth/framework/remedy.h"

namespace berth::nodeaffinity {

RemedyProposal ProposeNodeLabels(const Pod& pod, const NodeSelector* added_required,
                                 std::span<const RejectedNode> rejected);

}  // namespace berth::nodeaffinity
