// Cross-cycle caches that let PodTopologySpread's PreFilter and PreScore visit every node of a
// large cluster in a few nanoseconds per node.
//
// A scheduling cycle needs, for every node of the snapshot, the node's value of each topology
// key and the number of pods on it matching each constraint's selector. Both rarely change
// between cycles: node objects are immutable (an update is a new object) and a cycle usually
// changes the pods of one node. SpreadCache keeps
//   * a NodeTable: the snapshot's node objects in snapshot order ("slots") with a pointer index,
//     rebuilt only when a node is added, removed or reordered, or replaced by an object whose
//     labels or taints differ. A node object replaced by one of the same name, labels and taints
//     (a status update: hundreds a second at 100,000 nodes) takes its slot in place;
//   * per topology key, the domain id (dense integer) of every slot (KeyDomains);
//   * per slot, the pods last seen on it and a version that changes whenever they change;
//   * per (namespace, selector), the matching-pod count of every slot, recomputed only for slots
//     whose version moved (Counts);
//   * per incoming-pod node-inclusion inputs, the inclusion flags of every slot.
// NodeTable and KeyDomains are shared with the cycle states, which Filter and Score read
// concurrently; KeyDomains are immutable, and a NodeTable changes only by such an in-place
// replacement, in PreFilter or PreScore, before the cycle's readers start. Everything else is
// mutated only by the owning plugin's PreFilter / PreScore on the scheduling thread, under the
// cache's mutex.
//
// Change detection compares the pod pointers a node holds with those seen last time (the cache
// keeps them alive, so an address is never reused for another pod while it is remembered). For
// the scheduler's incrementally maintained snapshot, whose NodeInfos persist across cycles and
// change generation on every mutation, an unchanged (address, generation) pair skips that
// comparison, so a cycle touches one cache line per node.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "berth/framework/node_info.h"
#include "plugins/podtopologyspread/constraints.h"

namespace berth::podtopologyspread {

// Open-addressing map from an object address to a dense index. Built once; afterwards a key
// can only be replaced by another (Replace).
class PtrIndex {
 public:
  PtrIndex() = default;
  explicit PtrIndex(size_t expected);
  // `key` must not be null and must not be present yet.
  void Insert(const void* key, int32_t value);
  // Files `key` under `value` and `old_key` under nothing (its bucket stays, so probes past it
  // still work). False, changing nothing, when the buckets are too full for another key.
  bool Replace(const void* old_key, const void* key, int32_t value);
  // -1 when absent.
  int32_t Find(const void* key) const {
    if (buckets_.empty() || key == nullptr) return -1;
    for (size_t i = Hash(key) & mask_;; i = (i + 1) & mask_) {
      const Bucket& b = buckets_[i];
      if (b.key == key) return b.value;
      if (b.key == nullptr) return -1;
    }
  }

 private:
  struct Bucket {
    const void* key = nullptr;
    int32_t value = -1;
  };
  static size_t Hash(const void* p) {
    auto v = reinterpret_cast<uintptr_t>(p);
    return static_cast<size_t>((v >> 4) * 0x9E3779B97F4A7C15ull >> 16);
  }
  std::vector<Bucket> buckets_;
  size_t mask_ = 0;
  size_t used_ = 0;  // buckets holding a key, replaced ones included
};

// Whether `now` may take `before`'s slot in a NodeTable: the same name, labels and taints,
// everything the cache derives from a node object.
bool SameTopology(const Node* before, const Node* now);

// The snapshot's node objects in snapshot order. A slot's node changes only through
// ReplaceNode.
class NodeTable {
 public:
  NodeTable(std::span<const NodeInfo* const> nodes, uint64_t id);
  // Puts `node` in `slot` in place of the node there, which must have the same name, labels
  // and taints (SameTopology): what was derived from the table stays true. False, changing
  // nothing, when the address index is too full: the table must then be built again.
  bool ReplaceNode(size_t slot, std::shared_ptr<const Node> node);
  uint64_t id() const { return id_; }
  size_t size() const { return nodes_.size(); }
  // Null for a NodeInfo without a node.
  const Node* node(size_t slot) const { return nodes_[slot].get(); }
  bool has_node(size_t slot) const { return has_node_[slot] != 0; }
  // The slot of a node object, -1 if the object is not in the table.
  int32_t Find(const Node* node) const { return index_.Find(node); }
  // The slot of a NodeInfo's node: its list position when that holds this node (no hash
  // lookup, which misses the CPU cache at 100,000 nodes), else Find.
  int32_t SlotOf(const NodeInfo& info) const {
    const int32_t i = info.list_index();
    const Node* node = info.node();
    if (i >= 0 && static_cast<size_t>(i) < nodes_.size() && nodes_[i].get() == node &&
        node != nullptr) {
      return i;
    }
    return Find(node);
  }

