#include "apiserver/namespace_deleter.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "api/codec.h"
#include "apiserver/crd_registry.h"
#include "apiserver/pod_deletion.h"
#include "apiserver/resources.h"
#include "apiserver/store.h"
#include "berth/framework/clock.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

const ResourceInfo& Namespaces() { return *FindResource("", "v1", "namespaces"); }
const ResourceInfo& ConfigMaps() { return *FindResource("", "v1", "configmaps"); }
const ResourceInfo& Pods() { return *FindResource("", "v1", "pods"); }

Json NamespaceDoc(const std::string& name, Json finalizers = Json::array({"kubernetes"})) {
  Json doc = {{"metadata", {{"name", name}}}, {"status", {{"phase", "Active"}}}};
  if (!finalizers.is_null()) doc["spec"]["finalizers"] = std::move(finalizers);
  return doc;
}

Json ConfigMapDoc(const std::string& name, Json finalizers = nullptr) {
  Json doc = {{"metadata", {{"name", name}}}, {"data", {{"k", "v"}}}};
  if (!finalizers.is_null()) doc["metadata"]["finalizers"] = std::move(finalizers);
  return doc;
}

NamespaceDeleterOptions Batch(size_t objects) {
  NamespaceDeleterOptions options;
  options.batch = objects;
  return options;
}

std::unique_ptr<Store> MemoryStore() {
  auto s = Store::Open({});
  EXPECT_TRUE(s.ok());
  return std::move(s).value();
}

size_t CountIn(Store& store, const ResourceInfo& r, const std::string& ns) {
  auto list = store.List(r, ns, nullptr, 0, "");
  EXPECT_TRUE(list.ok());
  return list.ok() ? list->items.size() : 0;
}

void Fill(Store& store, const std::string& ns, int configmaps) {
  ASSERT_TRUE(store.Create(Namespaces(), "", NamespaceDoc(ns), false).ok());
  for (int i = 0; i < configmaps; ++i) {
    ASSERT_TRUE(
        store.Create(ConfigMaps(), ns, ConfigMapDoc("cm-" + std::to_string(i)), false).ok());
  }
}

const Json* ConditionOf(const Json& ns, const std::string& type) {
  for (const Json& c : ns["status"]["conditions"]) {
    if (c["type"] == type) return &c;
  }
  return nullptr;
}

