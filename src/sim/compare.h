// `berth compare`: the same cluster through several scheduler configurations, pod by pod.
//
// Each configuration schedules the cluster with the exact simulator (sim/simulator.h), once
// without details (that run is timed), and once more for the pods whose outcome differs with
// per-node details switched on: a differing pod's explanation is read from each
// configuration's own score table and filter statuses of that pod's last attempt (the
// simulator's decision record), never computed again outside the plugins. The second run
// makes the same decisions (same input, same seed) and stops after the last attempt it needs.
//
// Cluster-level outcomes come from the state each run leaves: pods pending, preemptions,
// nodes used, per-node and per-zone spread, and how many more pods of one shape still fit
// (sim/capacity.h over that state, under that configuration). docs/compare.md documents the
// output.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "api/codec.h"
#include "berth/api/result.h"
#include "config/types.h"
#include "sim/simulator.h"

namespace berth::sim {

struct CompareConfig {
  std::string name;  // how reports name it: the file given with --config
  const config::SchedulerConfiguration* config = nullptr;
};

// How one configuration saw one node when it placed a differing pod.
struct NodeView {
  enum class State { kScored, kOnlyFeasible, kRejected, kNotEvaluated };
  std::string node;
  State state = State::kNotEvaluated;
  int64_t total = 0;  // kScored: Σ weight × score + extenders
  // kScored: each Score plugin that ran, its normalized score times its weight, in the
  // profile's order; then each extender's weighted contribution as "extender/NAME".
  std::vector<std::pair<std::string, int64_t>> weighted;
  std::string reason;  // kRejected: "Plugin: reasons"
};
std::string_view StateName(NodeView::State s);

// One configuration's outcome for a differing pod.
struct ConfigDecision {
  std::string result;  // Scheduled, Unschedulable, ...
  std::string node;    // where it was bound ("" when not)
  std::vector<std::string> victims;
  bool explained = false;       // the views below were recorded
  std::vector<NodeView> views;  // one per PodDiff::candidates, in that order
  // The plugins (and extenders) that favoured `node` over the best other candidate this
  // configuration scored, largest margin first (weighted points).
  std::vector<std::pair<std::string, int64_t>> tipped_by;
};

struct PodDiff {
  std::string pod;
  // Every node some configuration chose for the pod, in configuration order.
  std::vector<std::string> candidates;
  std::vector<ConfigDecision> per_config;  // index-aligned with the configurations
};

struct Spread {
  int max = 0, min = 0;
  std::string max_at, min_at;  // a node (or zone) with that many, the first in name order
};

// One point of a replay's time series (a cluster file has none): the cluster as the
// simulation held it after the scheduler went idle following a recorded event.
struct TimeSample {
  int64_t at_ms = 0;     // since the first recorded event
  int pending = 0;       // pods waiting for this configuration to place them
  int nodes_in_use = 0;  // nodes holding at least one pod (HoldsNode)
  int preemptions = 0;   // victims evicted so far (cumulative)
};

// Whether a bound pod keeps its node in use: every pod but a DaemonSet's and a static pod's
// mirror, which a node runs whatever the scheduler decides (so counting them would call every
// node in use under every configuration).
bool HoldsNode(const Pod& pod);

struct ConfigMetrics {
  std::string name;
  int pods = 0;  // the pods this run scheduled or tried to (pending in the input)
  int scheduled = 0;
  int pending = 0;
  std::vector<std::string> pending_pods;  // names, in result order
  int preemptors = 0;                     // pods that evicted others to fit
  int victims = 0;                        // pods evicted
  int nodes = 0;
  int nodes_used = 0;                   // nodes holding a pod (HoldsNode) when the run ended
  std::map<std::string, int> per_node;  // bound pods per node (every node, 0 included)
  std::map<std::string, int> per_zone;  // topology.kubernetes.io/zone; absent when no node has one
  Spread node_spread, zone_spread;
  std::optional<int> shape_fit;   // more pods of the shape that fit (unset: not computed)
  bool shape_fit_capped = false;  // stopped at the --shape-max bound
  double seconds = 0;             // wall time of the timed run
  double cpu_seconds = 0;         // CPU time of the timed run (this process, all threads)
  // Replays: pending, nodes in use and preemptions over time, and how long pods waited on
  // the recorded clock.
  std::vector<TimeSample> over_time;
  double mean_pending_seconds = 0, max_pending_seconds = 0;
};

struct CompareResult {
  std::string shape;         // "cpu=500m,memory=1Gi"
  std::string shape_source;  // "--shape" or "median pending pod" ...
  int pods = 0;              // pods compared
  int differing = 0;         // pods placed differently by at least two configurations
  std::vector<ConfigMetrics> configs;
  std::vector<PodDiff> diffs;  // every differing pod, in the first configuration's order
  bool replay = false;
  int64_t events = 0;  // replay: recorded events applied
};

struct CompareOptions {
  uint64_t seed = 1;
  // Pods whose difference is explained with per-node scores (the first so many differing
  // pods, in queue order); the rest are listed with their nodes only.
  int max_explained = 200;
  // The pod shape for the fragmentation figure ("cpu=500m,memory=1Gi"); empty: the median
  // requests of the pods in the input that were pending.
  std::string shape;
  int shape_max = 10000;  // bound on the fit count
  bool compute_shape_fit = true;
};

// Runs `objects` (a cluster file's objects) through every configuration.
Result<CompareResult> Compare(const std::vector<CompareConfig>& configs, const Registry& registry,
                              const std::vector<Object>& objects, const CompareOptions& options);

// Runs `recording` (sim/replay.h) through every configuration.
Result<CompareResult> CompareReplay(const std::vector<CompareConfig>& configs,
                                    const Registry& registry, const std::string& recording,
                                    const CompareOptions& options);

// --- the parts, exposed for tests and for replays

// Records, in a second run of one configuration, how its attempts saw the candidate nodes of
// the first `max_explained` differing pods; says when the last of those pods has had its last
// attempt (`attempts`: each pod's attempts in the timed run).
class DetailCollector final : public AttemptObserver {
 public:
  DetailCollector(std::vector<PodDiff>* diffs, size_t config,
                  const std::unordered_map<std::string, int>& attempts, int max_explained);
  void OnAttempt(const SchedulingAttempt& a) override;
  bool More() const { return done_ < wants_.size(); }

