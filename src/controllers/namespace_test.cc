// The namespace controller: discovery documents read alone, then a namespace deleted on the
// embedded API server with the server's own namespace deleter stopped, so that only the
// controller empties and finalizes it (as against kube-apiserver). Syncs are driven by the
// test after the informer shows what the previous step wrote.
#include "controllers/namespace.h"

#include <gtest/gtest.h>

#include <thread>

#include "apiserver/namespace_deleter.h"
#include "apiserver/server.h"
#include "client/api_server_test_util.h"
#include "controllers/controller_test_util.h"

namespace berth::controllers {
namespace {

TEST(NamespacedResourcesTest, OnlyNamespacedDeletableResourcesWithoutSubresources) {
  const Json resources = Json::parse(R"([
    {"name": "pods", "namespaced": true, "verbs": ["create", "delete", "deletecollection", "get",
                                                    "list", "patch", "update", "watch"]},
    {"name": "pods/status", "namespaced": true, "verbs": ["get", "patch", "update"]},
    {"name": "nodes", "namespaced": false, "verbs": ["delete", "list"]},
    {"name": "bindings", "namespaced": true, "verbs": ["create"]},
    {"name": "events", "namespaced": true, "verbs": ["delete", "get", "list"]}
  ])");
  auto got = NamespacedResourcesOf("v1", resources);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].plural, "pods");
  EXPECT_TRUE(got[0].delete_collection);
  EXPECT_EQ(got[0].CollectionPath("team"), "/api/v1/namespaces/team/pods");
  EXPECT_EQ(got[1].plural, "events");
  EXPECT_FALSE(got[1].delete_collection);
  NamespacedResource apps{"apps/v1", "deployments", true};
  EXPECT_EQ(apps.CollectionPath("team"), "/apis/apps/v1/namespaces/team/deployments");
}

class NamespaceControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.Start("berth-namespace-controller-test");
    if (HasFatalFailure()) return;
    // Left running, the server would finish the namespace itself.
    api_.server().namespace_deleter().Stop();
    rest_ = api_.rest();
    namespaces_ =
        std::make_unique<SharedInformer>(rest_, "/api/v1/namespaces", "Namespace", nullptr);
    controller_ = std::make_unique<NamespaceController>(rest_, namespaces_.get(),
                                                        ControllerOptions{&clock_, 1, nullptr});
    namespaces_->Start();
    WaitFor([&] { return namespaces_->HasSynced(); });
  }
  void TearDown() override {
    if (namespaces_) namespaces_->Stop();
    controller_.reset();
    api_.Stop();
  }
  void Post(const std::string& path, const Json& obj) {
    auto r = rest_->Post(path, obj);
    ASSERT_TRUE(r.ok()) << path << ": " << r.error().message;
  }
  bool Exists(const std::string& path) { return rest_->Get(path).ok(); }
  bool CachedTerminating(const std::string& name) {
    auto ns = namespaces_->Get(name);
    return ns && HasDeletionTimestamp(DocOf(*ns));
  }

  TestApiServer api_;
  client::RestClient* rest_ = nullptr;
  FakeClock clock_;
  std::unique_ptr<SharedInformer> namespaces_;
  std::unique_ptr<NamespaceController> controller_;
};

TEST_F(NamespaceControllerTest, EmptiesATerminatingNamespaceThenFinalizesAndRemovesIt) {
  Post("/api/v1/namespaces",
       {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "team"}}}});
  Post("/api/v1/namespaces/team/configmaps",
       {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "settings"}}}});
  // An object whose finalizer someone else removes later.
  Post("/api/v1/namespaces/team/configmaps",
       {{"apiVersion", "v1"},
        {"kind", "ConfigMap"},
        {"metadata", {{"name", "held"}, {"finalizers", {"example.com/hold"}}}}});
  Post("/apis/apps/v1/namespaces/team/deployments",
       {{"apiVersion", "apps/v1"},
        {"kind", "Deployment"},
        {"metadata", {{"name", "api"}}},
        {"spec",
         {{"selector", {{"matchLabels", {{"app", "api"}}}}},
          {"template",
           {{"metadata", {{"labels", {{"app", "api"}}}}},
            {"spec", {{"containers", {{{"name", "c"}, {"image", "nginx"}}}}}}}}}}});
  ASSERT_TRUE(rest_->Delete("/api/v1/namespaces/team").ok());
  WaitFor([&] { return CachedTerminating("team"); });

  // The first pass deletes what it can; the held map keeps the namespace, looked at again later.
  ASSERT_TRUE(controller_->Sync("team").ok());
  EXPECT_FALSE(Exists("/api/v1/namespaces/team/configmaps/settings"));
  EXPECT_FALSE(Exists("/apis/apps/v1/namespaces/team/deployments/api"));
  EXPECT_TRUE(Exists("/api/v1/namespaces/team/configmaps/held"));
  auto ns = rest_->Get("/api/v1/namespaces/team");
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ((*ns)["spec"]["finalizers"], Json::array({"kubernetes"}));
  EXPECT_EQ(controller_->queue().Delayed(), 1u);

  // Its finalizer gone, the next pass finalizes the namespace, which goes.
  ASSERT_TRUE(rest_
                  ->Patch("/api/v1/namespaces/team/configmaps/held",
                          {{"metadata", {{"finalizers", nullptr}}}}, "application/merge-patch+json")
                  .ok());
  ASSERT_TRUE(controller_->Sync("team").ok());
  EXPECT_FALSE(Exists("/api/v1/namespaces/team"));
  // A namespace that is not being deleted is left alone.
  ASSERT_TRUE(controller_->Sync("default").ok());
  EXPECT_TRUE(Exists("/api/v1/namespaces/default"));
}

}  // namespace
}  // namespace berth::controllers
