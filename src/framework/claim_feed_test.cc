// The claim change feed: ClaimChangeLog's order, resyncs and bound, and InMemoryCluster feeding
// it from every path that changes a claim (a reader following the feed must end with exactly
// the listers' claims).
#include "framework/claim_feed.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "framework/in_memory_cluster.h"
#include "testing/builders.h"

namespace berth {
namespace {

using testing::MakePod;

Ptr<ResourceClaim> Claim(const std::string& name, const std::string& version = "1") {
  auto c = std::make_shared<ResourceClaim>();
  c->metadata.namespace_ = "default";
  c->metadata.name = name;
  c->metadata.uid = "uid-" + name;
  c->metadata.resource_version = version;
  return c;
}

// A reader of a feed: the claims it has learned of, by namespace/name.
class Follower {
 public:
  explicit Follower(const DraClaimFeed& feed) : feed_(&feed) {}
  // Reads the changes since the last call; returns whether they were a resync.
  bool Read() {
    ClaimChanges c = feed_->ClaimChangesSince(cursor_);
    cursor_ = c.cursor;
    if (c.resync) claims_.clear();
    last_ = c.changes.size();
    for (const ClaimChange& ch : c.changes) {
      if (ch.old_claim) {
        auto it = claims_.find(Key(*ch.old_claim));
        EXPECT_TRUE(it != claims_.end() && it->second == ch.old_claim)
            << "the change's old claim is not the one read before: " << Key(*ch.old_claim);
        claims_.erase(Key(*ch.old_claim));
      }
      if (ch.new_claim) claims_[Key(*ch.new_claim)] = ch.new_claim;
    }
    return c.resync;
  }
  // Whether the claims read are exactly `listed`, object for object.
  void ExpectSame(const std::vector<Ptr<ResourceClaim>>& listed) const {
    ASSERT_EQ(claims_.size(), listed.size());
    for (const auto& c : listed) {
      auto it = claims_.find(Key(*c));
      ASSERT_NE(it, claims_.end()) << Key(*c);
      EXPECT_EQ(it->second, c) << Key(*c);
    }
  }
  size_t last() const { return last_; }

