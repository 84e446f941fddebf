// NodeIndex: sums of per-node contributions to topology-pair counters, kept up to date across
// scheduling cycles by recomputing only the nodes that changed.
//
// A node's contribution is a pure function of its (immutable) Node object and of the
// (immutable) PodInfos of the pods the index tracks on it. The index keeps, per node, shared
// pointers to exactly those objects; on Refresh a node whose Node pointer and pod pointers are
// unchanged keeps its contribution, every other node is recomputed and its old contribution is
// replaced in the counters. Holding the pointers keeps the objects alive, so pointer equality is
// identity equality: the index is exact whatever the snapshot did in between (rebuilt lists,
// replaced NodeInfos, new snapshots).
//
// Contributions go to numbered groups, each with its own TopologyCounter. Counters are shared
// with cycle states (copy-on-write: a counter still referenced elsewhere is copied before the
// index changes it).
//
// Not thread-safe: Refresh and every mutation run on the scheduling thread; counters handed out
// are read concurrently afterwards.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "berth/framework/handle.h"
#include "berth/framework/node_info.h"
#include "plugins/interpodaffinity/topology_counter.h"

namespace berth::interpodaffinity {

// `delta` for the pair (key, value) in counter `group`. `key` and `value` must point into the
// Node / PodInfos / terms the contribution was computed from (the index keeps them alive).
struct Contribution {
  uint32_t group;
  std::string_view key;
  std::string_view value;
  int64_t delta;
};

class NodeIndex {
 public:
  // Which of a node's pods the index tracks (all pods, pods with affinity, ...).
  using PodsOf = const std::vector<PodInfoPtr>& (NodeInfo::*)() const;
  // Appends the contributions of `pods` placed on `node`.
  using ComputeFn = std::function<void(const Node& node, const std::vector<PodInfoPtr>& pods,
                                       std::vector<Contribution>& out)>;

  explicit NodeIndex(PodsOf pods_of) : pods_of_(pods_of) {}
  NodeIndex(const NodeIndex&) = delete;
  NodeIndex& operator=(const NodeIndex&) = delete;

  // Makes the counters equal to the sum of the contributions of `nodes` (nodes tracked before
  // but absent now are dropped). With a parallelizer, `compute` runs concurrently for different
  // nodes and must then only read shared state.
  // `snapshot`, when given, is the scheduler's incrementally maintained snapshot `nodes` may be
  // the node list of: its record of the last update's changes then spares a walk over all nodes.
  void Refresh(std::span<const NodeInfo* const> nodes, const ComputeFn& compute,
               Parallelizer* parallelizer, const Snapshot* snapshot = nullptr);

  // A group id for a new, empty counter (reusing released ids).
  uint32_t NewGroup();
  // Releases the groups no applied contribution refers to any more, calling released(id) for
  // each, and returns their ids to the free list.
  void ReleaseUnused(const std::function<void(uint32_t)>& released);

  // The counter of `group` (never null for an allocated group).
  const std::shared_ptr<TopologyCounter>& counter(uint32_t group) const {
    return groups_[group].counter;
  }
  // Number of applied contributions that refer to `group`.
  int64_t references(uint32_t group) const { return groups_[group].refs; }
  size_t group_count() const { return groups_.size(); }
  bool allocated(uint32_t group) const { return groups_[group].allocated; }

 private:
  struct Entry {
    std::shared_ptr<const Node> node;
    std::vector<PodInfoPtr> pods;
    std::vector<Contribution> contributions;
    uint64_t epoch = 0;
  };
  struct Group {
    std::shared_ptr<TopologyCounter> counter;
    int64_t refs = 0;
    bool allocated = false;
  };

  void Apply(const Entry& e, int64_t sign);
  TopologyCounter& Mutable(uint32_t group);

  PodsOf pods_of_;
  std::unordered_map<const NodeInfo*, Entry> entries_;
  // The node list of the previous Refresh and its entries, to skip the map lookup when a node
  // kept its position.
  std::vector<const NodeInfo*> last_nodes_;
  std::vector<Entry*> last_entries_;
  uint64_t epoch_ = 0;
  std::vector<Group> groups_;
  std::vector<uint32_t> free_groups_;
  // Scratch reused across refreshes.
  std::vector<const NodeInfo*> changed_nodes_;
  std::vector<Entry*> changed_entries_;
  const Snapshot* last_snapshot_ = nullptr;
  int64_t last_generation_ = -1;
  std::vector<std::vector<Contribution>> computed_;
};

}  // namespace berth::interpodaffinity
