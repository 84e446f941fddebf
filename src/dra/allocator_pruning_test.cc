// The search with its shortcuts (pools a fixed matchAttribute value rules out skipped, selector
// results and attribute values kept per slice index across nodes and calls) against the plain
// search on a fresh index: random pools sharing attribute values, counters, selectors that fail
// on some devices, constraints over some or all requests.
#include <gtest/gtest.h>

#include <memory>
#include <random>
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

std::string Describe(const Outcome& r) {
  if (!r.ok()) return "error: " + r.error().message;
  if (!*r) return "no fit";
  std::string out = "fit";
  for (const AllocationResult& a : **r) {
    out += " [";
    for (const auto& d : a.results) out += d.request + "=" + d.pool + "/" + d.device + " ";
    out += "]";
  }
  return out;
}

const std::string kFlagAttr = std::string(kDriverA) + "/flag";

// A device with the match attribute (int or string, spelled with or without the domain) of
// value `value` (-1: none), a flag most devices have (a selector reading it fails on the
// others), and optionally a counter.
Device RandomDevice(std::mt19937& rng, const std::string& name, int value, bool counters) {
  Device d = Dev(name);
  if (value >= 0) {
    if (rng() % 5 == 0) {
      d.attributes["numa"] = IntAttr(value);  // its driver's domain, unqualified
    } else {
      d.attributes[kIntAttr] = IntAttr(value);
    }
    d.attributes[kStringAttr] = StrAttr("s" + std::to_string(value % 2));
  }
  if (rng() % 12 != 0) d.attributes[kFlagAttr] = BoolAttr(rng() % 4 != 0);
  if (counters) d = Consuming(std::move(d), "set", {{"c" + std::to_string(rng() % 2), "1"}});
  return d;
}

// Pools every node reaches, some of one node only, some with counters (a second slice holds
// them); a pool's devices share one attribute value or not.
std::vector<std::shared_ptr<const ResourceSlice>> RandomSlices(std::mt19937& rng,
                                                               std::vector<DeviceId>* devices) {
  std::vector<std::shared_ptr<const ResourceSlice>> slices;
  const int pools = 2 + static_cast<int>(rng() % 7);
  for (int p = 0; p < pools; ++p) {
    const std::string pool = "pool-" + std::to_string(p);
    const bool counters = rng() % 3 == 0;
    const bool uniform = rng() % 2 == 0;
    const int pool_value = static_cast<int>(rng() % 4) - 1;
    const Selection where = rng() % 4 == 0 ? OnNode(kNode1) : AllNodes();
    std::vector<Device> devs;
    const int n = static_cast<int>(rng() % 5);
    for (int i = 0; i < n; ++i) {
      const int value = uniform ? pool_value : static_cast<int>(rng() % 4) - 1;
      devs.push_back(RandomDevice(rng, "dev-" + std::to_string(i), value, counters));
      devices->push_back(DeviceId{kDriverA, pool, devs.back().name});
    }
    slices.push_back(
        Slice(pool + "-devices", where, pool, kDriverA, std::move(devs), counters ? 2 : 1));
    if (counters) {
      slices.push_back(CounterSlice(pool + "-counters", where, pool, kDriverA,
                                    {Counters_("set", {{"c0", "1"}, {"c1", "2"}})}));
    }
  }
  return slices;
}

ClaimPtr RandomClaim(std::mt19937& rng) {
  std::vector<DeviceRequest> requests;
  const int n = 1 + static_cast<int>(rng() % 2);
  for (int i = 0; i < n; ++i) {
    const std::string name = "req-" + std::to_string(i);
    if (rng() % 5 == 0) {
      requests.push_back(
          Prioritized(name, {SubRequest("s0", kClassA, 2), SubRequest("s1", kClassA, 1)}));
      continue;
    }
    DeviceRequest r = Request(name, kClassA, 1 + static_cast<int64_t>(rng() % 3));
    const int sel = static_cast<int>(rng() % 6);
    if (sel == 0) r.exactly->selectors.push_back({"device.attributes[\"driver-a\"].flag"});
    if (sel == 1) r.exactly->selectors.push_back({"device.attributes[\"driver-a\"].numa >= 1"});
    requests.push_back(std::move(r));
  }
  std::vector<DeviceConstraint> constraints;
  const int kind = static_cast<int>(rng() % 6);
  if (kind <= 2) constraints.push_back(MatchAttribute(kIntAttr));
  if (kind == 3) constraints.push_back(MatchAttribute(kIntAttr, {"req-0"}));
  if (kind == 3 && rng() % 2) constraints.push_back(MatchAttribute(kIntAttr, {"req-1/s0"}));
  if (kind == 4) constraints.push_back(MatchAttribute(kStringAttr));
  if (kind == 5) {
    DeviceConstraint d;
    d.distinct_attribute = kIntAttr;
    constraints.push_back(d);
  }
  if (rng() % 3 == 0) constraints.push_back(MatchAttribute(kStringAttr));
  auto claim = Claim("claim", std::move(requests), std::move(constraints));
  claim->metadata.namespace_ = "ns";
  return claim;
}

