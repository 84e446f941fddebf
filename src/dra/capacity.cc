// Consumable capacity: how much of a device's capacity one allocation takes, following the
// device's requestPolicy (upstream's consumable_capacity.go).
#include <cstdint>
#include <string>

#include "dra/internal.h"

namespace berth::dra::internal {
namespace {

// The capacity entry of `device` a request names: the exact key, or the same identifier with
// or without the driver's domain. Empty when the device has no such capacity.
const std::string* ResolveRequestName(const std::string& request, const std::string& driver,
                                      const Device& device) {
  if (auto it = device.capacity.find(request); it != device.capacity.end()) return &it->first;
  const auto slash = request.find('/');
  if (slash != std::string::npos) {
    if (request.substr(0, slash) != driver) return nullptr;
    auto it = device.capacity.find(request.substr(slash + 1));
    return it == device.capacity.end() ? nullptr : &it->first;
  }
  auto it = device.capacity.find(driver + "/" + request);
  return it == device.capacity.end() ? nullptr : &it->first;
}

Quantity RoundUpRange(const Quantity& requested, const CapacityRequestPolicyRange& range) {
  if (requested < range.min) return range.min;
  if (!range.step || range.step->MilliValue() <= 0) return requested;
  const int64_t step = range.step->MilliValue();
  const int64_t min = range.min.MilliValue();
  const int64_t added = requested.MilliValue() - min;
  int64_t n = added / step;
  if (added % step != 0) ++n;
  const int64_t value = min + step * n;
  if (value % 1000 == 0) return Quantity::FromInt(value / 1000, range.step->format());
  return Quantity::FromMilli(value, range.step->format());
}

Quantity Consumed(const Quantity* requested, const DeviceCapacity& cap) {
  const auto& policy = cap.request_policy;
  if (requested == nullptr) {
    return policy && policy->default_value ? *policy->default_value : cap.value;
  }
  if (!policy) return *requested;
  if (policy->valid_range) return RoundUpRange(*requested, *policy->valid_range);
  if (!policy->valid_values.empty()) {
    for (const Quantity& v : policy->valid_values) {
      if (*requested <= v) return v;
    }
  }
  return *requested;
}

bool ViolatesPolicy(const Quantity& value, const std::optional<CapacityRequestPolicy>& policy) {
  if (!policy) return false;
  if (policy->default_value && value == *policy->default_value) return false;
  if (policy->valid_range) {
    const auto& r = *policy->valid_range;
    if (r.max && value > *r.max) return true;
    if (r.step && r.step->MilliValue() > 0 &&
        (value.MilliValue() - r.min.MilliValue()) % r.step->MilliValue() != 0)
      return true;
    return false;
  }
  if (!policy->valid_values.empty()) {
    for (const Quantity& v : policy->valid_values) {
      if (v == value) return false;
    }
    return true;
  }
  return false;
}

}  // namespace

std::string QualifiedCapacityName(const std::string& name, const std::string& driver) {
  return name.find('/') == std::string::npos ? driver + "/" + name : name;
}

std::optional<CapacityAmounts> ConsumedCapacityFor(const Device& device, const std::string& driver,
                                                   const CapacityAmounts& requests,
                                                   const CapacityAmounts* consumed,
                                                   const CapacityAmounts* allocating) {
  // Requests by the device's spelling of each capacity.
  FlatMap<std::string, const Quantity*> resolved;
  for (const auto& [name, q] : requests) {
    const std::string* key = ResolveRequestName(name, driver, device);
    if (key == nullptr) return std::nullopt;  // the device lacks a requested capacity
    resolved[*key] = &q;
  }
  CapacityAmounts out;
  for (const auto& [name, cap] : device.capacity) {
    auto it = resolved.find(name);
    Quantity take = Consumed(it == resolved.end() ? nullptr : it->second, cap);
    if (take.IsNegative()) return std::nullopt;
    if (ViolatesPolicy(take, cap.request_policy)) return std::nullopt;
    Quantity total = take;
    const std::string qualified = QualifiedCapacityName(name, driver);
    if (consumed != nullptr) {
      if (auto c = consumed->find(qualified); c != consumed->end()) total += c->second;
    }
    if (allocating != nullptr) {
      if (auto a = allocating->find(qualified); a != allocating->end()) total += a->second;
    }
    if (total > cap.value) return std::nullopt;
    out[name] = take;
  }
  return out;
}

}  // namespace berth::dra::internal
