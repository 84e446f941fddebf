// The FailedScheduling message, with kube-scheduler's exact wording and ordering:
//   "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s).
//    preemption: ..."
#pragma once

#include <map>
#include <string>
#include <vector>

#include "berth/framework/plugin.h"

namespace berth {

// `pre_filter` is the PreFilter rejection, if any (then the node histogram is omitted);
// `statuses` holds every rejected node; `post_filter` the PostFilter plugins' messages.
std::string FitErrorMessage(int num_all_nodes, const Status* pre_filter,
                            const NodeStatusMap& statuses,
                            const std::vector<std::string>& post_filter);

// How many nodes gave each reason.
std::map<std::string, int> ReasonCounts(const NodeStatusMap& statuses);

// "<count> <reason>" entries sorted as strings, joined with ", " (the histogram alone).
std::string ReasonHistogram(const NodeStatusMap& statuses);

}  // namespace berth
