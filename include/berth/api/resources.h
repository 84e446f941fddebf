// Resource accounting in the units the scheduler compares: milli-CPU, bytes, pod counts, and
// integer amounts of extended ("scalar") resources.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "berth/api/objects.h"
#include "berth/export.h"

namespace berth {

inline constexpr std::string_view kResourceCPU = "cpu";
inline constexpr std::string_view kResourceMemory = "memory";
inline constexpr std::string_view kResourceEphemeralStorage = "ephemeral-storage";
inline constexpr std::string_view kResourcePods = "pods";

// Scoring defaults for containers that do not request cpu/memory at all.
inline constexpr int64_t kDefaultMilliCPURequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = 200 * 1024 * 1024;

struct BERTH_EXPORT Resource {
  int64_t milli_cpu = 0;
  int64_t memory = 0;
  int64_t ephemeral_storage = 0;
  int64_t allowed_pod_number = 0;
  // Extended resources (hugepages-*, example.com/gpu, attachable-volumes-*), sorted by name.
  CompactVector<std::pair<std::string, int64_t>> scalar;

  static Resource FromList(const ResourceList& list);
  int64_t Scalar(std::string_view name) const;
  void SetScalar(std::string_view name, int64_t v);
  void AddScalar(std::string_view name, int64_t v);
  // Amount of a named resource (cpu in milli units).
  int64_t Get(std::string_view name) const;
  void Add(const Resource& o);
  void Subtract(const Resource& o);
  // Elementwise max (used for init containers).
  void SetMax(const Resource& o);
  bool IsZero() const;
  friend bool operator==(const Resource&, const Resource&) = default;
};

// True for names the scheduler treats as scalar: extended resources (domain-prefixed, not
// kubernetes.io/), hugepages-*, attachable-volumes-*.
BERTH_EXPORT bool IsScalarResourceName(std::string_view name);
BERTH_EXPORT bool IsExtendedResourceName(std::string_view name);

struct BERTH_EXPORT PodRequests {
  Resource requests;           // what the pod occupies (filters, BalancedAllocation)
  Resource non_zero_requests;  // requests with cpu/memory defaults for absent keys (scoring)
};

// Effective requests as kube-scheduler's resource helpers compute them: the larger of
// (app containers + sidecars) and each init container plus the sidecars started before it,
// plus pod overhead.
BERTH_EXPORT PodRequests ComputePodRequests(const Pod& pod);

}  // namespace berth
