#include "dra/search_parts.h"

#include <algorithm>

namespace berth::dra::internal {
namespace {

const DeviceAttribute* AttributeOf(const Constraint& c, const DeviceRef& d) {
  return c.table != nullptr ? c.table->value[d.global]
                            : LookupAttribute(*d.device, d.pool->driver, c.attribute);
}

// resourceclaim.ToleratesTaint: an empty key or effect matches any.
bool Tolerates(const DeviceToleration& t, const DeviceTaint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.op.empty() || t.op == "Equal") return t.value == taint.value;
  return t.op == "Exists";
}

}  // namespace

bool Add(Constraint& c, const std::string& request, const std::string& sub, const DeviceRef& d) {
  if (!c.Applies(request, sub)) return true;
  const DeviceAttribute* a = AttributeOf(c, d);
  if (a == nullptr) return false;
  if (c.match) {
    if (c.count == 0) {
      c.value = a;
      if (c.table != nullptr) c.value_id = c.table->id[d.global];
    } else if (c.table != nullptr ? c.table->id[d.global] != c.value_id : !(*a == *c.value)) {
      return false;
    }
    ++c.count;
    return true;
  }
  if (std::find(c.seen.begin(), c.seen.end(), *a) != c.seen.end()) return false;
  c.seen.push_back(*a);
  return true;
}

void Remove(Constraint& c, const std::string& request, const std::string& sub, const DeviceRef& d) {
  if (!c.Applies(request, sub)) return;
  if (c.match) {
    --c.count;
    return;
  }
  const DeviceAttribute* a = AttributeOf(c, d);
  if (a == nullptr) return;
  if (auto it = std::find(c.seen.begin(), c.seen.end(), *a); it != c.seen.end()) c.seen.erase(it);
}

bool TaintPrevents(const Device& d, const ExactDeviceRequest& req) {
  for (const DeviceTaint& taint : d.taints) {
    // Only these effects keep a device from being allocated; None and unknown ones do not.
    if (taint.effect != "NoSchedule" && taint.effect != "NoExecute") continue;
    if (std::none_of(req.tolerations.begin(), req.tolerations.end(),
                     [&](const DeviceToleration& t) { return Tolerates(t, taint); }))
      return true;
  }
  return false;
}

}  // namespace berth::dra::internal
