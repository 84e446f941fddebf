// The caches the allocator keeps across cycles: AllocatedStateTracker (equal to
// AllocatedStateOf of the same claims after any sequence of changes, never changing a state a
// cycle holds) and SliceIndex / PoolCache (a node's pools reused until a slice or, for
// slices selecting nodes by label, the node's labels change).
#include "dra/pool_cache.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "dra/allocated_tracker.h"
#include "dra/allocator.h"

namespace berth::dra {
namespace {

using ClaimPtr = std::shared_ptr<const ResourceClaim>;

ClaimPtr Claim(const std::string& device, const std::string& share_id = "",
               const std::string& capacity = "") {
  auto c = std::make_shared<ResourceClaim>();
  c->metadata.name = device + share_id;
  DeviceRequestAllocationResult r;
  r.request = "req";
  r.driver = "driver";
  r.pool = "pool";
  r.device = device;
  if (!share_id.empty()) r.share_id = share_id;
  if (!capacity.empty()) r.consumed_capacity["memory"] = Quantity::Parse(capacity).value();
  c->status.allocation.emplace();
  c->status.allocation->results.push_back(r);
  return c;
}

// The state's content, zero amounts counting as absent.
void ExpectSameState(const AllocatedState& got, const AllocatedState& want) {
  EXPECT_EQ(got.allocated, want.allocated);
  EXPECT_EQ(got.allocated_shared, want.allocated_shared);
  ASSERT_EQ(got.consumed_capacity.size(), want.consumed_capacity.size());
  for (const auto& [id, amounts] : want.consumed_capacity) {
    auto it = got.consumed_capacity.find(id);
    ASSERT_NE(it, got.consumed_capacity.end()) << id.String();
    for (const auto& [name, q] : amounts) {
      auto g = it->second.find(name);
      EXPECT_TRUE(g == it->second.end() ? q.IsZero() : g->second == q) << name;
    }
  }
  AllocatedState indexed = want;
  IndexByPool(indexed);
  ASSERT_EQ(got.by_pool.size(), indexed.by_pool.size());
  for (const auto& [key, held] : indexed.by_pool) {
    auto it = got.by_pool.find(key);
    ASSERT_NE(it, got.by_pool.end());
    auto sorted = [](std::vector<std::string> v) {
      std::sort(v.begin(), v.end());
      return v;
    };
    EXPECT_EQ(sorted(it->second.exclusive), sorted(held.exclusive));
    EXPECT_EQ(sorted(it->second.shared), sorted(held.shared));
  }
}

TEST(AllocatedStateTrackerTest, FollowsClaimsAddedChangedAndRemoved) {
  AllocatedStateTracker tracker;
  const ClaimPtr a = Claim("dev-a"), b = Claim("dev-b"), b_again = Claim("dev-b");
  const ClaimPtr s1 = Claim("dev-s", "s1", "1Gi"), s2 = Claim("dev-s", "s2", "2Gi");
  const ClaimPtr none = std::make_shared<ResourceClaim>();  // not allocated
  const std::vector<std::vector<ClaimPtr>> steps = {
      {a},       {a, none, b}, {a, b, s1, s2},   {b, s2}, {b, b_again, s2},
      {b_again}, {none},       {b_again, s1, a}, {},      {a, s1, b}};
  for (const auto& claims : steps) {
    auto state = tracker.Update(claims);
    ExpectSameState(*state, AllocatedStateOf(claims));
  }
}

TEST(AllocatedStateTrackerTest, StateHeldByACycleIsNotChanged) {
  AllocatedStateTracker tracker;
  const ClaimPtr a = Claim("dev-a"), b = Claim("dev-b");
  auto held = tracker.Update({a});
  auto next = tracker.Update({a, b});
  EXPECT_EQ(held->allocated.size(), 1u);
  EXPECT_EQ(next->allocated.size(), 2u);
  EXPECT_EQ(tracker.copies(), 1u);
  held.reset();
  next.reset();
  tracker.Update({b});  // nobody holds the state: changed in place
  EXPECT_EQ(tracker.copies(), 1u);
}

std::shared_ptr<const ResourceSlice> Slice(const std::string& name, bool by_label) {
  auto s = std::make_shared<ResourceSlice>();
  s->metadata.name = name;
  s->spec.driver = "driver";
  s->spec.pool = ResourcePool{name, 1, 1};
  if (by_label) {
    NodeSelector sel;
    NodeSelectorTerm term;
    term.match_expressions.push_back({"zone", "In", {"a"}});
    sel.terms.push_back(term);
    s->spec.node_selector = sel;
  } else {
    s->spec.node_name = "node";
  }
  s->spec.devices.push_back(Device{});
  s->spec.devices.back().name = "dev";
  return s;
}

TEST(PoolCacheTest, PoolsReusedUntilSlicesChange) {
  PoolCache cache{Features{}};
  Node node;
  node.metadata.name = "node";
  const std::vector<std::shared_ptr<const ResourceSlice>> slices = {Slice("own", false)};
  auto index = cache.For(slices);
  EXPECT_EQ(index->PoolsFor(node)->pools.size(), 1u);
  EXPECT_EQ(index->PoolsFor(node)->pools.size(), 1u);
  EXPECT_EQ(index->pool_builds(), 1u);
  EXPECT_EQ(cache.For(slices), index);              // the same slices: the same index
  auto changed = cache.For({Slice("own", false)});  // an updated slice is a new object
  EXPECT_NE(changed, index);
  EXPECT_EQ(changed->PoolsFor(node)->pools.size(), 1u);
  EXPECT_EQ(cache.For({})->PoolsFor(node)->pools.size(), 0u);
}

TEST(PoolCacheTest, PoolsOfLabelSelectedSlicesFollowNodeLabels) {
  PoolCache cache{Features{}};
  Node node;
  node.metadata.name = "node";
  auto index = cache.For({Slice("zonal", true)});
  EXPECT_EQ(index->PoolsFor(node)->pools.size(), 0u);
  node.metadata.labels["zone"] = "a";
  EXPECT_EQ(index->PoolsFor(node)->pools.size(), 1u);
  EXPECT_EQ(index->PoolsFor(node)->pools.size(), 1u);
  EXPECT_EQ(index->pool_builds(), 2u);
  node.metadata.labels["zone"] = "b";
  EXPECT_EQ(index->PoolsFor(node)->pools.size(), 0u);
}

}  // namespace
}  // namespace berth::dra

namespace berth::dra {
namespace {

// ForGeneration lists the slices only when the generation moved, and keeps the index when the
// list holds the same objects.
TEST(PoolCacheTest, ForGenerationListsOnlyWhenTheGenerationMoves) {
  PoolCache cache(Features{});
  std::vector<std::shared_ptr<const ResourceSlice>> slices = {Slice("a", false)};
  int lists = 0;
  auto list = [&] {
    ++lists;
    return slices;
  };
  auto first = cache.ForGeneration(1, list);
  EXPECT_EQ(cache.ForGeneration(1, list), first);
  EXPECT_EQ(lists, 1);
  EXPECT_EQ(cache.ForGeneration(2, list), first);  // listed again: the same slices
  EXPECT_EQ(lists, 2);
  slices.push_back(Slice("b", false));
  auto second = cache.ForGeneration(3, list);
  EXPECT_NE(second, first);
  EXPECT_EQ(second->slices().size(), 2u);
  cache.Invalidate();
  EXPECT_NE(cache.ForGeneration(3, list), second);
  EXPECT_EQ(lists, 4);
}

}  // namespace
}  // namespace berth::dra
