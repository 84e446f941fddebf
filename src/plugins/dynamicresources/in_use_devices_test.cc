// InUseDevices: the devices held by the claims in use, followed from the claim change feed with
// the assumed claims over it. After any sequence of listed changes and assumptions it must hold
// exactly what listing every claim and merging the assumed ones would (AllocatedStateOf of
// AssumedClaims::Merge), while a cycle looks only at the claims that changed.
#include "plugins/dynamicresources/in_use_devices.h"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "berth/testing/fake_handle.h"
#include "framework/in_memory_cluster.h"
#include "plugins/dynamicresources/dynamicresources.h"
#include "testing/builders.h"

namespace berth::dynamicresources {
namespace {

// Claim `name` at resourceVersion `version`, allocated to `device` unless it is empty.
Ptr<ResourceClaim> Claim(const std::string& name, int version, const std::string& device = "") {
  auto c = std::make_shared<ResourceClaim>();
  c->metadata.namespace_ = "default";
  c->metadata.name = name;
  c->metadata.uid = "uid-" + name;
  c->metadata.resource_version = std::to_string(version);
  if (!device.empty()) {
    DeviceRequestAllocationResult r;
    r.request = "req";
    r.driver = "driver";
    r.pool = "pool";
    r.device = device;
    c->status.allocation.emplace();
    c->status.allocation->results.push_back(r);
  }
  return c;
}

std::set<std::string> Devices(const dra::AllocatedState& state) {
  std::set<std::string> out;
  for (const auto& id : state.allocated) out.insert(id.device);
  return out;
}

// The feed's claims as listers of their own, for the comparison with listing.
class LogListers final : public DraListers {
 public:
  explicit LogListers(const ClaimChangeLog& log) : log_(&log) {}
  std::vector<Ptr<ResourceSlice>> ListResourceSlices() const override { return {}; }
  Ptr<ResourceClaim> GetResourceClaim(std::string_view, std::string_view) const override {
    return nullptr;
  }
  std::vector<Ptr<ResourceClaim>> ListResourceClaims() const override {
    std::vector<Ptr<ResourceClaim>> out;
    for (const ClaimChange& c : log_->ClaimChangesSince(0).changes) out.push_back(c.new_claim);
    return out;
  }
  Ptr<DeviceClass> GetDeviceClass(std::string_view) const override { return nullptr; }
  std::vector<Ptr<DeviceClass>> ListDeviceClasses() const override { return {}; }

 private:
  const ClaimChangeLog* log_;
};

class InUseDevicesTest : public ::testing::Test {
 protected:
  std::set<std::string> Sync() { return Devices(*in_use_.Sync(listers_, &log_)); }

