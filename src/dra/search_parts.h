// Parts of the allocator's search (search.cc) over single devices: where a candidate lives,
// claim constraints over the devices picked so far, and device taints.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "berth/api/resource_claims.h"
#include "dra/allocator.h"
#include "dra/device_tables.h"
#include "dra/internal.h"

namespace berth::dra::internal {

// A candidate device and where it lives.
struct DeviceRef {
  const Device* device = nullptr;
  const ResourceSlice* slice = nullptr;
  const Pool* pool = nullptr;
  uint32_t index = 0;   // among the node's devices (Pool::device_base)
  uint32_t global = 0;  // among the SliceIndex's devices (Pool::global_base)
  DeviceId Id() const { return DeviceId{pool->driver, pool->name, device->name}; }
};

// A claim constraint (matchAttribute or distinctAttribute) over the devices picked so far.
struct Constraint {
  bool match = true;  // else distinct
  std::set<std::string> requests;
  std::string attribute;  // fully qualified
  // The attribute's values by device, resolved once per index (null past its limit).
  const AttributeTable* table = nullptr;
  const DeviceAttribute* value = nullptr;       // match: the value of the devices taken so far
  int32_t value_id = AttributeTable::kMissing;  // its id in `table`
  int count = 0;
  std::vector<DeviceAttribute> seen;  // distinct

  bool Applies(const std::string& request, const std::string& sub) const {
    if (requests.empty()) return true;
    if (requests.count(request)) return true;
    return !sub.empty() && requests.count(request + "/" + sub) > 0;
  }
};

// Adds device `d`, picked for `request` (subrequest `sub`, or empty), to constraint `c`: false
// when it breaks the constraint (then nothing changed).
bool Add(Constraint& c, const std::string& request, const std::string& sub, const DeviceRef& d);
// Takes back what Add() did for `d`.
void Remove(Constraint& c, const std::string& request, const std::string& sub, const DeviceRef& d);
// Whether a taint of `d` keeps the request from taking it.
bool TaintPrevents(const Device& d, const ExactDeviceRequest& req);

}  // namespace berth::dra::internal
