// Extended resources backed by DRA in a scoring configuration (DRAExtendedResource): on a node
// that does not advertise such a resource, NodeResourcesFit and BalancedAllocation score it by
// the devices of its DeviceClass the node reaches (allocatable) and those claims hold plus the
// pod's request (requested), as kube-scheduler does. PreScore gathers what the cycle needs.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "berth/framework/handle.h"
#include "berth/framework/node_info.h"
#include "cel/dra.h"
#include "dra/allocated_tracker.h"
#include "dra/allocator.h"
#include "dra/class_devices.h"
#include "plugins/noderesources/resource_allocation.h"

namespace berth::noderesources {

class DraBackedResources {
 public:
  // Null when no resource of `resources` is backed by a DeviceClass or the cluster serves no
  // resource.k8s.io. Reads the listers' slices and claims: claims allocated by cycles whose
  // PreBind has not written them yet are not counted. `held`, when given, keeps what the
  // claims hold from one cycle to the next (the plugin's own tracker), so a cycle pays for the
  // claims that changed instead of adding up every claim of the cluster again; with listers
  // that have a claim change feed (framework/claim_feed.h) it reads the changes instead of
  // listing the claims.
  // `indexes`, when given, keeps the slices' index across cycles while they do not change
  // (with what each class's selectors accepted on each node).
  static std::shared_ptr<const DraBackedResources> Gather(
      const Handle& handle, std::span<const ScoredResource> resources,
      cel::dra::SelectorCache* cache, dra::AllocatedStateTracker* held = nullptr,
      dra::ClassDeviceIndexCache* indexes = nullptr);

  // For each backed resource the pod requests and `node` does not advertise: allocatable[i] the
  // class's devices the node reaches, requested[i] those allocated plus pod_requests[i]. Left
  // as NodeUsage set them when the node reaches none (or a selector fails on a device).
  void Apply(const NodeInfo& node, std::span<const ScoredResource> resources,
             std::span<const int64_t> pod_requests, std::span<int64_t> allocatable,
             std::span<int64_t> requested) const;

  DraBackedResources(std::vector<std::shared_ptr<const DeviceClass>> classes,
                     std::shared_ptr<const dra::ClassDeviceIndex> index,
                     std::shared_ptr<const dra::AllocatedState> state,
                     cel::dra::SelectorCache* cache)
      : classes_(std::move(classes)),
        index_(std::move(index)),
        state_(std::move(state)),
        cache_(cache) {}

 private:
  std::vector<std::shared_ptr<const DeviceClass>> classes_;  // per scored resource; null: none
  std::shared_ptr<const dra::ClassDeviceIndex> index_;
  std::shared_ptr<const dra::AllocatedState> state_;
  cel::dra::SelectorCache* cache_;
};

}  // namespace berth::noderesources