  ClaimChangeLog log_;
  LogListers listers_{log_};
  AssumedClaims assumed_;
  InUseDevices in_use_{assumed_};
};

TEST_F(InUseDevicesTest, FollowsAllocationDeallocationAndDeletion) {
  log_.Put(Claim("a", 1));
  EXPECT_EQ(Sync(), std::set<std::string>{});
  log_.Put(Claim("a", 2, "dev-1"));
  log_.Put(Claim("b", 3, "dev-2"));
  EXPECT_EQ(Sync(), (std::set<std::string>{"dev-1", "dev-2"}));
  log_.Put(Claim("a", 4));  // deallocated
  EXPECT_EQ(Sync(), std::set<std::string>{"dev-2"});
  log_.Erase("default", "b");  // deleted (with its pod)
  EXPECT_EQ(Sync(), std::set<std::string>{});
  EXPECT_EQ(in_use_.holding(), 0u);
}

// Allocated by this scheduler and not written back yet (in flight), then written but not yet
// listed: the devices stay taken until the feed shows the write; Unreserve gives them back.
TEST_F(InUseDevicesTest, AssumedClaimsHoldTheirDevicesUntilListed) {
  log_.Put(Claim("a", 1));
  log_.Put(Claim("b", 2));
  EXPECT_EQ(Sync(), std::set<std::string>{});
  assumed_.AssumeInFlight(Claim("a", 1, "dev-1"));
  assumed_.AssumeInFlight(Claim("b", 2, "dev-2"));
  EXPECT_EQ(Sync(), (std::set<std::string>{"dev-1", "dev-2"}));
  assumed_.Forget("uid-b");  // Unreserve
  EXPECT_EQ(Sync(), std::set<std::string>{"dev-1"});
  assumed_.Written(Claim("a", 5, "dev-1"));  // PreBind's write, not in the feed yet
  EXPECT_EQ(Sync(), std::set<std::string>{"dev-1"});
  log_.Put(Claim("a", 5, "dev-1"));  // the feed catches up: the assumption is dropped
  EXPECT_EQ(Sync(), std::set<std::string>{"dev-1"});
  EXPECT_EQ(assumed_.size(), 0u);
  // PostFilter's deallocation, written but not listed yet, frees the device at once.
  assumed_.Written(Claim("a", 6));
  EXPECT_EQ(Sync(), std::set<std::string>{});
}

// A new plugin (a scheduler reload) starts from a resync of the same feed.
TEST_F(InUseDevicesTest, ANewReaderStartsFromEveryClaim) {
  log_.Put(Claim("a", 1, "dev-1"));
  EXPECT_EQ(Sync(), std::set<std::string>{"dev-1"});
  log_.Put(Claim("b", 2, "dev-2"));
  AssumedClaims assumed;
  InUseDevices reloaded(assumed);
  EXPECT_EQ(Devices(*reloaded.Sync(listers_, &log_)), (std::set<std::string>{"dev-1", "dev-2"}));
}

// A cycle looks at the claims that changed and the assumed ones, not at every claim.
TEST_F(InUseDevicesTest, ACycleVisitsOnlyWhatChanged) {
  for (int i = 0; i < 1000; ++i)
    log_.Put(Claim("c" + std::to_string(i), i + 1, "dev-" + std::to_string(i)));
  EXPECT_EQ(Sync().size(), 1000u);
  log_.Put(Claim("c7", 5000));
  assumed_.AssumeInFlight(Claim("c8", 9, "dev-x"));
  EXPECT_EQ(Sync().size(), 999u);
  EXPECT_LE(in_use_.last_visited(), 3u);
  Sync();
  EXPECT_LE(in_use_.last_visited(), 2u);  // the assumed claim (and its overlay) only
}

// Random changes of the listed and the assumed claims: the followed state always equals
// listing every claim and merging the assumed ones, with and without a feed.
TEST_F(InUseDevicesTest, EqualsListingAfterAnySequence) {
  std::mt19937 rng(7);
  AssumedClaims assumed_listed;  // the same assumptions, for the reader without a feed
  InUseDevices by_listing(assumed_listed);
  int version = 1;
  for (int step = 0; step < 2000; ++step) {
    const std::string name = "c" + std::to_string(rng() % 20);
    const std::string device = rng() % 3 == 0 ? "" : "dev-" + std::to_string(rng() % 30);
    switch (rng() % 6) {
      case 0:
      case 1:
        log_.Put(Claim(name, ++version, device));
        break;
      case 2:
        log_.Erase("default", name);
        break;
      case 3:
        for (AssumedClaims* a : {&assumed_, &assumed_listed})
          a->AssumeInFlight(Claim(name, version, device));
        break;
      case 4:
        for (AssumedClaims* a : {&assumed_, &assumed_listed})
          a->Written(Claim(name, version + 1, device));
        break;
      case 5:
        for (AssumedClaims* a : {&assumed_, &assumed_listed}) a->Forget("uid-" + name);
        break;
    }
    if (rng() % 3 != 0) continue;  // several changes between cycles
    SCOPED_TRACE(step);
    // What listing gives, computed before either reader prunes the assumptions.
    AssumedClaims* reference = &assumed_listed;
    std::vector<Ptr<ResourceClaim>> merged = reference->Merge(listers_.ListResourceClaims());
    std::set<std::string> want;
    for (const auto& c : merged)
      if (c->status.allocation)
        for (const auto& r : c->status.allocation->results) want.insert(r.device);
    // Two claims may name one device: the state holds it once.
    EXPECT_EQ(Sync(), want);
    EXPECT_EQ(Devices(*by_listing.Sync(listers_, nullptr)), want);
  }
}

// Through the plugin: devices of a claim allocated elsewhere are taken, and free again once the
// claim is deallocated or deleted; a reloaded plugin sees what is allocated.
class InUseDevicesPluginTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cls = std::make_shared<DeviceClass>();
    cls->metadata.name = "class";
    cluster_.AddDeviceClass(cls);
    auto slice = std::make_shared<ResourceSlice>();
    slice->metadata.name = "worker-driver";
    slice->spec.driver = "driver";
    slice->spec.pool = ResourcePool{"pool", 1, 1};
    slice->spec.node_name = "worker";
    slice->spec.devices.emplace_back().name = "dev-1";
    cluster_.AddResourceSlice(slice);
    node_ = std::make_shared<NodeInfo>(testing::MakeNode().Name("worker").Obj());
    handle_ = std::make_unique<berth::testing::FakeHandle>(Snapshot{}, &cluster_);
    Reload();
  }
  void Reload() {
    plugin_ = std::make_unique<DynamicResources>(*handle_, config::DynamicResourcesArgs{},
                                                 dra::Features{});
  }
  void AddClaim(const std::string& name, bool allocated) {
    auto c = std::make_shared<ResourceClaim>(*Claim(name, 1, allocated ? "dev-1" : ""));
    c->spec.devices.requests.emplace_back().name = "req";
    c->spec.devices.requests.back().exactly.emplace().device_class_name = "class";
    cluster_.AddResourceClaim(c);
  }
  // Whether a pod with claim `name` fits the node.
  bool Fits(const std::string& name) {
    auto pod = testing::MakePod().Name("pod-" + name).Claim("c", name).Info();
    CycleState state;
    PreFilterResult result;
    const NodeInfo* nodes[] = {node_.get()};
    if (!plugin_->PreFilter(state, *pod, nodes, &result).IsSuccess()) return false;
    return plugin_->Filter(state, *pod, *node_).IsSuccess();
  }

