#include "plugins/noderesources/resource_allocation.h"

#include <gtest/gtest.h>

#include <vector>

namespace berth::noderesources {
namespace {

TEST(BalancedAllocationScore, Formula) {
  struct Case {
    const char* name;
    std::vector<int64_t> requested;
    std::vector<int64_t> allocatable;
    int64_t want;
  };
  const int64_t gi = int64_t{1} << 30;
  const int64_t mi = int64_t{1} << 20;
  std::vector<Case> cases = {
      // facts §10: 1100m of 4000m vs 8Gi+500Mi of 32Gi.
      {"worked vector", {1100, 8 * gi + 500 * mi}, {4000, 32 * gi}, 99},
      {"equal fractions", {3000, 5000}, {6000, 10000}, 100},
      {"quarter apart", {3000, 5000}, {4000, 10000}, 87},
      {"fractions capped at one", {6000, 0}, {4000, 10000}, 50},
      {"skipped resources do not count", {6000, 0, 0}, {10000, 20000, 0}, 70},
      {"single resource has no spread", {1, 0}, {2, 0}, 100},
      {"nothing allocatable", {0, 0}, {0, 0}, 100},
      // mean 1/3 over {1/2, 1/4, 1/4}: std = sqrt(1/72) = 0.11785 -> 88.
      {"three resources use population std", {2000, 2500, 1}, {4000, 10000, 4}, 88},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(BalancedAllocationScore(c.requested, c.allocatable), c.want) << c.name;
  }
}

TEST(ScoringHelpers, LeastAndMostAllocatedSkipZeroAllocatable) {
  std::vector<ScoredResource> resources = {{"cpu", ScoredResource::Kind::kCpu, 1},
                                           {"memory", ScoredResource::Kind::kMemory, 3}};
  std::vector<int64_t> requested = {1000, 0};
  std::vector<int64_t> allocatable = {4000, 0};
  EXPECT_EQ(LeastAllocatedScore(requested, allocatable, resources), 75);
  EXPECT_EQ(MostAllocatedScore(requested, allocatable, resources), 25);
  std::vector<int64_t> none = {0, 0};
  EXPECT_EQ(LeastAllocatedScore(none, none, resources), 0);
  EXPECT_EQ(MostAllocatedScore(none, none, resources), 0);
}

TEST(ScoringHelpers, ResolveResourcesClassifiesNames) {
  auto r = ResolveResources({{"cpu", 1},
                             {"memory", 2},
                             {"ephemeral-storage", 3},
                             {"example.com/gpu", 4},
                             {"hugepages-1Gi", 5},
                             {"pods", 6}});
  ASSERT_EQ(r.size(), 6u);
  EXPECT_EQ(r[0].kind, ScoredResource::Kind::kCpu);
  EXPECT_EQ(r[1].kind, ScoredResource::Kind::kMemory);
  EXPECT_EQ(r[2].kind, ScoredResource::Kind::kEphemeralStorage);
  EXPECT_EQ(r[3].kind, ScoredResource::Kind::kScalar);
  EXPECT_EQ(r[4].kind, ScoredResource::Kind::kScalar);
  EXPECT_EQ(r[5].kind, ScoredResource::Kind::kUnsupported);
  EXPECT_EQ(r[3].weight, 4);
}

TEST(ScoringHelpers, ScratchSpillsToHeapForLongLists) {
  Scratch small(3);
  EXPECT_EQ(small.span().size(), 3u);
  Scratch large(20);
  auto s = large.span();
  ASSERT_EQ(s.size(), 20u);
  s[19] = 7;
  EXPECT_EQ(large.span()[19], 7);
}

}  // namespace
}  // namespace berth::noderesources
