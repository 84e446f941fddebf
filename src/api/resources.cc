#include "berth/api/resources.h"

#include <algorithm>
#include <string>

#include "api/pod_requests.h"
#include "api/validation.h"

namespace berth {
namespace {

constexpr std::string_view kKubernetesIOPrefix = "kubernetes.io/";
constexpr std::string_view kRequestsPrefix = "requests.";

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool IsPrefixedNativeResource(std::string_view name) {
  return name.find(kKubernetesIOPrefix) != std::string_view::npos;
}

bool IsNativeResource(std::string_view name) {
  return name.find('/') == std::string_view::npos || IsPrefixedNativeResource(name);
}

auto FindScalar(CompactVector<std::pair<std::string, int64_t>>& v, std::string_view name) {
  return std::lower_bound(v.begin(), v.end(), name,
                          [](const auto& e, std::string_view n) { return e.first < n; });
}

// An exact accumulator of named quantities, keyed by views into the pod being summed. Summing
// Quantities (not rounded integers) matters: "0.5m" twice is 1m, not 2m.
class QuantitySum {
 public:
  void Add(std::string_view name, const Quantity& q) { Slot(name) += q; }
  void Add(const QuantitySum& o) {
    for (const auto& [n, q] : o.items_) Add(n, q);
  }
  void Max(const QuantitySum& o) {
    for (const auto& [n, q] : o.items_) {
      auto it = Find(n);
      if (it == items_.end()) {
        items_.emplace_back(n, q);
      } else if (q > it->second) {
        it->second = q;
      }
    }
  }
  void Set(std::string_view name, const Quantity& q) { Slot(name) = q; }
  bool Has(std::string_view name) const {
    return std::any_of(items_.begin(), items_.end(),
                       [&](const auto& e) { return e.first == name; });
  }
  Resource ToResource() const;

