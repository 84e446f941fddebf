// `berth capacity`: how many more pods of one shape the cluster takes right now, placed one
// after another through the real filters and scoring (each placement applied before the next,
// as the scheduler would), per node and per zone, and what runs out first.
//
// The copies do not preempt (preemptionPolicy Never): the question is what fits now. Pods of
// the cluster that are still pending do not compete; only bound pods count.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/codec.h"
#include "berth/api/result.h"
#include "berth/framework/registry.h"
#include "config/types.h"

namespace berth::sim {

struct CapacityOptions {
  int max = 10000;  // stop after this many placements
  uint64_t seed = 1;
  std::string config_source = "default configuration";
  // Reuse each node's filter verdict and raw scores until a placement changes the node, when
  // the template allows it (src/sim/capacity.cc: CopiesAreNodeLocal). The answer is the same
  // either way; false runs every plugin for every copy (tests compare the two).
  bool reuse_node_results = true;
};

struct CapacityResult {
  std::string template_pod;  // namespace/name of the template
  int placed = 0;
  bool reached_max = false;  // stopped at `max`, not because nothing fits
  std::map<std::string, int> per_node;
  std::map<std::string, int> per_zone;  // topology.kubernetes.io/zone; "" for nodes without
  std::string limit_message;            // why the next copy does not fit (kube-scheduler's text)
  std::string limiting_reason;          // the reason most nodes gave, e.g. "Insufficient cpu"
};

Result<CapacityResult> EstimateCapacity(const config::SchedulerConfiguration& config,
                                        const Registry& registry,
                                        const std::vector<Object>& cluster, const Pod& pod,
                                        const CapacityOptions& options);

nlohmann::json ToJson(const CapacityResult& r);
std::string ToTable(const CapacityResult& r);

}  // namespace berth::sim
