// Builders for the allocator's tests, after upstream's allocatortesting helpers: node-1 in
// region-1, classes selecting their driver, slices of one pool with ResourceSliceCount 1.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "berth/api/quantity.h"
#include "berth/api/resource_claims.h"
#include "cel/dra.h"
#include "dra/allocator.h"

namespace berth::dra::testing {

inline constexpr const char* kRegion1 = "region-1";
inline constexpr const char* kRegion2 = "region-2";
inline constexpr const char* kNode1 = "node-1";
inline constexpr const char* kNode2 = "node-2";
inline constexpr const char* kClassA = "class-a";
inline constexpr const char* kClassB = "class-b";
inline constexpr const char* kDriverA = "driver-a";
inline constexpr const char* kDriverB = "driver-b";
inline constexpr const char* kPool1 = "pool-1";
inline constexpr const char* kPool2 = "pool-2";
inline constexpr const char* kPool3 = "pool-3";
inline constexpr const char* kPool4 = "pool-4";
inline constexpr const char* kReq0 = "req-0";
inline constexpr const char* kReq1 = "req-1";
inline constexpr const char* kReq2 = "req-2";
inline constexpr const char* kSubReq0 = "subReq-0";
inline constexpr const char* kSubReq1 = "subReq-1";
inline constexpr const char* kClaim0 = "claim-0";
inline constexpr const char* kClaim1 = "claim-1";
inline constexpr const char* kSlice1 = "slice-1";
inline constexpr const char* kSlice2 = "slice-2";
inline constexpr const char* kDevice0 = "device-0";
inline constexpr const char* kDevice1 = "device-1";
inline constexpr const char* kDevice2 = "device-2";
inline constexpr const char* kDevice3 = "device-3";

inline Quantity Qty(const char* s) { return Quantity::Parse(s).value(); }

inline Node MakeNode(const std::string& name, const std::string& region) {
  Node n;
  n.metadata.name = name;
  n.metadata.labels["region"] = region;
  n.metadata.labels["planet"] = "earth";
  return n;
}

inline std::shared_ptr<DeviceClass> Class(const std::string& name, const std::string& driver) {
  auto c = std::make_shared<DeviceClass>();
  c->metadata.name = name;
  c->spec.selectors.push_back({"device.driver == \"" + driver + "\""});
  return c;
}

inline NodeSelector LabelSelector(const std::string& key, const std::string& value) {
  NodeSelector s;
  s.terms.push_back(NodeSelectorTerm{{{key, "In", {value}}}, {}});
  return s;
}

inline NodeSelector LocalSelector(const std::string& node) {
  NodeSelector s;
  s.terms.push_back(NodeSelectorTerm{{}, {{"metadata.name", "In", {node}}}});
  return s;
}

inline Device Dev(const std::string& name) {
  Device d;
  d.name = name;
  return d;
}

inline DeviceAttribute IntAttr(int64_t v) { return DeviceAttribute{v, {}, {}, {}}; }
inline DeviceAttribute BoolAttr(bool v) { return DeviceAttribute{{}, v, {}, {}}; }
inline DeviceAttribute StrAttr(std::string v) { return DeviceAttribute{{}, {}, std::move(v), {}}; }
inline DeviceAttribute VersionAttr(std::string v) {
  return DeviceAttribute{{}, {}, {}, std::move(v)};
}

// How a slice selects nodes: a node name, "all", "per-device" or a selector.
struct Selection {
  std::string node;
  bool all = false, per_device = false;
  std::optional<NodeSelector> selector;
};
inline Selection OnNode(std::string n) { return Selection{std::move(n)}; }
inline Selection AllNodes() { return Selection{{}, true}; }
inline Selection PerDevice() { return Selection{{}, false, true}; }
inline Selection Selected(NodeSelector s) { return Selection{{}, false, false, std::move(s)}; }

inline std::shared_ptr<ResourceSlice> Slice(const std::string& name, const Selection& sel,
                                            const std::string& pool, const std::string& driver,
                                            std::vector<Device> devices, int64_t count = 1,
                                            int64_t generation = 1) {
  auto s = std::make_shared<ResourceSlice>();
  s->metadata.name = name;
  s->spec.driver = driver;
  s->spec.pool = ResourcePool{pool, generation, count};
  if (!sel.node.empty()) s->spec.node_name = sel.node;
  s->spec.all_nodes = sel.all;
  s->spec.per_device_node_selection = sel.per_device;
  s->spec.node_selector = sel.selector;
  s->spec.devices = std::move(devices);
  return s;
}

inline std::shared_ptr<ResourceSlice> OneDevice(const std::string& name, const Selection& sel,
                                                const std::string& pool,
                                                const std::string& driver) {
  return Slice(name, sel, pool, driver, {Dev(kDevice1)});
}

inline DeviceRequest Request(const std::string& name, const std::string& cls, int64_t count,
                             std::vector<std::string> selectors = {}) {
  DeviceRequest r;
  r.name = name;
  r.exactly.emplace();
  r.exactly->device_class_name = cls;
  r.exactly->allocation_mode = kAllocationModeExactCount;
  r.exactly->count = count;
  for (auto& s : selectors) r.exactly->selectors.push_back({std::move(s)});
  return r;
}

inline DeviceRequest AllRequest(const std::string& name, const std::string& cls) {
  DeviceRequest r = Request(name, cls, 0);
  r.exactly->allocation_mode = kAllocationModeAll;
  return r;
}

inline DeviceSubRequest SubRequest(const std::string& name, const std::string& cls, int64_t count) {
  DeviceSubRequest s;
  s.name = name;
  s.request.device_class_name = cls;
  s.request.allocation_mode = kAllocationModeExactCount;
  s.request.count = count;
  return s;
}

inline DeviceRequest Prioritized(const std::string& name, std::vector<DeviceSubRequest> subs) {
  DeviceRequest r;
  r.name = name;
  r.first_available = std::move(subs);
  return r;
}

inline std::shared_ptr<ResourceClaim> Claim(const std::string& name,
                                            std::vector<DeviceRequest> requests,
                                            std::vector<DeviceConstraint> constraints = {}) {
  auto c = std::make_shared<ResourceClaim>();
  c->metadata.name = name;
  c->spec.devices.requests = std::move(requests);
  c->spec.devices.constraints = std::move(constraints);
  return c;
}

inline DeviceConstraint MatchAttribute(const std::string& attr,
                                       std::vector<std::string> requests = {}) {
  DeviceConstraint c;
  c.requests = std::move(requests);
  c.match_attribute = attr;
  return c;
}

// One expected device: request, driver, pool, device, admin access.
using Expected = std::tuple<std::string, std::string, std::string, std::string, bool>;

inline std::vector<Expected> Devices(const AllocationResult& a) {
  std::vector<Expected> out;
  for (const auto& r : a.results)
    out.emplace_back(r.request, r.driver, r.pool, r.device, r.admin_access.value_or(false));
  std::sort(out.begin(), out.end());
  return out;
}

inline std::vector<Expected> Sorted(std::vector<Expected> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// Everything one Allocate call needs.
struct Case {
  Features features;
  std::vector<std::shared_ptr<ResourceClaim>> claims;
  AllocatedState allocated;
  std::vector<std::shared_ptr<DeviceClass>> classes;
  std::vector<std::shared_ptr<ResourceSlice>> slices;
  Node node = MakeNode(kNode1, kRegion1);
  std::string share_id;  // fixed shareID when set

  Result<std::optional<std::vector<AllocationResult>>> Run() const {
    cel::dra::SelectorCache cache(100);
    auto lookup = [this](std::string_view name) -> std::shared_ptr<const DeviceClass> {
      for (const auto& c : classes)
        if (c->metadata.name == name) return c;
      return nullptr;
    };
    std::vector<std::shared_ptr<const ResourceSlice>> s(slices.begin(), slices.end());
    Allocator a(features, allocated, lookup, s, &cache);
    if (!share_id.empty()) a.SetShareIdGenerator([id = share_id] { return id; });
    std::vector<std::shared_ptr<const ResourceClaim>> c(claims.begin(), claims.end());
    return a.Allocate(node, c);
  }
};

}  // namespace berth::dra::testing

namespace berth::dra::testing {

// A device consuming counters; with `capacity_from_counters` its capacity mirrors them (as
// upstream's fromCounters devices).
inline Device Consuming(Device d, const std::string& set,
                        std::vector<std::pair<std::string, const char*>> counters,
                        bool capacity_from_counters = true) {
  DeviceCounterConsumption c;
  c.counter_set = set;
  for (const auto& [name, q] : counters) {
    c.counters[name] = Qty(q);
    if (capacity_from_counters) d.capacity[name].value = Qty(q);
  }
  d.consumes_counters.push_back(std::move(c));
  return d;
}

inline CounterSet Counters_(const std::string& name,
                            std::vector<std::pair<std::string, const char*>> counters) {
  CounterSet s;
  s.name = name;
  for (const auto& [n, q] : counters) s.counters[n] = Qty(q);
  return s;
}

inline std::shared_ptr<ResourceSlice> CounterSlice(const std::string& name, const Selection& sel,
                                                   const std::string& pool,
                                                   const std::string& driver,
                                                   std::vector<CounterSet> sets,
                                                   int64_t count = 2) {
  auto s = Slice(name, sel, pool, driver, {}, count);
  s->spec.shared_counters = std::move(sets);
  return s;
}

inline std::string MemoryAtLeast(const char* q) {
  return std::string("device.capacity[\"driver-a\"].memory.compareTo(quantity(\"") + q +
         "\")) >= 0";
}

// The outcome a case expects: an allocation (returned, one result list per claim), none, or an
// error containing `substring`.
inline std::vector<AllocationResult> Fit(const Case& c) {
  auto r = c.Run();
  EXPECT_TRUE(r.ok()) << r.error().message;
  if (!r.ok() || !r.value()) {
    ADD_FAILURE() << "expected an allocation";
    return std::vector<AllocationResult>(c.claims.size());
  }
  EXPECT_EQ(r.value()->size(), c.claims.size());
  return *r.value();
}

inline void NoFit(const Case& c) {
  auto r = c.Run();
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r.value().has_value());
}

inline void Fails(const Case& c, const std::string& substring) {
  auto r = c.Run();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(substring), std::string::npos) << r.error().message;
}

inline Expected D(const std::string& req, const std::string& driver, const std::string& pool,
                  const std::string& dev, bool admin = false) {
  return {req, driver, pool, dev, admin};
}

inline const std::string kIntAttr = std::string(kDriverA) + "/numa";
inline const std::string kVersionAttr = std::string(kDriverA) + "/driverVersion";
inline const std::string kStringAttr = std::string(kDriverA) + "/stringAttribute";
inline const std::string kBoolAttr = std::string(kDriverA) + "/boolAttribute";

// A device with the given attributes.
inline Device WithAttrs(const std::string& name,
                        std::vector<std::pair<std::string, DeviceAttribute>> attrs) {
  Device d = Dev(name);
  for (auto& [k, v] : attrs) d.attributes[k] = v;
  return d;
}

}  // namespace berth::dra::testing
