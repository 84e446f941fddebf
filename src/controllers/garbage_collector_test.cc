// The garbage collector against the embedded API server, through informers and the REST client.
// Syncs are driven by the test (Sync(key)), after waiting for the informers to show what the
// previous step wrote, so nothing depends on timing.
#include "controllers/garbage_collector.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <thread>

#include "apiserver/server.h"
#include "client/api_server_test_util.h"
#include "controllers/controller_test_util.h"

namespace berth::controllers {
namespace {

constexpr size_t kConfigMaps = 0;
constexpr size_t kSecrets = 1;

class GarbageCollectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.Start("berth-gc-test");
    if (HasFatalFailure()) return;
    rest_ = api_.rest();
    std::vector<GcResource> resources = {{"", "ConfigMap", "configmaps"},
                                         {"", "Secret", "secrets"}};
    for (const auto& r : resources) {
      informers_.push_back(
          std::make_unique<SharedInformer>(rest_, r.CollectionPath(), r.kind, nullptr));
    }
    gc_ = std::make_unique<GarbageCollector>(
        resources, std::vector<SharedInformer*>{informers_[0].get(), informers_[1].get()}, rest_,
        ControllerOptions{&clock_, 1, nullptr});
    for (auto& i : informers_) i->Start();
    WaitFor([&] { return informers_[0]->HasSynced() && informers_[1]->HasSynced(); });
  }
  void TearDown() override {
    for (auto& i : informers_) i->Stop();
    gc_.reset();
    api_.Stop();
  }
  std::string Path(size_t index, const std::string& name) {
    return index == kConfigMaps ? "/api/v1/namespaces/default/configmaps/" + name
                                : "/api/v1/namespaces/default/secrets/" + name;
  }
  Json Create(size_t index, const std::string& name, Json owner_refs = Json::array()) {
    Json obj = {{"apiVersion", "v1"},
                {"kind", index == kConfigMaps ? "ConfigMap" : "Secret"},
                {"metadata", {{"name", name}, {"namespace", "default"}}}};
    if (!owner_refs.empty()) obj["metadata"]["ownerReferences"] = owner_refs;
    auto r = rest_->Post(index == kConfigMaps ? "/api/v1/namespaces/default/configmaps"
                                              : "/api/v1/namespaces/default/secrets",
                         obj);
    EXPECT_TRUE(r.ok()) << r.error().message;
    const Json created = r.ok() ? *r : Json::object();
    WaitFor([&] { return Cached(index, name) != nullptr; });
    return created;
  }
  static Json RefTo(const Json& owner, bool block = false) {
    Json ref = {{"apiVersion", "v1"},
                {"kind", owner["kind"]},
                {"name", owner["metadata"]["name"]},
                {"uid", owner["metadata"]["uid"]}};
    if (block) ref["blockOwnerDeletion"] = true;
    return ref;
  }
  std::unique_ptr<Json> Cached(size_t index, const std::string& name) {
    auto o = informers_[index]->Get("default/" + name);
    return o ? std::make_unique<Json>(DocOf(*o)) : nullptr;
  }
  bool Exists(size_t index, const std::string& name) { return rest_->Get(Path(index, name)).ok(); }
  void Sync(size_t index, const std::string& name) {
    auto ok = gc_->Sync(std::to_string(index) + "|default/" + name);
    ASSERT_TRUE(ok.ok()) << ok.error().message;
  }

