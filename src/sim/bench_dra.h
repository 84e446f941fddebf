// The parts of `berth bench` for Dynamic Resource Allocation workloads that need more than
// pods and nodes: ResourceClaims stamped (and allocated) before any pod, and the steady-state
// mode that deletes each scheduled pod with the claims made for it and creates another.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "berth/api/result.h"
#include "framework/in_memory_cluster.h"
#include "sim/bench.h"

namespace berth::sim::internal {

// Decodes the workload fields `claims`, `resourceSlices` and `steadyState` of `w` into `out`.
VoidResult DecodeDraFields(const nlohmann::json& w, const std::string& where, Workload* out);

// Creates the workload's stamped ResourceSlices.
void AddSlices(const Workload& w, InMemoryCluster& cluster);

// Creates the workload's claim groups; the groups with `allocate: true` get an allocation as
// the structured allocator finds it: each claim on the first node, in node order, where it fits
// next to the claims allocated before it. Call after the nodes, slices and DeviceClasses exist.
VoidResult AddClaims(const Workload& w, InMemoryCluster& cluster);

// Pod `index` of `g` in namespace `ns` (namespace set `set`), as the harness names it.
std::shared_ptr<Pod> StampPod(const PodGroup& g, const std::string& uid_suffix,
                              const std::string& ns, int set, int index);

// Keeps `count` pods of each measured group pending: after every cycle, each of them that is
// bound is deleted, with the claims made from its templates (as the resourceclaim controller
// deletes them with their pod), and the group's next pod takes its place.
class SteadyStateDriver {
 public:
  SteadyStateDriver(const Workload& w, InMemoryCluster& cluster);
  // Creates the first pending pods.
  void Start();
  // Replaces the bound pods; false once the run has lasted long enough or scheduled enough.
  bool AfterCycle();
  int scheduled() const { return scheduled_; }
  int created() const { return created_; }

 private:
  struct InFlight {
    size_t group;
    std::string ns, name;
  };
  void Create(size_t group);

  const Workload& w_;
  InMemoryCluster& cluster_;
  std::chrono::steady_clock::time_point start_;
  std::vector<InFlight> in_flight_;
  std::vector<int> next_index_;
  int scheduled_ = 0, created_ = 0;
};

}  // namespace berth::sim::internal
