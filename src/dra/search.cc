// Allocator::Allocate: the search for one node.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cel/dra.h"
#include "dra/allocator.h"
#include "dra/allocator_impl.h"
#include "dra/device_tables.h"
#include "dra/internal.h"
#include "dra/pool_cache.h"
#include "dra/search_parts.h"

namespace berth::dra {
namespace {

using internal::Constraint;
using internal::DeviceRef;
using internal::DeviceResult;
using internal::Pool;
using internal::TaintPrevents;

std::string ClaimRef(const ResourceClaim& c) {
  return c.metadata.namespace_.empty() ? c.metadata.name
                                       : c.metadata.namespace_ + "/" + c.metadata.name;
}

// One request, or one subrequest of a firstAvailable list.
struct RequestData {
  const DeviceRequest* parent = nullptr;  // for subrequests
  const std::string* name = nullptr;      // the request's or subrequest's own name
  const ExactDeviceRequest* spec = nullptr;
  bool admin_access = false;
  std::shared_ptr<const DeviceClass> device_class;
  int num_devices = 0;
  bool all = false;
  std::vector<DeviceRef> all_devices;  // for allocationMode All
  // The class's selectors and the request's own, compiled, with their results kept across
  // searches (null past the index's limit).
  struct Sel {
    std::shared_ptr<const Result<cel::dra::Selector>> compiled;
    const SelectorResults* results = nullptr;
  };
  std::vector<Sel> class_sels, request_sels;
  std::string Name() const { return parent ? parent->name + "/" + *name : *name; }
};

enum class Step { kNo, kDone, kMaxSize, kError };

struct Location {
  size_t pool = 0, slice = 0, device = 0;
};

struct Indices {
  int claim = 0, request = 0, sub = 0, device = 0;
};

// What allocateDevice changed, to undo it when the search backtracks.
struct Placed {
  DeviceRef dev;
  int claim = 0;
  bool multi = false;
  bool counters = false;
  std::string base, sub;
};

// The state of one Allocate call (one goroutine's allocator upstream).
class Search {
 public:
  // `pools`: the node's, when the caller has them already (`keep` holding them when the index
  // does not).
  Search(const Allocator::Impl& a, const Node& node,
         const std::vector<std::shared_ptr<const ResourceClaim>>& claims,
         const NodePools* pools = nullptr, std::shared_ptr<const NodePools> keep = nullptr)
      : a_(a), node_(node), claims_(claims), keep_(std::move(keep)), node_pools_(pools) {}

  Result<std::optional<std::vector<AllocationResult>>> Run();
  Result<Diagnosis> Diagnose();

 private:
  VoidResult Setup();
  RequestDiagnosis DiagnoseRequest(int c, int r, int sub);
  RequestData& Data(int c, int r, int s) { return data_[c][r][s]; }
  Result<RequestData> Validate(int c, int r, const DeviceRequest& parent, int sub);
  Step AllocateOne(Indices r, bool in_sub, Location start);
  Step AllocateDevice(const Indices& r, const DeviceRef& d, bool must, Placed* placed);
  void Deallocate(const Placed& p);
  Result<bool> Selectable(const Indices& r, const RequestData& rd, const DeviceRef& d);
  Result<bool> SelectorsMatch(int claim, const DeviceRef& d, const DeviceClass* cls,
                              const std::vector<RequestData::Sel>& selectors);
  std::vector<RequestData::Sel> Compile(const std::vector<DeviceSelector>& selectors) const;
  // What rules out pools for request `r` (see PoolRuledOut): the fixed constraints with the
  // node's pools' values of their attribute, and per selector of the request which pools it
  // evaluates on without an error. No constraint when none is fixed or the request's
  // selectors are not all kept.
  struct Pruning {
    std::vector<std::pair<const Constraint*, const std::vector<int32_t>*>> fixed;
    std::vector<const std::vector<int8_t>*> clean;
  };
  Pruning PruningFor(const Indices& r, const RequestData& rd);
  bool PoolRuledOut(const Pruning& pruning, size_t p) const;
  std::optional<CapacityAmounts> Capacity(const RequestData& rd, const DeviceRef& d);
  bool CheckCounters(const DeviceRef& d);
  void ReleaseCounters(const DeviceRef& d);
  // What the allocated claims hold in one pool of the node, gathered on first use.
  struct PoolUse {
    bool ready = false;
    std::vector<const std::string*> exclusive;  // device names
    std::vector<std::pair<const std::string*, const CapacityAmounts*>> consumed;
  };
  const PoolUse& UseOf(const Pool* pool);
  bool StateHolds(const DeviceRef& d) {
    for (const std::string* name : UseOf(d.pool).exclusive)
      if (*name == d.device->name) return true;
    return false;
  }
  const CapacityAmounts* StateConsumed(const DeviceRef& d) {
    for (const auto& [name, amounts] : UseOf(d.pool).consumed)
      if (*name == d.device->name) return amounts;
    return nullptr;
  }
  bool InUse(const DeviceRef& d) {
    for (const auto& [device, claim] : allocating_)
      if (device == d.device) return true;
    return StateHolds(d);
  }
  bool AllocatingFor(const DeviceRef& d, int claim) const {
    for (const auto& a : allocating_)
      if (a.first == d.device && a.second == claim) return true;
    return false;
  }
  CapacityAmounts* AllocatingCapacity(const Device* device) {
    for (auto& [dev, amounts] : allocating_capacity_)
      if (dev == device) return &amounts;
    return nullptr;
  }
  bool CapacityInUse(const DeviceRef& d) {
    return AllocatingCapacity(d.device) != nullptr || StateConsumed(d) != nullptr;
  }
  Step Fail(std::string message) {
    error_ = std::move(message);
    return Step::kError;
  }

