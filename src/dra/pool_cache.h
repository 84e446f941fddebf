// What the allocator derives from the ResourceSlices alone, kept across scheduling cycles:
// the slices indexed by node, each node's gathered pools, and each device in the form CEL
// selectors read. A cycle's Allocator borrows the index; none of it depends on the claims or
// on what is allocated.
//
//   dra::PoolCache cache(features);                       // one per plugin
//   auto index = cache.For(listers.ListResourceSlices()); // each cycle: the same index while
//                                                         // the slices are the same objects
//   dra::Allocator alloc(features, state, classes, index, &cel_cache);
//
// Invalidation is by identity: listers hand out immutable snapshots, so a slice that is added,
// updated or deleted changes the list of pointers, and For() then builds a new index (the old
// one lives on while a cycle still holds it). A node's pools also depend on its labels when a
// slice selects nodes by selector; they are rebuilt when the labels differ.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "berth/api/objects.h"
#include "berth/api/resource_claims.h"
#include "berth/api/result.h"
#include "cel/dra.h"
#include "dra/allocator.h"
#include "dra/device_tables.h"
#include "dra/internal.h"

namespace berth::dra {

class SliceIndex;

// The pools one node reaches (internal::GatherPools), with what they were computed from.
struct NodePools {
  // First, what Allocate's shortcut reads of a node whose devices are all held, together.
  std::string node;  // the node's name
  // The PoolKeyHash of each pool a search may take devices from (neither invalid nor
  // incomplete), when there are at most kQuickPools of them; else quick_pools is -1.
  static constexpr int kQuickPools = 4;
  int quick_pools = 0;
  std::array<size_t, kQuickPools> quick_hashes{};
  bool has_invalid = false;  // a pool is invalid
  // The seq of the allocated state's newest HeldChange when every device of those pools was
  // found held exclusively; 0: never. Written by concurrent searches.
  mutable std::atomic<uint64_t> all_held_seq{0};

  std::vector<internal::Pool> pools;
  uint32_t device_count = 0;  // devices of the pools' slices_targeting_node, numbered
  // Set when a slice reaching (or not) the node depends on more than its name: the labels the
  // pools were computed for.
  bool depends_on_labels = false;
  Labels labels;

  // The same per pool of `pools`.
  mutable std::vector<std::atomic<uint64_t>> all_held_at;

  // Per pool of `pools`: the id in `table` that every device of it the node reaches has
  // (AttributeTable::kMixed when they differ), made on first use. Thread-safe.
  const std::vector<int32_t>& PoolValues(const AttributeTable& table) const;
  // Per pool: 1 when `selector` evaluates on each of its devices without an error, else 0;
  // evaluated through `index` on first use. Thread-safe.
  const std::vector<int8_t>& PoolsClean(const SliceIndex& index, const cel::dra::Selector& selector,
                                        const SelectorResults& results) const;

 private:
  // Keyed by the index's tables, which live as long as the index and its NodePools.
  mutable std::mutex summaries_mu_;
  mutable std::vector<std::pair<const AttributeTable*, std::unique_ptr<std::vector<int32_t>>>>
      pool_values_;
  mutable std::vector<std::pair<const SelectorResults*, std::unique_ptr<std::vector<int8_t>>>>
      pools_clean_;
};

class SliceIndex {
 public:
  SliceIndex(Features features, std::vector<std::shared_ptr<const ResourceSlice>> slices);
  SliceIndex(const SliceIndex&) = delete;
  SliceIndex& operator=(const SliceIndex&) = delete;
  ~SliceIndex();

  // The pools `node` reaches, computed on first use and reused while the node's labels (when
  // they matter) stay the same. Thread-safe.
  std::shared_ptr<const NodePools> PoolsFor(const Node& node) const;
  // The same through the node's position in the scheduler's node list (NodeInfo::list_index;
  // -1: none), a table read instead of a lookup by name where the pools depend on the node's
  // name alone: those are never replaced, and live as long as the index. Others are returned
  // in `keep` too, which holds them while they are used. Thread-safe.
  const NodePools* PoolsAt(const Node& node, int32_t slot,
                           std::shared_ptr<const NodePools>* keep) const;
  // A device in the form selectors read, prepared on first use. Thread-safe.
  std::shared_ptr<const Result<cel::dra::PreparedDevice>> Prepared(const Device& d,
                                                                   const std::string& driver) const;

