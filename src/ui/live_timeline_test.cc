// The timeline of `berth up`'s cluster: the store's changes as they happen, on an injected clock.
#include "ui/live_timeline.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "apiserver/resources.h"

namespace berth::ui {
namespace {

using apiserver::FindResource;
using nlohmann::json;

class LiveTimelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = apiserver::Store::Open({});
    ASSERT_TRUE(s.ok()) << s.error().message;
    store_ = std::move(s).value();
    (void)store_->Create(*FindResource("", "v1", "namespaces"), "",
                         {{"metadata", {{"name", "default"}}}}, false);
  }
  void Create(const char* plural, json obj, const char* ns = "default") {
    auto r = store_->Create(*FindResource("", "v1", plural), ns, std::move(obj), false);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  void Update(const char* plural, const std::string& name, const std::function<void(json&)>& f,
              const char* ns = "default") {
    auto r = store_->Mutate(
        *FindResource("", "v1", plural), ns, name,
        [&](const json* current) -> Result<json> {
          json next = *current;
          f(next);
          return next;
        },
        false, false);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  static json Node(const std::string& name) {
    return {{"metadata", {{"name", name}}},
            {"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
  }
  static json Pod(const std::string& name) {
    return {{"metadata", {{"name", name}}},
            {"spec", {{"containers", {{{"name", "c"}, {"image", "pause"}}}}}}};
  }

  FakeClock clock_{TimePoint{} + std::chrono::hours(24 * 365 * 56)};
  std::unique_ptr<apiserver::Store> store_;
};

TEST_F(LiveTimelineTest, FollowsPodsNodesAndPreemptionsFromTheStart) {
  Create("nodes", Node("n1"), "");
  Create("pods", Pod("before"));  // existed when the timeline started: counted at 0
  LiveTimeline timeline(&clock_);
  auto watches = timeline.Follow(*store_);
  ASSERT_TRUE(watches.ok()) << watches.error().message;

  clock_.Advance(std::chrono::seconds(3));
  Create("pods", Pod("web"));
  clock_.Advance(std::chrono::seconds(2));
  // Bound in place, as the binding subresource writes: no previous document in the event.
  auto bound = store_->Change(
      *FindResource("", "v1", "pods"), "default", "web",
      [](json& p) -> Result<bool> {
        p["spec"]["nodeName"] = "n1";
        return true;
      },
      false);
  ASSERT_TRUE(bound.ok()) << bound.error().message;
  clock_.Advance(std::chrono::seconds(5));
  Update("pods", "web", [](json& p) { p["status"]["phase"] = "Running"; });
  Update(
      "nodes", "n1", [](json& n) { n["status"]["conditions"][0]["status"] = "Unknown"; }, "");
  Create("events",
         {{"metadata", {{"name", "e1"}}},
          {"reason", "Preempted"},
          {"message", "Preempted by pod x on node n1"},
          {"involvedObject", {{"kind", "Pod"}, {"namespace", "default"}, {"name", "v"}}}});
  clock_.Advance(std::chrono::seconds(1));

  json j = timeline.ToJson();
  EXPECT_EQ(j["now"], 11.0);
  EXPECT_EQ(j["startedAt"], "2025-12-18T00:00:00Z");
  const json& pts = j["points"];
  ASSERT_EQ(pts.size(), 4u) << pts.dump();
  EXPECT_EQ(pts[0]["t"], 0.0);
  EXPECT_EQ(pts[0]["pending"], 1);
  EXPECT_EQ(pts[0]["nodesReady"], 1);
  EXPECT_EQ(pts[1]["t"], 3.0);
  EXPECT_EQ(pts[1]["pending"], 2);
  EXPECT_EQ(pts[2]["t"], 5.0);
  EXPECT_EQ(pts[2]["scheduled"], 1);
  EXPECT_EQ(pts[2]["pending"], 1);
  EXPECT_EQ(pts[3]["t"], 10.0);
  EXPECT_EQ(pts[3]["running"], 1);
  EXPECT_EQ(pts[3]["nodesNotReady"], 1);
  EXPECT_EQ(pts[3]["preemptions"], 1);
  ASSERT_EQ(j["events"].size(), 2u);
  EXPECT_EQ(j["events"][0]["kind"], "NodeNotReady");
  EXPECT_EQ(j["events"][1]["kind"], "Preempted");
  EXPECT_EQ(j["events"][1]["object"], "default/v");

  // An event written again (its count) is the same preemption.
  Update("events", "e1", [](json& e) { e["count"] = 2; });
  EXPECT_EQ(timeline.ToJson()["totals"]["preemptions"], 1);

  // A deletion that begins on a node with a NoExecute taint is an eviction.
  Update(
      "nodes", "n1",
      [](json& n) {
        n["spec"]["taints"] = {
            {{"key", "node.kubernetes.io/unreachable"}, {"effect", "NoExecute"}}};
      },
      "");
  clock_.Advance(std::chrono::seconds(300));
  // A finalizer keeps it, marked, after the deletion begins.
  Update("pods", "web", [](json& p) { p["metadata"]["finalizers"] = {"example.com/keep"}; });
  ASSERT_TRUE(store_->Delete(*FindResource("", "v1", "pods"), "default", "web", {}, false).ok());
  j = timeline.ToJson();
  EXPECT_EQ(j["totals"]["evictions"], 1);
  EXPECT_EQ(j["events"].back()["kind"], "PodEvicted");
  EXPECT_EQ(j["events"].back()["detail"], "from n1 (NoExecute taint)");
  EXPECT_EQ(j["points"].back()["terminating"], 1);
  EXPECT_EQ(j["points"].back()["running"], 0);

  // Without the watches, changes no longer count.
  watches->clear();
  Create("pods", Pod("after"));
  EXPECT_EQ(timeline.ToJson()["points"].back()["pending"], 1);
}

TEST_F(LiveTimelineTest, WhatHappenedBeforeTheStartIsNotAnEvent) {
  json deleting = Pod("old");
  deleting["metadata"]["finalizers"] = {"example.com/keep"};
  Create("pods", deleting);
  ASSERT_TRUE(store_->Delete(*FindResource("", "v1", "pods"), "default", "old", {}, false).ok());
  Create("events",
         {{"metadata", {{"name", "old"}}},
          {"reason", "Preempted"},
          {"involvedObject", {{"kind", "Pod"}, {"namespace", "default"}, {"name", "v"}}}});
  LiveTimeline timeline(&clock_);
  auto watches = timeline.Follow(*store_);
  ASSERT_TRUE(watches.ok());
  const json j = timeline.ToJson();
  EXPECT_EQ(j["totals"]["preemptions"], 0);
  EXPECT_EQ(j["totals"]["evictions"], 0);
  EXPECT_TRUE(j["events"].empty());
  EXPECT_EQ(j["points"][0]["terminating"], 1);  // counted, as it is now
}

}  // namespace
}  // namespace berth::ui
