// A scenario file (docs/scenarios.md): a cluster and timed steps run against it by
// `berth scenario run`. This is the reader: YAML in, a validated Scenario out, with errors
// naming the step and the field ("steps[2].scale.replicas: must be >= 0").
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "berth/api/result.h"
#include "berth/framework/clock.h"

namespace berth::scenario {

inline constexpr const char* kApiVersion = "berth.dev/v1alpha1";
inline constexpr const char* kKind = "Scenario";

struct NodeTemplate {
  std::string cpu = "4";
  std::string memory = "16Gi";
  int pods = 110;
  int zones = 3;  // nodes rotate over zone-a, zone-b, ... (0: no zone label)
  std::map<std::string, std::string> labels;
};

struct ClusterSpec {
  int nodes = 0;  // generated nodes node-001, node-002, ...
  NodeTemplate node_template;
  // Manifests applied at time 0, before the first step (paths relative to the scenario file).
  std::vector<std::string> files;
};

enum class StepKind { kApply, kCreate, kDelete, kScale, kStopNode, kStartNode, kWait, kCheckpoint };
const char* StepKindName(StepKind kind);

enum class WaitFor { kPodsScheduled, kPodsRunning, kNodeReady, kNodeNotReady };
const char* WaitForName(WaitFor w);

struct WaitSpec {
  WaitFor condition = WaitFor::kPodsScheduled;
  std::string namespace_;  // pods: empty = every namespace
  std::string selector;    // pods: a label selector ("app=web"); empty = every pod
  int count = 0;           // pods: at least this many must match (0: any number)
  std::string node;        // NodeReady / NodeNotReady
  Duration timeout = std::chrono::minutes(10);
};

struct Step {
  StepKind kind = StepKind::kCheckpoint;
  std::string where;           // "steps[3]"
  std::optional<Duration> at;  // from the start; none: right after the step before
  // apply / create / delete: the objects (read from `file`, or given inline).
  std::vector<nlohmann::json> objects;
  std::string file;
  // scale
  std::string target_kind, name, namespace_ = "default";
  int replicas = 0;
  // stopNode / startNode: `name`
  WaitSpec wait;
  // checkpoint: `name`
};

struct Scenario {
  std::string name;
  // The clock's resolution: it jumps to the next due timer rounded up to a multiple of this
  // from the start (0: exactly to each timer). Coarser means fewer jumps: the heartbeats of
  // many nodes fall on one instant instead of each on its own.
  Duration resolution = std::chrono::seconds(1);
  ClusterSpec cluster;
  std::vector<nlohmann::json> cluster_objects;  // cluster.files, read
  std::vector<Step> steps;
};

// Reads a scenario. `base_dir` resolves relative file names ("" = the current directory).
Result<Scenario> ParseScenario(std::string_view text, const std::string& base_dir,
                               std::string_view source);
Result<Scenario> LoadScenario(const std::string& path);

// Go-style durations of the scenario format ("90s", "1h30m", "500ms"); errors name `where`.
Result<Duration> ParseDuration(std::string_view text, const std::string& where);
// The reverse, for reports: "1h2m3.5s", "0s".
std::string FormatDuration(Duration d);

}  // namespace berth::scenario
