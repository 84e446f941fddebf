// The StatefulSet controller against the embedded API server, through informers and the REST
// client. Syncs are driven by the test (Sync(key)) after waiting for the informers to show what
// the previous step wrote, so nothing depends on timing.
#include "controllers/stateful_set.h"

#include <gtest/gtest.h>

#include <thread>

#include "apiserver/namespace_deleter.h"
#include "apiserver/server.h"
#include "client/api_server_test_util.h"
#include "controllers/controller_test_util.h"

namespace berth::controllers {
namespace {

class StatefulSetControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.Start("berth-sts-test");
    if (HasFatalFailure()) return;
    rest_ = api_.rest();
    pods_ = std::make_unique<SharedInformer>(rest_, "/api/v1/pods", "Pod", nullptr);
    sets_ = std::make_unique<SharedInformer>(rest_, "/apis/apps/v1/statefulsets", "StatefulSet",
                                             nullptr);
    revisions_ = std::make_unique<SharedInformer>(rest_, "/apis/apps/v1/controllerrevisions",
                                                  "ControllerRevision", nullptr);
    claims_ = std::make_unique<SharedInformer>(rest_, "/api/v1/persistentvolumeclaims",
                                               "PersistentVolumeClaim", nullptr);
    controller_ = std::make_unique<StatefulSetController>(rest_, pods_.get(), sets_.get(),
                                                          revisions_.get(), claims_.get(),
                                                          ControllerOptions{&clock_, 1, nullptr});
    for (auto* i : Informers()) i->Start();
    WaitFor([&] {
      for (auto* i : Informers())
        if (!i->HasSynced()) return false;
      return true;
    });
  }
  void TearDown() override {
    // Informers first: their threads call the controller's handlers.
    for (auto* i : Informers()) {
      if (i) i->Stop();
    }
    controller_.reset();
    api_.Stop();
  }
  std::vector<SharedInformer*> Informers() {
    return {pods_.get(), sets_.get(), revisions_.get(), claims_.get()};
  }
  static Json Set(const std::string& ns, int replicas, bool with_claims, bool parallel) {
    Json set = Json::parse(R"({"apiVersion":"apps/v1","kind":"StatefulSet",
      "metadata":{"name":"db"},
      "spec":{"serviceName":"db","selector":{"matchLabels":{"app":"db"}},
        "template":{"metadata":{"labels":{"app":"db"}},
                    "spec":{"containers":[{"name":"c","image":"pg"}]}}}})");
    set["metadata"]["namespace"] = ns;
    set["spec"]["replicas"] = replicas;
    if (parallel) set["spec"]["podManagementPolicy"] = "Parallel";
    if (with_claims) {
      set["spec"]["volumeClaimTemplates"] = Json::parse(R"([{"metadata":{"name":"data"},
        "spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}])");
    }
    return set;
  }
  size_t Count(const std::string& ns, const std::string& resource) {
    auto list = rest_->Get("/api/v1/namespaces/" + ns + "/" + resource);
    EXPECT_TRUE(list.ok());
    return list.ok() ? (*list)["items"].size() : 0;
  }
  // A set whose revision was written before its namespace's deletion began (a first sync at
  // 0 replicas), then scaled to `replicas`, then the namespace deleted with the namespace
  // deleter stopped: the namespace stays Terminating, as kube-apiserver's does while the
  // namespace controller works, and refuses every create.
  void SetInTerminatingNamespace(int replicas, bool with_claims, bool parallel) {
    api_.server().namespace_deleter().Stop();
    CreateNamespace(*rest_, "leaving");
    ASSERT_TRUE(rest_
                    ->Post("/apis/apps/v1/namespaces/leaving/statefulsets",
                           Set("leaving", 0, with_claims, parallel))
                    .ok());
    WaitFor([&] { return sets_->Get("leaving/db").has_value(); });
    ASSERT_TRUE(controller_->Sync("leaving/db").ok());
    WaitFor([&] { return revisions_->List().size() == 1; });
    auto scaled =
        rest_->Patch("/apis/apps/v1/namespaces/leaving/statefulsets/db",
                     {{"spec", {{"replicas", replicas}}}}, "application/merge-patch+json");
    ASSERT_TRUE(scaled.ok()) << scaled.error().message;
    WaitFor([&] {
      auto s = sets_->Get("leaving/db");
      return s && IntAt(Member(DocOf(*s), "spec"), "replicas") == replicas;
    });
    ASSERT_TRUE(rest_->Delete("/api/v1/namespaces/leaving").ok());
  }

  TestApiServer api_;
  FakeClock clock_{TimePoint(std::chrono::seconds(1'700'000'000))};
  client::RestClient* rest_ = nullptr;
  std::unique_ptr<SharedInformer> pods_, sets_, revisions_, claims_;
  std::unique_ptr<StatefulSetController> controller_;
};

TEST_F(StatefulSetControllerTest, OrderedReadyCreatesTheFirstOrdinalAndItsClaim) {
  ASSERT_TRUE(
      rest_->Post("/apis/apps/v1/namespaces/default/statefulsets", Set("default", 3, true, false))
          .ok());
  WaitFor([&] { return sets_->Get("default/db").has_value(); });
  ASSERT_TRUE(controller_->Sync("default/db").ok());
  auto pod = rest_->Get("/api/v1/namespaces/default/pods/db-0");
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  EXPECT_TRUE(rest_->Get("/api/v1/namespaces/default/persistentvolumeclaims/data-db-0").ok());
  // OrderedReady: db-1 waits until db-0 is Running and Ready.
  EXPECT_EQ(Count("default", "pods"), 1u);
}

TEST_F(StatefulSetControllerTest, RefusedClaimsInATerminatingNamespaceAreNotAnError) {
  SetInTerminatingNamespace(2, true, true);
  // Not an error (the worker loop neither retries nor logs it): the set goes with its namespace.
  auto synced = controller_->Sync("leaving/db");
  EXPECT_TRUE(synced.ok()) << synced.error().message;
  EXPECT_EQ(Count("leaving", "persistentvolumeclaims"), 0u);
  EXPECT_EQ(Count("leaving", "pods"), 0u);
}

TEST_F(StatefulSetControllerTest, RefusedPodsInATerminatingNamespaceAreNotAnError) {
  SetInTerminatingNamespace(3, false, true);
  auto synced = controller_->Sync("leaving/db");
  EXPECT_TRUE(synced.ok()) << synced.error().message;
  EXPECT_EQ(Count("leaving", "pods"), 0u);
}

TEST_F(StatefulSetControllerTest, ARevisionRefusedInATerminatingNamespaceIsNotAnError) {
  api_.server().namespace_deleter().Stop();
  CreateNamespace(*rest_, "leaving");
  ASSERT_TRUE(
      rest_->Post("/apis/apps/v1/namespaces/leaving/statefulsets", Set("leaving", 2, false, false))
          .ok());
  ASSERT_TRUE(rest_->Delete("/api/v1/namespaces/leaving").ok());
  WaitFor([&] { return sets_->Get("leaving/db").has_value(); });
  auto synced = controller_->Sync("leaving/db");
  EXPECT_TRUE(synced.ok()) << synced.error().message;
  EXPECT_EQ(Count("leaving", "pods"), 0u);
}

}  // namespace
}  // namespace berth::controllers
