// The persistent volume controller and the berth.dev/local provisioner against the embedded
// API server, through informers and the REST client. Syncs are driven by the test, after
// waiting for the informers to show what the previous step wrote.
#include "controllers/persistent_volume.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "apiserver/server.h"
#include "client/api_server_test_util.h"
#include "controllers/controller_test_util.h"
#include "controllers/volume_provisioner.h"

namespace berth::controllers {
namespace {

constexpr std::string_view kMergePatch = "application/merge-patch+json";

class PersistentVolumeControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.Start("berth-pv-test");
    if (HasFatalFailure()) return;
    rest_ = api_.rest();
    volumes_ = std::make_unique<SharedInformer>(rest_, "/api/v1/persistentvolumes",
                                                "PersistentVolume", nullptr);
    claims_ = std::make_unique<SharedInformer>(rest_, "/api/v1/persistentvolumeclaims",
                                               "PersistentVolumeClaim", nullptr);
    classes_ = std::make_unique<SharedInformer>(rest_, "/apis/storage.k8s.io/v1/storageclasses",
                                                "StorageClass", nullptr);
    nodes_ = std::make_unique<SharedInformer>(rest_, "/api/v1/nodes", "Node", nullptr);
    const ControllerOptions options{&clock_, 1, nullptr};
    binder_ = std::make_unique<PersistentVolumeController>(rest_, volumes_.get(), claims_.get(),
                                                           classes_.get(), options);
    provisioner_ = std::make_unique<VolumeProvisioner>(rest_, volumes_.get(), claims_.get(),
                                                       classes_.get(), nodes_.get(), options);
    for (auto* i : {volumes_.get(), claims_.get(), classes_.get(), nodes_.get()}) i->Start();
    WaitFor([&] {
      return volumes_->HasSynced() && claims_->HasSynced() && classes_->HasSynced() &&
             nodes_->HasSynced();
    });
  }
  void TearDown() override {
    for (auto* i : {volumes_.get(), claims_.get(), classes_.get(), nodes_.get()}) i->Stop();
    binder_.reset();
    provisioner_.reset();
    api_.Stop();
  }
  Json Post(const std::string& path, const Json& body) {
    auto r = rest_->Post(path, body);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : Json();
  }
  Json Stored(const std::string& path) {
    auto r = rest_->Get(path);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return r.ok() ? *r : Json();
  }
  // Waits until the informer holds `key` at the stored version (or without it, when gone).
  void Settle(SharedInformer* informer, const std::string& key, const std::string& path) {
    auto r = rest_->Get(path);
    if (!r.ok()) {
      WaitFor([&] { return !informer->Get(key).has_value(); });
      return;
    }
    const std::string rv = (*r)["metadata"]["resourceVersion"];
    WaitFor([&] {
      auto o = informer->Get(key);
      return o && StringAt(Member(DocOf(*o), "metadata"), "resourceVersion") == rv;
    });
  }
  void SettleVolume(const std::string& name) {
    Settle(volumes_.get(), name, "/api/v1/persistentvolumes/" + name);
  }
  void SettleClaim(const std::string& name) {
    Settle(claims_.get(), "default/" + name,
           "/api/v1/namespaces/default/persistentvolumeclaims/" + name);
  }
  void CreateClass(const std::string& name, const std::string& mode,
                   const std::string& provisioner) {
    Post("/apis/storage.k8s.io/v1/storageclasses", {{"metadata", {{"name", name}}},
                                                    {"provisioner", provisioner},
                                                    {"volumeBindingMode", mode}});
    WaitFor([&] { return classes_->Get(name).has_value(); });
  }
  void CreateVolume(const std::string& name, const std::string& size, const std::string& policy) {
    Post("/api/v1/persistentvolumes", {{"metadata", {{"name", name}}},
                                       {"spec",
                                        {{"capacity", {{"storage", size}}},
                                         {"accessModes", {"ReadWriteOnce"}},
                                         {"storageClassName", "manual"},
                                         {"persistentVolumeReclaimPolicy", policy},
                                         {"hostPath", {{"path", "/tmp/" + name}}}}}});
    SettleVolume(name);
    ASSERT_TRUE(binder_->Sync("pv:" + name).ok());
    SettleVolume(name);
  }
  Json CreateClaim(const std::string& name, const std::string& cls, const std::string& size) {
    Json created = Post("/api/v1/namespaces/default/persistentvolumeclaims",
                        {{"metadata", {{"name", name}}},
                         {"spec",
                          {{"accessModes", {"ReadWriteOnce"}},
                           {"storageClassName", cls},
                           {"resources", {{"requests", {{"storage", size}}}}}}}});
    SettleClaim(name);
    return created;
  }
  Json Volume(const std::string& name) { return Stored("/api/v1/persistentvolumes/" + name); }
  Json Claim(const std::string& name) {
    return Stored("/api/v1/namespaces/default/persistentvolumeclaims/" + name);
  }
  void DeleteClaim(const std::string& name) {
    ASSERT_TRUE(rest_->Delete("/api/v1/namespaces/default/persistentvolumeclaims/" + name).ok());
    WaitFor([&] { return !claims_->Get("default/" + name).has_value(); });
  }

