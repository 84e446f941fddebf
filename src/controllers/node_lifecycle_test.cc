// The node lifecycle and taint eviction controllers against the embedded API server, with a
// fake clock: each round (MonitorOnce, EvictOnce) is driven by the test after the informers
// show what the previous step wrote.
#include "controllers/node_lifecycle.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <set>
#include <thread>

#include "api/codec.h"
#include "apiserver/server.h"
#include "client/api_server_test_util.h"
#include "controllers/node_lifecycle_util.h"
#include "controllers/object_util.h"

namespace berth::controllers {
namespace {

using std::chrono::seconds;

class NodeLifecycleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.Start("berth-nodelc-test");
    if (HasFatalFailure()) return;
    rest_ = api_.rest();
    clock_.Set(TimePoint(seconds(1'800'000'000)));
    nodes_ = std::make_unique<SharedInformer>(rest_, "/api/v1/nodes", "Node", nullptr);
    leases_ = std::make_unique<SharedInformer>(rest_, kNodeLeasesPath, "Lease", nullptr);
    pods_ = std::make_unique<SharedInformer>(rest_, "/api/v1/pods", "Pod", nullptr);
    ControllerOptions co{&clock_, 1, nullptr, seconds(40)};
    lifecycle_ = std::make_unique<NodeLifecycleController>(rest_, nodes_.get(), leases_.get(), co);
    eviction_ = std::make_unique<TaintEvictionController>(rest_, nodes_.get(), pods_.get(), co);
    for (auto* i : {nodes_.get(), leases_.get(), pods_.get()}) i->Start();
    WaitFor([&] { return nodes_->HasSynced() && leases_->HasSynced() && pods_->HasSynced(); });
  }
  void TearDown() override {
    for (auto* i : {nodes_.get(), leases_.get(), pods_.get()}) i->Stop();
    api_.Stop();
  }
  void WaitFor(const std::function<bool()>& done) {
    for (int i = 0; i < 1000 && !done(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(done());
  }
  std::string Now() const {
    return FormatTimestamp(
        std::chrono::duration_cast<seconds>(clock_.Now().time_since_epoch()).count());
  }
  Json Node() {
    auto got = rest_->Get("/api/v1/nodes/n1");
    return got.ok() ? *got : Json();
  }
  // Posts a heartbeat with Ready `status` and waits for the informer to show it.
  void Heartbeat(const std::string& status) {
    const std::string now = Now();
    Json conditions = {{{"type", "Ready"},
                        {"status", status},
                        {"reason", "KubeletReady"},
                        {"lastHeartbeatTime", now},
                        {"lastTransitionTime", now}}};
    auto r = rest_->Patch("/api/v1/nodes/n1/status", {{"status", {{"conditions", conditions}}}},
                          "application/merge-patch+json");
    ASSERT_TRUE(r.ok()) << r.error().message;
    const std::string rv = (*r)["metadata"]["resourceVersion"];
    WaitFor([&] {
      auto n = nodes_->Get("n1");
      return n && DocOf(*n)["metadata"]["resourceVersion"] == rv;
    });
  }
  void WaitForNodeVersion() {
    const std::string rv = Node()["metadata"]["resourceVersion"];
    WaitFor([&] {
      auto n = nodes_->Get("n1");
      return n && DocOf(*n)["metadata"]["resourceVersion"] == rv;
    });
  }
  static std::set<std::string> TaintKeys(const Json& node) {
    std::set<std::string> out;
    for (const auto& t : node["spec"].value("taints", Json::array()))
      out.insert(t["key"].get<std::string>() + ":" + t["effect"].get<std::string>());
    return out;
  }

  TestApiServer api_;
  client::RestClient* rest_ = nullptr;
  FakeClock clock_;
  std::unique_ptr<SharedInformer> nodes_, leases_, pods_;
  std::unique_ptr<NodeLifecycleController> lifecycle_;
  std::unique_ptr<TaintEvictionController> eviction_;
};

TEST_F(NodeLifecycleTest, SilentNodeIsUnknownAndTaintedAfterTheGracePeriodUntilItIsBack) {
  ASSERT_TRUE(rest_
                  ->Post("/api/v1/nodes",
                         {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "n1"}}}})
                  .ok());
  Heartbeat("True");
  EXPECT_EQ(lifecycle_->MonitorOnce(), 0);
  clock_.Advance(seconds(40));
  EXPECT_EQ(lifecycle_->MonitorOnce(), 0) << "not after exactly the grace period";
  clock_.Advance(seconds(1));
  EXPECT_EQ(lifecycle_->MonitorOnce(), 2);  // the status, then the taints
  Json node = Node();
  EXPECT_EQ(ReadyStatus(node), "Unknown");
  EXPECT_EQ(TaintKeys(node),
            (std::set<std::string>{std::string(kTaintUnreachable) + ":NoExecute",
                                   std::string(kTaintUnreachable) + ":NoSchedule"}));
  WaitForNodeVersion();
  EXPECT_EQ(lifecycle_->MonitorOnce(), 0) << "nothing more to write";

  Heartbeat("True");
  EXPECT_EQ(lifecycle_->MonitorOnce(), 1);
  EXPECT_TRUE(TaintKeys(Node()).empty());
  // A node reporting NotReady gets the not-ready taints at once.
  WaitForNodeVersion();
  Heartbeat("False");
  EXPECT_EQ(lifecycle_->MonitorOnce(), 1);
  EXPECT_EQ(TaintKeys(Node()).count(std::string(kTaintNotReady) + ":NoExecute"), 1u);
}

TEST_F(NodeLifecycleTest, PodsAreEvictedAfterTheirTolerationSeconds) {
  const std::string added = Now();
  Json taint = {{"key", kTaintUnreachable}, {"effect", "NoExecute"}, {"timeAdded", added}};
  ASSERT_TRUE(rest_
                  ->Post("/api/v1/nodes", {{"apiVersion", "v1"},
                                           {"kind", "Node"},
                                           {"metadata", {{"name", "n1"}}},
                                           {"spec", {{"taints", {taint}}}}})
                  .ok());
  auto pod = [&](const std::string& name, Json tolerations) {
    Json spec = {{"nodeName", "n1"}, {"containers", {{{"name", "c"}, {"image", "nginx"}}}}};
    if (!tolerations.is_null()) spec["tolerations"] = tolerations;
    auto r = rest_->Post("/api/v1/namespaces/default/pods",
                         {{"apiVersion", "v1"},
                          {"kind", "Pod"},
                          {"metadata", {{"name", name}, {"namespace", "default"}}},
                          {"spec", spec}});
    ASSERT_TRUE(r.ok()) << r.error().message;
  };
  pod("defaulted", nullptr);  // the API server's 300 s
  pod("forever",
      Json::array({{{"key", kTaintUnreachable}, {"operator", "Exists"}, {"effect", "NoExecute"}}}));
  WaitFor([&] { return pods_->List().size() == 2 && nodes_->Get("n1").has_value(); });
  clock_.Advance(seconds(299));
  EXPECT_EQ(eviction_->EvictOnce(), 0);
  clock_.Advance(seconds(1));
  EXPECT_EQ(eviction_->EvictOnce(), 1);
  auto gone = rest_->Get("/api/v1/namespaces/default/pods/defaulted");
  EXPECT_TRUE(!gone.ok() || (*gone)["metadata"].contains("deletionTimestamp"));
  EXPECT_TRUE(rest_->Get("/api/v1/namespaces/default/pods/forever").ok());
  clock_.Advance(seconds(3600));
  // Deleted once only, whatever the informer shows meanwhile.
  EXPECT_EQ(eviction_->EvictOnce(), 0);
}

}  // namespace
}  // namespace berth::controllers

