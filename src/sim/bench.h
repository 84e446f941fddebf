// `berth bench`: in-process scheduling benchmarks shaped like kube-scheduler's scheduler_perf.
//
// Workloads are data (YAML under bench/): a node template, init pods (scheduled before
// measuring) and measured pods, each a full manifest that is stamped out with generated names.
// The scheduler runs against an InMemoryCluster with inline binding, so the numbers are the
// scheduler's own cost: no API server, no network.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/codec.h"
#include "berth/api/result.h"
#include "berth/framework/registry.h"
#include "config/types.h"

namespace berth::sim {

struct PodGroup {
  int count = 0;
  Pod template_pod;
  std::string name_prefix;
};

struct Workload {
  std::string name;
  int nodes = 0;
  Node node_template;
  int zones = 0;  // > 0: nodes get topology.kubernetes.io/zone zone-<i % zones>
  std::vector<PodGroup> init_pods;
  std::vector<PodGroup> measure_pods;
  std::string config_path;  // optional KubeSchedulerConfiguration, relative to the file
};

// Reads workloads from a YAML file (`workloads: [...]`).
Result<std::vector<Workload>> LoadWorkloads(const std::string& path);

struct BenchResult {
  std::string name;
  int nodes = 0, init_pods = 0, measured_pods = 0, scheduled = 0;
  double seconds = 0;
  double pods_per_second = 0;
  double p50_ms = 0, p90_ms = 0, p99_ms = 0;
  double init_seconds = 0;
  int64_t peak_rss_mb = 0;
};

Result<BenchResult> RunWorkload(const Workload& w, const config::SchedulerConfiguration& config,
                                const Registry& registry);

nlohmann::json ToJson(const BenchResult& r);

}  // namespace berth::sim
