// `berth scenario run`: a scenario's steps against a SimCluster, on a simulated clock that
// jumps from one moment of work to the next (docs/scenarios.md).
#pragma once

#include <string>
#include <vector>

#include "berth/api/result.h"
#include "scenario/cluster_watch.h"
#include "scenario/scenario_spec.h"
#include "scenario/sim_cluster.h"

namespace berth::scenario {

struct RunOptions {
  ClusterOptions cluster;
};

struct RunResult {
  std::string scenario;
  uint64_t seed = 1;
  std::vector<Summary> checkpoints;
  Summary end;
  std::vector<TimelineEntry> timeline;
  nlohmann::json series;  // ClusterWatch::Series at the end
  // Set when a step failed or a wait timed out: the run stopped there.
  std::string error;
  int clock_jumps = 0;  // how many times the clock moved (diagnostics)
};

// Runs the scenario; an error here means the cluster could not run at all (a failed step is
// reported in RunResult::error with what happened up to it).
Result<RunResult> RunScenario(const Scenario& scenario, const RunOptions& options);

// The simulated clock's start: a fixed instant, so timestamps repeat from run to run.
TimePoint ScenarioEpoch();

}  // namespace berth::scenario
