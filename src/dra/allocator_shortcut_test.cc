// Allocate's shortcut for nodes whose devices are all held (NothingFree) against the full
// search: random clusters, held devices and claims, compared node by node over a sequence of
// changes to what is held, with the slice index (and what it remembers per pool) kept across
// the changes as the plugin keeps it.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dra/allocated_tracker.h"
#include "dra/allocator.h"
#include "dra/allocator_test_util.h"
#include "dra/pool_cache.h"

namespace berth::dra {
namespace {

using namespace testing;  // NOLINT(build/namespaces): the allocator test builders
using ClaimPtr = std::shared_ptr<const ResourceClaim>;
using Outcome = Result<std::optional<std::vector<AllocationResult>>>;

// Everything an outcome decides, as text.
std::string Describe(const Outcome& r) {
  if (!r.ok())
    return "error " + std::to_string(static_cast<int>(r.error().code)) + ": " + r.error().message;
  if (!*r) return "no fit";
  std::string out = "fit";
  for (const AllocationResult& a : **r) {
    out += " [";
    for (const auto& d : a.results) {
      out += d.request + "=" + d.driver + "/" + d.pool + "/" + d.device;
      if (d.admin_access.value_or(false)) out += "(admin)";
      if (d.share_id) out += "(share " + *d.share_id + ")";
      for (const auto& [name, q] : d.consumed_capacity) out += "(" + name + " " + q.String() + ")";
      out += " ";
    }
    out += "config " + std::to_string(a.config.size());
    out += a.node_selector ? " selector]" : "]";
  }
  return out;
}

// A random cluster of three nodes: pools of their own, sometimes one every node reaches, one
// that nodes reach by label, one that is invalid (duplicate names) or incomplete, and devices
// that allow shared allocations.
struct World {
  std::vector<Node> nodes;
  std::vector<std::shared_ptr<const ResourceSlice>> slices;
  std::vector<DeviceId> devices;  // of valid, complete pools
  std::vector<std::shared_ptr<DeviceClass>> classes;
  std::map<std::string, std::vector<DeviceId>> reach;  // node -> devices of usable pools
};

Device RandomDevice(std::mt19937& rng, const std::string& name) {
  Device d = Dev(name);
  d.attributes[kIntAttr] = IntAttr(static_cast<int64_t>(rng() % 2));
  if (rng() % 6 == 0) {
    d.allow_multiple_allocations = true;
    d.capacity["memory"].value = Qty("8Gi");
  }
  return d;
}

World MakeWorld(std::mt19937& rng) {
  World w;
  w.classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)};
  for (int n = 0; n < 3; ++n) {
    const std::string node = "node-" + std::to_string(n);
    w.nodes.push_back(MakeNode(node, n == 0 ? kRegion1 : kRegion2));
    const int pools = 1 + static_cast<int>(rng() % 2);
    for (int p = 0; p < pools; ++p) {
      const std::string pool = node + "-pool-" + std::to_string(p);
      std::vector<Device> devs;
      const int count = static_cast<int>(rng() % 4);  // a pool may have no device
      for (int d = 0; d < count; ++d) {
        devs.push_back(RandomDevice(rng, "dev-" + std::to_string(d)));
        w.devices.push_back(DeviceId{kDriverA, pool, devs.back().name});
        w.reach[node].push_back(w.devices.back());
      }
      w.slices.push_back(Slice(pool, OnNode(node), pool, kDriverA, std::move(devs)));
    }
  }
  if (rng() % 3 == 0) {  // a pool of driver-b every node reaches
    std::vector<Device> devs = {RandomDevice(rng, "b-0"), RandomDevice(rng, "b-1")};
    for (const Device& d : devs) {
      w.devices.push_back(DeviceId{kDriverB, "shared", d.name});
      for (const Node& n : w.nodes) w.reach[n.metadata.name].push_back(w.devices.back());
    }
    w.slices.push_back(Slice("shared", AllNodes(), "shared", kDriverB, std::move(devs)));
  }
  if (rng() % 4 == 0) {  // a pool of the nodes labelled region-1 (node-0): pools by label
    std::vector<Device> devs = {RandomDevice(rng, "z-0")};
    w.devices.push_back(DeviceId{kDriverA, "zonal", "z-0"});
    w.reach["node-0"].push_back(w.devices.back());
    w.slices.push_back(
        Slice("zonal", Selected(LabelSelector("region", kRegion1)), "zonal", kDriverA, devs));
  }
  if (rng() % 6 == 0)  // invalid on node-0: the same name twice
    w.slices.push_back(Slice("bad", OnNode("node-0"), "bad", kDriverA, {Dev("x"), Dev("x")}));
  if (rng() % 6 == 0)  // incomplete on node-1: one of two slices
    w.slices.push_back(Slice("half", OnNode("node-1"), "half", kDriverA, {Dev("y")}, 2));
  return w;
}

