// For Score plugins' tests: a plugin's scores of a run of nodes through NodeBatchScorer, to
// compare with its one-node-at-a-time Score.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "framework/node_batch_score.h"

namespace berth {

// The raw scores `plugin` gives `nodes` scored as one run; nullopt when the plugin does not
// score runs or the run fails.
template <class PluginType>
std::optional<std::vector<int64_t>> ScoreAsOneRun(const PluginType* plugin, const CycleState& state,
                                                  const PodInfo& pod,
                                                  std::span<const NodeInfo* const> nodes) {
  auto* batch = dynamic_cast<const NodeBatchScorer*>(plugin);
  if (!batch) return std::nullopt;
  std::vector<int64_t> scores(nodes.size(), -1);
  if (!batch->ScoreNodes(state, pod, nodes, scores.data()).IsSuccess()) return std::nullopt;
  return scores;
}

}  // namespace berth