TEST(NamespaceDeleterTest, DeleteMarksTheNamespaceTerminatingAndRefusesNewContent) {
  auto store = MemoryStore();
  Fill(*store, "team", 3);
  auto marked = store->Delete(Namespaces(), "", "team", {}, false);
  ASSERT_TRUE(marked.ok());
  EXPECT_TRUE((*marked->object)["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ((*marked->object)["status"]["phase"], "Terminating");
  EXPECT_EQ((*marked->object)["spec"]["finalizers"], Json::array({"kubernetes"}));
  // Still there, content and all, until the deleter has run; a second delete changes nothing.
  auto again = store->Delete(Namespaces(), "", "team", {}, false);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->rv, marked->rv);
  EXPECT_EQ(CountIn(*store, ConfigMaps(), "team"), 3u);
  auto refused = store->Create(ConfigMaps(), "team", ConfigMapDoc("late"), false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kForbidden);
  EXPECT_EQ(refused.error().message,
            "configmaps \"late\" is forbidden: unable to create new content in namespace team "
            "because it is being terminated");
  auto cause = NamespaceTerminatingCause(refused.error());
  ASSERT_TRUE(cause.has_value());
  EXPECT_EQ((*cause)["reason"], "NamespaceTerminating");
  EXPECT_EQ((*cause)["message"], "namespace team is being terminated");
  EXPECT_EQ((*cause)["field"], "metadata.namespace");
  EXPECT_FALSE(NamespaceTerminatingCause(Error{"x", ErrorCode::kForbidden}).has_value());
  // The namespace comes from the error's data: the same code and words made elsewhere carry
  // none.
  EXPECT_FALSE(
      NamespaceTerminatingCause(Error{refused.error().message, refused.error().code}).has_value());
  // Updates of what is there go on (a controller removing its finalizers needs them).
  EXPECT_TRUE(store
                  ->Mutate(
                      ConfigMaps(), "team", "cm-0",
                      [](const Json* current) -> Result<Json> {
                        Json next = *current;
                        next["data"]["k"] = "w";
                        return next;
                      },
                      false, false)
                  .ok());
}

TEST(NamespaceDeleterTest, SyncDeletesEveryObjectAsADeleteWouldThenTheNamespace) {
  auto store = MemoryStore();
  Fill(*store, "team", 1201);
  ASSERT_TRUE(
      store
          ->Create(Pods(), "team",
                   {{"metadata", {{"name", "p"}}}, {"spec", {{"containers", {{{"name", "c"}}}}}}},
                   false)
          .ok());
  Fill(*store, "other", 2);
  std::vector<std::string> deleted;
  auto watch = store->Watch(ConfigMaps(), "", std::nullopt, nullptr, [&](const WatchEvent& ev) {
    if (ev.type == WatchEventType::kDeleted) {
      deleted.push_back((*ev.object.object)["metadata"]["name"]);
    }
    return true;
  });
  ASSERT_TRUE(watch.ok());
  const int64_t before = store->revision();
  ASSERT_TRUE(store->Delete(Namespaces(), "", "team", {}, false).ok());
  NamespaceDeleter deleter(*store, Batch(500));
  auto pass = deleter.Sync("team");
  ASSERT_TRUE(pass.ok()) << pass.error().message;
  EXPECT_EQ(pass->state, NamespaceSync::State::kGone);
  EXPECT_EQ(pass->deleted, 1202);
  EXPECT_EQ(pass->remaining, 0);
  EXPECT_EQ(deleted.size(), 1201u);
  EXPECT_EQ(store->Get(Namespaces(), "", "team").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(CountIn(*store, ConfigMaps(), "team"), 0u);
  EXPECT_EQ(CountIn(*store, Pods(), "team"), 0u);
  EXPECT_EQ(CountIn(*store, ConfigMaps(), "other"), 2u);
  // One revision per object, one for the mark, one for the conditions saying nothing is left,
  // one for the namespace's removal.
  EXPECT_EQ(store->revision(), before + 1202 + 3);
  // Created again, the namespace is empty.
  ASSERT_TRUE(store->Create(Namespaces(), "", NamespaceDoc("team"), false).ok());
  EXPECT_EQ(CountIn(*store, ConfigMaps(), "team"), 0u);
  // A namespace not being deleted is left alone.
  auto active = deleter.Sync("other");
  ASSERT_TRUE(active.ok());
  EXPECT_EQ(active->state, NamespaceSync::State::kNotTerminating);
  EXPECT_EQ(CountIn(*store, ConfigMaps(), "other"), 2u);
}

TEST(NamespaceDeleterTest, ObjectsWithFinalizersHoldTheNamespaceAndItsConditionsSaySo) {
  auto store = MemoryStore();
  Fill(*store, "team", 2);
  ASSERT_TRUE(
      store->Create(ConfigMaps(), "team", ConfigMapDoc("held", {"example.com/keep"}), false).ok());
  ASSERT_TRUE(store->Delete(Namespaces(), "", "team", {}, false).ok());
  NamespaceDeleter deleter(*store);
  auto pass = deleter.Sync("team");
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->state, NamespaceSync::State::kContentRemaining);
  EXPECT_EQ(pass->deleted, 3);
  EXPECT_EQ(pass->remaining, 1);
  auto held = store->Get(ConfigMaps(), "team", "held");
  ASSERT_TRUE(held.ok());
  EXPECT_TRUE((*held->object)["metadata"].contains("deletionTimestamp"));
  auto ns = store->Get(Namespaces(), "", "team");
  ASSERT_TRUE(ns.ok());
  const Json* content = ConditionOf(*ns->object, "NamespaceContentRemaining");
  ASSERT_NE(content, nullptr);
  EXPECT_EQ((*content)["status"], "True");
  EXPECT_EQ((*content)["reason"], "SomeResourcesRemain");
  EXPECT_EQ((*content)["message"],
            "Some resources are remaining: configmaps. has 1 resource instances");
  const Json* finalizers = ConditionOf(*ns->object, "NamespaceFinalizersRemaining");
  ASSERT_NE(finalizers, nullptr);
  EXPECT_EQ((*finalizers)["reason"], "SomeFinalizersRemain");
  EXPECT_EQ((*finalizers)["message"],
            "Some content in the namespace has finalizers remaining: example.com/keep in 1 "
            "resource instances");
  for (const char* type :
       {"NamespaceDeletionDiscoveryFailure", "NamespaceDeletionGroupVersionParsingFailure",
        "NamespaceDeletionContentFailure"}) {
    const Json* ok = ConditionOf(*ns->object, type);
    ASSERT_NE(ok, nullptr) << type;
    EXPECT_EQ((*ok)["status"], "False") << type;
  }
  EXPECT_EQ(ConditionOf(*ns->object, "NamespaceDeletionContentFailure")->at("reason"),
            "ContentDeleted");
  // A second pass finds nothing new: no write.
  const int64_t rv = store->revision();
  ASSERT_EQ(deleter.Sync("team")->state, NamespaceSync::State::kContentRemaining);
  EXPECT_EQ(store->revision(), rv);
  // The finalizer's owner lets go: the object goes, then the namespace.
  ASSERT_TRUE(store
                  ->Mutate(
                      ConfigMaps(), "team", "held",
                      [](const Json* current) -> Result<Json> {
                        Json next = *current;
                        next["metadata"].erase("finalizers");
                        return next;
                      },
                      false, false)
                  .ok());
  ASSERT_EQ(deleter.Sync("team")->state, NamespaceSync::State::kGone);
  EXPECT_EQ(store->Get(Namespaces(), "", "team").error().code, ErrorCode::kNotFound);
}

TEST(NamespaceDeleterTest, OtherSpecFinalizersKeepTheEmptiedNamespaceUntilFinalized) {
  auto store = MemoryStore();
  ASSERT_TRUE(store
                  ->Create(Namespaces(), "",
                           NamespaceDoc("team", {"kubernetes", "example.com/cleanup"}), false)
                  .ok());
  ASSERT_TRUE(store->Create(ConfigMaps(), "team", ConfigMapDoc("a"), false).ok());
  ASSERT_TRUE(store->Delete(Namespaces(), "", "team", {}, false).ok());
  NamespaceDeleter deleter(*store);
  auto pass = deleter.Sync("team");
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->state, NamespaceSync::State::kHeldByOthers);
  auto ns = store->Get(Namespaces(), "", "team");
  ASSERT_TRUE(ns.ok());
  EXPECT_EQ((*ns->object)["spec"]["finalizers"], Json::array({"example.com/cleanup"}));
  EXPECT_EQ(CountIn(*store, ConfigMaps(), "team"), 0u);
  // A delete now changes nothing; the `finalize` write that removes the last one removes it.
  EXPECT_EQ(store->Delete(Namespaces(), "", "team", {}, false)->rv, ns->rv);
  auto finalized = store->Mutate(
      Namespaces(), "", "team",
      [](const Json* current) -> Result<Json> {
        Json next = *current;
        next["spec"]["finalizers"] = Json::array();
        return next;
      },
      false, false);
  ASSERT_TRUE(finalized.ok());
  EXPECT_EQ(store->Get(Namespaces(), "", "team").error().code, ErrorCode::kNotFound);
}