 private:
  uint64_t id_;
  std::vector<std::shared_ptr<const Node>> nodes_;
  std::vector<uint8_t> has_node_;
  PtrIndex index_;
};

// Dense ids for the values of one topology key over a NodeTable. Immutable.
class KeyDomains {
 public:
  KeyDomains(const NodeTable& table, const std::string& key);
  // Domain of a slot; -1 when the node lacks the label.
  int32_t slot_domain(size_t slot) const { return slot_domain_[slot]; }
  const int32_t* slot_domains() const { return slot_domain_.data(); }
  // Domain of a value; -1 when no node of the table has it.
  int32_t Find(std::string_view value) const;
  size_t num_domains() const { return ids_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<int32_t> slot_domain_;
  std::unordered_map<std::string, int32_t, Hash, std::equal_to<>> ids_;
};

// Every method but mutex() requires mutex() to be held.
class SpreadCache {
 public:
  // `comparison_operators`: the TaintTolerationComparisonOperators gate, fixed for the cache's
  // life so that its inclusion memos hold under one rule.
  explicit SpreadCache(bool comparison_operators = false)
      : comparison_operators_(comparison_operators) {}

  // Per-slot matching-pod counts for one count key (see SpreadConstraint::count_key), in step
  // with the last Refresh once CountsFor returned it.
  class Counts {
   public:
    int32_t Get(size_t slot) const { return count_[slot]; }
    const int32_t* data() const { return count_.data(); }

   private:
    friend class SpreadCache;
    // The counts summed per domain of one topology key over every slot ([num_domains]: slots
    // whose node lacks the key), moved along by each recounted slot.
    struct Totals {
      std::shared_ptr<const KeyDomains> domains;
      std::vector<int64_t> sum;
    };
    CompiledSelector selector_;
    std::string ns_;
    uint64_t table_id_ = 0;
    // Position in the cache's change log up to which this memo is in step, valid while
    // log_epoch_ is the log's epoch.
    size_t log_pos_ = 0;
    uint64_t log_epoch_ = 0;
    std::vector<uint64_t> seen_;  // slot version the count was computed at
    std::vector<int32_t> count_;
    // A few keys, most recent last: derived from count_ on demand (DomainTotals, reached through
    // the const references CountsFor hands out), then moved along by Recount.
    mutable std::vector<Totals> totals_;
  };

  // Per-slot node inclusion flags for one incoming pod's inclusion inputs.
  static constexpr uint8_t kAffinityMatches = 1;
  static constexpr uint8_t kTaintsTolerated = 2;
  static constexpr size_t kCountsCapacity = 64;

  std::mutex& mutex() { return mu_; }

  // What changed in an incrementally maintained snapshot since one of its generations: the
  // NodeInfos whose pods or node object changed in place, the node list being otherwise the
  // same. (The scheduler's cache knows this when it updates the snapshot.)
  struct Delta {
    int64_t from_generation = -1;
    std::span<const NodeInfo* const> changed;
  };

