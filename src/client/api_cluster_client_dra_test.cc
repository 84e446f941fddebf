// The informer-backed claim change feed: a reader of ApiClusterClient's DraClaimFeed ends with
// exactly the claims of the informer's cache after claims are created, their status written
// (allocation and deallocation) and deleted through the API server, with or without an event
// handler set.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>

#include "client/api_cluster_client.h"
#include "client/client_test_util.h"

namespace berth::client {
namespace {

using Json = nlohmann::json;
constexpr const char* kClaims = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims";

// The feed's claims by name, as a reader following it holds them.
class Reader {
 public:
  explicit Reader(const DraClaimFeed& feed) : feed_(&feed) {}
  void Read() {
    ClaimChanges c = feed_->ClaimChangesSince(cursor_);
    cursor_ = c.cursor;
    if (c.resync) claims_.clear();
    for (const ClaimChange& ch : c.changes) {
      if (ch.old_claim) claims_.erase(ch.old_claim->metadata.name);
      if (ch.new_claim) claims_[ch.new_claim->metadata.name] = ch.new_claim;
    }
  }
  // Whether the claims read are the cache's, object for object.
  bool SameAs(const std::vector<Ptr<ResourceClaim>>& listed) const {
    if (listed.size() != claims_.size()) return false;
    for (const auto& c : listed) {
      auto it = claims_.find(c->metadata.name);
      if (it == claims_.end() || it->second != c) return false;
    }
    return true;
  }
  Ptr<ResourceClaim> Get(const std::string& name) const {
    auto it = claims_.find(name);
    return it == claims_.end() ? nullptr : it->second;
  }

 private:
  const DraClaimFeed* feed_;
  uint64_t cursor_ = 0;
  std::map<std::string, Ptr<ResourceClaim>> claims_;
};

TEST_F(ApiServerFixture, ClaimFeedFollowsTheClaimInformer) {
  Start();
  ApiClusterClient client(RestFor(server_->url(), server_->token(), RestOptions{.qps = 0}));
  client.Start();  // no event handler: the feed is kept all the same
  const DraClaimFeed* feed = DraClaimFeedOf(client);
  ASSERT_NE(feed, nullptr);
  Reader reader(*feed);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  // Waits until `done` holds on the informer's cache, then checks the reader has the same.
  auto settle = [&](const char* what, const std::function<bool()>& done) {
    SCOPED_TRACE(what);
    while (!done() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(done());
    // The feed is written on the informer's thread just after the cache: wait for it too.
    do {
      reader.Read();
    } while (!reader.SameAs(client.ListResourceClaims()) &&
             std::chrono::steady_clock::now() < deadline);
    EXPECT_TRUE(reader.SameAs(client.ListResourceClaims()));
  };
  auto claim = [](const std::string& name) {
    return Json::parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",
        "metadata":{"name":")" +
                       name + R"("},"spec":{"devices":{"requests":[
        {"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}})");
  };
  ASSERT_TRUE(rest_->Post(kClaims, claim("a")).ok());
  settle("created before the reader", [&] { return client.ListResourceClaims().size() == 1; });
  ASSERT_TRUE(rest_->Post(kClaims, claim("b")).ok());
  settle("created", [&] { return client.ListResourceClaims().size() == 2; });

  auto stored = client.GetResourceClaim("default", "a");
  ASSERT_NE(stored, nullptr);
  ResourceClaim allocated = *stored;
  DeviceRequestAllocationResult r;
  r.request = "gpu";
  r.driver = "gpu.example.com";
  r.pool = "node-1";
  r.device = "gpu-0";
  allocated.status.allocation.emplace();
  allocated.status.allocation->results.push_back(r);
  auto written = client.UpdateResourceClaimStatus(allocated);
  ASSERT_TRUE(written.ok()) << written.error().message;
  auto has_allocation = [&](bool want) {
    auto c = client.GetResourceClaim("default", "a");
    return c && c->status.allocation.has_value() == want;
  };
  settle("allocated", [&] { return has_allocation(true); });
  ASSERT_TRUE(reader.Get("a")->status.allocation);

  ResourceClaim deallocated = *client.GetResourceClaim("default", "a");
  deallocated.status.allocation.reset();
  ASSERT_TRUE(client.UpdateResourceClaimStatus(deallocated).ok());
  settle("deallocated", [&] { return has_allocation(false); });
  EXPECT_FALSE(reader.Get("a")->status.allocation);

  ASSERT_TRUE(rest_->Delete(std::string(kClaims) + "/b").ok());
  settle("deleted", [&] { return client.ListResourceClaims().size() == 1; });
  EXPECT_EQ(reader.Get("b"), nullptr);

  // A slice published moves the slice generation.
  const DraSliceGeneration* gen = DraSliceGenerationOf(client);
  ASSERT_NE(gen, nullptr);
  const uint64_t before = gen->ResourceSliceGeneration();
  auto slice = Json::parse(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",
      "metadata":{"name":"node-1-gpu"},"spec":{"driver":"gpu.example.com","nodeName":"node-1",
      "pool":{"name":"node-1","generation":1,"resourceSliceCount":1},
      "devices":[{"name":"gpu-0"}]}})");
  auto posted = rest_->Post("/apis/resource.k8s.io/v1/resourceslices", slice);
  ASSERT_TRUE(posted.ok()) << posted.error().message;
  while (gen->ResourceSliceGeneration() == before && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GT(gen->ResourceSliceGeneration(), before);
  EXPECT_EQ(client.ListResourceSlices().size(), 1u);
  client.Stop();
}

}  // namespace
}  // namespace berth::client
