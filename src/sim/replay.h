// Replaying a recording (sim/recording.h) through one configuration: the recorded cluster's
// timeline, with the scheduling decisions made by this configuration instead of the recorded
// scheduler's. docs/compare.md describes the semantics:
//
//   * events are applied in file order; after each one the scheduler runs until idle on a
//     simulated clock set to the event's recorded time (backoffs move it on from there);
//   * a pod added without spec.nodeName is pending and scheduled here; the recorded bindings
//     of such pods are ignored, its other changes (labels, status) applied to the pod where
//     this configuration put it; a pod added with spec.nodeName (already running when the
//     recording started, static pods) or handled by no profile here keeps its recorded node;
//   * a pod that recorded Succeeded or Failed, or was deleted, leaves the cluster;
//   * nodes are added, updated and removed as recorded; other kinds are added and updated
//     (their deletions are not replayed);
//   * after each event, pods pending, nodes in use and victims deleted so far are read from the
//     replayed cluster (a point whenever one of them changes).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "api/codec.h"
#include "berth/api/result.h"
#include "config/types.h"
#include "sim/compare.h"
#include "sim/simulator.h"

namespace berth::sim {

struct ReplayOptions {
  uint64_t seed = 1;
  std::string config_source = "default configuration";
  bool record_details = false;
  AttemptObserver* observer = nullptr;  // sees every attempt
  std::function<bool()> keep_running;   // after each cycle; false ends the replay
  size_t max_samples = 1000;            // points of over_time
  bool opportunistic_batching = true;   // the OpportunisticBatching feature gate
};

struct ReplayResult {
  // Pods this configuration scheduled (or tried to), in the order of their first attempt;
  // `node` is where it bound the pod first.
  SimulationResult results;
  int64_t events = 0;
  // The cluster when the recording ended.
  std::vector<std::pair<std::string, std::string>> node_zones;
  std::map<std::string, int> per_node;
  std::map<std::string, int> holders_per_node;  // pods per node that hold it (HoldsNode)
  std::vector<Object> objects;  // nodes, bound pods, storage and policy objects (for capacity)
  // A point each time pending, nodes in use or preemptions changed (at most max_samples).
  std::vector<TimeSample> over_time;
  double mean_pending_seconds = 0, max_pending_seconds = 0;
  std::vector<std::string> still_pending;  // pods waiting when the recording ended, sorted
};

Result<ReplayResult> Replay(const config::SchedulerConfiguration& config, const Registry& registry,
                            const std::string& recording, const ReplayOptions& options);

// Reduces `samples` to at most `max` points, keeping each bucket's largest value of each
// series (for the cumulative preemptions, the bucket's last).
std::vector<TimeSample> Downsample(const std::vector<TimeSample>& samples, size_t max);

}  // namespace berth::sim