 private:
  using Items = std::vector<std::pair<std::string_view, Quantity>>;
  Items::iterator Find(std::string_view n) {
    return std::find_if(items_.begin(), items_.end(), [&](const auto& e) { return e.first == n; });
  }
  Quantity& Slot(std::string_view n) {
    auto it = Find(n);
    if (it != items_.end()) return it->second;
    return items_.emplace_back(n, Quantity()).second;
  }
  Items items_;
};

void AddToResource(Resource& r, std::string_view name, const Quantity& q) {
  if (name == kResourceCPU) {
    r.milli_cpu += q.MilliValue();
  } else if (name == kResourceMemory) {
    r.memory += q.Value();
  } else if (name == kResourcePods) {
    r.allowed_pod_number += q.Value();
  } else if (name == kResourceEphemeralStorage) {
    r.ephemeral_storage += q.Value();
  } else if (IsScalarResourceName(name)) {
    r.AddScalar(name, q.Value());
  }
}

Resource QuantitySum::ToResource() const {
  Resource r;
  for (const auto& [n, q] : items_) AddToResource(r, n, q);
  return r;
}

// Which requests of a container an aggregate reads (upstream's spec, allocated and actuated
// requests: the three views of a container resized in place).
enum class RequestView { kSpec, kAllocated, kActuated };

// The scoring defaults for cpu and memory, per container that requests neither (`cpu`,
// `memory`: whether each default applies).
struct NonMissing {
  bool cpu = false;
  bool memory = false;
};

const ContainerResourceStatus* StatusOf(const Pod& pod, std::string_view name) {
  for (const ContainerResourceStatus& c : pod.status.container_resources)
    if (c.name == name) return &c;
  return nullptr;
}

// True when the PodResizePending condition says the resize cannot be done (the spec then does
// not count: the kubelet keeps what it allocated).
bool ResizeInfeasible(const Pod& pod) {
  for (const PodCondition& c : pod.status.conditions)
    if (c.type == "PodResizePending") return c.reason == "Infeasible";
  return false;
}

// One container's requests in `view` (null when the view has none), with the scoring defaults.
QuantitySum ContainerRequests(const Pod& pod, const Container& c, RequestView view, bool infeasible,
                              NonMissing non_missing) {
  const ResourceList* list = &c.resources.requests;
  if (view != RequestView::kSpec) {
    const ContainerResourceStatus* st = StatusOf(pod, c.name);
    if (view == RequestView::kActuated && st && st->requests) {
      list = &*st->requests;
    } else if (st && st->allocated) {
      list = &*st->allocated;
    } else if (infeasible) {
      list = nullptr;
    }
  }
  QuantitySum s;
  if (list)
    for (const auto& [n, q] : *list) s.Add(n, q);
  static const Quantity kCpu = Quantity::FromMilli(kDefaultMilliCPURequest);
  static const Quantity kMem = Quantity::FromInt(kDefaultMemoryRequest);
  if (non_missing.cpu && !(list && list->contains(kResourceCPU))) s.Add(kResourceCPU, kCpu);
  if (non_missing.memory && !(list && list->contains(kResourceMemory)))
    s.Add(kResourceMemory, kMem);
  return s;
}

// Sum of app containers and sidecars, raised to what any init container needs while it runs
// next to the sidecars started before it.
QuantitySum AggregateContainers(const Pod& pod, RequestView view, bool infeasible,
                                NonMissing non_missing) {
  QuantitySum result;
  for (const Container& c : pod.spec.containers)
    result.Add(ContainerRequests(pod, c, view, infeasible, non_missing));
  QuantitySum sidecars;
  QuantitySum init_peak;
  for (const Container& c : pod.spec.init_containers) {
    QuantitySum req = ContainerRequests(pod, c, view, infeasible, non_missing);
    if (c.restart_policy && *c.restart_policy == "Always") {
      result.Add(req);
      sidecars.Add(req);
      init_peak.Max(sidecars);
    } else {
      req.Add(sidecars);
      init_peak.Max(req);
    }
  }
  result.Max(init_peak);
  return result;
}

// cpu, memory and hugepages-* may be requested for the whole pod (spec.resources).
bool IsPodLevelResource(std::string_view name) {
  return name == kResourceCPU || name == kResourceMemory || StartsWith(name, "hugepages-");
}

bool PodLevelRequestsSet(const Pod& pod) {
  if (!pod.spec.resources) return false;
  for (const auto& [n, q] : pod.spec.resources->requests)
    if (IsPodLevelResource(n)) return true;
  return false;
}

// kube-scheduler's PodRequests: the containers' aggregate (with in-place resizes, the larger of
// what the spec asks, what the kubelet allocated and what it actuated, unless the resize is
// infeasible), then the pod-level requests replacing it for their resources, then overhead.
// `pod_level`: whether spec.resources counts (kube-scheduler's PodLevelResources gate).
QuantitySum AggregatePodRequests(const Pod& pod, NonMissing non_missing, bool pod_level) {
  QuantitySum result;
  if (pod.status.container_resources.empty()) {
    result = AggregateContainers(pod, RequestView::kSpec, false, non_missing);
  } else {
    const bool infeasible = ResizeInfeasible(pod);
    QuantitySum allocated =
        AggregateContainers(pod, RequestView::kAllocated, infeasible, non_missing);
    QuantitySum actuated =
        AggregateContainers(pod, RequestView::kActuated, infeasible, non_missing);
    if (!infeasible) result = AggregateContainers(pod, RequestView::kSpec, false, non_missing);
    result.Max(actuated);
    result.Max(allocated);
  }
  if (pod_level && PodLevelRequestsSet(pod)) {
    for (const auto& [n, q] : pod.spec.resources->requests)
      if (IsPodLevelResource(n)) result.Set(n, q);
  }
  for (const auto& [n, q] : pod.spec.overhead) result.Add(n, q);
  return result;
}

}  // namespace

bool IsExtendedResourceName(std::string_view name) {
  if (IsNativeResource(name) || StartsWith(name, kRequestsPrefix)) return false;
  std::string quota_name(kRequestsPrefix);
  quota_name.append(name);
  return validation::IsQualifiedName(quota_name);
}

bool IsScalarResourceName(std::string_view name) {
  return IsExtendedResourceName(name) || StartsWith(name, "hugepages-") ||
         IsPrefixedNativeResource(name) || StartsWith(name, "attachable-volumes-");
}

Resource Resource::FromList(const ResourceList& list) {
  Resource r;
  for (const auto& [n, q] : list) AddToResource(r, n, q);
  return r;
}

int64_t Resource::Scalar(std::string_view name) const {
  auto it = std::lower_bound(scalar.begin(), scalar.end(), name,
                             [](const auto& e, std::string_view n) { return e.first < n; });
  return it != scalar.end() && it->first == name ? it->second : 0;
}

void Resource::SetScalar(std::string_view name, int64_t v) {
  auto it = FindScalar(scalar, name);
  if (it != scalar.end() && it->first == name) {
    it->second = v;
  } else {
    scalar.emplace(it, std::string(name), v);
  }
}

void Resource::AddScalar(std::string_view name, int64_t v) {
  auto it = FindScalar(scalar, name);
  if (it != scalar.end() && it->first == name) {
    it->second += v;
  } else {
    scalar.emplace(it, std::string(name), v);
  }
}

int64_t Resource::Get(std::string_view name) const {
  if (name == kResourceCPU) return milli_cpu;
  if (name == kResourceMemory) return memory;
  if (name == kResourceEphemeralStorage) return ephemeral_storage;
  if (name == kResourcePods) return allowed_pod_number;
  return Scalar(name);
}

void Resource::Add(const Resource& o) {
  milli_cpu += o.milli_cpu;
  memory += o.memory;
  ephemeral_storage += o.ephemeral_storage;
  allowed_pod_number += o.allowed_pod_number;
  for (const auto& [n, v] : o.scalar) AddScalar(n, v);
}

void Resource::Subtract(const Resource& o) {
  milli_cpu -= o.milli_cpu;
  memory -= o.memory;
  ephemeral_storage -= o.ephemeral_storage;
  allowed_pod_number -= o.allowed_pod_number;
  for (const auto& [n, v] : o.scalar) AddScalar(n, -v);
}

void Resource::SetMax(const Resource& o) {
  milli_cpu = std::max(milli_cpu, o.milli_cpu);
  memory = std::max(memory, o.memory);
  ephemeral_storage = std::max(ephemeral_storage, o.ephemeral_storage);
  allowed_pod_number = std::max(allowed_pod_number, o.allowed_pod_number);
  for (const auto& [n, v] : o.scalar) SetScalar(n, std::max(Scalar(n), v));
}

bool Resource::IsZero() const {
  return milli_cpu == 0 && memory == 0 && ephemeral_storage == 0 && allowed_pod_number == 0 &&
         std::all_of(scalar.begin(), scalar.end(), [](const auto& e) { return e.second == 0; });
}

namespace {

PodRequests ComputePodRequestsImpl(const Pod& pod, bool pod_level) {
  PodRequests out;
  const QuantitySum requests = AggregatePodRequests(pod, NonMissing{}, pod_level);
  out.requests = requests.ToResource();
  // The scoring defaults: for every container without the request when no pod-level requests
  // are set; with pod-level requests, only for cpu or memory that neither level requests.
  NonMissing defaults{true, true};
  if (pod_level && PodLevelRequestsSet(pod))
    defaults = {!requests.Has(kResourceCPU), !requests.Has(kResourceMemory)};
  out.non_zero_requests = (defaults.cpu || defaults.memory)
                              ? AggregatePodRequests(pod, defaults, pod_level).ToResource()
                              : out.requests;
  return out;
}

}  // namespace

PodRequests ComputePodRequests(const Pod& pod) { return ComputePodRequestsImpl(pod, true); }

PodRequests ComputePodRequestsIgnoringPodLevel(const Pod& pod) {
  return ComputePodRequestsImpl(pod, false);
}

bool HasPodLevelRequests(const Pod& pod) { return PodLevelRequestsSet(pod); }

}  // namespace berth
