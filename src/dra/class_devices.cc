#include "dra/class_devices.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "berth/api/selectors.h"
#include "dra/allocator_impl.h"

namespace berth::dra {
namespace {

bool DeviceReachesNode(const Device& d, const Node& node) {
  if (d.all_nodes || (d.node_name && *d.node_name == node.metadata.name)) return true;
  return d.node_selector && NodeSelectorMatches(*d.node_selector, node);
}

bool SliceReachesNode(const ResourceSlice& s, const Node& node) {
  if (s.spec.all_nodes) return true;
  if (s.spec.node_name) return *s.spec.node_name == node.metadata.name;
  if (s.spec.node_selector) return NodeSelectorMatches(*s.spec.node_selector, node);
  return true;
}

Result<bool> ClassAccepts(const DeviceClass& cls, const Device& d, const std::string& driver,
                          cel::dra::SelectorCache& cache) {
  if (cls.spec.selectors.empty()) return true;
  cel::dra::Device cd;
  cd.driver = driver;
  for (const auto& [name, v] : d.attributes) cd.attributes.emplace_back(name, ToCel(v));
  for (const auto& [name, c] : d.capacity) cd.capacity.emplace_back(name, c.value);
  cd.allow_multiple_allocations = d.allow_multiple_allocations;
  auto prepared = cel::dra::PreparedDevice::Prepare(cd);
  if (!prepared.ok()) return prepared.error();
  for (const DeviceSelector& selector : cls.spec.selectors) {
    auto compiled = cache.GetOrCompile(selector.cel_expression);
    if (!compiled->ok()) return compiled->error();
    Result<bool> m = (*compiled)->Matches(*prepared);
    if (!m.ok() || !*m) return m;
  }
  return true;
}

}  // namespace

bool IsDeviceAllocated(const DeviceId& id, const AllocatedState& state) {
  if (state.allocated.count(id) > 0 || state.consumed_capacity.count(id) > 0) return true;
  auto it = state.allocated_shared.lower_bound(SharedDeviceId{id, ""});
  return it != state.allocated_shared.end() && it->device == id;
}

ClassDeviceIndex::ClassDeviceIndex(std::vector<std::shared_ptr<const ResourceSlice>> slices)
    : slices_(std::move(slices)) {
  for (const auto& s : slices_) {
    if (s->spec.node_name && !s->spec.all_nodes) {
      by_node_[*s->spec.node_name].push_back(s.get());
    } else {
      other_.push_back(s.get());
      if (s->spec.node_selector || s->spec.per_device_node_selection) depends_on_labels_ = true;
    }
  }
}

Result<std::vector<std::pair<const ResourceSlice*, std::vector<const Device*>>>>
ClassDeviceIndex::Match(const Node& node, const DeviceClass& device_class,
                        cel::dra::SelectorCache& cache) const {
  std::vector<std::pair<const ResourceSlice*, std::vector<const Device*>>> out;
  auto scan = [&](const ResourceSlice& s) -> VoidResult {
    const bool per_device = s.spec.per_device_node_selection;
    if (!per_device && !SliceReachesNode(s, node)) return {};
    std::vector<const Device*> devices;
    for (const Device& d : s.spec.devices) {
      if (per_device && !DeviceReachesNode(d, node)) continue;
      Result<bool> accepted = ClassAccepts(device_class, d, s.spec.driver, cache);
      if (!accepted.ok()) return accepted.error();
      if (*accepted) devices.push_back(&d);
    }
    if (!devices.empty()) out.emplace_back(&s, std::move(devices));
    return {};
  };
  if (auto it = by_node_.find(node.metadata.name); it != by_node_.end())
    for (const ResourceSlice* s : it->second)
      if (VoidResult r = scan(*s); !r.ok()) return r.error();
  for (const ResourceSlice* s : other_)
    if (VoidResult r = scan(*s); !r.ok()) return r.error();
  return out;
}

namespace {

// How many of the matched devices claims hold.
int64_t CountHeld(
    const std::vector<std::pair<const ResourceSlice*, std::vector<const Device*>>>& matched,
    const AllocatedState& state) {
  int64_t held = 0;
  for (const auto& [slice, devices] : matched) {
    if (!state.indexed) {
      for (const Device* d : devices)
        if (IsDeviceAllocated(DeviceId{slice->spec.driver, slice->spec.pool.name, d->name}, state))
          ++held;
      continue;
    }
    // By pool: the names held there, exclusively or shared, instead of three set lookups per
    // device.
    auto it = state.by_pool.find(
        std::pair<std::string_view, std::string_view>(slice->spec.driver, slice->spec.pool.name));
    if (it == state.by_pool.end()) continue;
    const PoolHeld& pool = it->second;
    for (const Device* d : devices) {
      if (std::find(pool.exclusive.begin(), pool.exclusive.end(), d->name) !=
              pool.exclusive.end() ||
          std::find(pool.shared.begin(), pool.shared.end(), d->name) != pool.shared.end())
        ++held;
    }
  }
  return held;
}

int64_t CountDevices(
    const std::vector<std::pair<const ResourceSlice*, std::vector<const Device*>>>& matched) {
  int64_t n = 0;
  for (const auto& [slice, devices] : matched) n += static_cast<int64_t>(devices.size());
  return n;
}

}  // namespace

Result<ClassDeviceCount> ClassDeviceIndex::Count(const Node& node, const DeviceClass& device_class,
                                                 const AllocatedState& state,
                                                 cel::dra::SelectorCache& cache) const {
  auto matched = Match(node, device_class, cache);
  if (!matched.ok()) return matched.error();
  return ClassDeviceCount{CountDevices(*matched), CountHeld(*matched, state)};
}

Result<ClassDeviceCount> ClassDeviceIndex::Count(
    const Node& node, const std::shared_ptr<const DeviceClass>& device_class,
    const AllocatedState& state, cel::dra::SelectorCache& cache) const {
  if (depends_on_labels_) return Count(node, *device_class, state, cache);
  std::shared_ptr<const Matched> known;
  {
    std::shared_lock lock(memo_mu_);
    if (auto it = memo_.find(node.metadata.name); it != memo_.end())
      for (const auto& m : it->second)
        if (m->device_class == device_class) known = m;
  }
  if (!known) {
    auto fresh =
        std::make_shared<Matched>(Matched{device_class, Match(node, *device_class, cache)});
    std::unique_lock lock(memo_mu_);
    auto& entries = memo_[node.metadata.name];
    // Classes replaced over time are dropped with the oldest entries.
    if (entries.size() >= kMaxClassesPerNode) entries.erase(entries.begin());
    entries.push_back(fresh);
    known = std::move(fresh);
  }
  if (!known->devices.ok()) return known->devices.error();
  return ClassDeviceCount{CountDevices(*known->devices), CountHeld(*known->devices, state)};
}

std::shared_ptr<const ClassDeviceIndex> ClassDeviceIndexCache::For(
    uint64_t generation,
    const std::function<std::vector<std::shared_ptr<const ResourceSlice>>()>& list) {
  {
    std::lock_guard lock(mu_);
    if (index_ && generation_ == generation) return index_;
  }
  // Listed after the generation was read: a change in between is in the list, and the next
  // generation makes the next call list again.
  std::vector<std::shared_ptr<const ResourceSlice>> slices = list();
  std::lock_guard lock(mu_);
  if (!index_ || index_->slices() != slices)
    index_ = std::make_shared<const ClassDeviceIndex>(std::move(slices));
  generation_ = generation;
  return index_;
}

}  // namespace berth::dra
