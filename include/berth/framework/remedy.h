// FilterRemedies: an optional interface a Filter plugin may implement so that `berth explain`
// can ask it what would make a node it rejected pass — a change to the pod or to the node,
// worked out with the plugin's own rules. Explain finds it with dynamic_cast on the plugin
// (a plugin without it is simply not asked), applies each change to a copy of the cluster and
// shows it only when scheduling the pod again places it.
//
// A new interface, not a change to FilterPlugin: plugins built against an SDK without it keep
// working unchanged.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "berth/api/objects.h"
#include "berth/export.h"
#include "berth/framework/status.h"

namespace berth {

struct BERTH_EXPORT FilterRemedy {
  // Short and stable, for grouping and for JSON ("toleration", "uncordon", ...).
  std::string kind;
  // One line, imperative ("add a toleration for the taint gpu=true:NoSchedule").
  std::string description;
  // The pod after the change, or null when the pod stays as it is.
  std::shared_ptr<const Pod> pod;
  // The node after the change (same name), or null when the node stays as it is.
  std::shared_ptr<const Node> node;
  // When the pod changes: the YAML to merge into it, for people.
  std::string pod_change;
  // How much changes, for ranking remedies that open as many nodes (0: least).
  int64_t cost = 0;
};

class BERTH_EXPORT FilterRemedies {
 public:
  virtual ~FilterRemedies() = default;
  // Changes after which this plugin's Filter would pass `node` for `pod`, given the rejection
  // it returned there; empty when it knows none. Called outside any scheduling cycle, on one
  // thread, with objects not in the cluster's caches.
  virtual std::vector<FilterRemedy> Remedies(const Pod& pod, const Node& node,
                                             const Status& rejection) const = 0;
};

}  // namespace berth
