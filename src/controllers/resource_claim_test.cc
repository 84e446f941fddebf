// The resource claim controller: claims generated from templates (names, annotation, owner,
// the pod's status), no duplicates on retries, reservations of scheduled pods, and the
// release, deallocation and deletion of claims when their pods are done or deleted.
#include "controllers/resource_claim.h"

#include <gtest/gtest.h>

#include <thread>

#include "client/api_server_test_util.h"

namespace berth::controllers {
namespace {

constexpr char kClaims[] = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims";
constexpr char kTemplates[] = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates";

TEST(GeneratedClaimBaseNameTest, ShortNamesAreJoinedLongOnesCutInProportion) {
  EXPECT_EQ(GeneratedClaimBaseName("trainer", "gpu"), "trainer-gpu-");
  const std::string pod(60, 'p'), claim(20, 'c');
  // 82 characters: each part keeps len * 57 / 82 of its characters, joined by one hyphen.
  const std::string base = GeneratedClaimBaseName(pod, claim);
  EXPECT_EQ(base, std::string(41, 'p') + "-" + std::string(13, 'c'));
  EXPECT_LE(base.size(), 57u);
}

TEST(ClaimRefOfTest, NamedTemplatedAndRecorded) {
  Json pod = {{"status",
               {{"resourceClaimStatuses",
                 {{{"name", "gpu"}, {"resourceClaimName", "p-gpu-abcde"}}, {{"name", "skip"}}}}}}};
  PodClaimRef named = ClaimRefOf(pod, {{"name", "x"}, {"resourceClaimName", "shared"}});
  EXPECT_EQ(named.state, PodClaimRef::kName);
  EXPECT_EQ(named.name, "shared");
  EXPECT_FALSE(named.check_owner);
  PodClaimRef generated = ClaimRefOf(pod, {{"name", "gpu"}, {"resourceClaimTemplateName", "t"}});
  EXPECT_EQ(generated.state, PodClaimRef::kName);
  EXPECT_EQ(generated.name, "p-gpu-abcde");
  EXPECT_TRUE(generated.check_owner);
  EXPECT_EQ(ClaimRefOf(pod, {{"name", "skip"}, {"resourceClaimTemplateName", "t"}}).state,
            PodClaimRef::kNotNeeded);
  EXPECT_EQ(ClaimRefOf(pod, {{"name", "new"}, {"resourceClaimTemplateName", "t"}}).state,
            PodClaimRef::kNotCreated);
  EXPECT_EQ(ClaimRefOf(pod, {{"name", "odd"}}).state, PodClaimRef::kUnsupported);
}

class ResourceClaimControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.Start("berth-resourceclaim-test");
    if (HasFatalFailure()) return;
    rest_ = api_.rest();
    auto log = [](const std::string&) {};
    pods_ = std::make_unique<SharedInformer>(rest_, "/api/v1/pods", "Pod", log);
    claims_ = std::make_unique<SharedInformer>(rest_, kResourceClaimsPath, "ResourceClaim", log);
    templates_ = std::make_unique<SharedInformer>(rest_, kResourceClaimTemplatesPath,
                                                  "ResourceClaimTemplate", log);
    controller_ = std::make_unique<ResourceClaimController>(
        rest_, pods_.get(), claims_.get(), templates_.get(), ControllerOptions{&clock_, 1, log});
    for (auto* i : {pods_.get(), claims_.get(), templates_.get()}) i->Start();
    WaitFor([&] { return pods_->HasSynced() && claims_->HasSynced() && templates_->HasSynced(); });
  }
  void TearDown() override {
    for (auto* i : {pods_.get(), claims_.get(), templates_.get()})
      if (i) i->Stop();
    controller_.reset();
    api_.Stop();
  }
  void WaitFor(const std::function<bool()>& done) {
    for (int i = 0; i < 2000 && !done(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(done());
  }
  void CreateTemplate(const std::string& name) {
    Json t = {
        {"apiVersion", "resource.k8s.io/v1"},
        {"kind", "ResourceClaimTemplate"},
        {"metadata", {{"name", name}}},
        {"spec",
         {{"metadata", {{"labels", {{"team", "ml"}}}, {"annotations", {{"a", "b"}}}}},
          {"spec",
           {{"devices",
             {{"requests",
               {{{"name", "gpu"}, {"exactly", {{"deviceClassName", "gpu.example.com"}}}}}}}}}}}}};
    ASSERT_TRUE(rest_->Post(kTemplates, t).ok());
    WaitFor([&] { return templates_->Get("default/" + name).has_value(); });
  }
  Json CreatePod(const std::string& name, const Json& claims, const std::string& node = "") {
    Json pod = {
        {"apiVersion", "v1"},
        {"kind", "Pod"},
        {"metadata", {{"name", name}, {"namespace", "default"}}},
        {"spec",
         {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}, {"resourceClaims", claims}}}};
    if (!node.empty()) pod["spec"]["nodeName"] = node;
    auto r = rest_->Post("/api/v1/namespaces/default/pods", pod);
    EXPECT_TRUE(r.ok()) << r.error().message;
    WaitForPod(name, [](const Json&) { return true; });
    return r.ok() ? *r : Json();
  }
  void WaitForPod(const std::string& name, const std::function<bool(const Json&)>& ok) {
    WaitFor([&] {
      auto o = pods_->Get("default/" + name);
      return o && ok(DocOf(*o));
    });
  }
  std::vector<Json> StoredClaims() {
    auto r = rest_->Get(kClaims);
    std::vector<Json> out;
    if (r.ok())
      for (const Json& c : (*r)["items"]) out.push_back(c);
    return out;
  }
  // Syncs `key` once the claims' informer holds exactly what the server does.
  void SyncAfterCaches(const std::string& key) {
    WaitFor([&] {
      auto stored = StoredClaims();
      if (claims_->List().size() != stored.size()) return false;
      for (const Json& c : stored) {
        auto o = claims_->Get("default/" + NameOf(c));
        if (!o || StringAt(Member(DocOf(*o), "metadata"), "resourceVersion") !=
                      StringAt(c["metadata"], "resourceVersion"))
          return false;
      }
      return true;
    });
    auto r = controller_->Sync(key);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  void SetClaimStatus(const std::string& name, const Json& status) {
    auto claim = rest_->Get(std::string(kClaims) + "/" + name);
    ASSERT_TRUE(claim.ok());
    (*claim)["status"] = status;
    auto r = rest_->Put(std::string(kClaims) + "/" + name + "/status", *claim);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }

  TestApiServer api_;
  FakeClock clock_{TimePoint(std::chrono::seconds(1'800'000'000))};
  client::RestClient* rest_ = nullptr;
  std::unique_ptr<SharedInformer> pods_, claims_, templates_;
  std::unique_ptr<ResourceClaimController> controller_;
};

TEST_F(ResourceClaimControllerTest, GeneratesOneClaimPerTemplateAndRecordsIt) {
  CreateTemplate("gpu-template");
  Json pod = CreatePod(
      "trainer", Json::array({{{"name", "gpu"}, {"resourceClaimTemplateName", "gpu-template"}}}));
  ASSERT_TRUE(controller_->Sync("pod:default/trainer").ok());
  // A retry before any cache has seen the claim or the pod's status creates no second claim.
  ASSERT_TRUE(controller_->Sync("pod:default/trainer").ok());
  auto claims = StoredClaims();
  ASSERT_EQ(claims.size(), 1u);
  const Json& claim = claims[0];
  EXPECT_EQ(NameOf(claim).rfind("trainer-gpu-", 0), 0u) << NameOf(claim);
  EXPECT_EQ(NameOf(claim).size(), std::string("trainer-gpu-").size() + 5);
  EXPECT_EQ(claim["metadata"]["annotations"][kPodClaimNameAnnotation], "gpu");
  EXPECT_EQ(claim["metadata"]["annotations"]["a"], "b");
  EXPECT_EQ(claim["metadata"]["labels"]["team"], "ml");
  const Json& owner = claim["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "Pod");
  EXPECT_EQ(owner["uid"], UidOf(pod));
  EXPECT_EQ(owner["controller"], true);
  EXPECT_EQ(owner["blockOwnerDeletion"], true);
  EXPECT_EQ(claim["spec"]["devices"]["requests"][0]["name"], "gpu");
  auto stored = rest_->Get("/api/v1/namespaces/default/pods/trainer");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ((*stored)["status"]["resourceClaimStatuses"],
            Json::array({{{"name", "gpu"}, {"resourceClaimName", NameOf(claim)}}}));
  // With the status recorded, further syncs leave everything as it is.
  WaitForPod("trainer", [](const Json& p) {
    return Member(Member(p, "status"), "resourceClaimStatuses").is_array();
  });
  SyncAfterCaches("pod:default/trainer");
  EXPECT_EQ(StoredClaims().size(), 1u);
}

TEST_F(ResourceClaimControllerTest, FindsAnOrphanedGeneratedClaimInsteadOfCreatingOne) {
  CreateTemplate("t");
  Json pod = CreatePod("p", Json::array({{{"name", "gpu"}, {"resourceClaimTemplateName", "t"}}}));
  // A claim created for the pod by an earlier run whose status write was lost.
  Json orphan = {{"apiVersion", "resource.k8s.io/v1"},
                 {"kind", "ResourceClaim"},
                 {"metadata",
                  {{"name", "p-gpu-zzzzz"},
                   {"annotations", {{kPodClaimNameAnnotation, "gpu"}}},
                   {"ownerReferences", Json::array({NewControllerRef("v1", "Pod", pod)})}}},
                 {"spec", Json::object()}};
  ASSERT_TRUE(rest_->Post(kClaims, orphan).ok());
  SyncAfterCaches("pod:default/p");
  ASSERT_EQ(StoredClaims().size(), 1u);
  auto stored = rest_->Get("/api/v1/namespaces/default/pods/p");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ((*stored)["status"]["resourceClaimStatuses"][0]["resourceClaimName"], "p-gpu-zzzzz");
}

TEST_F(ResourceClaimControllerTest, MissingTemplateIsAnErrorAndAWarningEvent) {
  CreatePod("p", Json::array({{{"name", "gpu"}, {"resourceClaimTemplateName", "absent"}}}));
  auto r = controller_->Sync("pod:default/p");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("resource claim template \"absent\""), std::string::npos);
  EXPECT_TRUE(StoredClaims().empty());
  auto events = rest_->Get("/api/v1/namespaces/default/events");
  ASSERT_TRUE(events.ok());
  ASSERT_FALSE((*events)["items"].empty());
  EXPECT_EQ((*events)["items"][0]["reason"], "FailedResourceClaimCreation");
}

TEST_F(ResourceClaimControllerTest, DonePodReleasesAndDeletesItsGeneratedClaim) {
  CreateTemplate("t");
  Json pod = CreatePod("p", Json::array({{{"name", "gpu"}, {"resourceClaimTemplateName", "t"}}}),
                       "node-1");
  ASSERT_TRUE(controller_->Sync("pod:default/p").ok());
  const std::string name = NameOf(StoredClaims().at(0));
  SetClaimStatus(name,
                 {{"allocation", {{"devices", {{"results", Json::array()}}}}},
                  {"reservedFor", {{{"resource", "pods"}, {"name", "p"}, {"uid", UidOf(pod)}}}}});
  // Still running: the reservation stays.
  SyncAfterCaches("claim:default/" + name);
  ASSERT_EQ(StoredClaims().size(), 1u);
  EXPECT_EQ(StoredClaims()[0]["status"]["reservedFor"].size(), 1u);
  auto current = rest_->Get("/api/v1/namespaces/default/pods/p");
  ASSERT_TRUE(current.ok());
  (*current)["status"]["phase"] = "Succeeded";
  ASSERT_TRUE(rest_->Put("/api/v1/namespaces/default/pods/p/status", *current).ok());
  WaitForPod("p",
             [](const Json& p) { return StringAt(Member(p, "status"), "phase") == "Succeeded"; });
  SyncAfterCaches("claim:default/" + name);
  EXPECT_TRUE(StoredClaims().empty());
}

TEST_F(ResourceClaimControllerTest, DeletedPodDeallocatesASharedClaimOnlyWithTheFinalizer) {
  Json shared_claims = Json::array({{{"name", "gpu"}, {"resourceClaimName", "shared"}}});
  Json pod = CreatePod("p", shared_claims, "node-1");
  for (const char* claim_name : {"shared", "unprotected"}) {
    Json claim = {{"apiVersion", "resource.k8s.io/v1"},
                  {"kind", "ResourceClaim"},
                  {"metadata", {{"name", claim_name}}},
                  {"spec", Json::object()}};
    if (std::string(claim_name) == "shared")
      claim["metadata"]["finalizers"] = {kClaimDeleteProtectionFinalizer};
    ASSERT_TRUE(rest_->Post(kClaims, claim).ok());
    SetClaimStatus(claim_name,
                   {{"allocation", {{"devices", {{"results", Json::array()}}}}},
                    {"reservedFor", {{{"resource", "pods"}, {"name", "p"}, {"uid", UidOf(pod)}}}}});
  }
  ASSERT_TRUE(rest_->Delete("/api/v1/namespaces/default/pods/p", {{"gracePeriodSeconds", 0}}).ok());
  WaitFor([&] { return !pods_->Get("default/p").has_value(); });
  SyncAfterCaches("claim:default/shared");
  SyncAfterCaches("claim:default/unprotected");
  auto shared = rest_->Get(std::string(kClaims) + "/shared");
  ASSERT_TRUE(shared.ok());
  EXPECT_FALSE(Member(*shared, "status").contains("reservedFor"));
  EXPECT_FALSE(Member(*shared, "status").contains("allocation"));
  EXPECT_TRUE(Member(Member(*shared, "metadata"), "finalizers").empty());
  // Without the finalizer the claim keeps its allocation; neither is deleted (not generated).
  auto unprotected = rest_->Get(std::string(kClaims) + "/unprotected");
  ASSERT_TRUE(unprotected.ok());
  EXPECT_FALSE(Member(*unprotected, "status").contains("reservedFor"));
  EXPECT_TRUE(Member(*unprotected, "status").contains("allocation"));
}

TEST_F(ResourceClaimControllerTest, ScheduledPodGetsAnAllocatedClaimReserved) {
  Json claim = {{"apiVersion", "resource.k8s.io/v1"},
                {"kind", "ResourceClaim"},
                {"metadata", {{"name", "shared"}}},
                {"spec", Json::object()}};
  ASSERT_TRUE(rest_->Post(kClaims, claim).ok());
  SetClaimStatus("shared", {{"allocation", {{"devices", {{"results", Json::array()}}}}}});
  Json pod =
      CreatePod("p", Json::array({{{"name", "gpu"}, {"resourceClaimName", "shared"}}}), "node-1");
  SyncAfterCaches("pod:default/p");
  auto stored = rest_->Get(std::string(kClaims) + "/shared");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ((*stored)["status"]["reservedFor"],
            Json::array({{{"resource", "pods"}, {"name", "p"}, {"uid", UidOf(pod)}}}));
}

}  // namespace
}  // namespace berth::controllers