TEST(NamespaceDeleterTest, ANamespaceWithoutFinalizersIsRemovedOnceEmptied) {
  // Namespaces stored before the `kubernetes` finalizer was set on creation have none.
  auto store = MemoryStore();
  ASSERT_TRUE(store->Create(Namespaces(), "", NamespaceDoc("old", nullptr), false).ok());
  ASSERT_TRUE(store->Create(ConfigMaps(), "old", ConfigMapDoc("a"), false).ok());
  ASSERT_TRUE(
      store->Create(ConfigMaps(), "old", ConfigMapDoc("held", {"example.com/keep"}), false).ok());
  ASSERT_TRUE(store->Delete(Namespaces(), "", "old", {}, false).ok());
  EXPECT_TRUE(store->Get(Namespaces(), "", "old").ok());
  NamespaceDeleter deleter(*store);
  ASSERT_EQ(deleter.Sync("old")->state, NamespaceSync::State::kContentRemaining);
  EXPECT_TRUE(store->Get(Namespaces(), "", "old").ok());
  ASSERT_TRUE(store
                  ->Mutate(
                      ConfigMaps(), "old", "held",
                      [](const Json* current) -> Result<Json> {
                        Json next = *current;
                        next["metadata"].erase("finalizers");
                        return next;
                      },
                      false, false)
                  .ok());
  ASSERT_EQ(deleter.Sync("old")->state, NamespaceSync::State::kGone);
  EXPECT_EQ(store->Get(Namespaces(), "", "old").error().code, ErrorCode::kNotFound);
}

