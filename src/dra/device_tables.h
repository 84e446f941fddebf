// Per-device facts a SliceIndex keeps for every search over its slices: a selector's result on
// each device, and an attribute's value on each device interned to a number. Devices are
// numbered across the whole index (every slice, whichever nodes it reaches), so what one node's
// search learns serves every other node's and later cycles' while the slices are unchanged.
//
// Both let a search rule out a whole slice without visiting its devices: a matchAttribute
// constraint whose value is fixed cannot be met by a slice none of whose devices has that
// value, and skipping it changes nothing when the selectors evaluate on each of its devices
// without an error (an error would end the search, so such slices are still visited).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "berth/api/resource_claims.h"

namespace berth::dra {

// One selector's results over the index's devices. Written by concurrent searches: each cell
// goes from unknown to its one value, so a racing writer writes the same value.
class SelectorResults {
 public:
  SelectorResults(size_t devices, size_t slices);
  // -1 unknown, 0 rejects, 1 accepts. Errors are not kept: a search evaluates again to
  // report them.
  int8_t Get(uint32_t device) const { return devices_[device].load(std::memory_order_relaxed); }
  void Set(uint32_t device, bool matches) const {
    devices_[device].store(matches ? 1 : 0, std::memory_order_relaxed);
  }
  // Per slice (its position in the index): -1 unknown, 0 the selector fails on a device of
  // it, 1 it evaluates on every device without an error.
  int8_t SliceClean(uint32_t slice) const { return slices_[slice].load(std::memory_order_acquire); }
  void SetSliceClean(uint32_t slice, bool clean) const {
    slices_[slice].store(clean ? 1 : 0, std::memory_order_release);
  }

 private:
  std::unique_ptr<std::atomic<int8_t>[]> devices_;
  std::unique_ptr<std::atomic<int8_t>[]> slices_;
};

// One fully qualified attribute name's value on every device of the index. Immutable once
// built.
struct AttributeTable {
  static constexpr int32_t kMissing = -1;     // the device has no such attribute
  static constexpr int32_t kMixed = -2;       // a slice whose devices differ
  std::vector<const DeviceAttribute*> value;  // per device; null: missing
  std::vector<int32_t> id;                    // per device: equal values, equal ids
  // Per slice: the id every device of it has (kMissing for a slice without devices or whose
  // devices all lack it), or kMixed.
  std::vector<int32_t> slice_id;
};

// The attribute `name` (fully qualified, "domain/attr") of a device of `driver`: the device may
// spell attributes of its driver's domain without the domain. Null when it has none.
const DeviceAttribute* LookupAttribute(const Device& d, const std::string& driver,
                                       const std::string& name);

// Builds the table of `name` over `slices`, whose devices are numbered from `device_base`
// (per slice) on.
AttributeTable BuildAttributeTable(const std::string& name,
                                   const std::vector<const ResourceSlice*>& slices,
                                   const std::vector<uint32_t>& device_base, size_t devices);

}  // namespace berth::dra
