// Simulator: `berth simulate`. Loads a cluster from manifests into an InMemoryCluster, runs the
// real Scheduler against it with a fake clock and a seeded random source, and records, per
// pending pod, what was decided and why.
//
// Semantics (documented in docs/simulate.md):
//   * Pods with spec.nodeName are running there; the others are pending and enter the queue in
//     creationTimestamp order (file order for ties), so the queue's order is priority, then
//     creation time.
//   * Each pod goes through the full framework; a placement (bind) is applied before the next pod.
//   * A pod that failed is retried when the cluster changed in a way that may help (e.g.
//     preemption victims deleted), after its backoff on the fake clock; at most
//     `max_attempts` attempts per pod.
//   * Same input and seed => identical output.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/codec.h"
#include "berth/api/result.h"
#include "config/types.h"
#include "scheduler/scheduler.h"

namespace berth::sim {

struct PodResult {
  std::string pod;  // namespace/name
  std::string scheduler_name;
  std::string result;  // Scheduled, Unschedulable, Error, Gated, NotHandled
  std::string node;
  std::string nominated_node;
  std::vector<std::string> victims;
  std::string message;
  int attempts = 0;
  // The explanation of the last attempt.
  std::optional<SchedulingAttempt> last;
};

struct SimulationResult {
  std::vector<PodResult> results;
};

struct SimulationOptions {
  uint64_t seed = 1;
  // Names the configuration in errors found while building its profiles.
  std::string config_source = "default configuration";
  int max_attempts = 10;
  // Stop at the first pod that cannot be scheduled (capacity estimates); later pods are left
  // "never attempted".
  bool stop_at_first_failure = false;
  // Keep per-node filter statuses and score tables in the results.
  bool record_details = true;
  // SchedulerOptions::node_local_plugins: every pending pod is a copy of one template whose
  // results on a node depend on that node alone for these plugins (berth capacity).
  std::vector<std::string> node_local_plugins;
  // SchedulerOptions::reuse_equivalent_pod_results (off only to compare decisions).
  bool reuse_equivalent_pod_results = true;
  // SchedulerOptions::opportunistic_batching (the OpportunisticBatching feature gate).
  bool opportunistic_batching = true;
  // Keep each pod's last attempt in PodResult::last. False: only the outcome is kept (callers
  // that read the attempts through `observer` and need no copy of every score table).
  bool keep_last_attempts = true;
  // Also sees every attempt, after it is recorded (berth compare reads the score rows of the
  // nodes it compares here). Must outlive the call.
  AttemptObserver* observer = nullptr;
  // Asked after each cycle; false ends the run early (the remaining pods are reported as
  // never attempted or as their last attempt left them).
  std::function<bool()> keep_running;
};

// Runs the simulation of `objects` (decoded manifests) under `config`.
Result<SimulationResult> Simulate(const config::SchedulerConfiguration& config,
                                  const Registry& registry, const std::vector<Object>& objects,
                                  const SimulationOptions& options);

// The JSON contract of `berth simulate --output json` (docs/simulate.md).
nlohmann::json ToJson(const SimulationResult& result);
// The human-readable table, written as it is formatted (a row per node of every attempt).
void WriteTable(std::ostream& out, const SimulationResult& result);
std::string ToTable(const SimulationResult& result);

}  // namespace berth::sim
