#include "dra/pool_cache.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "dra/allocator_impl.h"

namespace berth::dra {

SliceIndex::SliceIndex(Features features, std::vector<std::shared_ptr<const ResourceSlice>> slices)
    : features_(features), owned_(std::move(slices)) {
  for (const auto& s : owned_) {
    if (!s) continue;
    slice_order_.emplace(s.get(), all_slices_.size());
    all_slices_.push_back(s.get());
    slice_device_base_.push_back(static_cast<uint32_t>(device_total_));
    device_total_ += s->spec.devices.size();
    if (s->spec.node_name && !s->spec.node_name->empty()) {
      slices_on_node_[*s->spec.node_name].push_back(s.get());
    } else {
      slices_shared_.push_back(s.get());
      if (s->spec.node_selector || s->spec.per_device_node_selection)
        shared_depend_on_labels_ = true;
    }
  }
}

SliceIndex::~SliceIndex() {
  for (auto& chunk : chunks_) delete[] chunk.load();
}

std::shared_ptr<const NodePools> SliceIndex::PoolsFor(const Node& node) const {
  auto current = [&](const std::shared_ptr<const NodePools>& p) {
    return p && (!p->depends_on_labels || p->labels == node.metadata.labels);
  };
  {
    std::shared_lock lock(pools_mu_);
    auto it = pools_.find(node.metadata.name);
    if (it != pools_.end() && current(it->second)) return it->second;
  }
  std::shared_ptr<const NodePools> built = Gather(node);
  std::unique_lock lock(pools_mu_);
  ++pool_builds_;
  std::shared_ptr<const NodePools>& entry = pools_[node.metadata.name];
  // Another thread may have been first: keep its pools, which PoolsAt may hand out.
  if (!current(entry)) entry = std::move(built);
  return entry;
}

std::atomic<const NodePools*>* SliceIndex::Cell(int32_t slot) const {
  if (slot < 0 || static_cast<size_t>(slot) >= kChunkCells * kChunks) return nullptr;
  std::atomic<std::atomic<const NodePools*>*>& chunk = chunks_[slot / kChunkCells];
  std::atomic<const NodePools*>* cells = chunk.load(std::memory_order_acquire);
  if (cells == nullptr) {
    auto* fresh = new std::atomic<const NodePools*>[kChunkCells]();
    if (chunk.compare_exchange_strong(cells, fresh, std::memory_order_acq_rel)) {
      cells = fresh;
    } else {
      delete[] fresh;  // another thread's chunk is in `cells`
    }
  }
  return &cells[slot % kChunkCells];
}

const NodePools* SliceIndex::PoolsAt(const Node& node, int32_t slot,
                                     std::shared_ptr<const NodePools>* keep) const {
  std::atomic<const NodePools*>* cell = Cell(slot);
  if (cell != nullptr) {
    const NodePools* p = cell->load(std::memory_order_acquire);
    if (p != nullptr && p->node == node.metadata.name) return p;
  }
  *keep = PoolsFor(node);
  if (cell != nullptr && !(*keep)->depends_on_labels)
    cell->store(keep->get(), std::memory_order_release);
  return keep->get();
}

std::shared_ptr<const NodePools> SliceIndex::Gather(const Node& node) const {
  // The node's own slices and those without a node name, in input order.
  static const std::vector<const ResourceSlice*> kNone;
  auto own = slices_on_node_.find(node.metadata.name);
  const auto& mine = own == slices_on_node_.end() ? kNone : own->second;
  std::vector<const ResourceSlice*> candidates;
  candidates.reserve(mine.size() + slices_shared_.size());
  std::merge(mine.begin(), mine.end(), slices_shared_.begin(), slices_shared_.end(),
             std::back_inserter(candidates), [&](const ResourceSlice* x, const ResourceSlice* y) {
               return slice_order_.at(x) < slice_order_.at(y);
             });
  auto out = std::make_shared<NodePools>();
  out->node = node.metadata.name;
  out->pools = internal::GatherPools(candidates, all_slices_, node, features_);
  for (internal::Pool& pool : out->pools) {
    pool.key_hash =
        PoolKeyHash{}(std::pair<std::string_view, std::string_view>(pool.driver, pool.name));
    for (const ResourceSlice* s : pool.slices_targeting_node) {
      const size_t ordinal = slice_order_.at(s);
      pool.slice_ordinal.push_back(static_cast<uint32_t>(ordinal));
      pool.global_base.push_back(slice_device_base_[ordinal]);
      pool.device_base.push_back(out->device_count);
      out->device_count += static_cast<uint32_t>(s->spec.devices.size());
    }
  }
  out->all_held_at = std::vector<std::atomic<uint64_t>>(out->pools.size());
  for (const internal::Pool& pool : out->pools) {
    if (pool.invalid) out->has_invalid = true;
    if (pool.invalid || pool.incomplete || out->quick_pools < 0) continue;
    if (out->quick_pools == NodePools::kQuickPools) {
      out->quick_pools = -1;
      continue;
    }
    out->quick_hashes[static_cast<size_t>(out->quick_pools++)] = pool.key_hash;
  }
  if (shared_depend_on_labels_) {
    out->depends_on_labels = true;
    out->labels = node.metadata.labels;
  }
  return out;
}

std::shared_ptr<const Result<cel::dra::PreparedDevice>> SliceIndex::Prepared(
    const Device& d, const std::string& driver) const {
  {
    std::shared_lock lock(prepared_mu_);
    if (auto it = prepared_.find(&d); it != prepared_.end()) return it->second;
  }
  cel::dra::Device cd;
  cd.driver = driver;
  for (const auto& [name, v] : d.attributes) cd.attributes.emplace_back(name, ToCel(v));
  for (const auto& [name, c] : d.capacity) cd.capacity.emplace_back(name, c.value);
  cd.allow_multiple_allocations = d.allow_multiple_allocations;
  auto p = std::make_shared<const Result<cel::dra::PreparedDevice>>(
      cel::dra::PreparedDevice::Prepare(cd));
  std::unique_lock lock(prepared_mu_);
  return prepared_.emplace(&d, std::move(p)).first->second;
}

const SelectorResults* SliceIndex::ResultsOf(
    const std::shared_ptr<const Result<cel::dra::Selector>>& selector) const {
  std::lock_guard lock(tables_mu_);
  for (const auto& [sel, table] : selector_tables_)
    if (sel == selector) return table.get();
  if (selector_tables_.size() >= kMaxSelectorTables) return nullptr;
  return selector_tables_
      .emplace_back(selector, std::make_unique<SelectorResults>(device_total_, all_slices_.size()))
      .second.get();
}

bool SliceIndex::SelectorClean(const cel::dra::Selector& selector, const SelectorResults& results,
                               uint32_t ordinal) const {
  if (int8_t known = results.SliceClean(ordinal); known >= 0) return known == 1;
  const ResourceSlice* slice = all_slices_[ordinal];
  bool clean = true;
  for (size_t i = 0; i < slice->spec.devices.size(); ++i) {
    const uint32_t d = slice_device_base_[ordinal] + static_cast<uint32_t>(i);
    if (results.Get(d) >= 0) continue;
    auto prepared = Prepared(slice->spec.devices[i], slice->spec.driver);
    if (!prepared->ok()) {
      clean = false;
      continue;
    }
    auto m = selector.Matches(**prepared);
    if (!m.ok()) {
      clean = false;
      continue;
    }
    results.Set(d, *m);
  }
  results.SetSliceClean(ordinal, clean);
  return clean;
}

const AttributeTable* SliceIndex::AttributeOf(const std::string& name) const {
  std::lock_guard lock(tables_mu_);
  if (auto it = attribute_tables_.find(name); it != attribute_tables_.end())
    return it->second.get();
  if (attribute_tables_.size() >= kMaxAttributeTables) return nullptr;
  auto table = std::make_unique<AttributeTable>(
      BuildAttributeTable(name, all_slices_, slice_device_base_, device_total_));
  return attribute_tables_.emplace(name, std::move(table)).first->second.get();
}

const std::vector<int32_t>& NodePools::PoolValues(const AttributeTable& table) const {
  std::lock_guard lock(summaries_mu_);
  for (const auto& [t, values] : pool_values_)
    if (t == &table) return *values;
  auto values = std::make_unique<std::vector<int32_t>>(pools.size(), AttributeTable::kMissing);
  for (size_t p = 0; p < pools.size(); ++p) {
    const auto& ordinals = pools[p].slice_ordinal;
    for (size_t i = 0; i < ordinals.size(); ++i) {
      const int32_t id = table.slice_id[ordinals[i]];
      (*values)[p] = i == 0 || (*values)[p] == id ? id : AttributeTable::kMixed;
    }
  }
  return *pool_values_.emplace_back(&table, std::move(values)).second;
}

const std::vector<int8_t>& NodePools::PoolsClean(const SliceIndex& index,
                                                 const cel::dra::Selector& selector,
                                                 const SelectorResults& results) const {
  std::lock_guard lock(summaries_mu_);
  for (const auto& [r, clean] : pools_clean_)
    if (r == &results) return *clean;
  auto clean = std::make_unique<std::vector<int8_t>>(pools.size(), 1);
  for (size_t p = 0; p < pools.size(); ++p) {
    for (uint32_t ordinal : pools[p].slice_ordinal)
      if (!index.SelectorClean(selector, results, ordinal)) (*clean)[p] = 0;
  }
  return *pools_clean_.emplace_back(&results, std::move(clean)).second;
}

size_t SliceIndex::pool_builds() const {
  std::shared_lock lock(pools_mu_);
  return pool_builds_;
}

std::shared_ptr<const SliceIndex> PoolCache::For(
    std::vector<std::shared_ptr<const ResourceSlice>> slices) {
  std::lock_guard lock(mu_);
  generation_.reset();
  if (index_ && index_->slices() == slices) return index_;
  index_ = std::make_shared<const SliceIndex>(features_, std::move(slices));
  return index_;
}

std::shared_ptr<const SliceIndex> PoolCache::ForGeneration(
    uint64_t generation,
    const std::function<std::vector<std::shared_ptr<const ResourceSlice>>()>& list) {
  {
    std::lock_guard lock(mu_);
    if (index_ && generation_ == generation) return index_;
  }
  // Listed after the generation was read: a change in between is in the list, and the next
  // generation makes the next call list again.
  auto index = For(list());
  std::lock_guard lock(mu_);
  if (index_ == index) generation_ = generation;
  return index;
}

void PoolCache::Invalidate() {
  std::lock_guard lock(mu_);
  index_.reset();
  generation_.reset();
}

}  // namespace berth::dra
