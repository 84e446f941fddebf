// AllocatedStateTracker fed from a change feed through Advance().
#include "dra/allocated_tracker.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace berth::dra {
namespace {

std::shared_ptr<const ResourceClaim> Holding(const std::string& device) {
  auto c = std::make_shared<ResourceClaim>();
  DeviceRequestAllocationResult r;
  r.request = "req";
  r.driver = "driver";
  r.pool = "pool";
  r.device = device;
  c->status.allocation.emplace();
  c->status.allocation->results.push_back(r);
  return c;
}

TEST(AllocatedStateTrackerTest, AdvanceAppliesChangesFromItsPositionOnly) {
  AllocatedStateTracker t;
  EXPECT_EQ(t.position(), 0u);
  EXPECT_TRUE(t.Advance(0, 5, true, {{"a", Holding("d0")}, {"b", Holding("d1")}}));
  EXPECT_EQ(t.position(), 5u);
  EXPECT_EQ(t.State()->allocated.size(), 2u);
  // A caller that read from the old position: its changes are in the state already.
  EXPECT_FALSE(t.Advance(0, 5, true, {{"a", Holding("d0")}}));
  EXPECT_EQ(t.State()->allocated.size(), 2u);
  // b goes away, a moves to d2.
  EXPECT_TRUE(t.Advance(5, 7, false, {{"b", nullptr}, {"a", Holding("d2")}}));
  const auto state = t.State();
  EXPECT_EQ(t.position(), 7u);
  ASSERT_EQ(state->allocated.size(), 1u);
  EXPECT_EQ(state->allocated.begin()->device, "d2");
  // A resync forgets what is not listed again.
  EXPECT_TRUE(t.Advance(7, 9, true, {{"c", Holding("d3")}}));
  ASSERT_EQ(t.State()->allocated.size(), 1u);
  EXPECT_EQ(t.State()->allocated.begin()->device, "d3");
  EXPECT_EQ(t.size(), 1u);
}

}  // namespace
}  // namespace berth::dra