DeviceRequest RandomRequest(std::mt19937& rng, const std::string& name) {
  const std::string cls = rng() % 12 == 0 ? "missing" : (rng() % 3 == 0 ? kClassB : kClassA);
  const int kind = static_cast<int>(rng() % 20);
  if (kind == 0) return AllRequest(name, cls);
  if (kind <= 3) {
    return Prioritized(name, {SubRequest("s0", cls, 1 + static_cast<int64_t>(rng() % 2)),
                              SubRequest("s1", kClassA, static_cast<int64_t>(rng() % 2))});
  }
  DeviceRequest r = Request(name, cls, rng() % 10 == 0 ? 0 : 1 + static_cast<int64_t>(rng() % 2));
  if (rng() % 10 == 0) r.exactly->admin_access = true;
  if (rng() % 10 == 0)
    r.exactly->selectors.push_back({"device.attributes[\"driver-a\"].numa == 0"});
  if (rng() % 25 == 0) r.exactly->selectors.push_back({""});
  if (rng() % 10 == 0) r.exactly->capacity_requests["memory"] = Qty("1Gi");
  return r;
}

std::vector<ClaimPtr> RandomClaims(std::mt19937& rng) {
  std::vector<ClaimPtr> claims;
  const int n = 1 + static_cast<int>(rng() % 2);
  for (int c = 0; c < n; ++c) {
    std::vector<DeviceRequest> requests;
    const int r = static_cast<int>(rng() % 3);  // a claim may ask for nothing
    for (int i = 0; i < r; ++i) requests.push_back(RandomRequest(rng, "req-" + std::to_string(i)));
    std::vector<DeviceConstraint> constraints;
    if (rng() % 6 == 0) constraints.push_back(MatchAttribute(kIntAttr));
    if (rng() % 30 == 0) constraints.push_back(DeviceConstraint{});
    auto claim = Claim("claim-" + std::to_string(c), std::move(requests), std::move(constraints));
    claim->metadata.namespace_ = "ns";
    claims.push_back(std::move(claim));
  }
  return claims;
}

// A claim holding `id`: exclusively, with admin access, or as one share.
ClaimPtr Holding(const DeviceId& id, int how) {
  auto c = std::make_shared<ResourceClaim>();
  DeviceRequestAllocationResult r;
  r.request = "held";
  r.driver = id.driver;
  r.pool = id.pool;
  r.device = id.device;
  if (how == 1) r.admin_access = true;
  if (how == 2) {
    r.share_id = "share";
    r.consumed_capacity["memory"] = Qty("1Gi");
  }
  c->status.allocation.emplace();
  c->status.allocation->results.push_back(r);
  return c;
}

Features RandomFeatures(std::mt19937& rng) {
  Features f;
  f.prioritized_list = rng() % 8 != 0;
  f.admin_access = rng() % 8 != 0;
  f.consumable_capacity = rng() % 8 != 0;
  return f;
}

TEST(AllocatorShortcutTest, SameOutcomeAsTheSearch) {
  int compared = 0, all_held_no_fit = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 rng(seed);
    const World w = MakeWorld(rng);
    const Features features = RandomFeatures(rng);
    auto lookup = [&w](std::string_view name) -> std::shared_ptr<const DeviceClass> {
      for (const auto& c : w.classes)
        if (c->metadata.name == name) return c;
      return nullptr;
    };
    PoolCache pools(features);
    cel::dra::SelectorCache cel(16);
    AllocatedStateTracker tracker;
    std::set<DeviceId> exclusive;
    // Most devices held, so that whole nodes are.
    for (const DeviceId& id : w.devices) {
      const int how = static_cast<int>(rng() % 20);
      if (how >= 4 || how == 0) {
        exclusive.insert(id);
        tracker.Set(id.String(), Holding(id, 0));
      } else {
        tracker.Set(id.String(), Holding(id, how == 1 ? 1 : 2));
      }
    }
    for (int step = 0; step < 6; ++step) {
      if (step > 0 && !w.devices.empty()) {  // one device freed or taken
        const DeviceId& id = w.devices[rng() % w.devices.size()];
        if (exclusive.erase(id)) {
          tracker.Set(id.String(), nullptr);
        } else {
          exclusive.insert(id);
          tracker.Set(id.String(), Holding(id, 0));
        }
      }
      auto index = pools.For(w.slices);
      Allocator fast(features, tracker.State(), lookup, index, &cel);
      Allocator slow(features, tracker.State(), lookup, index, &cel);
      slow.SetShortcuts(false);
      fast.SetShareIdGenerator([] { return std::string("id"); });
      slow.SetShareIdGenerator([] { return std::string("id"); });
      const std::vector<ClaimPtr> claims = RandomClaims(rng);
      for (size_t n = 0; n < w.nodes.size(); ++n) {
        const Node& node = w.nodes[n];
        const std::string want = Describe(slow.Allocate(node, claims));
        SCOPED_TRACE("seed " + std::to_string(seed) + " step " + std::to_string(step) + " " +
                     node.metadata.name + ": " + want);
        // By name, by position in the node list, then again (remembered per node and pool),
        // and through a stale position (another node's).
        const int32_t slot = static_cast<int32_t>(n);
        EXPECT_EQ(Describe(fast.Allocate(node, claims)), want);
        EXPECT_EQ(Describe(fast.Allocate(node, claims, slot)), want);
        EXPECT_EQ(Describe(fast.Allocate(node, claims, slot)), want);
        EXPECT_EQ(Describe(fast.Allocate(node, claims, (slot + 1) % 3)), want);
        ++compared;
        bool all_held = true;
        if (auto it = w.reach.find(node.metadata.name); it != w.reach.end())
          for (const DeviceId& id : it->second) all_held = all_held && exclusive.count(id) > 0;
        if (all_held && want == "no fit") ++all_held_no_fit;
      }
    }
  }
  // The comparison covers the shortcut's case often.
  EXPECT_EQ(compared, 300 * 6 * 3);
  EXPECT_GT(all_held_no_fit, 500);
}