  // Brings the table and the per-slot pod observations up to date with `nodes` and returns the
  // current table. `snapshot` is the snapshot `nodes` is the list of, when it is maintained
  // incrementally by the scheduler's cache (Snapshot::generation > 0): its NodeInfos then live
  // across cycles and every change to one changes its generation, so an unchanged
  // (NodeInfo address, generation) pair proves an unchanged node, and an unchanged snapshot
  // generation an unchanged snapshot. Otherwise (null) every node's pods are compared. With a
  // `delta` starting at the generation of the previous Refresh, only its nodes are looked at.
  const std::shared_ptr<const NodeTable>& Refresh(std::span<const NodeInfo* const> nodes,
                                                  const Snapshot* snapshot,
                                                  const Delta* delta = nullptr);
  const std::shared_ptr<const NodeTable>& table() const { return table_; }

  // Domains of `key` over the current table.
  std::shared_ptr<const KeyDomains> Domains(const std::string& key);

  // Counts for constraints with this (non-empty) count key; `selector` and `ns` must be what
  // the key encodes. The reference stays valid while fewer than kCountsCapacity other count
  // keys are looked up.
  const Counts& CountsFor(const std::string& count_key, const CompiledSelector& selector,
                          std::string_view ns);

  // The counts of `counts` (as CountsFor returned them) summed per domain of `domains` (the
  // current table's) over every slot: [d] for domain d, [num_domains] for the slots whose node
  // lacks the key. Computed once over the table, then moved along by the slots recounted, so a
  // cycle costs what changed rather than a pass over every node. The reference is valid until
  // the next call.
  const std::vector<int64_t>& DomainTotals(const Counts& counts,
                                           const std::shared_ptr<const KeyDomains>& domains);

  // Inclusion flags of every slot for `pod`, computing only the requested bits (the others are
  // set; the taint check follows the cache's TaintTolerationComparisonOperators gate). The
  // reference is valid until the next Inclusion call.
  const std::vector<uint8_t>& Inclusion(const Pod& pod, bool affinity, bool taints);

  // Pods seen on a slot at the last Refresh.
  const std::vector<PodInfoPtr>& pods(size_t slot) const { return slots_[slot].pods; }

 private:
  struct Slot {
    // Where and at which generation the pods were last looked at.
    const NodeInfo* info = nullptr;
    int64_t generation = 0;
    std::vector<PodInfoPtr> pods;
    uint64_t version = 0;  // changes whenever `pods` does
  };
  template <class V>
  class Lru {
   public:
    explicit Lru(size_t capacity) : capacity_(capacity) {}
    V* Find(const std::string& key);
    V& Insert(const std::string& key, V value);

   private:
    size_t capacity_;
    std::list<std::pair<std::string, V>> entries_;
    std::unordered_map<std::string, typename std::list<std::pair<std::string, V>>::iterator> index_;
  };
  struct InclusionMemo {
    uint64_t table_id = 0;
    std::vector<uint8_t> flags;
  };

  void Observe(size_t slot, const NodeInfo& info);
  void Rebuild(std::span<const NodeInfo* const> nodes);
  // Puts `info`'s node in the slot of its list position when SameTopology allows; the slot, or
  // -1.
  int32_t ReplaceInPlace(const NodeInfo& info);
  void ResetLog();
  // Carries a memo computed over the previous table over to the current one.
  void Remap(Counts& c);
  void Recount(Counts& c, size_t slot);

  std::mutex mu_;
  std::shared_ptr<const NodeTable> table_;
  NodeTable* mutable_table_ = nullptr;  // table_, created by this cache for ReplaceNode
  std::vector<Slot> slots_;
  uint64_t next_version_ = 0;
  uint64_t next_table_id_ = 0;
  // The incremental snapshot (and its generation) the slots were last brought up to date with.
  const Snapshot* refreshed_snapshot_ = nullptr;
  int64_t refreshed_generation_ = 0;
  // Slots whose pods changed, in order; memos catch up by replaying it from their position.
  std::vector<uint32_t> log_;
  uint64_t log_epoch_ = 1;
  // For the last rebuild: previous table id and, per current slot, its slot in that table.
  uint64_t previous_table_id_ = 0;
  std::vector<int32_t> previous_slot_;
  std::unordered_map<std::string, std::shared_ptr<const KeyDomains>> domains_;
  Lru<Counts> counts_{kCountsCapacity};
  Lru<InclusionMemo> inclusion_{16};
  const bool comparison_operators_;
};

}  // namespace berth::podtopologyspread
