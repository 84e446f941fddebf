#include "berth/api/resources.h"

#include <algorithm>
#include <string>

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

// One container's requests, with the scoring defaults for cpu/memory keys that are absent.
QuantitySum ContainerRequests(const Container& c, bool non_missing) {
  QuantitySum s;
  for (const auto& [n, q] : c.resources.requests) s.Add(n, q);
  if (non_missing) {
    static const Quantity kCpu = Quantity::FromMilli(kDefaultMilliCPURequest);
    static const Quantity kMem = Quantity::FromInt(kDefaultMemoryRequest);
    if (!c.resources.requests.contains(kResourceCPU)) s.Add(kResourceCPU, kCpu);
    if (!c.resources.requests.contains(kResourceMemory)) s.Add(kResourceMemory, kMem);
  }
  return s;
}

// Sum of app containers and sidecars, raised to what any init container needs while it runs
// next to the sidecars started before it; then pod overhead.
QuantitySum AggregatePodRequests(const Pod& pod, bool non_missing) {
  QuantitySum result;
  for (const Container& c : pod.spec.containers) result.Add(ContainerRequests(c, non_missing));
  QuantitySum sidecars;
  QuantitySum init_peak;
  for (const Container& c : pod.spec.init_containers) {
    QuantitySum req = ContainerRequests(c, non_missing);
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

PodRequests ComputePodRequests(const Pod& pod) {
  PodRequests out;
  out.requests = AggregatePodRequests(pod, /*non_missing=*/false).ToResource();
  out.non_zero_requests = AggregatePodRequests(pod, /*non_missing=*/true).ToResource();
  return out;
}

}  // namespace berth
