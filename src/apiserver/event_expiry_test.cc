// Event expiry (kube-apiserver's --event-ttl): by the store's own times, both event APIs.
#include "apiserver/event_expiry.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "api/codec.h"
#include "apiserver/resources.h"
#include "apiserver/server_test_fixture.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
namespace http = boost::beast::http;

class EventExpiryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = Store::Open({});
    ASSERT_TRUE(s.ok()) << s.error().message;
    store_ = std::move(s).value();
    // The namespace, unless the store starts with it.
    (void)store_->Create(*FindResource("", "v1", "namespaces"), "",
                         {{"metadata", {{"name", "default"}}}}, false);
  }
  void Create(const char* group, const char* plural, Json obj) {
    auto r = store_->Create(*FindResource(group, "v1", plural), "default", std::move(obj), false);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  bool Exists(const char* group, const char* plural, const char* name) {
    return store_->Get(*FindResource(group, "v1", plural), "default", name).ok();
  }
  std::unique_ptr<Store> store_;
};

TEST_F(EventExpiryTest, EventsLastWrittenBeforeTheCutoffGo) {
  const int64_t now = NowUnixSeconds();
  Create("", "events", {{"metadata", {{"name", "old-core"}}}, {"reason", "Scheduled"}});
  Create("events.k8s.io", "events", {{"metadata", {{"name", "old-new-api"}}}, {"reason", "x"}});
  // Written again later (a patch records its time in managedFields): kept past its creation.
  Create("", "events",
         {{"metadata",
           {{"name", "updated"},
            {"managedFields", {{{"manager", "m"}, {"time", FormatTimestamp(now + 120)}}}}}},
          // A client's own times do not count.
          {"lastTimestamp", FormatTimestamp(now + 3600)}});
  Create("", "pods", {{"metadata", {{"name", "p"}}}, {"spec", {{"containers", Json::array()}}}});

  EXPECT_EQ(ExpireEvents(*store_, now - 60), 0u);
  EXPECT_TRUE(Exists("", "events", "old-core"));

  EXPECT_EQ(ExpireEvents(*store_, now + 60), 2u);
  EXPECT_FALSE(Exists("", "events", "old-core"));
  EXPECT_FALSE(Exists("events.k8s.io", "events", "old-new-api"));
  EXPECT_TRUE(Exists("", "events", "updated"));
  EXPECT_TRUE(Exists("", "pods", "p"));

  EXPECT_EQ(ExpireEvents(*store_, now + 180), 1u);
  EXPECT_FALSE(Exists("", "events", "updated"));
}

class EventTtlServerTest : public testing::ServerHttpTest {};

TEST_F(EventTtlServerTest, TheServerExpiresEventsThroughBothApis) {
  event_ttl_ = std::chrono::seconds(1);
  Restart();
  const std::string event =
      R"({"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"e1"},)"
      R"("eventTime":"2026-11-27T12:00:00.000000Z","reason":"Scheduled","action":"Binding",)"
      R"("note":"bound","type":"Normal","reportingController":"berth",)"
      R"("reportingInstance":"berth-1","regarding":{"kind":"Pod","name":"p"}})";
  ASSERT_EQ(Do(http::verb::post, "/apis/events.k8s.io/v1/namespaces/default/events", event).status,
            201);
  ASSERT_EQ(Do(http::verb::get, "/api/v1/namespaces/default/events/e1").status, 200);
  // A whole-second clock and a sweep every second: gone within a few seconds.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (Do(http::verb::get, "/api/v1/namespaces/default/events/e1").status != 404 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(Do(http::verb::get, "/api/v1/namespaces/default/events/e1").status, 404);
  EXPECT_EQ(Do(http::verb::get, "/apis/events.k8s.io/v1/namespaces/default/events/e1").status, 404);
}

}  // namespace
}  // namespace berth::apiserver
