#include "plugins/podtopologyspread/spread_cache.h"

#include <algorithm>
#include <bit>

#include "api/tolerations.h"

namespace berth::podtopologyspread {
namespace {

void Put(std::string& out, std::string_view s) {
  out.append(std::to_string(s.size()));
  out.push_back(':');
  out.append(s);
}

void PutRequirements(std::string& out, const std::vector<NodeSelectorRequirement>& reqs) {
  out.append(std::to_string(reqs.size()));
  out.push_back('#');
  for (const auto& r : reqs) {
    Put(out, r.key);
    Put(out, r.op);
    out.append(std::to_string(r.values.size()));
    out.push_back('#');
    for (const auto& v : r.values) Put(out, v);
  }
}

// Everything Inclusion() reads from the pod, for the requested checks.
std::string InclusionKey(const Pod& pod, bool affinity, bool taints) {
  std::string key;
  if (affinity) {
    key.push_back('A');
    for (const auto& [k, v] : pod.spec.node_selector) {
      Put(key, k);
      Put(key, v);
    }
    const auto& a = pod.spec.affinity;
    if (a && a->node_affinity && a->node_affinity->required) {
      key.push_back('R');
      for (const auto& term : a->node_affinity->required->terms) {
        key.push_back('{');
        PutRequirements(key, term.match_expressions);
        PutRequirements(key, term.match_fields);
        key.push_back('}');
      }
    }
  }
  if (taints) {
    key.push_back('T');
    for (const auto& t : pod.spec.tolerations) {
      Put(key, t.key);
      Put(key, t.op);
      Put(key, t.value);
      Put(key, t.effect);
    }
  }
  return key;
}

bool SamePods(const std::vector<PodInfoPtr>& a, const std::vector<PodInfoPtr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].get() != b[i].get()) return false;
  return true;
}

}  // namespace

// ---------------------------------------------------------------- PtrIndex

PtrIndex::PtrIndex(size_t expected) {
  // Load factor at most 2/3: short probes in a table small enough to stay cached.
  size_t cap = std::bit_ceil(std::max<size_t>(16, expected + expected / 2 + 1));
  buckets_.assign(cap, Bucket{});
  mask_ = cap - 1;
}

void PtrIndex::Insert(const void* key, int32_t value) {
  for (size_t i = Hash(key) & mask_;; i = (i + 1) & mask_) {
    if (buckets_[i].key == nullptr) {
      buckets_[i] = {key, value};
      ++used_;
      return;
    }
  }
}

bool PtrIndex::Replace(const void* old_key, const void* key, int32_t value) {
  // At most 3/4 full, so probes stay short and one bucket is always empty.
  if (buckets_.empty() || (used_ + 1) * 4 > buckets_.size() * 3) return false;
  for (size_t i = Hash(old_key) & mask_; buckets_[i].key != nullptr; i = (i + 1) & mask_) {
    if (buckets_[i].key == old_key) {
      buckets_[i].value = -1;
      break;
    }
  }
  for (size_t i = Hash(key) & mask_;; i = (i + 1) & mask_) {
    Bucket& b = buckets_[i];
    if (b.key == key) {  // an address used before, by a node replaced since
      b.value = value;
      return true;
    }
    if (b.key == nullptr) {
      b = {key, value};
      ++used_;
      return true;
    }
  }
}

// ---------------------------------------------------------------- NodeTable

NodeTable::NodeTable(std::span<const NodeInfo* const> nodes, uint64_t id)
    : id_(id), index_(nodes.size()) {
  nodes_.reserve(nodes.size());
  for (const NodeInfo* ni : nodes) {
    nodes_.push_back(ni->node_ptr());
    const Node* n = nodes_.back().get();
    has_node_.push_back(n != nullptr);
    if (n != nullptr && index_.Find(n) < 0) {
      index_.Insert(n, static_cast<int32_t>(nodes_.size() - 1));
    }
  }
}

bool NodeTable::ReplaceNode(size_t slot, std::shared_ptr<const Node> node) {
  if (!index_.Replace(nodes_[slot].get(), node.get(), static_cast<int32_t>(slot))) return false;
  nodes_[slot] = std::move(node);
  return true;
}

bool SameTopology(const Node* before, const Node* now) {
  return before != nullptr && now != nullptr && before->metadata.name == now->metadata.name &&
         before->metadata.labels == now->metadata.labels && before->spec.taints == now->spec.taints;
}

// ---------------------------------------------------------------- KeyDomains

KeyDomains::KeyDomains(const NodeTable& table, const std::string& key) {
  slot_domain_.assign(table.size(), -1);
  for (size_t s = 0; s < table.size(); ++s) {
    const Node* n = table.node(s);
    if (n == nullptr) continue;
    auto it = n->metadata.labels.find(key);
    if (it == n->metadata.labels.end()) continue;
    const auto next = static_cast<int32_t>(ids_.size());
    slot_domain_[s] = ids_.try_emplace(it->second, next).first->second;
  }
}

int32_t KeyDomains::Find(std::string_view value) const {
  auto it = ids_.find(value);
  return it == ids_.end() ? -1 : it->second;
}