 private:
  static std::string Key(const ResourceClaim& c) {
    return c.metadata.namespace_ + "/" + c.metadata.name;
  }
  const DraClaimFeed* feed_;
  uint64_t cursor_ = 0;
  size_t last_ = 0;
  std::map<std::string, Ptr<ResourceClaim>> claims_;
};

TEST(ClaimChangeLogTest, FirstReadResyncsThenChangesComeInOrder) {
  ClaimChangeLog log;
  auto a = Claim("a"), b = Claim("b"), a2 = Claim("a", "2");
  log.Put(a);
  Follower f(log);
  EXPECT_TRUE(f.Read());
  f.ExpectSame({a});
  log.Put(b);
  log.Put(a2);
  log.Erase("default", "b");
  EXPECT_FALSE(f.Read());
  EXPECT_EQ(f.last(), 3u);
  f.ExpectSame({a2});
  EXPECT_FALSE(f.Read());
  EXPECT_EQ(f.last(), 0u);
}

TEST(ClaimChangeLogTest, TheSameObjectAgainOrAnUnknownDeleteIsNoChange) {
  ClaimChangeLog log;
  auto a = Claim("a");
  log.Put(a);
  Follower f(log);
  f.Read();
  log.Put(a);
  log.Erase("default", "nothing");
  log.Erase("other", "a");
  EXPECT_FALSE(f.Read());
  EXPECT_EQ(f.last(), 0u);
  f.ExpectSame({a});
}

// A reader left behind the changes kept is resynced instead of missing some; the log keeps no
// more changes than it has claims (at least a few thousand).
TEST(ClaimChangeLogTest, AReaderFarBehindIsResyncedAndTheLogStaysBounded) {
  ClaimChangeLog log;
  Follower f(log);
  f.Read();
  Ptr<ResourceClaim> last;
  for (int i = 0; i < 10000; ++i) log.Put(last = Claim("a", std::to_string(i)));
  EXPECT_LE(log.kept(), 4096u);
  EXPECT_TRUE(f.Read());
  f.ExpectSame({last});
  log.Put(Claim("b"));
  EXPECT_FALSE(f.Read());
  EXPECT_EQ(f.last(), 1u);
}

TEST(ClaimChangeLogTest, ACursorFromElsewhereResyncs) {
  ClaimChangeLog log;
  log.Put(Claim("a"));
  EXPECT_TRUE(log.ClaimChangesSince(1000).resync);
  EXPECT_TRUE(log.ClaimChangesSince(0).resync);
  EXPECT_FALSE(log.ClaimChangesSince(1).resync);
}

TEST(ClaimChangeLogTest, InMemoryClusterIsAFeed) {
  InMemoryCluster cluster;
  EXPECT_EQ(DraClaimFeedOf(cluster), static_cast<const DraClaimFeed*>(&cluster));
}

// Every InMemoryCluster write that changes a claim reaches the feed: after each, a reader of
// the feed holds exactly the listed claims.
TEST(InMemoryClusterClaimFeedTest, EveryClaimChangeReachesTheFeed) {
  InMemoryCluster cluster;
  const DraClaimFeed* feed = DraClaimFeedOf(cluster);
  ASSERT_NE(feed, nullptr);
  Follower f(*feed);
  auto step = [&](const char* what) {
    SCOPED_TRACE(what);
    f.Read();
    f.ExpectSame(cluster.ListResourceClaims());
  };
  step("empty");
  cluster.AddResourceClaim(Claim("a"));
  step("added");
  cluster.AddResourceClaim(Claim("a", "2"));
  step("replaced");
  auto tmpl = std::make_shared<ResourceClaimTemplate>();
  tmpl->metadata.namespace_ = "default";
  tmpl->metadata.name = "tmpl";
  cluster.AddResourceClaimTemplate(tmpl);
  cluster.AddPod(MakePod().Name("p").ClaimFromTemplate("gpu", "tmpl").Obj());
  ASSERT_NE(cluster.GetResourceClaim("default", "p-gpu"), nullptr);
  step("made from a template");
  // A pod waiting for its template gets the claim when the template arrives.
  cluster.AddPod(MakePod().Name("q").ClaimFromTemplate("gpu", "late").Obj());
  auto late = std::make_shared<ResourceClaimTemplate>(*tmpl);
  late->metadata.name = "late";
  cluster.AddResourceClaimTemplate(late);
  ASSERT_NE(cluster.GetResourceClaim("default", "q-gpu"), nullptr);
  step("made when the template arrived");
  ResourceClaim allocated = *cluster.GetResourceClaim("default", "p-gpu");
  allocated.status.allocation.emplace();
  ASSERT_TRUE(cluster.UpdateResourceClaimStatus(allocated).ok());
  step("status written");
  ResourceClaim deallocated = *cluster.GetResourceClaim("default", "p-gpu");
  deallocated.status.allocation.reset();
  ASSERT_TRUE(cluster.UpdateResourceClaimStatus(deallocated).ok());
  step("deallocated");
  auto created = cluster.CreateResourceClaim(*Claim("x"), "ext-", {});
  ASSERT_TRUE(created.ok());
  step("created");
  ASSERT_TRUE(cluster.DeleteResourceClaim(**created).ok());
  step("deleted by the writer");
  cluster.RemoveResourceClaim("default", "a");
  step("removed");
  EXPECT_EQ(cluster.ListResourceClaims().size(), 2u);
}

// Every slice change moves the slice generation; other DRA objects do not.
TEST(InMemoryClusterClaimFeedTest, SliceChangesMoveTheSliceGeneration) {
  InMemoryCluster cluster;
  const DraSliceGeneration* gen = DraSliceGenerationOf(cluster);
  ASSERT_NE(gen, nullptr);
  uint64_t last = gen->ResourceSliceGeneration();
  auto moved = [&] {
    uint64_t now = gen->ResourceSliceGeneration();
    bool changed = now != last;
    last = now;
    return changed;
  };
  auto slice = std::make_shared<ResourceSlice>();
  slice->metadata.name = "s";
  cluster.AddResourceSlice(slice);
  EXPECT_TRUE(moved());
  cluster.AddResourceSlice(std::make_shared<ResourceSlice>(*slice));
  EXPECT_TRUE(moved());
  cluster.AddResourceClaim(Claim("a"));
  EXPECT_FALSE(moved());
  cluster.RemoveResourceSlice("s");
  EXPECT_TRUE(moved());
  cluster.RemoveResourceSlice("s");
  EXPECT_FALSE(moved());
}

}  // namespace
}  // namespace berth
