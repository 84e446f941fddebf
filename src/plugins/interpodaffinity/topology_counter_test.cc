#include "plugins/interpodaffinity/topology_counter.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>

namespace berth::interpodaffinity {
namespace {

using Pairs = std::map<std::pair<std::string, std::string>, int64_t>;

Pairs ToMap(const TopologyCounter& c) {
  Pairs out;
  c.ForEach([&](std::string_view k, std::string_view v, int64_t n) {
    out[{std::string(k), std::string(v)}] = n;
  });
  return out;
}

TEST(TopologyCounterTest, AddAndGet) {
  TopologyCounter c;
  EXPECT_EQ(c.Get("zone", "z1"), 0);
  c.Add("zone", "z1", 2);
  c.Add("zone", "z1", 3);
  c.Add("hostname", "z1", 1);
  EXPECT_EQ(c.Get("zone", "z1"), 5);
  EXPECT_EQ(c.Get("hostname", "z1"), 1);
  EXPECT_EQ(c.Get("zone", "z2"), 0);
  EXPECT_EQ(c.Get("region", "z1"), 0);
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(c.keys().size(), 2u);
}

TEST(TopologyCounterTest, EntriesThatReturnToZeroStopCounting) {
  TopologyCounter c;
  c.Add("zone", "z1", 1);
  c.Add("zone", "z1", -1);
  EXPECT_EQ(c.size(), 0u);
  EXPECT_TRUE(c.empty());
  EXPECT_EQ(c.entries(), 1u);
  EXPECT_TRUE(ToMap(c).empty());
  c.Add("zone", "z1", -1);  // removing a pod that was never counted goes negative
  EXPECT_EQ(c.size(), 1u);
  EXPECT_EQ(c.Get("zone", "z1"), -1);
}

TEST(TopologyCounterTest, GrowsAndKeepsEveryPair) {
  TopologyCounter c;
  Pairs want;
  for (int i = 0; i < 5000; ++i) {
    std::string v = "node-" + std::to_string(i % 1777);
    c.Add(i % 2 ? "kubernetes.io/hostname" : "zone", v, i);
    want[{i % 2 ? "kubernetes.io/hostname" : "zone", v}] += i;
  }
  for (auto it = want.begin(); it != want.end();)
    it = it->second == 0 ? want.erase(it) : std::next(it);
  EXPECT_EQ(ToMap(c), want);
  EXPECT_EQ(c.size(), want.size());
}

TEST(TopologyCounterTest, MergeMatchesKeysByName) {
  TopologyCounter a, b;
  a.Add("zone", "z1", 1);
  b.Add("hostname", "h1", 4);  // different key order: ids differ between the counters
  b.Add("zone", "z1", 2);
  b.Add("zone", "z2", 0);  // a zero entry still counts as an entry
  a.Merge(b);
  EXPECT_EQ(ToMap(a), (Pairs{{{"zone", "z1"}, 3}, {{"hostname", "h1"}, 4}}));
  EXPECT_EQ(a.entries(), 3u);
}

TEST(TopologyCounterTest, CopiesAreIndependent) {
  TopologyCounter a;
  a.Add("zone", "z1", 1);
  TopologyCounter b = a;
  b.Add("zone", "z1", 1);
  b.Add("zone", "z2", 1);
  EXPECT_EQ(a.Get("zone", "z1"), 1);
  EXPECT_EQ(a.Get("zone", "z2"), 0);
  EXPECT_EQ(b.Get("zone", "z1"), 2);
}

TEST(TopologyCounterTest, KeyIdsAreStable) {
  TopologyCounter c;
  auto zone = c.InternKey("zone");
  auto host = c.InternKey("hostname");
  EXPECT_NE(zone, host);
  EXPECT_EQ(c.InternKey("zone"), zone);
  EXPECT_EQ(c.FindKey("region"), TopologyCounter::kNoKey);
  c.Add(host, "h", 7);
  EXPECT_EQ(c.Get(host, "h"), 7);
  EXPECT_EQ(c.Get(zone, "h"), 0);
  EXPECT_EQ(c.Get(TopologyCounter::kNoKey, "h"), 0);
}

}  // namespace
}  // namespace berth::interpodaffinity
