#include "plugins/dynamicresources/extended_claim_index.h"

#include <gtest/gtest.h>

#include "framework/in_memory_cluster.h"

namespace berth::dynamicresources {
namespace {

std::shared_ptr<ResourceClaim> ClaimOwnedBy(std::string name, std::string owner_uid) {
  auto c = std::make_shared<ResourceClaim>();
  c->metadata.namespace_ = "default";
  c->metadata.uid = "claim-" + name;  // kept as is by the cluster
  c->metadata.name = std::move(name);
  c->metadata.owner_references.push_back({"v1", "Pod", "p", std::move(owner_uid), true});
  return c;
}

// The index follows the feed: a claim added is found by its owner's uid, one deleted is not,
// and a claim replaced is found as it is now; without a feed, the claims are listed.
TEST(ExtendedClaimIndexTest, FollowsTheClaimFeed) {
  InMemoryCluster cluster;
  Pod pod;
  pod.metadata.uid = "uid-1";
  auto any = [](const ResourceClaim&) { return true; };
  ExtendedClaimIndex index;
  const DraClaimFeed* feed = DraClaimFeedOf(cluster);
  ASSERT_NE(feed, nullptr);
  EXPECT_EQ(index.Find(pod, cluster, feed, any), nullptr);
  cluster.AddResourceClaim(ClaimOwnedBy("other", "uid-2"));
  Ptr<ResourceClaim> mine = ClaimOwnedBy("mine", "uid-1");
  cluster.AddResourceClaim(mine);
  EXPECT_EQ(index.Find(pod, cluster, feed, any), mine);
  auto changed = std::make_shared<ResourceClaim>(*mine);
  changed->metadata.annotations["v"] = "2";
  Ptr<ResourceClaim> replaced = changed;
  cluster.AddResourceClaim(replaced);
  EXPECT_EQ(index.Find(pod, cluster, feed, any), replaced);
  EXPECT_EQ(index.Find(pod, cluster, feed, [](const ResourceClaim&) { return false; }), nullptr);
  ASSERT_TRUE(cluster.DeleteResourceClaim(*replaced).ok());
  EXPECT_EQ(index.Find(pod, cluster, feed, any), nullptr);
  cluster.AddResourceClaim(mine);
  ExtendedClaimIndex listing;
  EXPECT_EQ(listing.Find(pod, cluster, nullptr,
                         [](const ResourceClaim& c) { return c.metadata.name == "mine"; }),
            mine);
}

}  // namespace
}  // namespace berth::dynamicresources
