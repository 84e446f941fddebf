#include "plugins/noderesources/resource_allocation.h"

#include <algorithm>
#include <cmath>

#include "api/pod_requests.h"
#include "berth/api/resources.h"
#include "berth/framework/dra.h"
#include "berth/framework/plugin.h"
#include "config/plugin_args_codec.h"
#include "framework/dra_extended_resources.h"

namespace berth::noderesources {

const PodRequests& RequestsOf(const PodInfo& pod, bool pod_level_resources, PodRequests* scratch) {
  if (pod_level_resources || !HasPodLevelRequests(*pod.pod)) return pod.requests;
  *scratch = ComputePodRequestsIgnoringPodLevel(*pod.pod);
  return *scratch;
}
namespace {

Resource SignedRequests(const Pod& pod, bool pod_level_resources) {
  return pod_level_resources || !HasPodLevelRequests(pod)
             ? ComputePodRequests(pod).requests
             : ComputePodRequestsIgnoringPodLevel(pod).requests;
}

}  // namespace

bool SameSignedRequests(const Pod& a, const Pod& b, bool pod_level_resources) {
  return SignedRequests(a, pod_level_resources) == SignedRequests(b, pod_level_resources);
}

bool RequestsDraBackedResource(const Pod& pod, bool dra_extended_resource, Handle& handle) {
  if (!dra_extended_resource) return false;
  const DraListers* dra = DraListersOf(handle.listers());
  if (dra == nullptr) return false;
  for (const auto& [name, quantity] : ComputePodRequests(pod).requests.scalar) {
    if (quantity > 0 && dra_extended::IsDraExtendedResourceName(name) &&
        dra_extended::ResolveDeviceClass(*dra, name) != nullptr)
      return true;
  }
  return false;
}

std::vector<ScoredResource> ResolveResources(const std::vector<config::ResourceSpec>& specs) {
  std::vector<ScoredResource> out;
  out.reserve(specs.size());
  for (const config::ResourceSpec& spec : specs) {
    ScoredResource r;
    r.name = spec.name;
    r.weight = spec.weight;
    if (spec.name == kResourceCPU) {
      r.kind = ScoredResource::Kind::kCpu;
    } else if (spec.name == kResourceMemory) {
      r.kind = ScoredResource::Kind::kMemory;
    } else if (spec.name == kResourceEphemeralStorage) {
      r.kind = ScoredResource::Kind::kEphemeralStorage;
    } else if (IsScalarResourceName(spec.name)) {
      r.kind = ScoredResource::Kind::kScalar;
    } else {
      // Names like "pods" never appear among a node's scalar allocatable, so kube-scheduler
      // ends up skipping them; classifying them here keeps Score free of lookups.
      r.kind = ScoredResource::Kind::kUnsupported;
    }
    out.push_back(std::move(r));
  }
  return out;
}

void PodRequestsFor(const PodRequests& pod, std::span<const ScoredResource> resources,
                    RequestSource source, std::span<int64_t> out) {
  const Resource& cpu_mem =
      source == RequestSource::kNonZero ? pod.non_zero_requests : pod.requests;
  for (size_t i = 0; i < resources.size(); ++i) {
    const ScoredResource& r = resources[i];
    switch (r.kind) {
      case ScoredResource::Kind::kCpu:
        out[i] = cpu_mem.milli_cpu;
        break;
      case ScoredResource::Kind::kMemory:
        out[i] = cpu_mem.memory;
        break;
      case ScoredResource::Kind::kEphemeralStorage:
        out[i] = pod.requests.ephemeral_storage;
        break;
      case ScoredResource::Kind::kScalar:
        out[i] = pod.requests.Scalar(r.name);
        break;
      case ScoredResource::Kind::kUnsupported:
        out[i] = 0;
        break;
    }
  }
}

void NodeUsage(const NodeInfo& node, std::span<const ScoredResource> resources,
               std::span<const int64_t> pod_requests, RequestSource source,
               std::span<int64_t> allocatable, std::span<int64_t> requested) {
  const Resource& alloc = node.allocatable();
  const Resource& cpu_mem =
      source == RequestSource::kNonZero ? node.non_zero_requested() : node.requested();
  for (size_t i = 0; i < resources.size(); ++i) {
    const ScoredResource& r = resources[i];
    int64_t a = 0;
    int64_t q = 0;
    switch (r.kind) {
      case ScoredResource::Kind::kCpu:
        a = alloc.milli_cpu;
        q = cpu_mem.milli_cpu + pod_requests[i];
        break;
      case ScoredResource::Kind::kMemory:
        a = alloc.memory;
        q = cpu_mem.memory + pod_requests[i];
        break;
      case ScoredResource::Kind::kEphemeralStorage:
        a = alloc.ephemeral_storage;
        q = node.requested().ephemeral_storage + pod_requests[i];
        break;
      case ScoredResource::Kind::kScalar:
        // An extended resource the pod does not ask for must not make nodes that merely offer
        // it look fuller or emptier.
        if (pod_requests[i] != 0) {
          a = alloc.Scalar(r.name);
          q = node.requested().Scalar(r.name) + pod_requests[i];
        }
        break;
      case ScoredResource::Kind::kUnsupported:
        break;
    }
    if (a == 0) q = 0;
    allocatable[i] = a;
    requested[i] = q;
  }
}

int64_t LeastAllocatedScore(std::span<const int64_t> requested,
                            std::span<const int64_t> allocatable,
                            std::span<const ScoredResource> resources) {
  int64_t node_score = 0;
  int64_t weight_sum = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    const int64_t capacity = allocatable[i];
    if (capacity == 0) continue;
    const int64_t score =
        requested[i] > capacity ? 0 : (capacity - requested[i]) * kMaxNodeScore / capacity;
    node_score += score * resources[i].weight;
    weight_sum += resources[i].weight;
  }
  return weight_sum == 0 ? 0 : node_score / weight_sum;
}

