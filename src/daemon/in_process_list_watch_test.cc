#include "daemon/in_process_list_watch.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "apiserver/resources.h"

namespace berth::daemon {
namespace {

using Json = nlohmann::json;
using Event = client::LocalListWatch::Event;

class InProcessListWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    apiserver::StoreOptions so;
    so.event_window = 8;
    auto store = apiserver::Store::Open(so);
    ASSERT_TRUE(store.ok());
    store_ = std::move(store).value();
    for (const char* ns : {"other"}) {  // "default" exists from the start
      auto created = store_->Create(
          *namespaces_, "",
          {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}}, false);
      ASSERT_TRUE(created.ok()) << created.error().message;
    }
  }
  apiserver::StoredObject CreatePod(const std::string& ns, const std::string& name) {
    auto so = store_->Create(*pods_, ns,
                             {{"apiVersion", "v1"},
                              {"kind", "Pod"},
                              {"metadata", {{"name", name}}},
                              {"spec", {{"containers", {{{"name", "c"}, {"image", "i"}}}}}}},
                             false);
    EXPECT_TRUE(so.ok());
    return so.ok() ? *so : apiserver::StoredObject{};
  }
  Result<apiserver::StoredObject> Label(const std::string& ns, const std::string& name,
                                        const std::string& value = "yes") {
    return store_->Mutate(
        *pods_, ns, name,
        [&](const Json* current) -> Result<Json> {
          Json next = *current;
          next["metadata"]["labels"]["touched"] = value;
          return next;
        },
        false, false);
  }

  const apiserver::ResourceInfo* pods_ = apiserver::FindResource("", "v1", "pods");
  const apiserver::ResourceInfo* namespaces_ = apiserver::FindResource("", "v1", "namespaces");
  std::unique_ptr<apiserver::Store> store_;
};

TEST_F(InProcessListWatchTest, ServesCollectionsOfBuiltInResourcesOnly) {
  InProcessListWatch local(*store_);
  for (const char* path : {"/api/v1/pods", "/api/v1/nodes", "/api/v1/namespaces/default/pods",
                           "/apis/apps/v1/replicasets", "/apis/coordination.k8s.io/v1/leases",
                           "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"})
    EXPECT_TRUE(local.Serves(path)) << path;
  for (const char* path :
       {"/api/v1/pods?fieldSelector=spec.nodeName%3Dn1", "/api/v1/pods/", "/api/v1//pods",
        "/api/v1/namespaces/default", "/api/v1/namespaces/default/pods/p",
        "/api/v1/namespaces/default/nodes", "/api/v1/bindings", "/api/v1/nosuchthings",
        "/apis/scheduling.x-k8s.io/v1alpha1/podgroups", "/version", "", "pods"})
    EXPECT_FALSE(local.Serves(path)) << path;
  auto refused = local.List("/api/v1/pods?limit=1");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kNotFound);
}

// A list hands out the stored documents themselves, of one namespace or all, at the store's
// revision.
TEST_F(InProcessListWatchTest, ListsShareTheStoredDocuments) {
  CreatePod("default", "a");
  CreatePod("other", "b");
  InProcessListWatch local(*store_);
  auto all = local.List("/api/v1/pods");
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->items.size(), 2u);
  EXPECT_EQ(all->resource_version, std::to_string(store_->revision()));
  auto stored = store_->Get(*pods_, "default", "a");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(all->items[0], stored->object);  // the same tree, not a copy
  auto one = local.List("/api/v1/namespaces/other/pods");
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->items.size(), 1u);
  EXPECT_EQ((*one->items[0])["metadata"]["name"], "b");
  EXPECT_EQ((*one->items[0])["kind"], "Pod");
}

// A watch delivers the changes after the revision asked for, with each version's revision;
// one older than the store's history is Gone; a sink that refuses ends the watch.
TEST_F(InProcessListWatchTest, WatchDeliversChangesAfterARevisionOrGone) {
  CreatePod("default", "a");
  const std::string from = std::to_string(store_->revision());
  InProcessListWatch local(*store_);
  std::mutex mu;
  std::vector<Event> events;
  auto watch = local.Watch("/api/v1/namespaces/default/pods", from, [&](Event e) {
    std::lock_guard lock(mu);
    events.push_back(std::move(e));
    return events.size() < 3;
  });
  ASSERT_TRUE(watch.ok());
  CreatePod("other", "elsewhere");  // another namespace: not delivered
  CreatePod("default", "b");
  auto labelled = Label("default", "a");
  ASSERT_TRUE(labelled.ok());
  ASSERT_TRUE(store_->Delete(*pods_, "default", "b", {}, false).ok());
  CreatePod("default", "after-refusal");
  {
    std::lock_guard lock(mu);
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events[0].type, Event::Type::kAdded);
    EXPECT_EQ((*events[0].object)["metadata"]["name"], "b");
    EXPECT_EQ(events[1].type, Event::Type::kModified);
    EXPECT_EQ(events[1].object, labelled->object);
    EXPECT_EQ(events[1].resource_version, std::to_string(labelled->rv));
    EXPECT_EQ(events[2].type, Event::Type::kDeleted);
  }
  watch->reset();
  // Watchers of one change share its decode; a deletion has none.
  std::vector<Event> first, second;
  auto keep = [&](std::vector<Event>* into) {
    return [&mu, into](Event e) {
      std::lock_guard lock(mu);
      into->push_back(std::move(e));
      return true;
    };
  };
  auto w1 = local.Watch("/api/v1/pods", "", keep(&first));
  auto w2 = local.Watch("/api/v1/namespaces/default/pods", "", keep(&second));
  ASSERT_TRUE(w1.ok() && w2.ok());
  {
    std::lock_guard lock(mu);
    first.clear();  // the synthetic ADDED events of a watch from no revision
    second.clear();
  }
  ASSERT_TRUE(Label("default", "a", "again").ok());
  ASSERT_TRUE(store_->Delete(*pods_, "default", "after-refusal", {}, false).ok());
  {
    std::lock_guard lock(mu);
    ASSERT_EQ(first.size(), 2u);
    ASSERT_EQ(second.size(), 2u);
    ASSERT_NE(first[0].decoded, nullptr);
    EXPECT_EQ(first[0].decoded, second[0].decoded);
    EXPECT_EQ(first[0].decoded->document(), first[0].object);
    auto decoded = first[0].decoded->Get("pod");
    ASSERT_TRUE(decoded.ok());
    EXPECT_EQ(std::get<std::shared_ptr<const Pod>>(*decoded)->metadata.labels.at("touched"),
              "again");
    EXPECT_EQ(first[1].decoded, nullptr);
  }
  w1->reset();
  w2->reset();
  // The history keeps 8 events: the first revision is gone by now.
  for (int i = 0; i < 10; ++i) CreatePod("default", "p" + std::to_string(i));
  auto gone = local.Watch("/api/v1/pods", "1", [](Event) { return true; });
  ASSERT_FALSE(gone.ok());
  EXPECT_EQ(gone.error().code, ErrorCode::kGone);
  auto bad = local.Watch("/api/v1/pods", "12x", [](Event) { return true; });
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kBadRequest);
}

}  // namespace
}  // namespace berth::daemon