TEST(NamespaceDeleterTest, RemovingTheNamespaceEarlyTakesItsContentAlong) {
  // The `finalize` subresource removes the deleter's finalizer before the content is gone: the
  // namespace goes, and what it still held goes with it rather than outlive it.
  auto store = MemoryStore();
  Fill(*store, "team", 5);
  ASSERT_TRUE(
      store->Create(ConfigMaps(), "team", ConfigMapDoc("held", {"example.com/keep"}), false).ok());
  ASSERT_TRUE(store->Delete(Namespaces(), "", "team", {}, false).ok());
  int deleted_events = 0;
  auto watch = store->Watch(ConfigMaps(), "team", std::nullopt, nullptr, [&](const WatchEvent& ev) {
    deleted_events += ev.type == WatchEventType::kDeleted;
    return true;
  });
  ASSERT_TRUE(watch.ok());
  ASSERT_TRUE(store
                  ->Mutate(
                      Namespaces(), "", "team",
                      [](const Json* current) -> Result<Json> {
                        Json next = *current;
                        next["spec"].erase("finalizers");
                        return next;
                      },
                      false, false)
                  .ok());
  EXPECT_EQ(store->Get(Namespaces(), "", "team").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(deleted_events, 6);
  ASSERT_TRUE(store->Create(Namespaces(), "", NamespaceDoc("team"), false).ok());
  EXPECT_EQ(CountIn(*store, ConfigMaps(), "team"), 0u);
}

TEST(NamespaceDeleterTest, TheThreadFinishesDeletionsFoundAtStartAndLaterOnes) {
  auto store = MemoryStore();
  Fill(*store, "left-over", 20);
  Fill(*store, "later", 20);
  // Marked before the deleter runs: a deletion a previous run did not finish.
  ASSERT_TRUE(store->Delete(Namespaces(), "", "left-over", {}, false).ok());
  NamespaceDeleter deleter(*store, Batch(7));
  ASSERT_TRUE(deleter.Start().ok());
  ASSERT_TRUE(deleter.WaitIdle(std::chrono::seconds(30)));
  EXPECT_EQ(store->Get(Namespaces(), "", "left-over").error().code, ErrorCode::kNotFound);
  EXPECT_TRUE(store->Get(Namespaces(), "", "later").ok());
  // The watch queues the namespace while the store publishes its mark, before Delete returns.
  ASSERT_TRUE(store->Delete(Namespaces(), "", "later", {}, false).ok());
  ASSERT_TRUE(deleter.WaitIdle(std::chrono::seconds(30)));
  EXPECT_EQ(store->Get(Namespaces(), "", "later").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(CountIn(*store, ConfigMaps(), "later"), 0u);
  deleter.Stop();
}

TEST(NamespaceDeleterTest, AnUpdateKeepsTheFinalizersAndOnlyFinalizeChangesThem) {
  const Json current = {{"metadata", {{"name", "team"}}},
                        {"spec", {{"finalizers", {"kubernetes"}}}},
                        {"status", {{"phase", "Active"}}}};
  Json next = current;
  next["spec"]["finalizers"] = Json::array();
  next["metadata"]["labels"]["a"] = "b";
  Json updated = PrepareNamespaceUpdate("", current, next);
  EXPECT_EQ(updated["spec"]["finalizers"], Json::array({"kubernetes"}));
  EXPECT_EQ(updated["metadata"]["labels"]["a"], "b");
  EXPECT_EQ(PrepareNamespaceUpdate("finalize", current, next)["spec"]["finalizers"], Json::array());
  Json without = current;
  without.erase("spec");
  EXPECT_FALSE(PrepareNamespaceUpdate("", without, next)["spec"].contains("finalizers"));
}

// Namespace deletion on a clock of its own, to see the conditions' times.
class NamespaceDeleterConditionsTest : public ::testing::Test {
 protected:
  static constexpr int64_t kStart = 1772359200;  // 2026-03-01T10:00:00Z
  void SetUp() override {
    clock_.Set(TimePoint(std::chrono::seconds(kStart)));
    SetServerClock(&clock_);
    store_ = MemoryStore();
  }
  void TearDown() override { SetServerClock(nullptr); }
  static std::string At(int64_t seconds) { return FormatTimestamp(kStart + seconds); }

  // A namespace another finalizer keeps once emptied, so its last conditions can be read.
  void CreateKeptNamespace(const std::string& name) {
    ASSERT_TRUE(store_
                    ->Create(Namespaces(), "",
                             NamespaceDoc(name, {"kubernetes", "example.com/archive"}), false)
                    .ok());
  }
  void CreatePod(const std::string& ns, const std::string& name, Json finalizers,
                 Json spec_extra = Json::object()) {
    Json pod = {{"metadata", {{"name", name}}},
                {"spec", {{"containers", {{{"name", "c"}, {"image", "nginx"}}}}}}};
    if (!finalizers.is_null()) pod["metadata"]["finalizers"] = std::move(finalizers);
    pod["spec"].update(spec_extra);
    ASSERT_TRUE(store_->Create(Pods(), ns, pod, false).ok());
  }
  void DropFinalizers(const ResourceInfo& r, const std::string& ns, const std::string& name) {
    auto done = store_->Mutate(
        r, ns, name,
        [](const Json* current) -> Result<Json> {
          Json next = *current;
          next["metadata"].erase("finalizers");
          return next;
        },
        false, false);
    ASSERT_TRUE(done.ok()) << done.error().message;
  }
  // A pod as the scheduler and its kubelet leave it: on `node` (empty: not scheduled), in
  // `phase`, with a grace period of `grace` seconds.
  void CreatePodOn(const std::string& ns, const std::string& name, const std::string& node,
                   int64_t grace, const std::string& phase = "Running") {
    Json pod = {{"metadata", {{"name", name}}},
                {"spec",
                 {{"containers", {{{"name", "c"}, {"image", "nginx"}}}},
                  {"terminationGracePeriodSeconds", grace}}},
                {"status", {{"phase", phase}}}};
    if (!node.empty()) pod["spec"]["nodeName"] = node;
    ASSERT_TRUE(store_->Create(Pods(), ns, pod, false).ok());
  }
  // What a kubelet does once the pod's containers have stopped: a DELETE with no grace, for
  // this pod only.
  void KubeletConfirms(const std::string& ns, const std::string& name) {
    auto pod = store_->Get(Pods(), ns, name);
    ASSERT_TRUE(pod.ok()) << pod.error().message;
    DeletePreconditions same_pod;
    same_pod.uid = (*pod->object)["metadata"].value("uid", "");
    auto gone = store_->Delete(
        Pods(), ns, name, same_pod, false, Durability::kAwait,
        [](const Json& current) { return PodGraceDecision(current, 0, NowUnixSeconds()); });
    ASSERT_TRUE(gone.ok()) << gone.error().message;
  }
  Json PodMeta(const std::string& ns, const std::string& name) {
    auto got = store_->Get(Pods(), ns, name);
    return got.ok() ? (*got->object)["metadata"] : Json();
  }
  Json Status(const std::string& ns) {
    auto got = store_->Get(Namespaces(), "", ns);
    EXPECT_TRUE(got.ok());
    return got.ok() ? (*got->object)["status"] : Json();
  }

  FakeClock clock_;
  std::unique_ptr<Store> store_;
};

std::vector<std::string> ConditionTypes(const Json& status) {
  std::vector<std::string> out;
  for (const Json& c : status["conditions"]) out.push_back(c["type"]);
  return out;
}

const Json& Condition(const Json& status, const std::string& type) {
  for (const Json& c : status["conditions"]) {
    if (c["type"] == type) return c;
  }
  static const Json kNone;
  ADD_FAILURE() << "no condition " << type << " in " << status;
  return kNone;
}

TEST_F(NamespaceDeleterConditionsTest, ConditionsSayWhatHoldsTheDeletionAndFollowItAway) {
  CreateKeptNamespace("team");
  ASSERT_TRUE(store_->Create(ConfigMaps(), "team", ConfigMapDoc("plain"), false).ok());
  ASSERT_TRUE(
      store_->Create(ConfigMaps(), "team", ConfigMapDoc("held", {"example.com/block"}), false)
          .ok());
  CreatePod("team", "p1", {"example.com/block"});
  CreatePod("team", "p2", {"example.com/block", "example.com/audit"});
  ASSERT_TRUE(store_->Delete(Namespaces(), "", "team", {}, false).ok());
  NamespaceDeleter deleter(*store_);
  auto pass = deleter.Sync("team");
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->state, NamespaceSync::State::kContentRemaining);
  EXPECT_EQ(pass->remaining, 3);
  Json status = Status("team");
  EXPECT_EQ(status["phase"], "Terminating");
  EXPECT_EQ(ConditionTypes(status),
            (std::vector<std::string>{
                "NamespaceDeletionDiscoveryFailure", "NamespaceDeletionGroupVersionParsingFailure",
                "NamespaceDeletionContentFailure", "NamespaceContentRemaining",
                "NamespaceFinalizersRemaining"}));
  for (const Json& c : status["conditions"]) EXPECT_EQ(c["lastTransitionTime"], At(0)) << c;
  EXPECT_EQ(Condition(status, "NamespaceDeletionContentFailure")["status"], "False");
  EXPECT_EQ(Condition(status, "NamespaceContentRemaining")["status"], "True");
  EXPECT_EQ(Condition(status, "NamespaceContentRemaining")["message"],
            "Some resources are remaining: configmaps. has 1 resource instances, pods. has 2 "
            "resource instances");
  EXPECT_EQ(Condition(status, "NamespaceFinalizersRemaining")["status"], "True");
  EXPECT_EQ(Condition(status, "NamespaceFinalizersRemaining")["message"],
            "Some content in the namespace has finalizers remaining: example.com/audit in 1 "
            "resource instances, example.com/block in 3 resource instances");

  // One pod goes: the counts change, the statuses and their times do not.
  clock_.Advance(std::chrono::seconds(10));
  DropFinalizers(Pods(), "team", "p2");
  ASSERT_EQ(deleter.Sync("team")->state, NamespaceSync::State::kContentRemaining);
  status = Status("team");
  EXPECT_EQ(Condition(status, "NamespaceContentRemaining")["message"],
            "Some resources are remaining: configmaps. has 1 resource instances, pods. has 1 "
            "resource instances");
  EXPECT_EQ(Condition(status, "NamespaceContentRemaining")["lastTransitionTime"], At(0));
  EXPECT_EQ(Condition(status, "NamespaceFinalizersRemaining")["message"],
            "Some content in the namespace has finalizers remaining: example.com/block in 2 "
            "resource instances");

  // The rest goes: every condition False, the two that flipped at the time they did.
  clock_.Advance(std::chrono::seconds(10));
  DropFinalizers(Pods(), "team", "p1");
  DropFinalizers(ConfigMaps(), "team", "held");
  ASSERT_EQ(deleter.Sync("team")->state, NamespaceSync::State::kHeldByOthers);
  status = Status("team");
  for (const Json& c : status["conditions"]) EXPECT_EQ(c["status"], "False") << c;
  EXPECT_EQ(Condition(status, "NamespaceContentRemaining")["reason"], "ContentRemoved");
  EXPECT_EQ(Condition(status, "NamespaceContentRemaining")["message"],
            "All content successfully removed");
  EXPECT_EQ(Condition(status, "NamespaceContentRemaining")["lastTransitionTime"], At(20));
  EXPECT_EQ(Condition(status, "NamespaceFinalizersRemaining")["reason"], "ContentHasNoFinalizers");
  EXPECT_EQ(Condition(status, "NamespaceFinalizersRemaining")["message"],
            "All content-preserving finalizers finished");
  EXPECT_EQ(Condition(status, "NamespaceFinalizersRemaining")["lastTransitionTime"], At(20));
  EXPECT_EQ(Condition(status, "NamespaceDeletionContentFailure")["lastTransitionTime"], At(0));
}

TEST_F(NamespaceDeleterConditionsTest, PodsLeftPastTheirGracePeriodAreAContentFailure) {
  CreateKeptNamespace("team");
  CreatePod("team", "slow", nullptr,
            {{"nodeName", "stopped"}, {"terminationGracePeriodSeconds", 30}});
  // Deleted before the namespace: marked, and waiting for a kubelet that does not answer.
  ASSERT_TRUE(store_
                  ->Delete(Pods(), "team", "slow", {}, false, Durability::kAwait,
                           [](const Json& pod) {
                             return PodGraceDecision(pod, std::nullopt, NowUnixSeconds());
                           })
                  .ok());
  ASSERT_TRUE(store_->Delete(Namespaces(), "", "team", {}, false).ok());
  NamespaceDeleter deleter(*store_);
  clock_.Advance(std::chrono::seconds(29));
  ASSERT_EQ(deleter.Sync("team")->state, NamespaceSync::State::kContentRemaining);
  Json status = Status("team");
  EXPECT_EQ(Condition(status, "NamespaceContentRemaining")["message"],
            "Some resources are remaining: pods. has 1 resource instances");
  EXPECT_EQ(Condition(status, "NamespaceFinalizersRemaining")["status"], "False");
  EXPECT_EQ(Condition(status, "NamespaceDeletionContentFailure")["status"], "False");

  clock_.Advance(std::chrono::seconds(1));
  ASSERT_EQ(deleter.Sync("team")->state, NamespaceSync::State::kContentRemaining);
  status = Status("team");
  const Json& failure = Condition(status, "NamespaceDeletionContentFailure");
  EXPECT_EQ(failure["status"], "True");
  EXPECT_EQ(failure["reason"], "ContentDeletionFailed");
  EXPECT_EQ(failure["message"],
            "Failed to delete all resource types, 1 remaining: unexpected items still remain in "
            "namespace: team for gvr: /v1, Resource=pods");
  EXPECT_EQ(failure["lastTransitionTime"], At(30));

  // Its kubelet confirms at last.
  ASSERT_TRUE(store_->Delete(Pods(), "team", "slow", {}, false).ok());
  ASSERT_EQ(deleter.Sync("team")->state, NamespaceSync::State::kHeldByOthers);
  EXPECT_EQ(Condition(Status("team"), "NamespaceDeletionContentFailure")["reason"],
            "ContentDeleted");
}

// Pods on nodes are deleted as a DELETE without options deletes them: marked for their grace
// period and Terminating until their kubelets confirm, while the namespace's conditions count
// them; pods on no node, and finished ones, go at once. The namespace goes with the last
// confirmation.
TEST_F(NamespaceDeleterConditionsTest, PodsOnNodesAreTerminatingUntilTheirKubeletsConfirm) {
  ASSERT_TRUE(store_->Create(Namespaces(), "", NamespaceDoc("team"), false).ok());
  CreatePodOn("team", "web", "n1", 30);
  CreatePodOn("team", "slow", "n2", 45);
  CreatePodOn("team", "pending", "", 30, "Pending");
  CreatePodOn("team", "done", "n1", 30, "Succeeded");
  CreatePodOn("team", "crashed", "n2", 30, "Failed");
  std::vector<std::string> events;
  auto watch = store_->Watch(Pods(), "team", std::nullopt, nullptr, [&](const WatchEvent& ev) {
    if (ev.type == WatchEventType::kAdded) return true;
    events.push_back((ev.type == WatchEventType::kDeleted ? "DELETED " : "MODIFIED ") +
                     (*ev.object.object)["metadata"].value("name", ""));
    return true;
  });
  ASSERT_TRUE(watch.ok());
  ASSERT_TRUE(store_->Delete(Namespaces(), "", "team", {}, false).ok());
  NamespaceDeleter deleter(*store_);
  auto pass = deleter.Sync("team");
  ASSERT_TRUE(pass.ok()) << pass.error().message;
  EXPECT_EQ(pass->state, NamespaceSync::State::kContentRemaining);
  EXPECT_EQ(pass->deleted, 5);
  EXPECT_EQ(pass->remaining, 2);
  EXPECT_EQ(events, (std::vector<std::string>{"DELETED crashed", "DELETED done", "DELETED pending",
                                              "MODIFIED slow", "MODIFIED web"}));
  EXPECT_EQ(PodMeta("team", "web")["deletionTimestamp"], At(30));
  EXPECT_EQ(PodMeta("team", "web")["deletionGracePeriodSeconds"], 30);
  EXPECT_EQ(PodMeta("team", "slow")["deletionTimestamp"], At(45));
  EXPECT_EQ(PodMeta("team", "slow")["deletionGracePeriodSeconds"], 45);
  Json status = Status("team");
  EXPECT_EQ(status["phase"], "Terminating");
  EXPECT_EQ(Condition(status, "NamespaceContentRemaining")["status"], "True");
  EXPECT_EQ(Condition(status, "NamespaceContentRemaining")["message"],
            "Some resources are remaining: pods. has 2 resource instances");
  EXPECT_EQ(Condition(status, "NamespaceDeletionContentFailure")["status"], "False");
  EXPECT_EQ(Condition(status, "NamespaceFinalizersRemaining")["status"], "False");

  // A look before any kubelet answers leaves the pods as they are: their grace periods run on.
  clock_.Advance(std::chrono::seconds(1));
  events.clear();
  pass = deleter.Sync("team");
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->deleted, 0);
  EXPECT_EQ(pass->remaining, 2);
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(PodMeta("team", "web")["deletionTimestamp"], At(30));

  KubeletConfirms("team", "web");
  ASSERT_EQ(deleter.Sync("team")->state, NamespaceSync::State::kContentRemaining);
  EXPECT_EQ(Condition(Status("team"), "NamespaceContentRemaining")["message"],
            "Some resources are remaining: pods. has 1 resource instances");
  KubeletConfirms("team", "slow");
  EXPECT_EQ(deleter.Sync("team")->state, NamespaceSync::State::kGone);
  EXPECT_EQ(store_->Get(Namespaces(), "", "team").error().code, ErrorCode::kNotFound);
}