  TestApiServer api_;
  FakeClock clock_{TimePoint(std::chrono::seconds(1'700'000'000))};
  client::RestClient* rest_ = nullptr;
  std::unique_ptr<SharedInformer> volumes_, claims_, classes_, nodes_;
  std::unique_ptr<PersistentVolumeController> binder_;
  std::unique_ptr<VolumeProvisioner> provisioner_;
};

TEST_F(PersistentVolumeControllerTest, BindsAnImmediateClaimToTheSmallestVolumeOnBothSides) {
  CreateClass("manual", "Immediate", "kubernetes.io/no-provisioner");
  CreateVolume("big", "10Gi", "Retain");
  CreateVolume("small", "2Gi", "Retain");
  EXPECT_EQ(Volume("small")["status"]["phase"], "Available");
  const Json created = CreateClaim("data", "manual", "1Gi");
  ASSERT_TRUE(binder_->Sync("pvc:default/data").ok());

  const Json pvc = Claim("data");
  EXPECT_EQ(pvc["spec"]["volumeName"], "small");
  EXPECT_EQ(AnnotationOf(pvc, kAnnBindCompleted), "yes");
  EXPECT_EQ(AnnotationOf(pvc, kAnnBoundByController), "yes");
  EXPECT_EQ(pvc["status"]["phase"], "Bound");
  EXPECT_EQ(pvc["status"]["capacity"]["storage"], "2Gi");
  EXPECT_EQ(pvc["status"]["accessModes"], Json::array({"ReadWriteOnce"}));
  const Json pv = Volume("small");
  EXPECT_EQ(pv["spec"]["claimRef"]["name"], "data");
  EXPECT_EQ(pv["spec"]["claimRef"]["uid"], created["metadata"]["uid"]);
  EXPECT_EQ(AnnotationOf(pv, kAnnBoundByController), "yes");
  EXPECT_EQ(pv["status"]["phase"], "Bound");
  EXPECT_EQ(Volume("big")["status"]["phase"], "Available");

  // The claim goes: its volume is Released and, reclaim policy Retain, kept.
  DeleteClaim("data");
  SettleVolume("small");
  ASSERT_TRUE(binder_->Sync("pv:small").ok());
  EXPECT_EQ(Volume("small")["status"]["phase"], "Released");
  EXPECT_EQ(Volume("small")["spec"]["claimRef"]["name"], "data");
  // Released volumes are not bound again.
  CreateClaim("again", "manual", "1Gi");
  ASSERT_TRUE(binder_->Sync("pvc:default/again").ok());
  EXPECT_EQ(Claim("again")["spec"]["volumeName"], "big");
}

TEST_F(PersistentVolumeControllerTest, ClaimNamingAVolumeAndVolumePreBoundToAClaim) {
  CreateClass("manual", "Immediate", "kubernetes.io/no-provisioner");
  CreateVolume("named", "5Gi", "Retain");
  CreateVolume("smallest", "1Gi", "Retain");
  // The user names the volume: it is taken even though a smaller one fits.
  Post("/api/v1/namespaces/default/persistentvolumeclaims",
       {{"metadata", {{"name", "pinned"}}},
        {"spec",
         {{"accessModes", {"ReadWriteOnce"}},
          {"storageClassName", "manual"},
          {"volumeName", "named"},
          {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}});
  SettleClaim("pinned");
  ASSERT_TRUE(binder_->Sync("pvc:default/pinned").ok());
  Json pv = Volume("named");
  EXPECT_EQ(pv["spec"]["claimRef"]["name"], "pinned");
  EXPECT_EQ(AnnotationOf(pv, kAnnBoundByController), "yes");
  Json pvc = Claim("pinned");
  EXPECT_EQ(pvc["status"]["phase"], "Bound");
  EXPECT_EQ(AnnotationOf(pvc, kAnnBindCompleted), "yes");
  EXPECT_FALSE(HasAnnotation(pvc, kAnnBoundByController));  // the user chose

  // A volume pre-bound to a claim by name waits for it, then binds without the annotation.
  auto r = rest_->Patch("/api/v1/persistentvolumes/smallest",
                        {{"spec", {{"claimRef", {{"namespace", "default"}, {"name", "later"}}}}}},
                        kMergePatch);
  ASSERT_TRUE(r.ok()) << r.error().message;
  CreateClaim("later", "manual", "1Gi");
  ASSERT_TRUE(binder_->Sync("pvc:default/later").ok());
  pv = Volume("smallest");
  EXPECT_EQ(pv["spec"]["claimRef"]["uid"], Claim("later")["metadata"]["uid"]);
  EXPECT_FALSE(HasAnnotation(pv, kAnnBoundByController));
  EXPECT_EQ(Claim("later")["status"]["phase"], "Bound");
}

TEST_F(PersistentVolumeControllerTest, StaticVolumeWithDeletePolicyFailsWhenReleased) {
  CreateClass("manual", "Immediate", "kubernetes.io/no-provisioner");
  CreateVolume("static", "1Gi", "Delete");
  CreateClaim("data", "manual", "1Gi");
  ASSERT_TRUE(binder_->Sync("pvc:default/data").ok());
  SettleVolume("static");
  DeleteClaim("data");
  ASSERT_TRUE(binder_->Sync("pv:static").ok());
  SettleVolume("static");
  ASSERT_TRUE(binder_->Sync("pv:static").ok());
  const Json pv = Volume("static");
  EXPECT_EQ(pv["status"]["phase"], "Failed");
  EXPECT_NE(StringAt(pv["status"], "message").find("no deletable volume plugin"),
            std::string::npos);
}

TEST_F(PersistentVolumeControllerTest, ClaimWithoutVolumeOrProvisionerStaysPending) {
  CreateClass("manual", "Immediate", "kubernetes.io/no-provisioner");
  CreateClaim("data", "manual", "1Gi");
  ASSERT_TRUE(binder_->Sync("pvc:default/data").ok());
  const Json pvc = Claim("data");
  EXPECT_EQ(pvc["status"]["phase"], "Pending");
  EXPECT_FALSE(HasAnnotation(pvc, kAnnStorageProvisioner));
  // The volume appears later: the volume's event makes the claim sync again.
  CreateVolume("late", "1Gi", "Retain");
  SettleClaim("data");
  ASSERT_TRUE(binder_->Sync("pvc:default/data").ok());
  EXPECT_EQ(Claim("data")["spec"]["volumeName"], "late");
}

TEST_F(PersistentVolumeControllerTest, WaitForFirstConsumerClaimIsProvisionedOnTheSelectedNode) {
  Post("/api/v1/nodes",
       {{"metadata",
         {{"name", "node-a"},
          {"labels",
           {{"kubernetes.io/hostname", "node-a"}, {"topology.kubernetes.io/zone", "zone-b"}}}}}});
  WaitFor([&] { return nodes_->Get("node-a").has_value(); });
  CreateClass("standard", "WaitForFirstConsumer", std::string(kBerthProvisioner));
  const Json created = CreateClaim("data", "standard", "3Gi");
  const std::string pv_name = "pvc-" + created["metadata"]["uid"].get<std::string>();

  // No pod yet: the claim waits, and the provisioner has not been handed it.
  ASSERT_TRUE(binder_->Sync("pvc:default/data").ok());
  ASSERT_TRUE(provisioner_->Sync("pvc:default/data").ok());
  EXPECT_EQ(Claim("data")["status"]["phase"], "Pending");
  EXPECT_FALSE(HasAnnotation(Claim("data"), kAnnStorageProvisioner));
  EXPECT_FALSE(rest_->Get("/api/v1/persistentvolumes/" + pv_name).ok());

  // The scheduler chose node-a (VolumeBinding's PreBind annotates the claim).
  auto r = rest_->Patch(
      "/api/v1/namespaces/default/persistentvolumeclaims/data",
      {{"metadata", {{"annotations", {{"volume.kubernetes.io/selected-node", "node-a"}}}}}},
      kMergePatch);
  ASSERT_TRUE(r.ok()) << r.error().message;
  SettleClaim("data");
  ASSERT_TRUE(binder_->Sync("pvc:default/data").ok());
  EXPECT_EQ(AnnotationOf(Claim("data"), kAnnStorageProvisioner), kBerthProvisioner);
  EXPECT_EQ(AnnotationOf(Claim("data"), kAnnBetaStorageProvisioner), kBerthProvisioner);
  SettleClaim("data");
  ASSERT_TRUE(provisioner_->Sync("pvc:default/data").ok());
  Json pv = Volume(pv_name);
  EXPECT_EQ(AnnotationOf(pv, kAnnProvisionedBy), kBerthProvisioner);
  EXPECT_EQ(pv["spec"]["capacity"]["storage"], "3Gi");
  EXPECT_EQ(pv["spec"]["persistentVolumeReclaimPolicy"], "Delete");
  EXPECT_EQ(pv["spec"]["storageClassName"], "standard");
  EXPECT_EQ(pv["spec"]["claimRef"]["uid"], created["metadata"]["uid"]);
  EXPECT_EQ(
      pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"],
      Json::parse(R"([{"key":"kubernetes.io/hostname","operator":"In","values":["node-a"]}])"));
  EXPECT_EQ(pv["metadata"]["labels"]["topology.kubernetes.io/zone"], "zone-b");
  // A second sync does not provision twice.
  SettleVolume(pv_name);
  ASSERT_TRUE(provisioner_->Sync("pvc:default/data").ok());

  // The binder completes the binding to the provisioned volume.
  ASSERT_TRUE(binder_->Sync("pvc:default/data").ok());
  const Json pvc = Claim("data");
  EXPECT_EQ(pvc["spec"]["volumeName"], pv_name);
  EXPECT_EQ(pvc["status"]["phase"], "Bound");
  EXPECT_EQ(Volume(pv_name)["status"]["phase"], "Bound");

  // What `kubectl describe pvc data` lists (the list is by name: compared sorted).
  std::vector<std::string> reasons;
  auto events = rest_->Get("/api/v1/namespaces/default/events");
  ASSERT_TRUE(events.ok());
  for (const Json& e : (*events)["items"]) {
    if (e["involvedObject"]["name"] == "data" &&
        e["involvedObject"]["kind"] == "PersistentVolumeClaim")
      reasons.push_back(e["reason"]);
  }
  std::sort(reasons.begin(), reasons.end());
  EXPECT_EQ(reasons, (std::vector<std::string>{"ExternalProvisioning", "Provisioning",
                                               "ProvisioningSucceeded", "WaitForFirstConsumer"}));

  // Deleted claim: Released, then deleted by the provisioner (reclaim policy Delete).
  DeleteClaim("data");
  SettleVolume(pv_name);
  ASSERT_TRUE(binder_->Sync("pv:" + pv_name).ok());
  EXPECT_EQ(Volume(pv_name)["status"]["phase"], "Released");
  SettleVolume(pv_name);
  ASSERT_TRUE(provisioner_->Sync("pv:" + pv_name).ok());
  auto gone = rest_->Get("/api/v1/persistentvolumes/" + pv_name);
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kNotFound);
}

TEST_F(PersistentVolumeControllerTest, ImmediateClaimOfTheBerthClassIsProvisionedAtOnce) {
  CreateClass("instant", "Immediate", std::string(kBerthProvisioner));
  const Json created = CreateClaim("data", "instant", "2Gi");
  const std::string pv_name = "pvc-" + created["metadata"]["uid"].get<std::string>();
  ASSERT_TRUE(binder_->Sync("pvc:default/data").ok());
  SettleClaim("data");
  ASSERT_TRUE(provisioner_->Sync("pvc:default/data").ok());
  const Json pv = Volume(pv_name);
  EXPECT_EQ(pv["spec"]["capacity"]["storage"], "2Gi");
  EXPECT_FALSE(pv["spec"].contains("nodeAffinity"));  // no node was chosen
  SettleVolume(pv_name);
  ASSERT_TRUE(binder_->Sync("pvc:default/data").ok());
  EXPECT_EQ(Claim("data")["spec"]["volumeName"], pv_name);
  EXPECT_EQ(Claim("data")["status"]["phase"], "Bound");
}

TEST_F(PersistentVolumeControllerTest, ClaimWhoseVolumeWentIsLost) {
  CreateClass("manual", "Immediate", "kubernetes.io/no-provisioner");
  CreateVolume("vanishing", "1Gi", "Retain");
  CreateClaim("data", "manual", "1Gi");
  ASSERT_TRUE(binder_->Sync("pvc:default/data").ok());
  ASSERT_TRUE(rest_->Delete("/api/v1/persistentvolumes/vanishing").ok());
  WaitFor([&] { return !volumes_->Get("vanishing").has_value(); });
  SettleClaim("data");
  ASSERT_TRUE(binder_->Sync("pvc:default/data").ok());
  EXPECT_EQ(Claim("data")["status"]["phase"], "Lost");
}

TEST_F(PersistentVolumeControllerTest, ClaimWithoutClassGetsTheDefaultClassCreatedLater) {
  Post("/api/v1/namespaces/default/persistentvolumeclaims",
       {{"metadata", {{"name", "early"}}},
        {"spec",
         {{"accessModes", {"ReadWriteOnce"}},
          {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}});
  CreateClaim("none", "", "1Gi");  // "" asks for no class: kept
  SettleClaim("early");
  ASSERT_TRUE(binder_->Sync("pvc:default/early").ok());
  EXPECT_FALSE(Claim("early")["spec"].contains("storageClassName"));  // no default yet
  Post("/apis/storage.k8s.io/v1/storageclasses",
       {{"metadata",
         {{"name", "standard"},
          {"annotations", {{"storageclass.kubernetes.io/is-default-class", "true"}}}}},
        {"provisioner", std::string(kBerthProvisioner)},
        {"volumeBindingMode", "WaitForFirstConsumer"}});
  WaitFor([&] { return classes_->Get("standard").has_value(); });
  ASSERT_TRUE(binder_->Sync("pvc:default/early").ok());
  ASSERT_TRUE(binder_->Sync("pvc:default/none").ok());
  EXPECT_EQ(Claim("early")["spec"]["storageClassName"], "standard");
  EXPECT_EQ(Claim("none")["spec"]["storageClassName"], "");
}

TEST(ProvisionedVolumeTest, AllowedTopologiesPinTheVolumeToTheNodesZone) {
  const Json pvc = Json::parse(R"({"metadata":{"name":"d","namespace":"ns","uid":"u1"},
      "spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}})");
  const Json node = Json::parse(R"({"metadata":{"name":"n1","labels":{
      "kubernetes.io/hostname":"n1","topology.kubernetes.io/zone":"zone-c"}}})");
  const Json sc = Json::parse(R"({"metadata":{"name":"zonal"},"provisioner":"berth.dev/local",
      "reclaimPolicy":"Retain","allowedTopologies":[{"matchLabelExpressions":[
      {"key":"topology.kubernetes.io/zone","values":["zone-a","zone-c"]}]}]})");
  auto pv = ProvisionedVolume(pvc, sc, &node);
  ASSERT_TRUE(pv.ok()) << pv.error().message;
  EXPECT_EQ((*pv)["metadata"]["name"], "pvc-u1");
  EXPECT_EQ((*pv)["spec"]["persistentVolumeReclaimPolicy"], "Retain");
  EXPECT_EQ((*pv)["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"],
            Json::parse(
                R"([{"key":"topology.kubernetes.io/zone","operator":"In","values":["zone-c"]}])"));

  // A node without the label the class names cannot hold the volume.
  const Json bare = Json::parse(R"({"metadata":{"name":"n2"}})");
  EXPECT_FALSE(ProvisionedVolume(pvc, sc, &bare).ok());
  Json selective = pvc;
  selective["spec"]["selector"] = {{"matchLabels", {{"tier", "gold"}}}};
  EXPECT_FALSE(ProvisionedVolume(selective, sc, &node).ok());
  // No node (an Immediate class): no affinity.
  auto anywhere = ProvisionedVolume(pvc, sc, nullptr);
  ASSERT_TRUE(anywhere.ok());
  EXPECT_FALSE((*anywhere)["spec"].contains("nodeAffinity"));
}

}  // namespace
}  // namespace berth::controllers
