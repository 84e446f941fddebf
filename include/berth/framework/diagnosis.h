// FilterDiagnosis: an optional interface a Filter plugin may implement so that `berth explain`
// can ask it why it rejected a node in more detail than the reason of its Status — which part
// of the pod no part of the node satisfies, worked out with the plugin's own logic. Explain
// finds it with dynamic_cast on the plugin (a plugin without it is simply not asked) and shows
// the lines under the plugin's rejection as they are.
//
// A new interface, not a change to FilterPlugin: plugins built against an SDK without it keep
// working unchanged.
#pragma once

#include <string>
#include <vector>

#include "berth/api/objects.h"
#include "berth/export.h"
#include "berth/framework/status.h"

namespace berth {

class BERTH_EXPORT FilterDiagnosis {
 public:
  virtual ~FilterDiagnosis() = default;
  // Lines (one statement each, without a trailing newline) saying why this plugin's Filter
  // rejected `node` for `pod` with `rejection`; empty when it has nothing to add. Called
  // outside any scheduling cycle, on one thread, against the cluster the plugin's Handle reads.
  virtual std::vector<std::string> Diagnose(const Pod& pod, const Node& node,
                                            const Status& rejection) const = 0;
};

}  // namespace berth