// The deleter's thread looks at a namespace again as soon as a pod of it goes, not only at its
// next recheck: the namespace goes with its last pod's confirmation.
TEST_F(NamespaceDeleterConditionsTest, TheLastPodsConfirmationLetsTheNamespaceGoAtOnce) {
  ASSERT_TRUE(store_->Create(Namespaces(), "", NamespaceDoc("team"), false).ok());
  CreatePodOn("team", "web", "n1", 30);
  NamespaceDeleterOptions options;
  options.recheck = std::chrono::hours(1);
  NamespaceDeleter deleter(*store_, options);
  ASSERT_TRUE(deleter.Start().ok());
  ASSERT_TRUE(store_->Delete(Namespaces(), "", "team", {}, false).ok());
  for (int i = 0; i < 500 && !PodMeta("team", "web").contains("deletionTimestamp"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(PodMeta("team", "web").contains("deletionTimestamp"));
  EXPECT_FALSE(deleter.WaitIdle(std::chrono::milliseconds(200)));  // waits for the pod
  KubeletConfirms("team", "web");
  ASSERT_TRUE(deleter.WaitIdle(std::chrono::seconds(10)));
  EXPECT_EQ(store_->Get(Namespaces(), "", "team").error().code, ErrorCode::kNotFound);
  deleter.Stop();
}

// With no kubelet to confirm (`berth up --no-kubelets`, a node whose kubelet is gone), a pod the
// deletion marked stays, and so does its namespace: once the grace period has run the
// conditions call it a failure. Deleting the pod with no grace lets the namespace go.
TEST_F(NamespaceDeleterConditionsTest, WithoutItsKubeletAPodKeepsTheNamespaceTerminating) {
  ASSERT_TRUE(store_->Create(Namespaces(), "", NamespaceDoc("team"), false).ok());
  CreatePodOn("team", "orphan", "gone-node", 30);
  ASSERT_TRUE(store_->Delete(Namespaces(), "", "team", {}, false).ok());
  NamespaceDeleter deleter(*store_);
  ASSERT_EQ(deleter.Sync("team")->state, NamespaceSync::State::kContentRemaining);
  clock_.Advance(std::chrono::seconds(30));
  ASSERT_EQ(deleter.Sync("team")->state, NamespaceSync::State::kContentRemaining);
  const Json status = Status("team");
  EXPECT_EQ(status["phase"], "Terminating");
  EXPECT_EQ(Condition(status, "NamespaceDeletionContentFailure")["status"], "True");
  EXPECT_EQ(Condition(status, "NamespaceContentRemaining")["message"],
            "Some resources are remaining: pods. has 1 resource instances");
  clock_.Advance(std::chrono::seconds(3600));
  ASSERT_EQ(deleter.Sync("team")->state, NamespaceSync::State::kContentRemaining);
  EXPECT_EQ(PodMeta("team", "orphan")["deletionTimestamp"], At(30));
  // `kubectl delete pod --grace-period=0 --force`.
  KubeletConfirms("team", "orphan");
  EXPECT_EQ(deleter.Sync("team")->state, NamespaceSync::State::kGone);
}

TEST_F(NamespaceDeleterConditionsTest, CustomResourcesAreCountedUnderTheirGroup) {
  RegisterCrd({{"metadata", {{"name", "widgets.nsdel.berth.dev"}}},
               {"spec",
                {{"group", "nsdel.berth.dev"},
                 {"scope", "Namespaced"},
                 {"names", {{"plural", "widgets"}, {"kind", "Widget"}}},
                 {"versions",
                  {{{"name", "v1"},
                    {"served", true},
                    {"storage", true},
                    {"schema", {{"openAPIV3Schema", {{"type", "object"}}}}}}}}}},
               {"status", {{"conditions", {{{"type", "Established"}, {"status", "True"}}}}}}});
  const ResourceInfo* widgets = FindResource("nsdel.berth.dev", "v1", "widgets");
  ASSERT_NE(widgets, nullptr);
  CreateKeptNamespace("team");
  ASSERT_TRUE(
      store_
          ->Create(*widgets, "team",
                   {{"apiVersion", "nsdel.berth.dev/v1"},
                    {"kind", "Widget"},
                    {"metadata", {{"name", "w"}, {"finalizers", {"nsdel.berth.dev/keep"}}}}},
                   false)
          .ok());
  ASSERT_TRUE(store_->Delete(Namespaces(), "", "team", {}, false).ok());
  NamespaceDeleter deleter(*store_);
  ASSERT_EQ(deleter.Sync("team")->state, NamespaceSync::State::kContentRemaining);
  const Json status = Status("team");
  EXPECT_EQ(Condition(status, "NamespaceContentRemaining")["message"],
            "Some resources are remaining: widgets.nsdel.berth.dev has 1 resource instances");
  EXPECT_EQ(Condition(status, "NamespaceFinalizersRemaining")["message"],
            "Some content in the namespace has finalizers remaining: nsdel.berth.dev/keep in 1 "
            "resource instances");
  DropFinalizers(*widgets, "team", "w");
  EXPECT_EQ(deleter.Sync("team")->state, NamespaceSync::State::kHeldByOthers);
  UnregisterCrd("widgets.nsdel.berth.dev");
}

class NamespaceDeleterCrashTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("berth-nsdel-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::unique_ptr<Store> Open() {
    auto s = Store::Open({.path = (dir_ / "state.db").string()});
    EXPECT_TRUE(s.ok()) << s.error().message;
    return std::move(s).value();
  }
  std::filesystem::path dir_;
};

// A process deleting a namespace's 3,000 objects is killed (SIGKILL) in the middle of a batch.
// Reopened from its database, the namespace is still Terminating with the objects of whole
// batches gone (each batch is one transaction), and the deletion resumes and converges.
TEST_F(NamespaceDeleterCrashTest, ADeletionKilledMidwayResumesFromTheDatabase) {
  constexpr int kObjects = 3000;
  constexpr size_t kBatch = 500;
  {
    auto store = Open();
    Fill(*store, "team", kObjects);
    ASSERT_TRUE(store->Delete(Namespaces(), "", "team", {}, false).ok());
  }
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    auto store = Store::Open({.path = (dir_ / "state.db").string()});
    if (!store.ok()) _exit(2);
    int deleted = 0;
    // Stops the deleter for good in the middle of its second batch: the callback runs under
    // the store's lock, inside the batch, before the batch is queued for its commit.
    auto watch = (*store)->Watch(ConfigMaps(), "team", std::nullopt, nullptr,
                                 [&, fd = fds[1]](const WatchEvent& ev) {
                                   if (ev.type != WatchEventType::kDeleted) return true;
                                   if (++deleted == static_cast<int>(kBatch + kBatch / 2)) {
                                     if (write(fd, "x", 1) != 1) _exit(3);
                                     for (;;) pause();
                                   }
                                   return true;
                                 });
    if (!watch.ok()) _exit(4);
    NamespaceDeleter deleter(**store, Batch(kBatch));
    (void)deleter.Sync("team");
    _exit(5);  // not reached
  }
  close(fds[1]);
  char c = 0;
  ASSERT_EQ(read(fds[0], &c, 1), 1) << "the deleting process died early";
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  close(fds[0]);
  ASSERT_TRUE(WIFSIGNALED(status));

  auto store = Open();
  auto ns = store->Get(Namespaces(), "", "team");
  ASSERT_TRUE(ns.ok()) << "the namespace went before its content";
  EXPECT_EQ((*ns->object)["status"]["phase"], "Terminating");
  const size_t left = CountIn(*store, ConfigMaps(), "team");
  // The first batch committed or not (its commit may not have run yet); the second not at all.
  EXPECT_TRUE(left == kObjects || left == kObjects - kBatch) << left;
  EXPECT_EQ(store->Create(ConfigMaps(), "team", ConfigMapDoc("late"), false).error().code,
            ErrorCode::kForbidden);
  // The server's deleter finds it at start and finishes.
  {
    NamespaceDeleter deleter(*store, Batch(kBatch));
    ASSERT_TRUE(deleter.Start().ok());
    ASSERT_TRUE(deleter.WaitIdle(std::chrono::seconds(60)));
  }
  EXPECT_EQ(store->Get(Namespaces(), "", "team").error().code, ErrorCode::kNotFound);
  store.reset();
  store = Open();
  EXPECT_EQ(store->Get(Namespaces(), "", "team").error().code, ErrorCode::kNotFound);
  EXPECT_EQ(CountIn(*store, ConfigMaps(), "team"), 0u);
  ASSERT_TRUE(store->Create(Namespaces(), "", NamespaceDoc("team"), false).ok());
  EXPECT_EQ(CountIn(*store, ConfigMaps(), "team"), 0u);
}

}  // namespace
}  // namespace berth::apiserver
