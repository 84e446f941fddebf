// ClassDeviceIndex: the counts remembered per node and class, over a tracker's state looked up
// by pool, against counts evaluated afresh over a state of the same claims without its pool
// index (each device looked up in the allocated sets), on random slices, classes and claims.
#include "dra/class_devices.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "dra/allocated_tracker.h"
#include "dra/allocator_test_util.h"

namespace berth::dra {
namespace {

using namespace testing;  // NOLINT(build/namespaces): the allocator test builders
using ClaimPtr = std::shared_ptr<const ResourceClaim>;

ClaimPtr Holding(const std::string& driver, const std::string& pool, const std::string& device,
                 int how) {
  auto c = std::make_shared<ResourceClaim>();
  DeviceRequestAllocationResult r;
  r.request = "held";
  r.driver = driver;
  r.pool = pool;
  r.device = device;
  if (how == 1) r.admin_access = true;
  if (how == 2) r.share_id = "share-" + device;
  c->status.allocation.emplace();
  c->status.allocation->results.push_back(r);
  return c;
}

TEST(ClassDeviceIndexTest, RememberedCountsEqualFreshOnes) {
  int nonzero = 0;
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 rng(seed);
    std::vector<Node> nodes = {MakeNode(kNode1, kRegion1), MakeNode(kNode2, kRegion2)};
    std::vector<std::shared_ptr<const ResourceSlice>> slices;
    std::vector<std::tuple<std::string, std::string, std::string>> devices;
    for (const Node& n : nodes) {
      for (const char* driver : {kDriverA, kDriverB}) {
        if (rng() % 3 == 0) continue;
        std::vector<Device> devs;
        for (int d = 0; d < 1 + static_cast<int>(rng() % 4); ++d) {
          devs.push_back(WithAttrs("dev-" + std::to_string(d),
                                   {{kIntAttr, IntAttr(static_cast<int64_t>(rng() % 2))}}));
          devices.emplace_back(driver, n.metadata.name, devs.back().name);
        }
        slices.push_back(Slice(n.metadata.name + driver, OnNode(n.metadata.name), n.metadata.name,
                               driver, std::move(devs)));
      }
    }
    if (rng() % 3 == 0) {  // reached by every node
      slices.push_back(Slice("all", AllNodes(), "all", kDriverA, {Dev("a-0"), Dev("a-1")}));
      devices.emplace_back(kDriverA, "all", "a-0");
      devices.emplace_back(kDriverA, "all", "a-1");
    }
    if (rng() % 4 == 0)  // reached by label: nothing is remembered
      slices.push_back(Slice("zonal", Selected(LabelSelector("region", kRegion1)), "zonal",
                             kDriverA, {Dev("z-0")}));
    std::vector<std::shared_ptr<const DeviceClass>> classes = {
        Class(kClassA, kDriverA), Class(kClassB, kDriverB), [] {
          auto c = Class("numa-0", kDriverA);
          c->spec.selectors.push_back({"device.attributes[\"driver-a\"].numa == 0"});
          return c;
        }()};
    ClassDeviceIndex index(slices);
    cel::dra::SelectorCache cel(8);
    AllocatedStateTracker tracker;
    std::vector<ClaimPtr> claims;
    for (int step = 0; step < 4; ++step) {
      for (const auto& [driver, pool, device] : devices) {
        if (rng() % 3 != 0) continue;
        claims.push_back(Holding(driver, pool, device, static_cast<int>(rng() % 3)));
        tracker.Set(std::to_string(claims.size()), claims.back());
      }
      const AllocatedState plain = AllocatedStateOf(claims);
      for (const Node& node : nodes) {
        for (const auto& cls : classes) {
          // Devices without the attribute make the third class's selector fail: an error.
          auto want = index.Count(node, *cls, plain, cel);
          for (int again = 0; again < 2; ++again) {
            auto got = index.Count(node, cls, *tracker.State(), cel);
            ASSERT_EQ(got.ok(), want.ok()) << seed << " " << node.metadata.name;
            if (!want.ok()) continue;
            EXPECT_EQ(got->devices, want->devices) << seed << " " << node.metadata.name;
            EXPECT_EQ(got->allocated, want->allocated) << seed << " " << node.metadata.name;
          }
          if (want.ok() && want->allocated > 0) ++nonzero;
        }
      }
    }
  }
  EXPECT_GT(nonzero, 200);
}

// A selector that fails on a device is an error each time, remembered or not.
TEST(ClassDeviceIndexTest, RememberedErrors) {
  ClassDeviceIndex index({Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice0)})});
  auto cls = Class(kClassA, kDriverA);
  cls->spec.selectors.push_back({"device.attributes[\"driver-a\"].missing == 1"});
  std::shared_ptr<const DeviceClass> held = cls;
  cel::dra::SelectorCache cel(4);
  const AllocatedState none;
  EXPECT_FALSE(index.Count(MakeNode(kNode1, kRegion1), *cls, none, cel).ok());
  EXPECT_FALSE(index.Count(MakeNode(kNode1, kRegion1), held, none, cel).ok());
  EXPECT_FALSE(index.Count(MakeNode(kNode1, kRegion1), held, none, cel).ok());
}

// The cache rebuilds the index only when the generation moves and the slices differ.
TEST(ClassDeviceIndexTest, CacheFollowsTheSliceGeneration) {
  ClassDeviceIndexCache cache;
  std::vector<std::shared_ptr<const ResourceSlice>> slices = {
      Slice(kSlice1, OnNode(kNode1), kPool1, kDriverA, {Dev(kDevice0)})};
  int lists = 0;
  auto list = [&] {
    ++lists;
    return slices;
  };
  auto first = cache.For(1, list);
  EXPECT_EQ(cache.For(1, list), first);
  EXPECT_EQ(lists, 1);
  EXPECT_EQ(cache.For(2, list), first);  // listed again: the same slices
  EXPECT_EQ(lists, 2);
  slices.push_back(Slice(kSlice2, OnNode(kNode1), kPool2, kDriverA, {Dev(kDevice1)}));
  auto second = cache.For(3, list);
  EXPECT_NE(second, first);
  cel::dra::SelectorCache cel(4);
  std::shared_ptr<const DeviceClass> cls = Class(kClassA, kDriverA);
  EXPECT_EQ(second->Count(MakeNode(kNode1, kRegion1), cls, AllocatedState{}, cel)->devices, 2);
}

}  // namespace
}  // namespace berth::dra
