// The ReplicaSet controller against the embedded API server, through informers and the REST
// client. Syncs are driven by the test (Sync(key)), after waiting for the informers to show
// what the previous step wrote, so nothing depends on timing.
#include "controllers/replica_set.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "apiserver/namespace_deleter.h"
#include "apiserver/server.h"
#include "client/api_server_test_util.h"
#include "controllers/controller_manager.h"
#include "controllers/controller_test_util.h"
#include "controllers/pod_util.h"

namespace berth::controllers {
namespace {

class ReplicaSetControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.Start("berth-rs-test");
    if (HasFatalFailure()) return;
    rest_ = api_.rest();
    pods_ = std::make_unique<SharedInformer>(rest_, "/api/v1/pods", "Pod", nullptr);
    sets_ =
        std::make_unique<SharedInformer>(rest_, "/apis/apps/v1/replicasets", "ReplicaSet", nullptr);
    controller_ =
        std::make_unique<ReplicaSetController>(ReplicaSetKind::ReplicaSets(), rest_, pods_.get(),
                                               sets_.get(), ControllerOptions{&clock_, 1, nullptr});
    pods_->Start();
    sets_->Start();
    WaitFor([&] { return pods_->HasSynced() && sets_->HasSynced(); });
  }
  void TearDown() override {
    // Informers first: their threads call the controller's handlers.
    pods_->Stop();
    sets_->Stop();
    controller_.reset();
    api_.Stop();
  }
  std::vector<Json> OwnedPods() {
    std::vector<Json> out;
    for (const Object& o : pods_->List()) out.push_back(DocOf(o));
    return out;
  }
  Json Set(int replicas) {
    return Json::parse(R"({"apiVersion":"apps/v1","kind":"ReplicaSet",
      "metadata":{"name":"web","namespace":"default"},
      "spec":{"replicas":)" +
                       std::to_string(replicas) + R"(,
        "selector":{"matchLabels":{"app":"web"}},
        "template":{"metadata":{"labels":{"app":"web"}},
                    "spec":{"containers":[{"name":"c","image":"nginx"}]}}}})");
  }
  void SetReplicas(int n) {
    auto r = rest_->Patch("/apis/apps/v1/namespaces/default/replicasets/web",
                          {{"spec", {{"replicas", n}}}}, "application/merge-patch+json");
    ASSERT_TRUE(r.ok()) << r.error().message;
    const std::string rv = (*r)["metadata"]["resourceVersion"];
    WaitFor([&] {
      auto s = sets_->Get("default/web");
      return s && StringAt(Member(DocOf(*s), "metadata"), "resourceVersion") >= rv &&
             IntAt(Member(DocOf(*s), "spec"), "replicas") == n;
    });
  }
  Json StoredSet() {
    auto r = rest_->Get("/apis/apps/v1/namespaces/default/replicasets/web");
    EXPECT_TRUE(r.ok());
    return r.ok() ? *r : Json();
  }

  TestApiServer api_;
  FakeClock clock_{TimePoint(std::chrono::seconds(1'700'000'000))};
  client::RestClient* rest_ = nullptr;
  std::unique_ptr<SharedInformer> pods_, sets_;
  std::unique_ptr<ReplicaSetController> controller_;
};

TEST_F(ReplicaSetControllerTest, ASetInATerminatingNamespaceStopsCreatingWithoutAnError) {
  // As against kube-apiserver: the namespace stays Terminating with the set in it, and every
  // pod create is refused.
  api_.server().namespace_deleter().Stop();
  CreateNamespace(*rest_, "leaving");
  Json set = Set(3);
  set["metadata"]["namespace"] = "leaving";
  ASSERT_TRUE(rest_->Post("/apis/apps/v1/namespaces/leaving/replicasets", set).ok());
  ASSERT_TRUE(rest_->Delete("/api/v1/namespaces/leaving").ok());
  WaitFor([&] { return sets_->Get("leaving/web").has_value(); });

  // Not an error: nothing to retry or log, and no creation left expected.
  auto synced = controller_->Sync("leaving/web");
  EXPECT_TRUE(synced.ok()) << synced.error().message;
  EXPECT_TRUE(controller_->expectations().Satisfied("leaving/web"));
  auto pods = rest_->Get("/api/v1/namespaces/leaving/pods");
  ASSERT_TRUE(pods.ok());
  EXPECT_TRUE((*pods)["items"].empty());
}

TEST_F(ReplicaSetControllerTest, CreatesOwnedPodsWaitsForThemAndScalesDown) {
  auto created = rest_->Post("/apis/apps/v1/namespaces/default/replicasets", Set(5));
  ASSERT_TRUE(created.ok()) << created.error().message;
  const std::string uid = (*created)["metadata"]["uid"];
  WaitFor([&] { return sets_->Get("default/web").has_value(); });

  ASSERT_TRUE(controller_->Sync("default/web").ok());
  // A second sync before the informer shows the pods creates nothing more: expectations.
  ASSERT_TRUE(controller_->Sync("default/web").ok());
  WaitFor([&] { return pods_->List().size() >= 5; });
  auto pods = OwnedPods();
  ASSERT_EQ(pods.size(), 5u);
  for (const Json& p : pods) {
    EXPECT_EQ(NameOf(p).rfind("web-", 0), 0u) << NameOf(p);
    EXPECT_EQ(p["metadata"]["generateName"], "web-");
    const Json* ref = ControllerRefOf(p);
    ASSERT_NE(ref, nullptr);
    EXPECT_EQ(StringAt(*ref, "uid"), uid);
    EXPECT_EQ(StringAt(*ref, "kind"), "ReplicaSet");
    EXPECT_EQ(p["metadata"]["labels"]["app"], "web");
  }
  WaitFor([&] { return controller_->expectations().Satisfied("default/web"); });
  ASSERT_TRUE(controller_->Sync("default/web").ok());
  Json status = StoredSet()["status"];
  EXPECT_EQ(IntAt(status, "replicas"), 5);
  EXPECT_EQ(IntAt(status, "fullyLabeledReplicas"), 5);
  EXPECT_EQ(IntAt(status, "readyReplicas"), 0);
  EXPECT_EQ(IntAt(status, "observedGeneration"), 1);

  // Two pods become ready (as a kubelet would report them): they are kept on scale-down.
  std::vector<std::string> ready;
  for (int i = 0; i < 2; ++i) {
    Json pod = pods[i];
    pod["status"] = {{"phase", "Running"},
                     {"conditions",
                      {{{"type", "Ready"},
                        {"status", "True"},
                        {"lastTransitionTime", "2023-11-14T00:00:00Z"}}}}};
    pod["spec"]["nodeName"] = "n1";
    ASSERT_TRUE(rest_->Put("/api/v1/namespaces/default/pods/" + NameOf(pod) + "/status", pod).ok());
    ready.push_back(NameOf(pod));
  }
  WaitFor([&] {
    int n = 0;
    for (const Json& p : OwnedPods()) n += StringAt(p["status"], "phase") == "Running";
    return n == 2;
  });
  SetReplicas(2);
  ASSERT_TRUE(controller_->Sync("default/web").ok());
  WaitFor([&] { return pods_->List().size() == 2; });
  std::vector<std::string> left;
  for (const Json& p : OwnedPods()) left.push_back(NameOf(p));
  std::sort(left.begin(), left.end());
  std::sort(ready.begin(), ready.end());
  EXPECT_EQ(left, ready);
  WaitFor([&] { return controller_->expectations().Satisfied("default/web"); });
  ASSERT_TRUE(controller_->Sync("default/web").ok());
  status = StoredSet()["status"];
  EXPECT_EQ(IntAt(status, "replicas"), 2);
  EXPECT_EQ(IntAt(status, "readyReplicas"), 2);
  EXPECT_EQ(IntAt(status, "availableReplicas"), 2);
  EXPECT_EQ(IntAt(status, "observedGeneration"), 2);
}

TEST_F(ReplicaSetControllerTest, AdoptsMatchingOrphansInsteadOfCreating) {
  Json orphan = {{"apiVersion", "v1"},
                 {"kind", "Pod"},
                 {"metadata", {{"name", "stray"}, {"labels", {{"app", "web"}}}}},
                 {"spec", {{"containers", {{{"name", "c"}, {"image", "x"}}}}}}};
  ASSERT_TRUE(rest_->Post("/api/v1/namespaces/default/pods", orphan).ok());
  ASSERT_TRUE(rest_->Post("/apis/apps/v1/namespaces/default/replicasets", Set(1)).ok());
  WaitFor([&] { return sets_->Get("default/web") && pods_->Get("default/stray"); });
  ASSERT_TRUE(controller_->Sync("default/web").ok());
  auto stray = rest_->Get("/api/v1/namespaces/default/pods/stray");
  ASSERT_TRUE(stray.ok());
  const Json* ref = ControllerRefOf(*stray);
  ASSERT_NE(ref, nullptr);
  EXPECT_EQ(StringAt(*ref, "name"), "web");
  auto list = rest_->Get("/api/v1/namespaces/default/pods");
  ASSERT_TRUE(list.ok());
  EXPECT_EQ((*list)["items"].size(), 1u);
}

// Pods that change after they were counted: a finished one is replaced, a relabeled one is
// released and replaced, and a ready one counts as available only after minReadySeconds.
TEST_F(ReplicaSetControllerTest, ReplacesFinishedAndReleasedPodsAndCountsAvailability) {
  Json set = Set(3);
  set["spec"]["minReadySeconds"] = 30;
  ASSERT_TRUE(rest_->Post("/apis/apps/v1/namespaces/default/replicasets", set).ok());
  WaitFor([&] { return sets_->Get("default/web").has_value(); });
  ASSERT_TRUE(controller_->Sync("default/web").ok());
  WaitFor([&] { return pods_->List().size() == 3; });
  WaitFor([&] { return controller_->expectations().Satisfied("default/web"); });
  auto pods = OwnedPods();
  ASSERT_EQ(pods.size(), 3u);
  const UnixTime now =
      std::chrono::duration_cast<std::chrono::seconds>(clock_.Now().time_since_epoch()).count();
  auto put_status = [&](Json pod, const std::string& phase, bool ready) {
    pod["status"] = {{"phase", phase}};
    if (ready) {
      pod["status"]["conditions"] = {{{"type", "Ready"},
                                      {"status", "True"},
                                      {"lastTransitionTime", FormatTimestamp(now - 10)}}};
    }
    auto r = rest_->Put("/api/v1/namespaces/default/pods/" + NameOf(pod) + "/status", pod);
    ASSERT_TRUE(r.ok()) << r.error().message;
  };
  put_status(pods[0], "Running", true);
  put_status(pods[1], "Failed", false);
  ASSERT_TRUE(rest_
                  ->Patch("/api/v1/namespaces/default/pods/" + NameOf(pods[2]),
                          {{"metadata", {{"labels", {{"app", "other"}}}}}},
                          "application/merge-patch+json")
                  .ok());
  WaitFor([&] {
    auto released = pods_->Get("default/" + NameOf(pods[2]));
    auto failed = pods_->Get("default/" + NameOf(pods[1]));
    auto ready = pods_->Get("default/" + NameOf(pods[0]));
    return released && LabelsOf(DocOf(*released)).at("app") == "other" && failed &&
           StringAt(DocOf(*failed)["status"], "phase") == "Failed" && ready &&
           IsPodReady(DocOf(*ready));
  });

  ASSERT_TRUE(controller_->Sync("default/web").ok());
  auto released = rest_->Get("/api/v1/namespaces/default/pods/" + NameOf(pods[2]));
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(ControllerRefOf(*released), nullptr);
  Json status = StoredSet()["status"];
  EXPECT_EQ(IntAt(status, "replicas"), 1);  // the ready pod alone
  EXPECT_EQ(IntAt(status, "readyReplicas"), 1);
  EXPECT_EQ(IntAt(status, "availableReplicas"), 0);    // ready for 10 s of 30
  WaitFor([&] { return pods_->List().size() == 5; });  // two replacements
  WaitFor([&] { return controller_->expectations().Satisfied("default/web"); });

  // Nothing left to adopt, release or delete: counted without a walk over the pods.
  ASSERT_TRUE(controller_->Sync("default/web").ok());
  status = StoredSet()["status"];
  EXPECT_EQ(IntAt(status, "replicas"), 3);
  EXPECT_EQ(IntAt(status, "availableReplicas"), 0);
  clock_.Advance(std::chrono::seconds(25));
  ASSERT_TRUE(controller_->Sync("default/web").ok());
  status = StoredSet()["status"];
  EXPECT_EQ(IntAt(status, "replicas"), 3);
  EXPECT_EQ(IntAt(status, "fullyLabeledReplicas"), 3);
  EXPECT_EQ(IntAt(status, "readyReplicas"), 1);
  EXPECT_EQ(IntAt(status, "availableReplicas"), 1);
  int owned = 0;
  for (const Json& p : OwnedPods()) owned += ControllerRefOf(p) != nullptr;
  EXPECT_EQ(owned, 4);  // three active and the failed one
}

TEST(ControllerSelectionTest, StarNamesAndExclusions) {
  auto all = SelectControllers({"*"});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(*all, KnownControllers());
  auto no_rc = SelectControllers({"*", "-replicationcontroller"});
  ASSERT_TRUE(no_rc.ok());
  // Every known controller but the excluded one, in registry order.
  std::vector<std::string> expected = KnownControllers();
  std::erase(expected, "replicationcontroller");
  EXPECT_EQ(*no_rc, expected);
  auto one = SelectControllers({"replicaset"});
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(*one, std::vector<std::string>{"replicaset"});
  auto bad = SelectControllers({"*,nope"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("\"nope\""), std::string::npos);
}

}  // namespace
}  // namespace berth::controllers