  const std::vector<std::shared_ptr<const ResourceSlice>>& slices() const { return owned_; }
  const Features& features() const { return features_; }
  // How many times PoolsFor gathered a node's pools (for tests of the cache).
  size_t pool_builds() const;

  // The devices of all slices, numbered slice by slice (Pool::global_base), and the slices
  // (Pool::slice_ordinal).
  size_t device_total() const { return device_total_; }
  // `selector`'s results over those devices, kept while the index lives; null past
  // kMaxSelectorTables selectors (then nothing is kept). Thread-safe.
  const SelectorResults* ResultsOf(
      const std::shared_ptr<const Result<cel::dra::Selector>>& selector) const;
  // Whether `selector` evaluates without an error on every device of slice `ordinal`: on
  // first use, it is evaluated on each of them (results kept in `results`). Thread-safe.
  bool SelectorClean(const cel::dra::Selector& selector, const SelectorResults& results,
                     uint32_t ordinal) const;
  // The attribute table of `name` (fully qualified), built on first use; null past
  // kMaxAttributeTables names. Thread-safe.
  const AttributeTable* AttributeOf(const std::string& name) const;

 private:
  std::shared_ptr<const NodePools> Gather(const Node& node) const;
  // The table cell of PoolsAt's `slot`, null beyond the table.
  std::atomic<const NodePools*>* Cell(int32_t slot) const;

  const Features features_;
  std::vector<std::shared_ptr<const ResourceSlice>> owned_;
  std::vector<const ResourceSlice*> all_slices_;
  std::unordered_map<std::string, std::vector<const ResourceSlice*>> slices_on_node_;
  std::vector<const ResourceSlice*> slices_shared_;  // without a node name
  // Whether a slice without a node name selects nodes by selector, or per device.
  bool shared_depend_on_labels_ = false;
  std::unordered_map<const ResourceSlice*, size_t> slice_order_;

  mutable std::shared_mutex pools_mu_;
  mutable std::unordered_map<std::string, std::shared_ptr<const NodePools>> pools_;
  mutable size_t pool_builds_ = 0;
  // PoolsAt's table, in chunks made on first use.
  static constexpr size_t kChunkCells = 1024, kChunks = 256;
  mutable std::array<std::atomic<std::atomic<const NodePools*>*>, kChunks> chunks_{};
  std::vector<uint32_t> slice_device_base_;  // per slice of all_slices_
  size_t device_total_ = 0;
  static constexpr size_t kMaxSelectorTables = 256, kMaxAttributeTables = 64;
  mutable std::mutex tables_mu_;
  // The pointer held keeps the selector's address from being reused.
  mutable std::vector<std::pair<std::shared_ptr<const Result<cel::dra::Selector>>,
                                std::unique_ptr<SelectorResults>>>
      selector_tables_;
  mutable std::unordered_map<std::string, std::unique_ptr<AttributeTable>> attribute_tables_;
  mutable std::shared_mutex prepared_mu_;
  mutable std::unordered_map<const Device*, std::shared_ptr<const Result<cel::dra::PreparedDevice>>>
      prepared_;
};

// Hands out the SliceIndex of the current slices, rebuilt only when they change. Thread-safe.
class PoolCache {
 public:
  explicit PoolCache(Features features) : features_(features) {}
  std::shared_ptr<const SliceIndex> For(std::vector<std::shared_ptr<const ResourceSlice>> slices);
  // As For(list()), without listing while `generation` (a count of the slices' changes the
  // caller's listers keep) is the one the index was built at.
  std::shared_ptr<const SliceIndex> ForGeneration(
      uint64_t generation,
      const std::function<std::vector<std::shared_ptr<const ResourceSlice>>()>& list);
  // Drops the index (the next For() builds a new one), e.g. on a slice event.
  void Invalidate();

 private:
  const Features features_;
  std::mutex mu_;
  std::shared_ptr<const SliceIndex> index_;
  std::optional<uint64_t> generation_;  // of index_, when ForGeneration built or checked it
};

}  // namespace berth::dra