// ---------------------------------------------------------------- SpreadCache::Lru

template <class V>
V* SpreadCache::Lru<V>::Find(const std::string& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return nullptr;
  entries_.splice(entries_.begin(), entries_, it->second);
  return &it->second->second;
}

template <class V>
V& SpreadCache::Lru<V>::Insert(const std::string& key, V value) {
  entries_.emplace_front(key, std::move(value));
  index_[key] = entries_.begin();
  if (entries_.size() > capacity_) {
    index_.erase(entries_.back().first);
    entries_.pop_back();
  }
  return entries_.front().second;
}

// ---------------------------------------------------------------- SpreadCache

namespace {
// Beyond this many logged changes, memos re-check every slot instead of replaying the log.
constexpr size_t kMaxLog = 1 << 16;
}  // namespace

void SpreadCache::Observe(size_t slot, const NodeInfo& info) {
  Slot& s = slots_[slot];
  s.info = &info;
  s.generation = info.generation();
  if (SamePods(info.pods(), s.pods)) return;
  s.pods = info.pods();
  s.version = ++next_version_;
  log_.push_back(static_cast<uint32_t>(slot));
}

void SpreadCache::ResetLog() {
  log_.clear();
  ++log_epoch_;
}

const std::shared_ptr<const NodeTable>& SpreadCache::Refresh(std::span<const NodeInfo* const> nodes,
                                                             const Snapshot* snapshot,
                                                             const Delta* delta) {
  const bool trusted = snapshot != nullptr && snapshot->generation > 0;
  // Addresses and generations seen at the previous Refresh vouch for nodes only if it looked at
  // this same snapshot, at this or an earlier generation.
  const bool continued = trusted && table_ && snapshot == refreshed_snapshot_ &&
                         snapshot->generation >= refreshed_generation_ &&
                         table_->size() == nodes.size();
  if (continued && snapshot->generation == refreshed_generation_) return table_;
  if (log_.size() > kMaxLog) ResetLog();
  if (continued && delta != nullptr && delta->from_generation == refreshed_generation_) {
    bool applied = true;
    for (const NodeInfo* ni : delta->changed) {
      int32_t slot = ni->node() ? table_->SlotOf(*ni) : -1;
      if (slot < 0 && ni->node()) slot = ReplaceInPlace(*ni);
      // A node object that is new to the table means the table must be rebuilt.
      if (slot < 0 || nodes[slot] != ni) {
        applied = false;
        break;
      }
      Observe(slot, *ni);
    }
    if (applied) {
      refreshed_generation_ = snapshot->generation;
      return table_;
    }
  }
  bool same_table = table_ && table_->size() == nodes.size();
  if (same_table) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo* ni = nodes[i];
      const Slot& s = slots_[i];
      if (continued && ni == s.info && ni->generation() == s.generation) continue;
      if (ni->node() != table_->node(i) && !(SameTopology(table_->node(i), ni->node()) &&
                                             mutable_table_->ReplaceNode(i, ni->node_ptr()))) {
        same_table = false;
        break;
      }
      Observe(i, *ni);
    }
  }
  if (!same_table) {
    Rebuild(nodes);
    for (size_t i = 0; i < nodes.size(); ++i) Observe(i, *nodes[i]);
  }
  refreshed_snapshot_ = trusted ? snapshot : nullptr;
  refreshed_generation_ = trusted ? snapshot->generation : 0;
  return table_;
}

namespace {

bool SameName(const Node* a, const Node* b) {
  return a != nullptr && b != nullptr && a->metadata.name == b->metadata.name;
}

}  // namespace

void SpreadCache::Rebuild(std::span<const NodeInfo* const> nodes) {
  auto table = std::make_shared<NodeTable>(nodes, ++next_table_id_);
  // Slots of nodes that were already known keep what was observed about them, so their memoized
  // counts survive the rebuild.
  std::vector<Slot> slots(table->size());
  previous_slot_.assign(table->size(), -1);
  // The domains stay valid while every slot holds the node of the same name with the same
  // labels: node status updates (a heartbeat every few minutes per node, hundreds a second at
  // 100,000 nodes) replace node objects without moving them.
  bool same_labels = table_ && table_->size() == table->size();
  for (size_t s = 0; s < table->size(); ++s) {
    const Node* now = table->node(s);
    int32_t old = table_ ? table_->Find(now) : -1;
    if (old < 0 && table_ && s < table_->size() && SameName(now, table_->node(s))) {
      old = static_cast<int32_t>(s);  // the same node, updated
    }
    if (same_labels &&
        (old != static_cast<int32_t>(s) ||
         (now != table_->node(s) && now->metadata.labels != table_->node(s)->metadata.labels))) {
      same_labels = false;
    }
    if (old < 0) continue;
    previous_slot_[s] = old;
    slots[s] = std::move(slots_[old]);
    slots[s].info = nullptr;  // force a look at the pods
  }
  previous_table_id_ = table_ ? table_->id() : 0;
  slots_ = std::move(slots);
  mutable_table_ = table.get();
  table_ = std::move(table);
  if (!same_labels) domains_.clear();
  ResetLog();
}

