// The devices of one DeviceClass a node reaches, and how many of them claims hold: what an
// extended resource backed by DRA (DRAExtendedResource) counts as allocatable and requested
// when NodeResourcesFit or NodeResourcesBalancedAllocation score it.
//
//   dra::ClassDeviceIndex index(slices);                  // once per scheduling cycle
//   auto n = index.Count(node, device_class, state, cache);  // per node, any thread
//   n->devices, n->allocated
//
// As kube-scheduler counts them: every slice of the node, for every node (allNodes) or whose
// node selector selects it, and with per-device node selection the devices that reach the
// node; a device counts when all the class's CEL selectors accept it, and as allocated when a
// claim holds it exclusively or shares it. Pools are not checked for completeness or outdated
// generations (the Filter is where a pool's state matters).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "berth/api/objects.h"
#include "berth/api/resource_claims.h"
#include "berth/api/result.h"
#include "cel/dra.h"
#include "dra/allocator.h"

namespace berth::dra {

struct ClassDeviceCount {
  int64_t devices = 0;
  int64_t allocated = 0;
};

class ClassDeviceIndex {
 public:
  explicit ClassDeviceIndex(std::vector<std::shared_ptr<const ResourceSlice>> slices);
  ClassDeviceIndex(const ClassDeviceIndex&) = delete;
  ClassDeviceIndex& operator=(const ClassDeviceIndex&) = delete;

  // A selector that does not compile or fails on a device is an error (the resource is then
  // not scored on this node, as upstream).
  Result<ClassDeviceCount> Count(const Node& node, const DeviceClass& device_class,
                                 const AllocatedState& state, cel::dra::SelectorCache& cache) const;
  // The same, remembering per node and class which devices the class's selectors accept (the
  // class held, so that its address names it) for as long as the index lives, unless slices
  // select nodes by label: then each call evaluates them. Thread-safe.
  Result<ClassDeviceCount> Count(const Node& node,
                                 const std::shared_ptr<const DeviceClass>& device_class,
                                 const AllocatedState& state, cel::dra::SelectorCache& cache) const;

  const std::vector<std::shared_ptr<const ResourceSlice>>& slices() const { return slices_; }

 private:
  // The devices of one class a node reaches, by slice.
  struct Matched {
    std::shared_ptr<const DeviceClass> device_class;
    Result<std::vector<std::pair<const ResourceSlice*, std::vector<const Device*>>>> devices;
  };
  Result<std::vector<std::pair<const ResourceSlice*, std::vector<const Device*>>>> Match(
      const Node& node, const DeviceClass& device_class, cel::dra::SelectorCache& cache) const;

  bool depends_on_labels_ = false;
  // Per node name, per class (few: the classes named by scored extended resources).
  static constexpr size_t kMaxClassesPerNode = 16;
  mutable std::shared_mutex memo_mu_;
  mutable std::unordered_map<std::string, std::vector<std::shared_ptr<const Matched>>> memo_;

  std::vector<std::shared_ptr<const ResourceSlice>> slices_;
  // Slices of one named node, by node name; the others (all nodes, node selectors, per-device
  // node selection) are looked at for every node.
  std::unordered_map<std::string, std::vector<const ResourceSlice*>> by_node_;
  std::vector<const ResourceSlice*> other_;
};

// Whether a claim holds the device, exclusively or as one of its shared allocations.
bool IsDeviceAllocated(const DeviceId& id, const AllocatedState& state);

// Hands out the ClassDeviceIndex of the current slices, rebuilt only when `generation` (a count
// of the slices' changes the caller's listers keep) moves and the list differs. Thread-safe.
class ClassDeviceIndexCache {
 public:
  std::shared_ptr<const ClassDeviceIndex> For(
      uint64_t generation,
      const std::function<std::vector<std::shared_ptr<const ResourceSlice>>()>& list);

 private:
  std::mutex mu_;
  std::shared_ptr<const ClassDeviceIndex> index_;
  std::optional<uint64_t> generation_;
};

}  // namespace berth::dra