 private:
  struct Want {
    size_t diff = 0;
    int attempts = 0;
    bool done = false;
  };
  std::vector<PodDiff>* diffs_;
  size_t config_;
  std::unordered_map<std::string, Want> wants_;
  size_t done_ = 0;
};

// Pods scheduled and pending, preemptions, from a run's results.
ConfigMetrics OutcomeMetrics(const SimulationResult& run);
// The shape for the fragmentation figure: --shape, else the median pending pod of `objects`,
// else the median running one; nullopt without pods.
Result<std::optional<Pod>> ResolveShape(const std::vector<Object>& objects,
                                        const CompareOptions& options, std::string* source);
// Sets m->shape_fit: how many pods of `shape` fit in `objects` under `config`.
VoidResult FillShapeFit(const CompareConfig& config, const Registry& registry,
                        const std::vector<Object>& objects, const Pod& shape,
                        const CompareOptions& options, ConfigMetrics* m);

// Pods whose outcome (result or node) differs between any two of `runs` (same pods in each),
// in the order of the first run; candidates filled, views empty.
std::vector<PodDiff> FindDifferences(const std::vector<const SimulationResult*>& runs);

// How `attempt` saw `node` (read from its score table and filter statuses).
NodeView ViewOf(const SchedulingAttempt& attempt, const std::string& node);

// The plugins that favoured `chosen` over the best other scored view, largest margin first.
std::vector<std::pair<std::string, int64_t>> TippedBy(const std::vector<NodeView>& views,
                                                      const std::string& chosen);

// The spread of `counts`: largest and smallest value and where (first by name on ties).
Spread SpreadOf(const std::map<std::string, int>& counts);

// Parses "cpu=500m,memory=1Gi[,name=value...]" into a template pod requesting that.
Result<Pod> ShapePod(std::string_view shape);
// The template of the median pod of `pods` (median cpu and median memory requests).
std::optional<Pod> MedianShape(const std::vector<std::shared_ptr<const Pod>>& pods);
std::string ShapeText(const Pod& pod);

// Fills zone and node spread from bound pods per node and the nodes' zones, and nodes used
// from the pods per node that hold it (HoldsNode).
void FillPlacementMetrics(const std::vector<std::pair<std::string, std::string>>& node_zones,
                          const std::map<std::string, int>& pods_per_node,
                          const std::map<std::string, int>& holders_per_node, ConfigMetrics* m);

// Output (docs/compare.md). The HTML page is the web view's drawing of ToJson's document
// (ui::CompareReportHtml).
nlohmann::json ToJson(const CompareResult& r);
std::string ToText(const CompareResult& r);

}  // namespace berth::sim
