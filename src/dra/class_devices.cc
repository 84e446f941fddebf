#include "dra/class_devices.h"

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
    if (s->spec.node_name && !s->spec.all_nodes)
      by_node_[*s->spec.node_name].push_back(s.get());
    else
      other_.push_back(s.get());
  }
}

Result<ClassDeviceCount> ClassDeviceIndex::Count(const Node& node, const DeviceClass& device_class,
                                                 const AllocatedState& state,
                                                 cel::dra::SelectorCache& cache) const {
  ClassDeviceCount count;
  auto add = [&](const ResourceSlice& s, const Device& d) -> VoidResult {
    Result<bool> accepted = ClassAccepts(device_class, d, s.spec.driver, cache);
    if (!accepted.ok()) return accepted.error();
    if (!*accepted) return {};
    ++count.devices;
    if (IsDeviceAllocated(DeviceId{s.spec.driver, s.spec.pool.name, d.name}, state))
      ++count.allocated;
    return {};
  };
  auto scan = [&](const ResourceSlice& s) -> VoidResult {
    const bool per_device = s.spec.per_device_node_selection;
    if (!per_device && !SliceReachesNode(s, node)) return {};
    for (const Device& d : s.spec.devices) {
      if (per_device && !DeviceReachesNode(d, node)) continue;
      if (VoidResult r = add(s, d); !r.ok()) return r;
    }
    return {};
  };
  if (auto it = by_node_.find(node.metadata.name); it != by_node_.end())
    for (const ResourceSlice* s : it->second)
      if (VoidResult r = scan(*s); !r.ok()) return r.error();
  for (const ResourceSlice* s : other_)
    if (VoidResult r = scan(*s); !r.ok()) return r.error();
  return count;
}

}  // namespace berth::dra
