// Scoring arithmetic shared by NodeResourcesFit and NodeResourcesBalancedAllocation. Internal to
// this module; exposed in a header so the formulas can be tested on their own.
//
// A score is computed over a configured list of resources. For each resource the node side
// provides (allocatable, requested-including-the-pod); a resource whose allocatable is 0, or an
// extended resource the pod does not request, is skipped by every strategy.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "berth/config/plugin_args.h"
#include "berth/framework/handle.h"
#include "berth/framework/node_info.h"
#include "framework/shape_score.h"

namespace berth::noderesources {

// A resource named in a scoring configuration, classified once at plugin construction.
struct ScoredResource {
  enum class Kind : uint8_t { kCpu, kMemory, kEphemeralStorage, kScalar, kUnsupported };
  std::string name;
  Kind kind = Kind::kUnsupported;
  int64_t weight = 1;
};

std::vector<ScoredResource> ResolveResources(const std::vector<config::ResourceSpec>& specs);

// Which request totals cpu and memory come from: kNonZero applies the scoring defaults (100m,
// 200Mi) to containers that omit the key (NodeResourcesFit); kActual uses real requests
// (BalancedAllocation). Ephemeral storage and extended resources always use real requests.
enum class RequestSource { kNonZero, kActual };

// The pod's request for each resource, in the order of `resources`.
// The pod's requests as kube-scheduler's PodLevelResources gate at `pod_level_resources` has
// them: pod.requests when on (or when spec.resources requests nothing), else recomputed into
// `scratch` without spec.resources.
const PodRequests& RequestsOf(const PodInfo& pod, bool pod_level_resources, PodRequests* scratch);
// Pod signatures (berth/framework/pod_signer.h) of both resource plugins: the requests they
// read, and whether the pod asks for an extended resource a DeviceClass backs
// (DRAExtendedResource), whose devices DynamicResources allocates from what other pods hold:
// such a pod is not signed.
bool SameSignedRequests(const Pod& a, const Pod& b, bool pod_level_resources);
bool RequestsDraBackedResource(const Pod& pod, bool dra_extended_resource, Handle& handle);

void PodRequestsFor(const PodRequests& pod, std::span<const ScoredResource> resources,
                    RequestSource source, std::span<int64_t> out);

// Per resource i: allocatable[i] and requested[i] (node total plus pod_requests[i]); both 0 when
// the resource is skipped.
void NodeUsage(const NodeInfo& node, std::span<const ScoredResource> resources,
               std::span<const int64_t> pod_requests, RequestSource source,
               std::span<int64_t> allocatable, std::span<int64_t> requested);

// Weighted average of (allocatable - requested) * 100 / allocatable (0 when over-committed),
// integer arithmetic throughout.
int64_t LeastAllocatedScore(std::span<const int64_t> requested,
                            std::span<const int64_t> allocatable,
                            std::span<const ScoredResource> resources);
// Weighted average of min(requested, allocatable) * 100 / allocatable.
int64_t MostAllocatedScore(std::span<const int64_t> requested, std::span<const int64_t> allocatable,
                           std::span<const ScoredResource> resources);

// The RequestedToCapacityRatio strategy: shape scores (0..10) are scaled to 0..100; each
// resource scores shape(requested * 100 / allocatable) (shape(100) when over-committed); only
// resources scoring above 0 enter the weighted average, which is rounded to nearest.
class RequestedToCapacityRatio {
 public:
  // Precondition: `shape` is non-empty and sorted by utilization.
  explicit RequestedToCapacityRatio(const std::vector<config::UtilizationShapePoint>& shape);
  int64_t Score(std::span<const int64_t> requested, std::span<const int64_t> allocatable,
                std::span<const ScoredResource> resources) const;

 private:
  BrokenLinearFunction fn_;
};

// (1 - population standard deviation of the requested/allocatable fractions, each capped at 1)
// * 100, truncated. Two fractions use |f1 - f2| / 2; fewer than two give 100.
int64_t BalancedAllocationScore(std::span<const int64_t> requested,
                                std::span<const int64_t> allocatable);

// True when `resources` are cpu then memory, the default of both plugins: their scores then
// have a form without a loop over the resources (LeastAllocatedCpuMemory and
// BalancedCpuMemory).
inline bool IsCpuThenMemory(std::span<const ScoredResource> resources) {
  return resources.size() == 2 && resources[0].kind == ScoredResource::Kind::kCpu &&
         resources[1].kind == ScoredResource::Kind::kMemory;
}

// LeastAllocatedScore over cpu (weight wc) and memory (weight wm), given each one's
// allocatable and requested (the pod included): the same integer arithmetic in the same order.
inline int64_t LeastAllocatedCpuMemory(int64_t alloc_cpu, int64_t req_cpu, int64_t wc,
                                       int64_t alloc_mem, int64_t req_mem, int64_t wm) {
  int64_t node_score = 0;
  int64_t weight_sum = 0;
  if (alloc_cpu != 0) {
    node_score +=
        (req_cpu > alloc_cpu ? 0 : (alloc_cpu - req_cpu) * kMaxNodeScore / alloc_cpu) * wc;
    weight_sum += wc;
  }
  if (alloc_mem != 0) {
    node_score +=
        (req_mem > alloc_mem ? 0 : (alloc_mem - req_mem) * kMaxNodeScore / alloc_mem) * wm;
    weight_sum += wm;
  }
  return weight_sum == 0 ? 0 : node_score / weight_sum;
}

// BalancedAllocationScore over cpu and memory: the same floating-point operations in the same
// order, so the same result to the bit.
inline int64_t BalancedCpuMemory(int64_t alloc_cpu, int64_t req_cpu, int64_t alloc_mem,
                                 int64_t req_mem) {
  if (alloc_cpu == 0 || alloc_mem == 0) return kMaxNodeScore;  // fewer than two fractions
  auto fraction = [](int64_t requested, int64_t allocatable) {
    const double f = static_cast<double>(requested) / static_cast<double>(allocatable);
    return f > 1 ? 1.0 : f;
  };
  const double std_dev =
      std::abs((fraction(req_cpu, alloc_cpu) - fraction(req_mem, alloc_mem)) / 2);
  return static_cast<int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
}

// Per-call scratch for a handful of int64 values without touching the heap. Left
// uninitialized: every caller writes all n values before reading them (Score runs it several
// times per node, and zeroing the inline array cost more than the arithmetic).
class Scratch {
 public:
  explicit Scratch(size_t n) : n_(n) {
    if (n > kInline) heap_.resize(n);
  }
  std::span<int64_t> span() {
    return n_ <= kInline ? std::span<int64_t>(inline_.data(), n_) : std::span<int64_t>(heap_);
  }

 private:
  static constexpr size_t kInline = 8;
  size_t n_;
  std::array<int64_t, kInline> inline_;  // NOLINT: written before read
  std::vector<int64_t> heap_;
};

}  // namespace berth::noderesources