int32_t SpreadCache::ReplaceInPlace(const NodeInfo& info) {
  const int32_t i = info.list_index();
  if (i < 0 || static_cast<size_t>(i) >= table_->size()) return -1;
  if (!SameTopology(table_->node(i), info.node())) return -1;
  return mutable_table_->ReplaceNode(i, info.node_ptr()) ? i : -1;
}

void SpreadCache::Remap(Counts& c) {
  const size_t n = table_->size();
  std::vector<uint64_t> seen(n, 0);
  std::vector<int32_t> count(n, 0);
  if (c.table_id_ == previous_table_id_ && c.table_id_ != 0) {
    for (size_t s = 0; s < n; ++s) {
      const int32_t old = previous_slot_[s];
      if (old < 0) continue;
      seen[s] = c.seen_[old];
      count[s] = c.count_[old];
    }
  }
  c.seen_ = std::move(seen);
  c.count_ = std::move(count);
  c.totals_.clear();  // slots moved: summed again on demand
  c.table_id_ = table_->id();
  c.log_epoch_ = 0;
}

void SpreadCache::Recount(Counts& c, size_t slot) {
  const Slot& s = slots_[slot];
  if (c.seen_[slot] == s.version) return;
  const int32_t count = CountMatchingPods(s.pods, c.selector_, c.ns_);
  if (const int64_t delta = count - c.count_[slot]; delta != 0) {
    for (Counts::Totals& t : c.totals_) {
      const int32_t d = t.domains->slot_domain(slot);
      if (d >= 0) {
        t.sum[d] += delta;
      } else if (table_->has_node(slot)) {
        t.sum.back() += delta;
      }
    }
  }
  c.count_[slot] = count;
  c.seen_[slot] = s.version;
}

const std::vector<int64_t>& SpreadCache::DomainTotals(
    const Counts& c, const std::shared_ptr<const KeyDomains>& domains) {
  for (Counts::Totals& t : c.totals_)
    if (t.domains == domains) return t.sum;
  constexpr size_t kKeysPerCount = 4;
  if (c.totals_.size() >= kKeysPerCount) c.totals_.erase(c.totals_.begin());
  Counts::Totals& t = c.totals_.emplace_back();
  t.domains = domains;
  t.sum.assign(domains->num_domains() + 1, 0);
  const int32_t* slot_domain = domains->slot_domains();
  const size_t n = table_->size();
  for (size_t s = 0; s < n; ++s) {
    const int32_t d = slot_domain[s];
    if (d >= 0) {
      t.sum[d] += c.count_[s];
    } else if (table_->has_node(s)) {
      t.sum.back() += c.count_[s];
    }
  }
  return t.sum;
}

std::shared_ptr<const KeyDomains> SpreadCache::Domains(const std::string& key) {
  auto it = domains_.find(key);
  if (it != domains_.end()) return it->second;
  // Keys come from pod specs; bound the map against pods that each use a key of their own.
  if (domains_.size() >= 256) domains_.clear();
  auto d = std::make_shared<const KeyDomains>(*table_, key);
  domains_.emplace(key, d);
  return d;
}

const SpreadCache::Counts& SpreadCache::CountsFor(const std::string& count_key,
                                                  const CompiledSelector& selector,
                                                  std::string_view ns) {
  Counts* c = counts_.Find(count_key);
  if (c == nullptr) {
    Counts fresh;
    fresh.selector_ = selector;
    fresh.ns_ = std::string(ns);
    c = &counts_.Insert(count_key, std::move(fresh));
  }
  if (c->table_id_ != table_->id()) Remap(*c);
  if (c->log_epoch_ == log_epoch_) {
    for (size_t p = c->log_pos_; p < log_.size(); ++p) Recount(*c, log_[p]);
  } else {
    for (size_t s = 0; s < slots_.size(); ++s) Recount(*c, s);
    c->log_epoch_ = log_epoch_;
  }
  c->log_pos_ = log_.size();
  return *c;
}

const std::vector<uint8_t>& SpreadCache::Inclusion(const Pod& pod, bool affinity, bool taints) {
  const std::string key = InclusionKey(pod, affinity, taints);
  InclusionMemo* m = inclusion_.Find(key);
  if (m == nullptr) m = &inclusion_.Insert(key, InclusionMemo{});
  if (m->table_id == table_->id()) return m->flags;
  const size_t n = table_->size();
  m->flags.assign(n, 0);
  for (size_t s = 0; s < n; ++s) {
    const Node* node = table_->node(s);
    if (node == nullptr) continue;
    uint8_t f = 0;
    if (!affinity || PodMatchesNodeSelectorAndAffinityTerms(pod, *node)) f |= kAffinityMatches;
    if (!taints || !FindUntoleratedTaint(node->spec.taints, pod.spec.tolerations,
                                         &IsScheduleBlockingTaint, comparison_operators_)) {
      f |= kTaintsTolerated;
    }
    m->flags[s] = f;
  }
  m->table_id = table_->id();
  return m->flags;
}

}  // namespace berth::podtopologyspread
