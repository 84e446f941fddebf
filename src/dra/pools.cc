// Which resource pools a node can allocate from (upstream's GatherPools).
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "berth/api/selectors.h"
#include "dra/internal.h"

namespace berth::dra::internal {
namespace {

struct PoolSlices {
  std::string driver, name;
  std::vector<const ResourceSlice*> slices;  // all of the newest generation seen
};

// Adds a slice to its pool unless the pool already has a newer generation; a newer
// generation replaces the slices gathered so far.
void AddSlice(std::vector<PoolSlices>& pools,
              std::map<std::pair<std::string, std::string>, size_t>& index,
              const ResourceSlice* s) {
  auto key = std::make_pair(s->spec.driver, s->spec.pool.name);
  auto it = index.find(key);
  if (it == index.end()) {
    index.emplace(key, pools.size());
    pools.push_back({s->spec.driver, s->spec.pool.name, {s}});
    return;
  }
  auto& slices = pools[it->second].slices;
  int64_t have = slices.front()->spec.pool.generation;
  if (s->spec.pool.generation < have) return;
  if (s->spec.pool.generation > have) slices.clear();
  slices.push_back(s);
}

// All slices of the pool at `generation`; nullopt when a newer generation exists (the
// driver is replacing the pool and none of its new slices reach the node yet).
std::optional<std::vector<const ResourceSlice*>> SlicesInPool(
    const std::vector<const ResourceSlice*>& all, const PoolSlices& pool, int64_t generation) {
  std::vector<const ResourceSlice*> out;
  for (const ResourceSlice* s : all) {
    if (s->spec.driver != pool.driver || s->spec.pool.name != pool.name) continue;
    if (s->spec.pool.generation == generation) {
      out.push_back(s);
    } else if (s->spec.pool.generation > generation) {
      return std::nullopt;
    }
  }
  return out;
}

std::string ValidateCounterConsumption(const std::map<std::string, const CounterSet*>& sets,
                                       const std::vector<const ResourceSlice*>& slices) {
  for (const ResourceSlice* s : slices) {
    for (const Device& d : s->spec.devices) {
      for (const DeviceCounterConsumption& c : d.consumes_counters) {
        auto it = sets.find(c.counter_set);
        if (it == sets.end()) return "counter set " + c.counter_set + " not found";
        for (const auto& [name, q] : c.counters) {
          if (it->second->counters.find(name) == it->second->counters.end())
            return "counter " + name + " not found in counter set " + c.counter_set;
        }
      }
    }
  }
  return {};
}

Pool BuildPool(const PoolSlices& ps, const Features& features,
               const std::vector<const ResourceSlice*>* all_in_pool) {
  Pool pool;
  pool.driver = ps.driver;
  pool.name = ps.name;
  std::vector<const ResourceSlice*> counter_slices;
  for (const ResourceSlice* s : ps.slices) {
    if (features.partitionable_devices && !s->spec.shared_counters.empty()) {
      counter_slices.push_back(s);
    } else {
      pool.slices_targeting_node.push_back(s);
    }
  }
  auto invalid = [&](std::string reason) {
    Pool p;
    p.driver = ps.driver;
    p.name = ps.name;
    p.invalid = true;
    p.invalid_reason = std::move(reason);
    return p;
  };
  std::set<std::string> names;
  for (const ResourceSlice* s : pool.slices_targeting_node) {
    for (const Device& d : s->spec.devices) {
      if (!names.insert(d.name).second) return invalid("duplicate device name " + d.name);
    }
  }
  if (!features.partitionable_devices) return pool;
  for (const ResourceSlice* s : counter_slices) {
    for (const CounterSet& c : s->spec.shared_counters) {
      if (!pool.counter_sets.emplace(c.name, &c).second)
        return invalid("duplicate counter set name " + c.name);
    }
  }
  if (auto err = ValidateCounterConsumption(pool.counter_sets, ps.slices); !err.empty())
    return invalid(err);
  if (all_in_pool == nullptr || all_in_pool->size() == ps.slices.size()) return pool;
  // Slices that do not reach the node still consume the pool's counters.
  std::set<const ResourceSlice*> seen(ps.slices.begin(), ps.slices.end());
  for (const ResourceSlice* s : *all_in_pool) {
    if (!seen.count(s)) pool.slices_not_targeting_node.push_back(s);
  }
  if (auto err = ValidateCounterConsumption(pool.counter_sets, pool.slices_not_targeting_node);
      !err.empty())
    return invalid(err);
  return pool;
}

}  // namespace

bool NodeMatches(const Node& node, const std::optional<std::string>& node_name, bool all_nodes,
                 const std::optional<NodeSelector>& selector) {
  if (node_name && !node_name->empty()) return node.metadata.name == *node_name;
  if (all_nodes) return true;
  if (selector) return NodeSelectorMatches(*selector, node);
  return false;
}

std::vector<Pool> GatherPools(const std::vector<const ResourceSlice*>& slices,
                              const std::vector<const ResourceSlice*>& all_slices, const Node& node,
                              const Features& features) {
  std::vector<PoolSlices> pools;
  std::map<std::pair<std::string, std::string>, size_t> index;
  for (const ResourceSlice* s : slices) {
    const auto& sp = s->spec;
    if (!features.partitionable_devices &&
        (sp.per_device_node_selection || !sp.shared_counters.empty()))
      continue;
    if (!sp.shared_counters.empty()) {
      // Counter sets matter to every node that uses the pool, whatever their selection.
      AddSlice(pools, index, s);
    } else if ((sp.node_name && !sp.node_name->empty()) || sp.all_nodes || sp.node_selector) {
      if (NodeMatches(node, sp.node_name, sp.all_nodes, sp.node_selector))
        AddSlice(pools, index, s);
    } else if (sp.per_device_node_selection) {
      for (const Device& d : sp.devices) {
        if (NodeMatches(node, d.node_name, d.all_nodes, d.node_selector)) {
          AddSlice(pools, index, s);
          break;
        }
      }
    }
    // Anything else is a kind of node selection this allocator does not know: skipped.
  }

  std::vector<Pool> result;
  result.reserve(pools.size());
  for (const PoolSlices& ps : pools) {
    const auto& first = ps.slices.front()->spec.pool;
    if (static_cast<int64_t>(ps.slices.size()) == first.resource_slice_count) {
      result.push_back(BuildPool(ps, features, nullptr));
      continue;
    }
    // Slices that do not reach this node were left out above: count the whole pool.
    auto all = SlicesInPool(all_slices, ps, first.generation);
    if (!all) continue;  // outdated: a newer generation is being published
    if (static_cast<int64_t>(all->size()) != first.resource_slice_count) {
      Pool p;
      p.driver = ps.driver;
      p.name = ps.name;
      p.incomplete = true;
      result.push_back(std::move(p));
      continue;
    }
    result.push_back(BuildPool(ps, features, &*all));
  }
  return result;
}

}  // namespace berth::dra::internal
