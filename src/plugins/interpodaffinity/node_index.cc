#include "plugins/interpodaffinity/node_index.h"

#include <algorithm>

namespace berth::interpodaffinity {
namespace {

bool SamePods(const std::vector<PodInfoPtr>& a, const std::vector<PodInfoPtr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].get() != b[i].get()) return false;
  return true;
}

// Recomputing fewer nodes than this is not worth waking the worker threads.
constexpr size_t kMinParallelNodes = 32;

}  // namespace

TopologyCounter& NodeIndex::Mutable(uint32_t group) {
  auto& c = groups_[group].counter;
  // A cycle state may still read this counter: give the index its own copy.
  if (c.use_count() > 1) c = std::make_shared<TopologyCounter>(*c);
  return *c;
}

void NodeIndex::Apply(const Entry& e, int64_t sign) {
  for (const Contribution& c : e.contributions) {
    Mutable(c.group).Add(c.key, c.value, sign * c.delta);
    groups_[c.group].refs += sign;
  }
}

void NodeIndex::Refresh(std::span<const NodeInfo* const> nodes, const ComputeFn& compute,
                        Parallelizer* parallelizer, const Snapshot* snapshot) {
  changed_nodes_.clear();
  changed_entries_.clear();
  // The scheduler's snapshot says which NodeInfos its last update touched. When this index saw
  // the snapshot's full node list at the generation just before that update, only those nodes
  // can differ.
  const bool whole_list = snapshot != nullptr && snapshot->generation > 0 &&
                          snapshot == last_snapshot_ && nodes.data() == snapshot->nodes().data() &&
                          nodes.size() == last_nodes_.size();
  if (whole_list && snapshot->generation == last_generation_) return;
  if (whole_list && snapshot->last_changed_from >= 0 &&
      snapshot->last_changed_from == last_generation_) {
    for (const NodeInfo* ni : snapshot->last_changed) {
      auto it = entries_.find(ni);
      if (it == entries_.end()) continue;  // not a node of this list
      changed_nodes_.push_back(ni);
      changed_entries_.push_back(&it->second);
    }
  } else {
    ++epoch_;
    std::vector<Entry*> order(nodes.size());
    // Walk the previous list alongside: lists change by a node joining or leaving here and
    // there, so most nodes are found at the cursor (or right after it) without a map lookup.
    size_t j = 0;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const NodeInfo* ni = nodes[i];
      Entry* e;
      if (j < last_nodes_.size() && last_nodes_[j] == ni) {
        e = last_entries_[j++];
      } else if (j + 1 < last_nodes_.size() && last_nodes_[j + 1] == ni) {
        e = last_entries_[j + 1];
        j += 2;
      } else {
        e = &entries_[ni];
      }
      e->epoch = epoch_;
      order[i] = e;
      if (e->node.get() != ni->node() || !SamePods(e->pods, (ni->*pods_of_)())) {
        changed_nodes_.push_back(ni);
        changed_entries_.push_back(e);
      }
    }

    // Nodes that left the list take their contributions with them.
    if (entries_.size() != nodes.size()) {
      for (auto it = entries_.begin(); it != entries_.end();) {
        if (it->second.epoch == epoch_) {
          ++it;
          continue;
        }
        Apply(it->second, -1);
        it = entries_.erase(it);
      }
    }
    last_nodes_.assign(nodes.begin(), nodes.end());
    last_entries_ = std::move(order);
  }

  if (computed_.size() < changed_nodes_.size()) computed_.resize(changed_nodes_.size());
  auto compute_one = [&](size_t k) {
    const NodeInfo& ni = *changed_nodes_[k];
    computed_[k].clear();
    if (ni.node()) compute(*ni.node(), (ni.*pods_of_)(), computed_[k]);
  };
  if (parallelizer && changed_nodes_.size() >= kMinParallelNodes) {
    parallelizer->Until(static_cast<int>(changed_nodes_.size()),
                        [&](int k) { compute_one(static_cast<size_t>(k)); });
  } else {
    for (size_t k = 0; k < changed_nodes_.size(); ++k) compute_one(k);
  }

  for (size_t k = 0; k < changed_nodes_.size(); ++k) {
    const NodeInfo& ni = *changed_nodes_[k];
    Entry& e = *changed_entries_[k];
    Apply(e, -1);
    e.node = ni.node_ptr();
    e.pods = (ni.*pods_of_)();
    e.contributions.swap(computed_[k]);
    Apply(e, 1);
  }

  last_snapshot_ = snapshot;
  last_generation_ = snapshot != nullptr ? snapshot->generation : -1;
}

uint32_t NodeIndex::NewGroup() {
  uint32_t id;
  if (!free_groups_.empty()) {
    id = free_groups_.back();
    free_groups_.pop_back();
  } else {
    id = static_cast<uint32_t>(groups_.size());
    groups_.emplace_back();
  }
  groups_[id] = Group{std::make_shared<TopologyCounter>(), 0, true};
  return id;
}

void NodeIndex::ReleaseUnused(const std::function<void(uint32_t)>& released) {
  for (uint32_t g = 0; g < groups_.size(); ++g) {
    if (!groups_[g].allocated || groups_[g].refs != 0) continue;
    released(g);
    groups_[g] = Group{};
    free_groups_.push_back(g);
  }
}

}  // namespace berth::interpodaffinity