namespace berth::controllers {
namespace {

// Waits (bounded) until the clock reports quiescence with `rounds` rounds run.
bool QuiescentAfter(simtime::SimulatedClock& clock, std::atomic<int>& ran, int rounds) {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < give_up) {
    const uint64_t seen = clock.epoch();
    if (ran.load() == rounds && clock.Poll().quiescent) return true;
    clock.WaitForActivity(seen, std::chrono::milliseconds(5));
  }
  return false;
}

// Under a simulated clock a ticker runs a round at its start and then one per period of
// simulated time: busy while a round runs, due at the next one, woken by the clock's jump.
TEST(TickerSimulatedClockTest, RunsARoundPerPeriodOfSimulatedTime) {
  simtime::SimulatedClock clock(TimePoint(std::chrono::seconds(100)));
  std::atomic<int> ran{0};
  Ticker ticker;
  ticker.Start(&clock, std::chrono::seconds(5), [&] { ++ran; });
  ASSERT_TRUE(QuiescentAfter(clock, ran, 1));
  EXPECT_EQ(clock.Poll().next_due, TimePoint(std::chrono::seconds(105)));
  clock.AdvanceTo(TimePoint(std::chrono::seconds(104)));  // not due yet
  ASSERT_TRUE(QuiescentAfter(clock, ran, 1));
  clock.AdvanceTo(TimePoint(std::chrono::seconds(105)));
  ASSERT_TRUE(QuiescentAfter(clock, ran, 2));
  EXPECT_EQ(clock.Poll().next_due, TimePoint(std::chrono::seconds(110)));
  ticker.Stop();
  EXPECT_EQ(ran.load(), 2);
}

}  // namespace
}  // namespace berth::controllers