  const Allocator::Impl& a_;
  const Node& node_;
  const std::vector<std::shared_ptr<const ResourceClaim>>& claims_;
  std::shared_ptr<const NodePools> keep_;
  const NodePools* node_pools_;
  const std::vector<Pool>* pools_ = nullptr;
  // Per claim, per request: the request itself (one entry) or its subrequests.
  std::vector<std::vector<std::vector<RequestData>>> data_;
  std::vector<std::vector<int>> selected_sub_;
  std::vector<std::vector<Constraint>> constraints_;
  std::vector<std::vector<DeviceResult>> results_;
  std::vector<PoolUse> pool_use_;  // per pool of *pools_
  // Devices taken by this search: exclusively (device, claim), and shared with the capacity
  // taken. Devices are told apart by address: one search sees each device of a valid pool once.
  std::vector<std::pair<const Device*, int>> allocating_;
  std::vector<std::pair<const Device*, CapacityAmounts>> allocating_capacity_;
  std::unordered_map<const Pool*, std::map<std::string, Counters>> consumed_counters_;
  // Whether a device is selectable for a request: per request slot (slot_base_ + subrequest)
  // and device index; -1 unknown.
  std::vector<std::vector<int>> slot_base_;
  int slots_ = 0;
  std::vector<int8_t> matches_;
  std::string error_;
};

Result<RequestData> Search::Validate(int c, int r, const DeviceRequest& parent, int sub) {
  const ResourceClaim& claim = *claims_[c];
  RequestData rd;
  if (sub >= 0) {
    rd.parent = &parent;
    rd.name = &parent.first_available[sub].name;
    rd.spec = &parent.first_available[sub].request;
  } else {
    static const ExactDeviceRequest kEmpty;
    rd.name = &parent.name;
    rd.spec = parent.exactly ? &*parent.exactly : &kEmpty;
    rd.admin_access = parent.exactly && parent.exactly->admin_access;
  }
  // Built only for an error: this runs for every node.
  const auto where = [&] { return "claim " + ClaimRef(claim) + ", request " + *rd.name; };
  for (size_t i = 0; i < rd.spec->selectors.size(); ++i) {
    if (rd.spec->selectors[i].cel_expression.empty())
      return Error{where() + ", selector #" + std::to_string(i) +
                   ": CEL expression empty (unsupported selector type?)"};
  }
  if (!a_.features.admin_access && rd.admin_access)
    return Error{where() + ": admin access is requested, but the feature is disabled"};
  const std::string& class_name = rd.spec->device_class_name;
  if (class_name.empty())
    return Error{where() + ": missing device class name (unsupported request type?)"};
  rd.device_class = a_.classes ? a_.classes(class_name) : nullptr;
  if (!rd.device_class)
    return Error{where() + ": could not retrieve device class " + class_name +
                 ": deviceclass.resource.k8s.io \"" + class_name + "\" not found"};
  rd.class_sels = Compile(rd.device_class->spec.selectors);
  rd.request_sels = Compile(rd.spec->selectors);
  const std::string& mode = rd.spec->allocation_mode;
  if (mode.empty() || mode == kAllocationModeExactCount) {
    if (rd.spec->count > std::numeric_limits<int>::max())
      return Error{where() + ": exact count " + std::to_string(rd.spec->count) + " is too large"};
    rd.num_devices = static_cast<int>(rd.spec->count);
    return rd;
  }
  if (mode != kAllocationModeAll) return Error{where() + ": unsupported count mode " + mode};
  rd.all = true;
  for (const Pool& pool : *pools_) {
    if (pool.incomplete)
      return Error{where() + ": asks for all devices, but resource pool " + pool.Id() +
                   " is currently being updated"};
    if (pool.invalid)
      return Error{where() + ": asks for all devices, but resource pool " + pool.Id() +
                   " is currently invalid"};
    for (size_t si = 0; si < pool.slices_targeting_node.size(); ++si) {
      const ResourceSlice* s = pool.slices_targeting_node[si];
      for (size_t di = 0; di < s->spec.devices.size(); ++di) {
        DeviceRef ref{&s->spec.devices[di], s, &pool,
                      pool.device_base[si] + static_cast<uint32_t>(di),
                      pool.global_base[si] + static_cast<uint32_t>(di)};
        auto ok = Selectable(Indices{c, r, std::max(sub, 0), 0}, rd, ref);
        if (!ok.ok()) return ok.error();
        if (!*ok) continue;
        if (a_.features.consumable_capacity && !Capacity(rd, ref)) continue;
        rd.all_devices.push_back(std::move(ref));
      }
    }
  }
  rd.num_devices = static_cast<int>(rd.all_devices.size());
  return rd;
}

// Compiling ahead of use changes nothing: a compile error is reported where the selector is
// first evaluated, as before.
std::vector<RequestData::Sel> Search::Compile(const std::vector<DeviceSelector>& selectors) const {
  std::vector<RequestData::Sel> out;
  out.reserve(selectors.size());
  for (const DeviceSelector& s : selectors) {
    auto compiled = a_.cache->GetOrCompile(s.cel_expression);
    const SelectorResults* results = compiled->ok() ? a_.index->ResultsOf(compiled) : nullptr;
    out.push_back({std::move(compiled), results});
  }
  return out;
}

Result<bool> Search::SelectorsMatch(int claim, const DeviceRef& d, const DeviceClass* cls,
                                    const std::vector<RequestData::Sel>& selectors) {
  auto where = [&](size_t i) {
    return (cls != nullptr ? "class " + cls->metadata.name : "claim " + ClaimRef(*claims_[claim])) +
           ": selector #" + std::to_string(i);
  };
  for (size_t i = 0; i < selectors.size(); ++i) {
    const auto& sel = selectors[i].compiled;
    if (!sel->ok()) return Error{where(i) + ": CEL compile error: " + sel->error().message};
    const SelectorResults* results = selectors[i].results;
    if (int8_t known = results != nullptr ? results->Get(d.global) : -1; known >= 0) {
      if (known == 0) return false;
      continue;
    }
    auto prepared = a_.Prepared(*d.device, d.pool->driver);
    auto runtime = [&](const std::string& message) {
      return Error{where(i) + " on device " + d.Id().String() + ": CEL runtime error: " + message};
    };
    if (!prepared->ok()) return runtime(prepared->error().message);
    auto m = (*sel)->Matches(**prepared);
    if (!m.ok()) return runtime(m.error().message);
    if (results != nullptr) results->Set(d.global, *m);
    if (!*m) return false;
  }
  return true;
}

// A matchAttribute constraint of the claim that applies to the request and already has a value
// (from devices taken before this request's current one) keeps that value while this request
// tries its candidates: a device without it fails the constraint.
Search::Pruning Search::PruningFor(const Indices& r, const RequestData& rd) {
  Pruning out;
  const auto& constraints = constraints_[r.claim];
  if (std::none_of(constraints.begin(), constraints.end(),
                   [](const Constraint& c) { return c.match && c.count > 0; }))
    return out;
  const std::string base = rd.parent ? rd.parent->name : *rd.name;
  const std::string sub = rd.parent ? *rd.name : std::string();
  for (const Constraint& c : constraints) {
    if (c.match && c.count > 0 && c.table != nullptr && c.Applies(base, sub))
      out.fixed.emplace_back(&c, &node_pools_->PoolValues(*c.table));
  }
  if (out.fixed.empty()) return out;
  for (const auto* sels : {&rd.class_sels, &rd.request_sels}) {
    for (const RequestData::Sel& sel : *sels) {
      if (!sel.compiled->ok() || sel.results == nullptr) return {};
      out.clean.push_back(&node_pools_->PoolsClean(*a_.index, **sel.compiled, *sel.results));
    }
  }
  return out;
}

// Whether visiting pool `p`'s devices for the request would reject each one and change
// nothing: none has the value of a fixed constraint, and the request's selectors evaluate on
// each without an error (which would end the search). Its devices are then skipped together.
bool Search::PoolRuledOut(const Pruning& pruning, size_t p) const {
  bool excluded = false;
  for (const auto& [c, values] : pruning.fixed) {
    bool has = (*values)[p] == c->value_id;
    if ((*values)[p] == AttributeTable::kMixed) {
      const Pool& pool = (*pools_)[p];
      for (size_t si = 0; si < pool.slice_ordinal.size() && !has; ++si) {
        const size_t n = pool.slices_targeting_node[si]->spec.devices.size();
        for (size_t di = 0; di < n && !has; ++di)
          has = c->table->id[pool.global_base[si] + di] == c->value_id;
      }
    }
    if (!has) {
      excluded = true;
      break;
    }
  }
  if (!excluded) return false;
  for (const std::vector<int8_t>* clean : pruning.clean)
    if ((*clean)[p] != 1) return false;
  return true;
}

// Class and request selectors, binding conditions and per-device node selection; cached per
// device and request for the duration of the call.
Result<bool> Search::Selectable(const Indices& r, const RequestData& rd, const DeviceRef& d) {
  if (!a_.features.binding_conditions && !d.device->binding_conditions.empty()) return false;
  int8_t& memo = matches_[static_cast<size_t>(slot_base_[r.claim][r.request] + r.sub) *
                              node_pools_->device_count +
                          d.index];
  if (memo >= 0) return memo == 1;
  auto remember = [&](bool v) {
    memo = v ? 1 : 0;
    return v;
  };
  if (rd.device_class) {
    auto m = SelectorsMatch(r.claim, d, rd.device_class.get(), rd.class_sels);
    if (!m.ok()) return m.error();
    if (!*m) return remember(false);
  }
  auto m = SelectorsMatch(r.claim, d, nullptr, rd.request_sels);
  if (!m.ok()) return m.error();
  if (!*m) return remember(false);
  if (d.slice->spec.per_device_node_selection &&
      !internal::NodeMatches(node_, d.device->node_name, d.device->all_nodes,
                             d.device->node_selector))
    return remember(false);
  return remember(true);
}

std::optional<CapacityAmounts> Search::Capacity(const RequestData& rd, const DeviceRef& d) {
  return internal::ConsumedCapacityFor(*d.device, d.pool->driver, rd.spec->capacity_requests,
                                       StateConsumed(d), AllocatingCapacity(d.device));
}

const Search::PoolUse& Search::UseOf(const Pool* pool) {
  PoolUse& use = pool_use_[static_cast<size_t>(pool - pools_->data())];
  if (use.ready) return use;
  use.ready = true;
  const auto& by_pool = a_.state->by_pool;
  auto it = by_pool.find(std::pair<std::string_view, std::string_view>(pool->driver, pool->name));
  if (it == by_pool.end()) return use;
  for (const std::string& name : it->second.exclusive) use.exclusive.push_back(&name);
  for (const std::string& name : it->second.shared) {
    auto c = a_.state->consumed_capacity.find(DeviceId{pool->driver, pool->name, name});
    if (c != a_.state->consumed_capacity.end()) use.consumed.emplace_back(&name, &c->second);
  }
  return use;
}

bool Search::CheckCounters(const DeviceRef& d) {
  const auto& available = a_.AvailableCounters(*d.pool);
  auto& consumed = consumed_counters_[d.pool];
  for (const auto& c : d.device->consumes_counters) {
    auto& set = consumed[c.counter_set];
    for (const auto& [name, q] : c.counters) set[name] += q;
  }
  for (const auto& [set_name, counters] : available) {
    auto set = consumed.find(set_name);
    for (const auto& [name, avail] : counters) {
      Quantity used;
      if (set != consumed.end()) {
        if (auto it = set->second.find(name); it != set->second.end()) used = it->second;
      }
      if (avail < used) {
        ReleaseCounters(d);
        return false;
      }
    }
  }
  return true;
}

void Search::ReleaseCounters(const DeviceRef& d) {
  auto& consumed = consumed_counters_[d.pool];
  for (const auto& c : d.device->consumes_counters) {
    auto& set = consumed[c.counter_set];
    for (const auto& [name, q] : c.counters) set[name] -= q;
  }
}

// Checks availability, counters, taints and constraints for one selectable candidate and, if
// it can be taken, records it. `must`: the caller wants exactly this device (allocation mode
// All), so a constraint that rejects it is an error in the claim.
Step Search::AllocateDevice(const Indices& r, const DeviceRef& d, bool must, Placed* placed) {
  const ResourceClaim& claim = *claims_[r.claim];
  const RequestData& rd = Data(r.claim, r.request, r.sub);
  const bool multi = a_.features.consumable_capacity && d.device->allow_multiple_allocations;
  if (!multi && rd.admin_access && AllocatingFor(d, r.claim)) return Step::kNo;
  if (!rd.admin_access && InUse(d)) return Step::kNo;
  if (!a_.features.partitionable_devices && !d.device->consumes_counters.empty()) return Step::kNo;
  // A shared device already in use has had its counters taken by its first allocation.
  const bool skip_counters = multi && CapacityInUse(d);
  bool counters = false;
  if (!skip_counters && !d.device->consumes_counters.empty()) {
    if (!CheckCounters(d)) return Step::kNo;
    counters = true;
  }
  std::string base = rd.parent ? rd.parent->name : *rd.name;
  std::string sub = rd.parent ? *rd.name : std::string();
  auto undo_counters = [&] {
    if (counters) ReleaseCounters(d);
  };
  if (a_.features.device_taints && TaintPrevents(*d.device, *rd.spec)) {
    undo_counters();
    return Step::kNo;
  }
  auto& constraints = constraints_[r.claim];
  for (size_t i = 0; i < constraints.size(); ++i) {
    if (internal::Add(constraints[i], base, sub, d)) continue;
    for (size_t e = 0; e < i; ++e) internal::Remove(constraints[e], base, sub, d);
    undo_counters();
    if (must) {
      return Fail("claim " + ClaimRef(claim) + ", request " + *rd.name + ": cannot add device " +
                  d.Id().String() + " because a claim constraint would not be satisfied");
    }
    return Step::kNo;
  }
  DeviceResult result;
  if (a_.features.consumable_capacity) {
    auto taken = Capacity(rd, d);
    if (!taken) {
      for (auto& c : constraints) internal::Remove(c, base, sub, d);
      undo_counters();
      return Step::kNo;
    }
    if (multi) {
      result.consumed_capacity = *taken;
      result.share_id = a_.share_ids();
      CapacityAmounts* sum = AllocatingCapacity(d.device);
      if (sum == nullptr)
        sum = &allocating_capacity_.emplace_back(d.device, CapacityAmounts{}).second;
      for (const auto& [name, q] : *taken)
        (*sum)[internal::QualifiedCapacityName(name, d.pool->driver)] += q;
    }
  }
  if (!multi) allocating_.emplace_back(d.device, r.claim);
  result.device = d.device;
  result.slice = d.slice;
  result.id = d.Id();
  result.request = *rd.name;
  if (rd.parent) result.parent_request = rd.parent->name;
  result.spec = rd.spec;
  result.admin_access = rd.admin_access;
  results_[r.claim].push_back(std::move(result));
  *placed = Placed{d, r.claim, multi, counters, std::move(base), std::move(sub)};
  return Step::kDone;
}

void Search::Deallocate(const Placed& p) {
  for (auto& c : constraints_[p.claim]) internal::Remove(c, p.base, p.sub, p.dev);
  DeviceResult& last = results_[p.claim].back();
  if (p.multi) {
    auto it = std::find_if(allocating_capacity_.begin(), allocating_capacity_.end(),
                           [&](const auto& a) { return a.first == p.dev.device; });
    if (it != allocating_capacity_.end()) {
      bool empty = true;
      for (const auto& [name, q] : last.consumed_capacity) {
        Quantity& v = it->second[internal::QualifiedCapacityName(name, p.dev.pool->driver)];
        v -= q;
        if (!v.IsZero()) empty = false;
      }
      for (const auto& [name, q] : it->second) {
        if (!q.IsZero()) empty = false;
      }
      if (empty) allocating_capacity_.erase(it);
    }
  } else {
    auto it = std::find(allocating_.begin(), allocating_.end(),
                        std::pair<const Device*, int>(p.dev.device, p.claim));
    if (it != allocating_.end()) allocating_.erase(it);
  }
  if (p.counters) ReleaseCounters(p.dev);
  results_[p.claim].pop_back();
}

// Picks the device at index r.device of the current request (and recursively everything
// after it). Devices of one request are taken in pool, slice and device order from `start`,
// so each combination is tried once, not each permutation.
Step Search::AllocateOne(Indices r, bool in_sub, Location start) {
  if (r.claim >= static_cast<int>(claims_.size())) return Step::kDone;
  const ResourceClaim& claim = *claims_[r.claim];
  if (r.request >= static_cast<int>(claim.spec.devices.requests.size())) {
    Step s = AllocateOne(Indices{r.claim + 1}, false, {});
    // Another choice of subrequests in this claim may need fewer devices.
    return s == Step::kMaxSize ? Step::kNo : s;
  }
  auto& subs = data_[r.claim][r.request];
  if (!in_sub && subs.front().parent != nullptr) {
    bool all_exceeded = true;
    for (int sub = 0; sub < static_cast<int>(subs.size()); ++sub) {
      r.sub = sub;
      Step s = AllocateOne(r, true, {});
      if (s == Step::kMaxSize) continue;
      all_exceeded = false;
      if (s == Step::kError) return s;
      if (s == Step::kDone) {
        selected_sub_[r.claim][r.request] = sub;
        return s;
      }
    }
    return all_exceeded ? Step::kMaxSize : Step::kNo;
  }
  const RequestData& rd = subs[r.sub];
  if (rd.all && rd.all_devices.empty()) return Step::kNo;
  if (r.device >= rd.num_devices) return AllocateOne(Indices{r.claim, r.request + 1}, false, {});
  if (static_cast<int>(results_[r.claim].size()) + rd.num_devices - r.device >
      kAllocationResultsMaxSize)
    return Step::kMaxSize;

  Indices next = r;
  ++next.device;
  if (rd.all) {
    Placed placed;
    Step s = AllocateDevice(r, rd.all_devices[r.device], true, &placed);
    if (s != Step::kDone) return s;
    Step done = AllocateOne(next, in_sub, {});
    if (done != Step::kDone) Deallocate(placed);
    return done;
  }
  const Pruning pruning = a_.shortcuts ? PruningFor(r, rd) : Pruning();
  for (size_t p = start.pool; p < pools_->size(); ++p) {
    // Before the pool itself is read: most pools are ruled out where this applies.
    if (!pruning.fixed.empty() && PoolRuledOut(pruning, p)) continue;
    const Pool& pool = (*pools_)[p];
    if (pool.incomplete || pool.invalid) continue;
    const size_t slice_start = p == start.pool ? start.slice : 0;
    for (size_t si = slice_start; si < pool.slices_targeting_node.size(); ++si) {
      const ResourceSlice* slice = pool.slices_targeting_node[si];
      const auto& devices = slice->spec.devices;
      const size_t device_start = p == start.pool && si == start.slice ? start.device : 0;
      for (size_t di = device_start; di < devices.size(); ++di) {
        DeviceRef ref{&devices[di], slice, &pool, pool.device_base[si] + static_cast<uint32_t>(di),
                      pool.global_base[si] + static_cast<uint32_t>(di)};
        if (rd.admin_access ? AllocatingFor(ref, r.claim) : InUse(ref)) continue;
        auto ok = Selectable(r, rd, ref);
        if (!ok.ok()) return Fail(ok.error().message);
        if (!*ok) continue;
        if (a_.features.consumable_capacity && !Capacity(rd, ref)) continue;
        Placed placed;
        Step s = AllocateDevice(r, ref, false, &placed);
        if (s == Step::kError) return s;
        if (s != Step::kDone) continue;
        Step done = AllocateOne(next, in_sub, Location{p, si, di + 1});
        if (done == Step::kDone) return done;
        Deallocate(placed);
        if (done != Step::kNo) return done;
      }
    }
  }
  return Step::kNo;
}

VoidResult Search::Setup() {
  if (node_pools_ == nullptr) {
    keep_ = a_.index->PoolsFor(node_);
    node_pools_ = keep_.get();
  }
  pools_ = &node_pools_->pools;
  pool_use_.resize(pools_->size());
  slot_base_.resize(claims_.size());
  for (size_t c = 0; c < claims_.size(); ++c) {
    for (const DeviceRequest& req : claims_[c]->spec.devices.requests) {
      slot_base_[c].push_back(slots_);
      slots_ += std::max<int>(1, static_cast<int>(req.first_available.size()));
    }
  }
  matches_.assign(static_cast<size_t>(slots_) * node_pools_->device_count, -1);

  const size_t n = claims_.size();
  data_.resize(n);
  selected_sub_.resize(n);
  constraints_.resize(n);
  results_.resize(n);
  for (size_t c = 0; c < n; ++c) {
    const ResourceClaim& claim = *claims_[c];
    const auto& requests = claim.spec.devices.requests;
    data_[c].resize(requests.size());
    selected_sub_[c].assign(requests.size(), 0);
    int min_devices = 0;
    for (size_t r = 0; r < requests.size(); ++r) {
      const DeviceRequest& req = requests[r];
      const auto where = [&] { return "claim " + ClaimRef(claim); };
      if (!req.first_available.empty()) {
        if (!a_.features.prioritized_list)
          return Error{where() + ", request " + req.name +
                       ": has subrequests, but the DRAPrioritizedList feature is disabled"};
        int min_sub = std::numeric_limits<int>::max();
        for (size_t s = 0; s < req.first_available.size(); ++s) {
          if (!a_.features.consumable_capacity &&
              !req.first_available[s].request.capacity_requests.empty())
            return Error{where() + ", subrequest " + req.first_available[s].name +
                         ": has capacity requests, but the DRAConsumableCapacity feature is "
                         "disabled"};
          auto rd = Validate(static_cast<int>(c), static_cast<int>(r), req, static_cast<int>(s));
          if (!rd.ok()) return rd.error();
          min_sub = std::min(min_sub, rd->num_devices);
          data_[c][r].push_back(std::move(*rd));
        }
        min_devices += min_sub;
        continue;
      }
      if (!a_.features.consumable_capacity && req.exactly &&
          !req.exactly->capacity_requests.empty())
        return Error{where() + ", request " + req.name +
                     ": has capacity requests, but the DRAConsumableCapacity feature is disabled"};
      auto rd = Validate(static_cast<int>(c), static_cast<int>(r), req, -1);
      if (!rd.ok()) return rd.error();
      min_devices += rd->num_devices;
      data_[c][r].push_back(std::move(*rd));
    }
    if (min_devices > kAllocationResultsMaxSize) {
      return Error{"claim " + ClaimRef(claim) + ": number of requested devices " +
                   std::to_string(min_devices) + " exceeds the claim limit of " +
                   std::to_string(kAllocationResultsMaxSize)};
    }
    results_[c].reserve(min_devices);
    const auto& cs = claim.spec.devices.constraints;
    for (size_t i = 0; i < cs.size(); ++i) {
      Constraint k;
      k.requests.insert(cs[i].requests.begin(), cs[i].requests.end());
      if (cs[i].match_attribute) {
        k.attribute = *cs[i].match_attribute;
      } else if (cs[i].distinct_attribute) {
        k.match = false;
        k.attribute = *cs[i].distinct_attribute;
      } else {
        return Error{"claim " + ClaimRef(claim) + ", constraint #" + std::to_string(i) +
                     ": empty constraint (unsupported constraint type?)"};
      }
      k.table = a_.index->AttributeOf(k.attribute);
      constraints_[c].push_back(std::move(k));
    }
  }
  return {};
}

Result<std::optional<std::vector<AllocationResult>>> Search::Run() {
  if (VoidResult setup = Setup(); !setup.ok()) return setup.error();
  const size_t n = claims_.size();
  Step s = AllocateOne(Indices{}, false, {});
  if (s == Step::kError) return Error{error_};
  if (s != Step::kDone) {
    for (const Pool& p : *pools_) {
      // Only this node: other nodes may reach valid pools.
      if (p.invalid) return internal::InvalidPoolsError();
    }
    return std::optional<std::vector<AllocationResult>>();
  }

  std::vector<AllocationResult> out;
  out.reserve(n);
  for (size_t c = 0; c < n; ++c) {
    const ResourceClaim& claim = *claims_[c];
    std::vector<internal::ChosenRequest> chosen;
    for (size_t r = 0; r < claim.spec.devices.requests.size(); ++r) {
      const auto& req = claim.spec.devices.requests[r];
      const bool has_subs = !req.first_available.empty();
      const int sub = has_subs ? selected_sub_[c][r] : -1;
      chosen.push_back({&req, sub, data_[c][r][std::max(sub, 0)].device_class.get()});
    }
    auto alloc = internal::BuildAllocation(claim, results_[c], chosen, node_,
                                           a_.features.binding_conditions);
    if (!alloc.ok()) return alloc.error();
    out.push_back(std::move(*alloc));
  }
  return std::optional<std::vector<AllocationResult>>(std::move(out));
}

// One request on its own, through the same checks AllocateDevice applies in the same order
// (selectors, node selection, capacity, availability, counters, taints), each device counted
// at the first check it fails. Devices other requests of the pod would take are not counted
// against it: a request that passes alone can still fail with the others (constraints).
RequestDiagnosis Search::DiagnoseRequest(int c, int r, int sub) {
  const RequestData& rd = Data(c, r, sub);
  RequestDiagnosis d;
  d.claim = ClaimRef(*claims_[c]);
  d.request = rd.Name();
  d.device_class = rd.spec->device_class_name;
  d.wanted = rd.all ? std::max(rd.num_devices, 1) : rd.num_devices;
  d.all = rd.all;
  const Indices idx{c, r, sub, 0};
  for (const Pool& pool : *pools_) {
    for (size_t si = 0; si < pool.slices_targeting_node.size(); ++si) {
      const ResourceSlice* slice = pool.slices_targeting_node[si];
      for (size_t di = 0; di < slice->spec.devices.size(); ++di) {
        const Device& dev = slice->spec.devices[di];
        DeviceRef ref{&dev, slice, &pool, pool.device_base[si] + static_cast<uint32_t>(di),
                      pool.global_base[si] + static_cast<uint32_t>(di)};
        ++d.considered;
        if (!a_.features.binding_conditions && !dev.binding_conditions.empty()) continue;
        if (rd.device_class) {
          auto m = SelectorsMatch(c, ref, rd.device_class.get(), rd.class_sels);
          if (!m.ok() || !*m) continue;
        }
        ++d.class_match;
        auto m = SelectorsMatch(c, ref, nullptr, rd.request_sels);
        if (!m.ok() || !*m) continue;
        ++d.request_match;
        auto sel = Selectable(idx, rd, ref);  // adds per-device node selection
        if (!sel.ok() || !*sel) continue;
        if (a_.features.consumable_capacity && !Capacity(rd, ref)) continue;
        ++d.capacity_fit;
        if (!rd.admin_access && InUse(ref)) {
          d.allocated.push_back(ref.Id());
          continue;
        }
        const bool multi = a_.features.consumable_capacity && dev.allow_multiple_allocations;
        if (a_.features.partitionable_devices && !dev.consumes_counters.empty() &&
            !(multi && CapacityInUse(ref))) {
          if (!CheckCounters(ref)) {
            ++d.counters_exhausted;
            continue;
          }
          ReleaseCounters(ref);
        }
        if (a_.features.device_taints && TaintPrevents(dev, *rd.spec)) {
          ++d.tainted;
          continue;
        }
        ++d.free;
      }
    }
  }
  return d;
}

Result<Diagnosis> Search::Diagnose() {
  if (VoidResult setup = Setup(); !setup.ok()) return setup.error();
  Diagnosis out;
  for (size_t c = 0; c < data_.size(); ++c) {
    for (size_t r = 0; r < data_[c].size(); ++r) {
      for (size_t s = 0; s < data_[c][r].size(); ++s)
        out.requests.push_back(
            DiagnoseRequest(static_cast<int>(c), static_cast<int>(r), static_cast<int>(s)));
    }
  }
  for (const Pool& p : *pools_) {
    if (p.invalid) out.invalid_pools.push_back(p.Id() + ": " + p.invalid_reason);
  }
  Step s = AllocateOne(Indices{}, false, {});
  if (s == Step::kError) return Error{error_};
  out.fits = s == Step::kDone;
  return out;
}

}  // namespace

Result<Diagnosis> Allocator::Diagnose(
    const Node& node, const std::vector<std::shared_ptr<const ResourceClaim>>& claims) const {
  Search search(*impl_, node, claims);
  return search.Diagnose();
}

Result<std::optional<std::vector<AllocationResult>>> Allocator::Allocate(
    const Node& node, const std::vector<std::shared_ptr<const ResourceClaim>>& claims,
    int32_t node_slot) const {
  std::shared_ptr<const NodePools> keep;
  const NodePools* pools = impl_->index->PoolsAt(node, node_slot, &keep);
  if (impl_->shortcuts) {
    if (auto known = internal::NothingFree(*impl_, *pools, claims)) return std::move(*known);
  }
  Search search(*impl_, node, claims, pools, std::move(keep));
  return search.Run();
}

}  // namespace berth::dra