  TestApiServer api_;
  client::RestClient* rest_ = nullptr;
  std::vector<std::unique_ptr<SharedInformer>> informers_;
  std::unique_ptr<GarbageCollector> gc_;
  FakeClock clock_{TimePoint(std::chrono::seconds(1'700'000'000))};
};

TEST_F(GarbageCollectorTest, DeletesDependentOfAbsentOwner) {
  Json owner = Create(kConfigMaps, "owner");
  Create(kSecrets, "orphaned",
         Json::array({{{"apiVersion", "v1"},
                       {"kind", "ConfigMap"},
                       {"name", "gone"},
                       {"uid", "00000000-0000-0000-0000-000000000000"}}}));
  Create(kSecrets, "owned", Json::array({RefTo(owner)}));
  Sync(kSecrets, "orphaned");
  Sync(kSecrets, "owned");
  EXPECT_FALSE(Exists(kSecrets, "orphaned"));
  EXPECT_TRUE(Exists(kSecrets, "owned"));
}

// The server's count of GETs of one ConfigMap answered 404 (its request metrics).
int64_t MissingConfigMapGets(apiserver::Server& server) {
  std::istringstream metrics(server.Metrics());
  for (std::string line; std::getline(metrics, line);) {
    if (line.rfind("apiserver_request_total{", 0) == 0 &&
        line.find("verb=\"GET\"") != std::string::npos &&
        line.find("resource=\"configmaps\"") != std::string::npos &&
        line.find("code=\"404\"") != std::string::npos) {
      return std::stoll(line.substr(line.rfind(' ') + 1));
    }
  }
  return 0;
}

TEST_F(GarbageCollectorTest, AnOwnerConfirmedAbsentIsNotAskedForAgain) {
  const Json gone = Json::array({{{"apiVersion", "v1"},
                                  {"kind", "ConfigMap"},
                                  {"name", "gone"},
                                  {"uid", "22222222-2222-2222-2222-222222222222"}}});
  for (int i = 0; i < 5; ++i) Create(kSecrets, "dependent-" + std::to_string(i), gone);
  const int64_t before = MissingConfigMapGets(api_.server());
  for (int i = 0; i < 5; ++i) Sync(kSecrets, "dependent-" + std::to_string(i));
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(Exists(kSecrets, "dependent-" + std::to_string(i)));
  EXPECT_EQ(MissingConfigMapGets(api_.server()) - before, 1);
}

TEST_F(GarbageCollectorTest, OwnerWithAnotherUidCountsAsAbsent) {
  Json owner = Create(kConfigMaps, "owner");
  Json ref = RefTo(owner);
  ref["uid"] = "11111111-1111-1111-1111-111111111111";
  Create(kSecrets, "stale", Json::array({ref}));
  Sync(kSecrets, "stale");
  EXPECT_FALSE(Exists(kSecrets, "stale"));
}

TEST_F(GarbageCollectorTest, KeepsReferencesToSolidOwnersAndDropsAbsentOnes) {
  Json owner = Create(kConfigMaps, "owner");
  Json gone = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"name", "gone"}, {"uid", "x-1"}};
  Create(kSecrets, "shared", Json::array({RefTo(owner), gone}));
  Sync(kSecrets, "shared");
  auto now = rest_->Get(Path(kSecrets, "shared"));
  ASSERT_TRUE(now.ok());
  ASSERT_EQ((*now)["metadata"]["ownerReferences"].size(), 1u);
  EXPECT_EQ((*now)["metadata"]["ownerReferences"][0]["name"], "owner");
}

TEST_F(GarbageCollectorTest, BackgroundDeletionCollectsDependents) {
  Json owner = Create(kConfigMaps, "owner");
  Create(kSecrets, "dep", Json::array({RefTo(owner)}));
  ASSERT_TRUE(
      rest_->Delete(Path(kConfigMaps, "owner"), {{"propagationPolicy", "Background"}}).ok());
  EXPECT_FALSE(Exists(kConfigMaps, "owner"));
  WaitFor([&] { return Cached(kConfigMaps, "owner") == nullptr; });
  Sync(kSecrets, "dep");
  EXPECT_FALSE(Exists(kSecrets, "dep"));
}

TEST_F(GarbageCollectorTest, OrphanDeletionReleasesDependents) {
  Json owner = Create(kConfigMaps, "owner");
  Json other = Create(kConfigMaps, "other");
  Create(kSecrets, "dep", Json::array({RefTo(owner), RefTo(other)}));
  ASSERT_TRUE(rest_->Delete(Path(kConfigMaps, "owner"), {{"propagationPolicy", "Orphan"}}).ok());
  // The API server holds the owner with the `orphan` finalizer.
  auto held = rest_->Get(Path(kConfigMaps, "owner"));
  ASSERT_TRUE(held.ok());
  EXPECT_TRUE((*held)["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ((*held)["metadata"]["finalizers"], Json::array({"orphan"}));
  WaitFor([&] { return HasDeletionTimestamp(*Cached(kConfigMaps, "owner")); });
  Sync(kConfigMaps, "owner");
  EXPECT_FALSE(Exists(kConfigMaps, "owner"));
  auto dep = rest_->Get(Path(kSecrets, "dep"));
  ASSERT_TRUE(dep.ok());
  ASSERT_EQ((*dep)["metadata"]["ownerReferences"].size(), 1u);
  EXPECT_EQ((*dep)["metadata"]["ownerReferences"][0]["name"], "other");
}

TEST_F(GarbageCollectorTest, ForegroundDeletionWaitsForBlockingDependents) {
  Json owner = Create(kConfigMaps, "owner");
  Create(kSecrets, "blocking", Json::array({RefTo(owner, true)}));
  ASSERT_TRUE(
      rest_->Delete(Path(kConfigMaps, "owner"), {{"propagationPolicy", "Foreground"}}).ok());
  auto held = rest_->Get(Path(kConfigMaps, "owner"));
  ASSERT_TRUE(held.ok());
  EXPECT_EQ((*held)["metadata"]["finalizers"], Json::array({"foregroundDeletion"}));
  WaitFor([&] { return HasDeletionTimestamp(*Cached(kConfigMaps, "owner")); });
  Sync(kConfigMaps, "owner");
  // The dependent goes first; the owner stays until the collector sees it gone.
  EXPECT_FALSE(Exists(kSecrets, "blocking"));
  EXPECT_TRUE(Exists(kConfigMaps, "owner"));
  WaitFor([&] { return Cached(kSecrets, "blocking") == nullptr; });
  Sync(kConfigMaps, "owner");
  EXPECT_FALSE(Exists(kConfigMaps, "owner"));
}

TEST_F(GarbageCollectorTest, DependentOfForegroundOwnerIsDeleted) {
  Json owner = Create(kConfigMaps, "owner");
  Create(kSecrets, "dep", Json::array({RefTo(owner, true)}));
  ASSERT_TRUE(
      rest_->Delete(Path(kConfigMaps, "owner"), {{"propagationPolicy", "Foreground"}}).ok());
  WaitFor([&] { return HasDeletionTimestamp(*Cached(kConfigMaps, "owner")); });
  Sync(kSecrets, "dep");
  EXPECT_FALSE(Exists(kSecrets, "dep"));
}

TEST_F(GarbageCollectorTest, ApiServerRejectsUnknownPolicyAndBothFields) {
  Create(kConfigMaps, "owner");
  auto bad = rest_->Delete(Path(kConfigMaps, "owner"), {{"propagationPolicy", "Sideways"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalid);
  auto both = rest_->Delete(Path(kConfigMaps, "owner"),
                            {{"propagationPolicy", "Orphan"}, {"orphanDependents", false}});
  ASSERT_FALSE(both.ok());
  EXPECT_TRUE(Exists(kConfigMaps, "owner"));
  // orphanDependents: true is the older spelling of Orphan.
  ASSERT_TRUE(rest_->Delete(Path(kConfigMaps, "owner"), {{"orphanDependents", true}}).ok());
  auto held = rest_->Get(Path(kConfigMaps, "owner"));
  ASSERT_TRUE(held.ok());
  EXPECT_EQ((*held)["metadata"]["finalizers"], Json::array({"orphan"}));
}

}  // namespace
}  // namespace berth::controllers
