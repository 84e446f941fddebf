// The pod garbage collector against the embedded API server, with a fake clock: each round
// (GcOnce) is driven by the test after the informers show what the previous step wrote. The
// states no kubelet of these tests would produce (a finished pod of a given age, a pod left
// Terminating) are written into the server's store directly; the controller reads and writes
// through the informers and the REST client only.
#include "controllers/pod_gc.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <set>

#include "api/codec.h"
#include "apiserver/resources.h"
#include "apiserver/server.h"
#include "apiserver/store.h"
#include "client/api_server_test_util.h"
#include "controllers/controller_test_util.h"
#include "controllers/object_util.h"
#include "simtime/simulated_clock.h"

namespace berth::controllers {
namespace {

using std::chrono::seconds;

constexpr UnixTime kStart = 1'800'000'000;

class PodGcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.Start("berth-podgc-test");
    if (HasFatalFailure()) return;
    rest_ = api_.rest();
    clock_.Set(TimePoint(seconds(kStart)));
    pods_ = std::make_unique<SharedInformer>(rest_, "/api/v1/pods", "Pod", nullptr);
    nodes_ = std::make_unique<SharedInformer>(rest_, "/api/v1/nodes", "Node", nullptr);
    pods_->Start();
    nodes_->Start();
    WaitFor([&] { return pods_->HasSynced() && nodes_->HasSynced(); });
  }
  void TearDown() override {
    gc_.reset();
    pods_->Stop();
    nodes_->Stop();
    api_.Stop();
  }
  PodGcController& Gc(int threshold = kDefaultTerminatedPodGcThreshold) {
    ControllerOptions o{&clock_, 1, nullptr};
    o.terminated_pod_gc_threshold = threshold;
    gc_ = std::make_unique<PodGcController>(rest_, pods_.get(), nodes_.get(), o);
    return *gc_;
  }

