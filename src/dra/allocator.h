// The structured device allocator of Dynamic Resource Allocation: which devices of the
// ResourceSlices satisfy a pod's ResourceClaims on one node, as kube-scheduler's
// k8s.io/dynamic-resource-allocation/structured package decides it.
//
//   dra::AllocatedState state = dra::AllocatedStateOf(claims_in_use);
//   dra::Allocator alloc(dra::Features{}, std::move(state), class_lookup, slices, &cel_cache);
//   auto r = alloc.Allocate(node, {claim_a, claim_b});   // from Filter, on any thread
//   if (!r.ok()) ... r.error().message             // unschedulable everywhere (class missing, ...)
//   else if (!*r) ...                              // does not fit on this node
//   else (*r)->at(0) is claim_a's status.allocation
//
// An Allocator is built once per scheduling cycle (the slices and the state of that moment) and
// is then read-only: Allocate() is const and safe to call concurrently for different nodes.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "berth/api/objects.h"
#include "berth/api/resource_claims.h"
#include "berth/api/result.h"

namespace berth::cel::dra {
class SelectorCache;
}

namespace berth::dra {

class SliceIndex;

// One device: driver, pool and device name.
struct DeviceId {
  std::string driver, pool, device;
  friend auto operator<=>(const DeviceId&, const DeviceId&) = default;
  friend bool operator==(const DeviceId&, const DeviceId&) = default;
  std::string String() const { return driver + "/" + pool + "/" + device; }
};

struct DeviceIdHash {
  size_t operator()(const DeviceId& id) const noexcept {
    std::hash<std::string> h;
    return h(id.driver) ^ (h(id.pool) * 31) ^ (h(id.device) * 1000003);
  }
};

// One allocation of a device that allows multiple allocations (its result's shareID).
struct SharedDeviceId {
  DeviceId device;
  std::string share_id;
  friend auto operator<=>(const SharedDeviceId&, const SharedDeviceId&) = default;
  friend bool operator==(const SharedDeviceId&, const SharedDeviceId&) = default;
};

// Capacity name -> amount.
using CapacityAmounts = FlatMap<std::string, Quantity>;

// The names of a pool's devices that allocated claims hold, exclusively or shared.
struct PoolHeld {
  std::vector<std::string> exclusive;
  std::vector<std::string> shared;
};

// One change of the names a pool's PoolHeld lists, in a chain from the newest to older ones:
// what was learned about the pool's devices at one change (seq) still holds after the newer
// changes when none of them is of that pool.
struct HeldChange {
  uint64_t seq = 0;      // unique in the process (NextHeldChangeSeq), growing along a chain
  size_t pool_hash = 0;  // PoolKeyHash of (driver, pool)
  std::string driver, pool;
  std::shared_ptr<const HeldChange> older;  // null: older changes are not kept
};

// A seq for a new HeldChange; never 0.
uint64_t NextHeldChangeSeq();

// (driver, pool) -> PoolHeld, looked up by string_views without copying the names.
struct PoolKeyHash {
  using is_transparent = void;
  size_t operator()(std::pair<std::string_view, std::string_view> k) const noexcept {
    std::hash<std::string_view> h;
    return h(k.first) ^ (h(k.second) * 1000003);
  }
  size_t operator()(const std::pair<std::string, std::string>& k) const noexcept {
    return (*this)(std::pair<std::string_view, std::string_view>(k.first, k.second));
  }
};
struct PoolKeyEq {
  using is_transparent = void;
  template <class A, class B>
  bool operator()(const A& a, const B& b) const noexcept {
    return std::string_view(a.first) == std::string_view(b.first) &&
           std::string_view(a.second) == std::string_view(b.second);
  }
};
using PoolHeldIndex =
    std::unordered_map<std::pair<std::string, std::string>, PoolHeld, PoolKeyHash, PoolKeyEq>;

// What the claims already allocated hold. Allocations with admin access hold nothing.
struct AllocatedState {
  std::set<DeviceId> allocated;                           // devices allocated exclusively
  std::set<SharedDeviceId> allocated_shared;              // allocations with a shareID
  std::map<DeviceId, CapacityAmounts> consumed_capacity;  // summed over the shared allocations
  // `allocated` and the devices of `consumed_capacity` by pool, for the allocator's lookups
  // node by node. The allocator fills it when `indexed` is false.
  PoolHeldIndex by_pool;
  bool indexed = false;
  // The change that made `by_pool` what it is, with those before it; null when not recorded
  // (then nothing learned about a pool is reused). AllocatedStateTracker records them.
  std::shared_ptr<const HeldChange> changes;
};

// Fills state.by_pool from the sets above.
void IndexByPool(AllocatedState& state);

// Adds one claim's allocation to `state`.
void AddAllocation(AllocatedState& state, const AllocationResult& allocation);
// The state held by the allocated claims among `claims` (those without an allocation are
// skipped).
AllocatedState AllocatedStateOf(const std::vector<std::shared_ptr<const ResourceClaim>>& claims);

// The feature gates the allocator reads, at their kube-scheduler v1.37 defaults.
struct Features {
  bool admin_access = true;           // DRAAdminAccess
  bool prioritized_list = true;       // DRAPrioritizedList (firstAvailable)
  bool partitionable_devices = true;  // DRAPartitionableDevices (counters)
  bool device_taints = true;          // DRADeviceTaints
  bool binding_conditions = true;     // DRADeviceBindingConditions
  bool consumable_capacity = true;    // DRAConsumableCapacity
};

// The error code of a failure that concerns only the node Allocate was asked about.
inline constexpr ErrorCode kFailedAllocationOnNode = ErrorCode::kConflict;
bool IsFailedAllocationOnNode(const Error& e);

// The most devices one claim's allocation holds (resource.k8s.io AllocationResultsMaxSize).
inline constexpr int kAllocationResultsMaxSize = 32;

// How one request (or subrequest) of a claim fares on a node on its own: of the devices the
// node reaches, how many pass each check of the allocator in turn. Each count is a subset of
// the one before it, except that `allocated`, `counters_exhausted`, `tainted` and `free` split
// `capacity_fit`.
struct RequestDiagnosis {
  std::string claim;                // "namespace/name"
  std::string request;              // "req" or "req/sub"
  std::string device_class;         // the class the request names
  int wanted = 0;                   // devices it asks for (1 or more for allocationMode All)
  bool all = false;                 // allocationMode All
  int considered = 0;               // devices of the pools the node reaches
  int class_match = 0;              // ... that the DeviceClass's selectors accept
  int request_match = 0;            // ... and the request's own selectors too
  int capacity_fit = 0;             // ... reachable from the node, with the capacity it requests
  std::vector<DeviceId> allocated;  // ... already allocated to other claims
  int counters_exhausted = 0;       // ... whose pool's counters are used up
  int tainted = 0;                  // ... with a taint the request does not tolerate
  int free = 0;                     // ... that the request could take
};

struct Diagnosis {
  std::vector<RequestDiagnosis> requests;  // claims, then requests, in order
  std::vector<std::string> invalid_pools;  // "driver/pool: reason"
  bool fits = false;                       // Allocate would succeed
};

using DeviceClassLookup = std::function<std::shared_ptr<const DeviceClass>(std::string_view name)>;

class Allocator {
 public:
  // `classes` returns null for a class that does not exist; `cache` compiles the CEL selectors
  // and must outlive the allocator.
  Allocator(Features features, AllocatedState allocated, DeviceClassLookup classes,
            std::vector<std::shared_ptr<const ResourceSlice>> slices,
            cel::dra::SelectorCache* cache);
  // The same over state and slices shared with other cycles (a PoolCache's index, an
  // AllocatedStateTracker's state): nothing is copied. Both must be non-null.
  Allocator(Features features, std::shared_ptr<const AllocatedState> allocated,
            DeviceClassLookup classes, std::shared_ptr<const SliceIndex> slices,
            cel::dra::SelectorCache* cache);
  ~Allocator();
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  // The allocations (one per claim, in order) of `claims` on `node`: nullopt when they do not
  // fit there; an error for what makes the pod unschedulable everywhere (a missing class, a CEL
  // selector that fails, an invalid request), except an error for which
  // IsFailedAllocationOnNode() holds, which concerns this node only (it reached an invalid
  // resource pool and found no other way): the node is unschedulable with that message.
  // `node_slot`: the node's position in the scheduler's node list (NodeInfo::list_index), -1
  // when unknown; with it, what the allocator keeps per node is found without a lookup by name.
  Result<std::optional<std::vector<AllocationResult>>> Allocate(
      const Node& node, const std::vector<std::shared_ptr<const ResourceClaim>>& claims,
      int32_t node_slot = -1) const;

  // Why `claims` do or do not fit on `node`, from the checks Allocate makes (same errors).
  Result<Diagnosis> Diagnose(const Node& node,
                             const std::vector<std::shared_ptr<const ResourceClaim>>& claims) const;

  // Replaces how shareIDs are made (random UUIDs by default), for tests; called once per
  // allocation of a device that allows multiple allocations. Not while Allocate runs.
  void SetShareIdGenerator(std::function<std::string()> gen);
  // Whether Allocate may skip the search where its outcome is known without one (a node whose
  // devices are all held), and skip the pools a matchAttribute constraint rules out; on by
  // default. Off, every call searches every device: for tests comparing the two.
  void SetShortcuts(bool on);

  struct Impl;  // internal (allocator_impl.h)

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth::dra