ClaimPtr Holding(const DeviceId& id) {
  auto c = std::make_shared<ResourceClaim>();
  DeviceRequestAllocationResult r;
  r.request = "held";
  r.driver = id.driver;
  r.pool = id.pool;
  r.device = id.device;
  c->status.allocation.emplace();
  c->status.allocation->results.push_back(r);
  return c;
}

TEST(AllocatorPruningTest, SameOutcomeAsThePlainSearch) {
  int fits = 0, no_fits = 0, errors = 0;
  const std::vector<Node> nodes = {MakeNode(kNode1, kRegion1), MakeNode(kNode2, kRegion2)};
  const auto cls = Class(kClassA, kDriverA);
  auto lookup = [&](std::string_view name) -> std::shared_ptr<const DeviceClass> {
    return name == kClassA ? cls : nullptr;
  };
  for (uint32_t seed = 1; seed <= 400; ++seed) {
    std::mt19937 rng(seed);
    std::vector<DeviceId> devices;
    const auto slices = RandomSlices(rng, &devices);
    PoolCache pools(Features{});
    cel::dra::SelectorCache cel(16);
    AllocatedStateTracker tracker;
    for (int step = 0; step < 5; ++step) {
      if (!devices.empty()) {  // one device taken or freed
        const DeviceId& id = devices[rng() % devices.size()];
        tracker.Set(id.String(), rng() % 2 ? Holding(id) : nullptr);
      }
      // The same index across steps, as the plugin keeps it: what one step learned serves the
      // next.
      Allocator fast(Features{}, tracker.State(), lookup, pools.For(slices), &cel);
      const std::vector<ClaimPtr> claims = {RandomClaim(rng)};
      for (const Node& node : nodes) {
        cel::dra::SelectorCache fresh(16);
        Allocator plain(Features{}, *tracker.State(), lookup, slices, &fresh);
        plain.SetShortcuts(false);
        const std::string want = Describe(plain.Allocate(node, claims));
        SCOPED_TRACE("seed " + std::to_string(seed) + " step " + std::to_string(step) + " " +
                     node.metadata.name);
        EXPECT_EQ(Describe(fast.Allocate(node, claims)), want);
        EXPECT_EQ(Describe(fast.Allocate(node, claims)), want);
        if (want.starts_with("fit")) ++fits;
        if (want == "no fit") ++no_fits;
        if (want.starts_with("error")) ++errors;
      }
    }
  }
  // Each outcome is covered.
  EXPECT_GT(fits, 500);
  EXPECT_GT(no_fits, 300);
  EXPECT_GT(errors, 50);
}

// A pool the constraint rules out but whose devices make the request's selector fail is still
// visited: the search ends in that error before it reaches the pair in the third pool, as the
// plain search does.
TEST(AllocatorPruningTest, SelectorErrorInARuledOutPoolIsReported) {
  Case c;
  Device first = Dev(kDevice0);
  first.attributes[kIntAttr] = IntAttr(0);
  first.attributes[kFlagAttr] = BoolAttr(true);
  Device other = Dev(kDevice1);
  other.attributes[kIntAttr] = IntAttr(1);  // no flag: the selector fails on it
  c.classes = {Class(kClassA, kDriverA)};
  Device later = first;
  later.name = kDevice2;
  c.slices = {Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {first}),
              Slice(kSlice2, OnNode(kNode1), kPool2, kDriverA, {other}),
              Slice("slice-3", OnNode(kNode1), kPool3, kDriverA, {later})};
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 2, {"device.attributes[\"driver-a\"].flag"})},
                    {MatchAttribute(kIntAttr)})};
  Fails(c, "CEL runtime error");
}

// Pools ruled out by the constraint are skipped; a later pool with the value is found.
TEST(AllocatorPruningTest, FindsThePairInALaterPool) {
  Case c;
  c.classes = {Class(kClassA, kDriverA)};
  for (int p = 0; p < 6; ++p) {
    std::vector<Device> devs;
    for (int d = 0; d < 2; ++d) {
      Device dev = Dev("dev-" + std::to_string(d));
      dev.attributes[kIntAttr] = IntAttr(p);
      devs.push_back(dev);
    }
    if (p == 0) devs.pop_back();  // the first pool has one device of its value
    c.slices.push_back(Slice("slice-" + std::to_string(p), AllNodes(), "pool-" + std::to_string(p),
                             kDriverA, devs));
  }
  c.claims = {Claim(kClaim0, {Request(kReq0, kClassA, 2)}, {MatchAttribute(kIntAttr)})};
  const auto allocations = Fit(c);
  ASSERT_EQ(allocations.size(), 1u);
  EXPECT_EQ(Devices(allocations[0]),
            Sorted({D(kReq0, kDriverA, "pool-1", "dev-0"), D(kReq0, kDriverA, "pool-1", "dev-1")}));
}

}  // namespace
}  // namespace berth::dra
