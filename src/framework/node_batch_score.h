// NodeBatchScorer: an optional interface of in-tree Score plugins. Scoring one node per call
// costs a virtual call, a CycleState lookup and the plugin's set-up for every node and plugin;
// scoring a run of nodes per call pays them once per run, and the framework runs every plugin
// over one short run before the next, so the run's nodes are still in cache for the later
// plugins.
#pragma once

#include <cstdint>
#include <span>

#include "berth/framework/cycle_state.h"
#include "berth/framework/node_info.h"
#include "berth/framework/status.h"

namespace berth {

class NodeBatchScorer {
 public:
  virtual ~NodeBatchScorer() = default;
  // out[i] = the raw score Score gives nodes[i], for every i. A non-Success status is the one
  // Score would return for the first node it fails on (out is then undefined).
  virtual Status ScoreNodes(const CycleState& state, const PodInfo& pod,
                            std::span<const NodeInfo* const> nodes, int64_t* out) const = 0;
};

}  // namespace berth