// What the shortcut remembers of a pool lasts only while nothing held in the pool changes.
TEST(AllocatorShortcutTest, FreedDeviceIsFoundAgain) {
  const auto classes = std::vector<std::shared_ptr<DeviceClass>>{Class(kClassA, kDriverA)};
  auto lookup = [&](std::string_view) -> std::shared_ptr<const DeviceClass> { return classes[0]; };
  PoolCache pools(Features{});
  auto index =
      pools.For({Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice0), Dev(kDevice1)})});
  cel::dra::SelectorCache cel(4);
  AllocatedStateTracker tracker;
  tracker.Set("a", Holding(DeviceId{kDriverA, kPool1, kDevice0}, 0));
  tracker.Set("b", Holding(DeviceId{kDriverA, kPool1, kDevice1}, 0));
  const Node node = MakeNode(kNode1, kRegion1);
  const std::vector<ClaimPtr> claims = {Claim(kClaim0, {Request(kReq0, kClassA, 1)})};
  {
    Allocator a(Features{}, tracker.State(), lookup, index, &cel);
    auto r = a.Allocate(node, claims);
    ASSERT_TRUE(r.ok());
    EXPECT_FALSE(r->has_value());
    EXPECT_FALSE(a.Allocate(node, claims)->has_value());
  }
  tracker.Set("b", nullptr);
  Allocator a(Features{}, tracker.State(), lookup, index, &cel);
  auto r = a.Allocate(node, claims);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ(Devices((**r)[0]), std::vector<Expected>{D(kReq0, kDriverA, kPool1, kDevice1)});
}

// The tracker records each change of a pool's held devices, newest first, and cuts the chain
// where it grows long; a state indexed whole records none.
TEST(AllocatorShortcutTest, TrackerRecordsHeldChanges) {
  AllocatedStateTracker tracker;
  const DeviceId a{kDriverA, kPool1, kDevice0}, b{kDriverA, kPool1, kDevice1};
  const DeviceId other{kDriverA, kPool2, kDevice0};
  EXPECT_EQ(tracker.State()->changes, nullptr);
  tracker.Set("a", Holding(a, 0));
  tracker.Set("other", Holding(other, 0));
  auto before = tracker.State()->changes;
  ASSERT_NE(before, nullptr);
  EXPECT_EQ(before->pool, kPool2);
  const ClaimPtr share = Holding(b, 2);
  tracker.Set("b", share);  // a share: a change of pool-1
  auto after = tracker.State()->changes;
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(after->pool, kPool1);
  EXPECT_EQ(after->driver, kDriverA);
  EXPECT_GT(after->seq, before->seq);
  EXPECT_EQ(after->older, before);
  tracker.Set("b", share);  // the same claim again: nothing changes
  EXPECT_EQ(tracker.State()->changes, after);
  for (int i = 0; i < 300; ++i) tracker.Set("a", i % 2 ? Holding(a, 0) : nullptr);
  size_t length = 0;
  for (const HeldChange* c = tracker.State()->changes.get(); c != nullptr; c = c->older.get()) {
    if (c->older) EXPECT_GT(c->seq, c->older->seq);
    ++length;
  }
  EXPECT_GT(length, 0u);
  EXPECT_LE(length, 256u);
  AllocatedState indexed = AllocatedStateOf({Holding(a, 0)});
  indexed.changes = after;
  IndexByPool(indexed);
  EXPECT_EQ(indexed.changes, nullptr);
}

}  // namespace
}  // namespace berth::dra
