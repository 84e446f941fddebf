// The Deployment controller against the embedded API server, through informers and the REST
// client. The test plays the ReplicaSet controller (it writes the sets' status) and drives
// syncs itself (Sync(key)), after waiting for the informers to show what the previous step
// wrote, so nothing depends on timing.
#include "controllers/deployment.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "apiserver/server.h"
#include "client/api_server_test_util.h"
#include "controllers/controller_test_util.h"
#include "controllers/deployment_util.h"

namespace berth::controllers {
namespace {

constexpr char kDeployment[] = "/apis/apps/v1/namespaces/default/deployments/web";
constexpr char kSets[] = "/apis/apps/v1/namespaces/default/replicasets";

class DeploymentControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.Start("berth-deploy-test");
    if (HasFatalFailure()) return;
    rest_ = api_.rest();
    pods_ = std::make_unique<SharedInformer>(rest_, "/api/v1/pods", "Pod", nullptr);
    sets_ =
        std::make_unique<SharedInformer>(rest_, "/apis/apps/v1/replicasets", "ReplicaSet", nullptr);
    deployments_ =
        std::make_unique<SharedInformer>(rest_, "/apis/apps/v1/deployments", "Deployment", nullptr);
    controller_ =
        std::make_unique<DeploymentController>(rest_, pods_.get(), sets_.get(), deployments_.get(),
                                               ControllerOptions{&clock_, 1, nullptr});
    for (auto* i : {pods_.get(), sets_.get(), deployments_.get()}) i->Start();
    WaitFor([&] { return pods_->HasSynced() && sets_->HasSynced() && deployments_->HasSynced(); });
  }
  void TearDown() override {
    for (auto* i : {pods_.get(), sets_.get(), deployments_.get()}) i->Stop();
    controller_.reset();
    api_.Stop();
  }
  // Waits until the informer has `obj` (a write's answer) at its resourceVersion or later.
  void WaitSeen(SharedInformer* informer, const Json& obj) {
    const std::string rv = StringAt(Member(obj, "metadata"), "resourceVersion");
    WaitFor([&] {
      auto o = informer->Get(KeyOf(obj));
      if (!o) return false;
      const std::string got = StringAt(Member(DocOf(*o), "metadata"), "resourceVersion");
      return got.size() > rv.size() || (got.size() == rv.size() && got >= rv);
    });
  }
  std::vector<Json> Sets() {
    auto r = rest_->Get(kSets);
    EXPECT_TRUE(r.ok());
    std::vector<Json> out;
    for (const Json& s : (*r)["items"]) out.push_back(s);
    return out;
  }
  Json SetWithImage(const std::string& image) {
    for (const Json& s : Sets()) {
      if (s["spec"]["template"]["spec"]["containers"][0]["image"] == image) return s;
    }
    ADD_FAILURE() << "no set of image " << image;
    return Json();
  }
  // What the ReplicaSet controller would report: `n` pods, all ready and available.
  void SetAvailable(Json set, int64_t n) {
    set["status"] = {{"replicas", n},
                     {"readyReplicas", n},
                     {"availableReplicas", n},
                     {"observedGeneration", set["metadata"]["generation"]}};
    auto r = rest_->Put(std::string(kSets) + "/" + NameOf(set) + "/status", set);
    ASSERT_TRUE(r.ok()) << r.error().message;
    WaitSeen(sets_.get(), *r);
  }
  void Sync() { ASSERT_TRUE(controller_->Sync("default/web").ok()); }

  TestApiServer api_;
  FakeClock clock_{TimePoint(std::chrono::seconds(1'700'000'000))};
  client::RestClient* rest_ = nullptr;
  std::unique_ptr<SharedInformer> pods_, sets_, deployments_;
  std::unique_ptr<DeploymentController> controller_;
};

TEST_F(DeploymentControllerTest, RollsOutWithinSurgeKeepingAvailability) {
  Json d = Json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
    "metadata":{"name":"web","namespace":"default"},
    "spec":{"replicas":4,"selector":{"matchLabels":{"app":"web"}},
      "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":1,"maxUnavailable":0}},
      "template":{"metadata":{"labels":{"app":"web"}},
                  "spec":{"containers":[{"name":"c","image":"nginx:1"}]}}}})");
  auto created = rest_->Post("/apis/apps/v1/namespaces/default/deployments", d);
  ASSERT_TRUE(created.ok()) << created.error().message;
  WaitSeen(deployments_.get(), *created);
  Sync();
  auto sets = Sets();
  ASSERT_EQ(sets.size(), 1u);
  const std::string hash = sets[0]["metadata"]["labels"][std::string(kPodTemplateHashLabel)];
  EXPECT_EQ(NameOf(sets[0]), "web-" + hash);
  EXPECT_EQ(sets[0]["spec"]["selector"]["matchLabels"][std::string(kPodTemplateHashLabel)], hash);
  EXPECT_EQ(SpecReplicas(sets[0]), 4);
  EXPECT_EQ(RevisionOf(sets[0]), 1);
  auto stored = rest_->Get(kDeployment);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(RevisionOf(*stored), 1);  // written on the Deployment itself, not via /status
  SetAvailable(sets[0], 4);
  WaitSeen(deployments_.get(), *rest_->Get(kDeployment));
  Sync();
  stored = rest_->Get(kDeployment);
  EXPECT_EQ(IntAt((*stored)["status"], "availableReplicas"), 4);
  EXPECT_EQ(StringAt(*FindCondition((*stored)["status"], "Available"), "reason"),
            "MinimumReplicasAvailable");
  EXPECT_EQ(StringAt(*FindCondition((*stored)["status"], "Progressing"), "reason"),
            "NewReplicaSetAvailable");

  // A new template: the new set gets the one surge replica, the old one keeps all four
  // until the new replica is available.
  Json next = *stored;
  next["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:2";
  auto updated = rest_->Put(kDeployment, next);
  ASSERT_TRUE(updated.ok()) << updated.error().message;
  WaitSeen(deployments_.get(), *updated);
  Sync();
  Json fresh = SetWithImage("nginx:2");
  EXPECT_EQ(SpecReplicas(fresh), 1);
  EXPECT_EQ(RevisionOf(fresh), 2);
  WaitSeen(sets_.get(), fresh);
  WaitSeen(deployments_.get(), *rest_->Get(kDeployment));
  Sync();
  EXPECT_EQ(SpecReplicas(SetWithImage("nginx:1")), 4);
  EXPECT_EQ(SpecReplicas(SetWithImage("nginx:2")), 1);
  SetAvailable(SetWithImage("nginx:2"), 1);
  WaitSeen(deployments_.get(), *rest_->Get(kDeployment));
  Sync();
  EXPECT_EQ(SpecReplicas(SetWithImage("nginx:1")), 3);
  EXPECT_EQ(RevisionOf(*rest_->Get(kDeployment)), 2);
}

}  // namespace
}  // namespace berth::controllers