  InMemoryCluster cluster_;
  std::shared_ptr<NodeInfo> node_;
  std::unique_ptr<berth::testing::FakeHandle> handle_;
  std::unique_ptr<DynamicResources> plugin_;
};

TEST_F(InUseDevicesPluginTest, DevicesFollowTheClaimsThroughTheFeed) {
  AddClaim("mine", false);
  EXPECT_TRUE(Fits("mine"));
  AddClaim("other", true);  // allocated by someone else
  EXPECT_FALSE(Fits("mine"));
  Reload();  // a new plugin learns of it from a resync
  EXPECT_FALSE(Fits("mine"));
  ResourceClaim deallocated = *cluster_.GetResourceClaim("default", "other");
  deallocated.status.allocation.reset();
  ASSERT_TRUE(cluster_.UpdateResourceClaimStatus(deallocated).ok());
  EXPECT_TRUE(Fits("mine"));
  AddClaim("other", true);
  EXPECT_FALSE(Fits("mine"));
  cluster_.RemoveResourceClaim("default", "other");  // deleted with its pod
  EXPECT_TRUE(Fits("mine"));
}

// A slice published after the plugin indexed the slices is used by the next cycle.
TEST_F(InUseDevicesPluginTest, ASliceAddedLaterIsSeen) {
  AddClaim("mine", false);
  AddClaim("other", true);
  EXPECT_FALSE(Fits("mine"));
  auto slice = std::make_shared<ResourceSlice>();
  slice->metadata.name = "worker-driver-2";
  slice->spec.driver = "driver";
  slice->spec.pool = ResourcePool{"pool-2", 1, 1};
  slice->spec.node_name = "worker";
  slice->spec.devices.emplace_back().name = "dev-1";
  cluster_.AddResourceSlice(slice);
  EXPECT_TRUE(Fits("mine"));
  cluster_.RemoveResourceSlice("worker-driver-2");
  EXPECT_FALSE(Fits("mine"));
}

}  // namespace
}  // namespace berth::dynamicresources