int64_t MostAllocatedScore(std::span<const int64_t> requested, std::span<const int64_t> allocatable,
                           std::span<const ScoredResource> resources) {
  int64_t node_score = 0;
  int64_t weight_sum = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    const int64_t capacity = allocatable[i];
    if (capacity == 0) continue;
    const int64_t used = std::min(requested[i], capacity);
    node_score += used * kMaxNodeScore / capacity * resources[i].weight;
    weight_sum += resources[i].weight;
  }
  return weight_sum == 0 ? 0 : node_score / weight_sum;
}

RequestedToCapacityRatio::RequestedToCapacityRatio(
    const std::vector<config::UtilizationShapePoint>& shape)
    : fn_(ShapeFunction(shape)) {}

int64_t RequestedToCapacityRatio::Score(std::span<const int64_t> requested,
                                        std::span<const int64_t> allocatable,
                                        std::span<const ScoredResource> resources) const {
  int64_t node_score = 0;
  int64_t weight_sum = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    const int64_t capacity = allocatable[i];
    if (capacity == 0) continue;
    const int64_t score = requested[i] > capacity ? fn_(kMaxUtilization)
                                                  : fn_(requested[i] * kMaxUtilization / capacity);
    if (score > 0) {
      node_score += score * resources[i].weight;
      weight_sum += resources[i].weight;
    }
  }
  if (weight_sum == 0) return 0;
  return static_cast<int64_t>(
      std::round(static_cast<double>(node_score) / static_cast<double>(weight_sum)));
}

int64_t BalancedAllocationScore(std::span<const int64_t> requested,
                                std::span<const int64_t> allocatable) {
  auto fraction = [&](size_t i) {
    const double f = static_cast<double>(requested[i]) / static_cast<double>(allocatable[i]);
    return f > 1 ? 1.0 : f;
  };
  // The two passes recompute the same fractions in the same order, so the floating-point
  // result is bit-identical to accumulating them in a list first.
  size_t count = 0;
  double total = 0;
  double first = 0;
  double second = 0;
  for (size_t i = 0; i < requested.size(); ++i) {
    if (allocatable[i] == 0) continue;
    const double f = fraction(i);
    if (count == 0) first = f;
    if (count == 1) second = f;
    total += f;
    ++count;
  }
  double std_dev = 0;
  if (count == 2) {
    std_dev = std::abs((first - second) / 2);
  } else if (count > 2) {
    const double mean = total / static_cast<double>(count);
    double sum = 0;
    for (size_t i = 0; i < requested.size(); ++i) {
      if (allocatable[i] == 0) continue;
      const double d = fraction(i) - mean;
      sum = sum + d * d;
    }
    std_dev = std::sqrt(sum / static_cast<double>(count));
  }
  return static_cast<int64_t>((1 - std_dev) * static_cast<double>(kMaxNodeScore));
}

}  // namespace berth::noderesources