  void CreateNode(const std::string& name, const std::string& ready, Json taints = nullptr) {
    Json node = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}}};
    if (!taints.is_null()) node["spec"] = {{"taints", taints}};
    ASSERT_TRUE(rest_->Post("/api/v1/nodes", node).ok());
    Json conditions = {{{"type", "Ready"}, {"status", ready}, {"reason", "Test"}}};
    auto r =
        rest_->Patch("/api/v1/nodes/" + name + "/status",
                     {{"status", {{"conditions", conditions}}}}, "application/merge-patch+json");
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  void CreatePod(const std::string& name, const std::string& node = "", bool finalizer = false) {
    Json spec = {{"containers", {{{"name", "c"}, {"image", "nginx"}}}}};
    if (!node.empty()) spec["nodeName"] = node;
    Json meta = {{"name", name}, {"namespace", "default"}};
    if (finalizer) meta["finalizers"] = {"example.com/hold"};
    auto r =
        rest_->Post("/api/v1/namespaces/default/pods",
                    {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", meta}, {"spec", spec}});
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  // Rewrites a stored pod in place: creation time (seconds after kStart), phase and reason,
  // and optionally a pending graceful deletion (a kubelet that never confirms it).
  void SetPod(const std::string& name, int created, const std::string& phase,
              const std::string& reason = "", bool terminating = false) {
    const auto* pods = apiserver::FindResource("", "v1", "pods");
    auto r = api_.server().store().Change(
        *pods, "default", name,
        [&](Json& pod) -> Result<bool> {
          pod["metadata"]["creationTimestamp"] = FormatTimestamp(kStart + created);
          pod["status"]["phase"] = phase;
          if (!reason.empty()) pod["status"]["reason"] = reason;
          if (terminating) {
            pod["metadata"]["deletionTimestamp"] = FormatTimestamp(kStart + 3600);
            pod["metadata"]["deletionGracePeriodSeconds"] = 30;
          }
          return false;
        },
        false);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  // Waits until both informers hold what the server holds.
  void Settle() {
    auto same = [&](const std::string& path, SharedInformer& informer) {
      auto list = rest_->Get(path);
      if (!list.ok()) return false;
      std::map<std::string, std::string> want;
      for (const Json& item : (*list)["items"])
        want[KeyOf(item)] = item["metadata"]["resourceVersion"];
      std::map<std::string, std::string> have;
      for (const Object& o : informer.List())
        have[KeyOf(DocOf(o))] = DocOf(o)["metadata"]["resourceVersion"];
      return want == have;
    };
    WaitFor([&] { return same("/api/v1/pods", *pods_) && same("/api/v1/nodes", *nodes_); });
  }
  std::optional<Json> Pod(const std::string& name) {
    auto got = rest_->Get("/api/v1/namespaces/default/pods/" + name);
    if (!got.ok()) return std::nullopt;
    return *got;
  }
  std::set<std::string> PodNames() {
    std::set<std::string> out;
    auto list = rest_->Get("/api/v1/namespaces/default/pods");
    if (list.ok())
      for (const Json& item : (*list)["items"]) out.insert(NameOf(item));
    return out;
  }

  TestApiServer api_;
  client::RestClient* rest_ = nullptr;
  FakeClock clock_;
  std::unique_ptr<SharedInformer> pods_, nodes_;
  std::unique_ptr<PodGcController> gc_;
};

TEST_F(PodGcTest, TerminatedPodsOverTheThresholdGoEvictedFirstThenOldest) {
  CreateNode("n1", "True");
  for (const char* name : {"running", "old", "older", "newest", "evicted", "same-a", "same-b"})
    CreatePod(name, "n1");
  SetPod("running", 0, "Running");  // the oldest, but not finished
  SetPod("older", 10, "Failed");
  SetPod("old", 20, "Succeeded");
  SetPod("same-b", 30, "Succeeded");
  SetPod("same-a", 30, "Succeeded");  // same age: by name
  SetPod("newest", 40, "Succeeded");
  SetPod("evicted", 50, "Failed", "Evicted");  // the newest, but evicted
  Settle();
  PodGcRound round = Gc(/*threshold=*/2).GcOnce();
  EXPECT_EQ(round.terminated, 4);
  EXPECT_EQ(round.Deleted(), 4);
  EXPECT_EQ(PodNames(), (std::set<std::string>{"running", "same-b", "newest"}));
  Settle();
  EXPECT_EQ(gc_->GcOnce().Deleted(), 0) << "the threshold holds";
}

TEST_F(PodGcTest, ThresholdZeroKeepsEveryFinishedPod) {
  CreateNode("n1", "True");
  for (int i = 0; i < 3; ++i) {
    CreatePod("done-" + std::to_string(i), "n1");
    SetPod("done-" + std::to_string(i), i, "Succeeded");
  }
  Settle();
  EXPECT_EQ(Gc(/*threshold=*/0).GcOnce().Deleted(), 0);
  EXPECT_EQ(PodNames().size(), 3u);
  // The same pods over a threshold of 1 do go: the 0 above is what kept them.
  EXPECT_EQ(Gc(/*threshold=*/1).GcOnce().terminated, 2);
  EXPECT_EQ(PodNames(), (std::set<std::string>{"done-2"}));
}

TEST_F(PodGcTest, OrphanedPodIsMarkedAndDeletedAfterTheQuarantineOnly) {
  CreateNode("n1", "True");
  CreateNode("late", "True");
  // A finalizer keeps the deleted pod readable: what was written before the deletion shows.
  CreatePod("orphan", "gone", /*finalizer=*/true);
  CreatePod("kept", "n1");
  CreatePod("on-late", "late");
  SetPod("orphan", 0, "Running");
  ASSERT_TRUE(rest_->Delete("/api/v1/nodes/late").ok());
  Settle();
  PodGcController& gc = Gc();
  EXPECT_EQ(gc.GcOnce().orphaned, 0) << "quarantined, not yet deleted";
  clock_.Advance(seconds(20));
  CreateNode("late", "True");  // back within the quarantine: its pod stays
  Settle();
  EXPECT_EQ(gc.GcOnce().orphaned, 0);
  clock_.Advance(seconds(19));
  EXPECT_EQ(gc.GcOnce().orphaned, 0) << "39 s is within the 40 s quarantine";
  clock_.Advance(seconds(1));
  EXPECT_EQ(gc.GcOnce().orphaned, 1);

  auto orphan = Pod("orphan");
  ASSERT_TRUE(orphan.has_value());
  EXPECT_TRUE((*orphan)["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ((*orphan)["status"]["phase"], "Failed");
  Json target;
  for (const Json& c : (*orphan)["status"]["conditions"])
    if (c["type"] == "DisruptionTarget") target = c;
  ASSERT_FALSE(target.is_null()) << orphan->dump();
  EXPECT_EQ(target["status"], "True");
  EXPECT_EQ(target["reason"], "DeletionByPodGC");
  EXPECT_EQ(target["message"], "PodGC: node no longer exists");
  EXPECT_EQ(target["lastTransitionTime"], FormatTimestamp(kStart + 40));
  EXPECT_TRUE(Pod("kept").has_value());
  EXPECT_TRUE(Pod("on-late").has_value());
}

TEST_F(PodGcTest, UnscheduledTerminatingPodIsForceDeleted) {
  CreateNode("n1", "True");
  CreatePod("unscheduled");
  CreatePod("bound", "n1");
  CreatePod("pending");
  SetPod("unscheduled", 0, "Pending", "", /*terminating=*/true);
  SetPod("bound", 0, "Running", "", /*terminating=*/true);  // its kubelet's business
  SetPod("pending", 0, "Pending");
  Settle();
  PodGcRound round = Gc().GcOnce();
  EXPECT_EQ(round.unscheduled, 1);
  EXPECT_EQ(round.Deleted(), 1);
  EXPECT_EQ(PodNames(), (std::set<std::string>{"bound", "pending"}));
}

TEST_F(PodGcTest, TerminatingPodsOnAnOutOfServiceNodeAreForceDeleted) {
  const Json out_of_service = {{{"key", kTaintOutOfService}, {"effect", "NoExecute"}}};
  CreateNode("down", "False", out_of_service);
  CreateNode("sick", "False");                    // not ready, no taint
  CreateNode("tainted", "True", out_of_service);  // tainted, but ready
  for (const char* node : {"down", "sick", "tainted"}) {
    CreatePod(std::string("deleting-on-") + node, node, /*finalizer=*/true);
    SetPod(std::string("deleting-on-") + node, 0, "Running", "", /*terminating=*/true);
  }
  CreatePod("running-on-down", "down");
  SetPod("running-on-down", 0, "Running");
  Settle();
  PodGcRound round = Gc().GcOnce();
  EXPECT_EQ(round.out_of_service, 1);
  EXPECT_EQ(round.Deleted(), 1);
  // Its finalizer keeps it: marked Failed and deleted with no grace period.
  auto pod = Pod("deleting-on-down");
  ASSERT_TRUE(pod.has_value());
  EXPECT_EQ((*pod)["status"]["phase"], "Failed");
  EXPECT_EQ((*pod)["metadata"].value("deletionGracePeriodSeconds", -1), 0);
  for (const char* name : {"deleting-on-sick", "deleting-on-tainted"}) {
    auto other = Pod(name);
    ASSERT_TRUE(other.has_value()) << name;
    EXPECT_EQ((*other)["status"]["phase"], "Running") << name;
  }
  EXPECT_EQ((*Pod("running-on-down"))["status"]["phase"], "Running");
}

// The order of collection without a server: evicted, then creation time, then name.
TEST(PodGcPlanTest, TerminatedOverThresholdInCollectionOrder) {
  auto pod = [](std::string name, UnixTime created, std::string phase, std::string reason = "") {
    auto p = std::make_shared<berth::Pod>();
    p->metadata.name = std::move(name);
    p->metadata.creation_timestamp = created;
    p->status.phase = phase;
    p->raw = std::make_shared<const Json>(Json{{"status", {{"phase", phase}, {"reason", reason}}}});
    return Object(std::shared_ptr<const berth::Pod>(std::move(p)));
  };
  const std::vector<Object> pods = {
      pod("c", 3, "Succeeded"), pod("run", 0, "Running"),          pod("b", 2, "Failed"),
      pod("a", 2, "Succeeded"), pod("ev", 9, "Failed", "Evicted"), pod("pend", 1, "Pending")};
  auto names = [](const std::vector<const berth::Pod*>& v) {
    std::vector<std::string> out;
    for (const auto* p : v) out.push_back(p->metadata.name);
    return out;
  };
  EXPECT_EQ(names(PlanPodGc(pods, {}, 1).terminated), (std::vector<std::string>{"ev", "a", "b"}));
  EXPECT_EQ(names(PlanPodGc(pods, {}, 3).terminated), (std::vector<std::string>{"ev"}));
  EXPECT_TRUE(PlanPodGc(pods, {}, 4).terminated.empty());
  EXPECT_TRUE(PlanPodGc(pods, {}, 0).terminated.empty());
  EXPECT_TRUE(PlanPodGc(pods, {}, -1).terminated.empty());
}

// Under the simulated clock of `berth scenario run` the rounds are one of its participants:
// idle between rounds, due every 20 s of simulated time.
TEST_F(PodGcTest, RoundsAreDueEveryTwentySimulatedSeconds) {
  simtime::SimulatedClock sim{TimePoint(seconds(kStart))};
  ControllerOptions o{&sim, 1, nullptr};
  PodGcController gc(rest_, pods_.get(), nodes_.get(), o);
  gc.Start();
  auto due_at = [&](TimePoint t) {
    for (int i = 0; i < 1000; ++i) {
      auto probe = sim.Poll();
      if (probe.quiescent && probe.next_due == t) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  EXPECT_TRUE(due_at(TimePoint(seconds(kStart + 20))));
  sim.AdvanceTo(TimePoint(seconds(kStart + 20)));
  EXPECT_TRUE(due_at(TimePoint(seconds(kStart + 40))));
  gc.Stop();
}

}  // namespace
}  // namespace berth::controllers
