// In-place resize of running pods on simulated nodes: a resize written through pods/resize is
// admitted when the node has room for it, as the kubelet's allocation manager admits it, and
// then reported as actuated at once (allocatedResources and resources in the container
// statuses); otherwise the pod gets the PodResizePending condition, Infeasible (more than the
// node's allocatable) or Deferred (retried when room is freed on the node).
#include <fmt/format.h>

#include "kubelet/kubelets_impl.h"

namespace berth::kubelet {

using Impl = SimulatedKubelets::Impl;
using Json = nlohmann::json;

namespace {

constexpr const char* kStatusPatch = "application/strategic-merge-patch+json";

struct CpuMemory {
  int64_t cpu_milli = 0;
  int64_t memory = 0;
};

// The cpu and memory a pod's containers request (running containers and sidecars).
CpuMemory Requests(const AllocatedResources& resources) {
  CpuMemory out;
  for (const auto& [name, r] : resources) {
    if (auto it = r.requests.find("cpu"); it != r.requests.end())
      out.cpu_milli += it->second.MilliValue();
    if (auto it = r.requests.find("memory"); it != r.requests.end())
      out.memory += it->second.Value();
  }
  return out;
}

CpuMemory Allocatable(const ResourceList& list) {
  CpuMemory out;
  if (auto it = list.find("cpu"); it != list.end()) out.cpu_milli = it->second.MilliValue();
  if (auto it = list.find("memory"); it != list.end()) out.memory = it->second.Value();
  return out;
}

}  // namespace

void Impl::TryResize(PodState& st, const NodeState& node) {
  const Pod& pod = *st.pod;
  const AllocatedResources desired = SpecResources(pod);
  std::string reason, message;
  if (desired != st.allocated) {
    const CpuMemory want = Requests(desired);
    const CpuMemory capacity = Allocatable(node.allocatable);
    CpuMemory used;
    if (auto bound = pods_by_node.find(node.name); bound != pods_by_node.end()) {
      for (const std::string& other : bound->second) {
        auto it = pods.find(other);
        if (it == pods.end() || &it->second == &st || it->second.phase == PodState::kDone) continue;
        const CpuMemory r =
            Requests(it->second.phase == PodState::kRunning ? it->second.allocated
                                                            : SpecResources(*it->second.pod));
        used.cpu_milli += r.cpu_milli;
        used.memory += r.memory;
      }
    }
    if (want.memory > capacity.memory || want.cpu_milli > capacity.cpu_milli) {
      reason = "Infeasible";
      message = want.memory > capacity.memory
                    ? fmt::format(
                          "Node didn't have enough capacity: memory, requested: {}, "
                          "capacity: {}",
                          want.memory, capacity.memory)
                    : fmt::format(
                          "Node didn't have enough capacity: cpu, requested: {}, "
                          "capacity: {}",
                          want.cpu_milli, capacity.cpu_milli);
    } else if (used.cpu_milli + want.cpu_milli > capacity.cpu_milli) {
      reason = "Deferred";
      message = fmt::format(
          "Node didn't have enough resource: cpu, requested: {}, used: {}, "
          "capacity: {}",
          want.cpu_milli, used.cpu_milli, capacity.cpu_milli);
    } else if (used.memory + want.memory > capacity.memory) {
      reason = "Deferred";
      message = fmt::format(
          "Node didn't have enough resource: memory, requested: {}, used: {}, "
          "capacity: {}",
          want.memory, used.memory, capacity.memory);
    }
  }
  const std::string pending = reason.empty() ? "" : reason + ": " + message;
  if (desired == st.allocated && st.resize_pending.empty()) return;
  if (!reason.empty() && pending == st.resize_pending) return;

  Json status;
  if (reason.empty()) {
    // Admitted (or given up by the user): reported as actuated, the pending condition removed.
    st.allocated = desired;
    status = RunningStatus(pod, st.where, st.run, st.allocated);
    if (!st.resize_pending.empty())
      status["conditions"].push_back({{"type", "PodResizePending"}, {"$patch", "delete"}});
  } else {
    status = {{"conditions",
               {{{"type", "PodResizePending"},
                 {"status", "True"},
                 {"reason", reason},
                 {"message", message},
                 {"lastProbeTime", nullptr},
                 {"lastTransitionTime", FormatTimestamp(NowSeconds())}}}}};
  }
  st.resize_pending = pending;
  {
    std::lock_guard lock(stats_mu);
    ++counters.pod_status_writes;
  }
  Queue("PATCH", PodPath(pod) + "/status", Json{{"status", std::move(status)}}.dump(), kStatusPatch,
        nullptr);
}

void Impl::RetryDeferredResizes(const std::string& node_name) {
  NodeState* node = FindNode(node_name);
  auto bound = pods_by_node.find(node_name);
  if (!node || bound == pods_by_node.end()) return;
  // Copied: a retry writes, but never adds or removes pods.
  const std::set<std::string> keys = bound->second;
  for (const std::string& key : keys) {
    auto it = pods.find(key);
    if (it != pods.end() && it->second.phase == PodState::kRunning &&
        !it->second.resize_pending.empty()) {
      TryResize(it->second, *node);
    }
  }
}

}  // namespace berth::kubelet
