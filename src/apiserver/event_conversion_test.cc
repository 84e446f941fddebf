// One Event through two APIs: the field renaming, and the store keeping events.k8s.io/v1 Events
// as core/v1 Events (one object, one revision, one row) while serving both.
#include "apiserver/event_conversion.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

#include "apiserver/resources.h"
#include "apiserver/selectors.h"
#include "apiserver/store.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

const ResourceInfo& CoreEvents() { return *FindResource("", "v1", "events"); }
const ResourceInfo& V1Events() { return *FindResource("events.k8s.io", "v1", "events"); }

Json PodRef(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", name}, {"namespace", "default"}};
}

// What a scheduler writes through events.k8s.io/v1.
Json SchedulerEvent(const std::string& name, const std::string& pod) {
  return {{"apiVersion", "events.k8s.io/v1"},
          {"kind", "Event"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"eventTime", "2026-11-27T12:00:00.123456Z"},
          {"action", "Binding"},
          {"reason", "Scheduled"},
          {"note", "Successfully assigned default/" + pod + " to node-1"},
          {"type", "Normal"},
          {"regarding", PodRef(pod)},
          {"reportingController", "default-scheduler"},
          {"reportingInstance", "default-scheduler-berth"}};
}

TEST(EventConversionTest, RenamesEveryFieldBothWaysAndLosesNothing) {
  Json events = SchedulerEvent("e", "p");
  events["related"] = PodRef("q");
  events["series"] = {{"count", 3}, {"lastObservedTime", "2026-11-27T12:01:00.000000Z"}};
  events["deprecatedSource"] = {{"component", "kubelet"}, {"host", "node-1"}};
  events["deprecatedFirstTimestamp"] = "2026-11-27T11:00:00Z";
  events["deprecatedLastTimestamp"] = "2026-11-27T11:30:00Z";
  events["deprecatedCount"] = 4;

  Json core = CoreEventFromEventsV1(events);
  EXPECT_EQ(core["apiVersion"], "v1");
  EXPECT_EQ(core["involvedObject"], PodRef("p"));
  EXPECT_EQ(core["message"], events["note"]);
  EXPECT_EQ(core["reportingComponent"], "default-scheduler");
  EXPECT_EQ(core["reportingInstance"], "default-scheduler-berth");
  EXPECT_EQ(core["source"], events["deprecatedSource"]);
  EXPECT_EQ(core["firstTimestamp"], "2026-11-27T11:00:00Z");
  EXPECT_EQ(core["lastTimestamp"], "2026-11-27T11:30:00Z");
  EXPECT_EQ(core["count"], 4);
  EXPECT_EQ(core["series"], events["series"]);
  EXPECT_EQ(core["related"], PodRef("q"));
  EXPECT_EQ(core["eventTime"], events["eventTime"]);
  for (const char* gone :
       {"regarding", "note", "reportingController", "deprecatedSource", "deprecatedFirstTimestamp",
        "deprecatedLastTimestamp", "deprecatedCount"}) {
    EXPECT_FALSE(core.contains(gone)) << gone;
  }
  EXPECT_EQ(EventsV1FromCoreEvent(core), events);
}

TEST(EventConversionTest, AbsentFieldsStayAbsent) {
  Json core = CoreEventFromEventsV1(
      {{"metadata", {{"name", "e"}}}, {"reason", "Scheduled"}, {"type", "Normal"}});
  EXPECT_EQ(core, (Json{{"apiVersion", "v1"},
                        {"kind", "Event"},
                        {"metadata", {{"name", "e"}}},
                        {"reason", "Scheduled"},
                        {"type", "Normal"}}));
}

class EventStorageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("berth-event-storage-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    store_ = Open();
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  std::string DbPath() const { return (dir_ / "state.db").string(); }
  std::unique_ptr<Store> Open() {
    auto s = Store::Open({.path = DbPath()});
    EXPECT_TRUE(s.ok()) << s.error().message;
    return s.ok() ? std::move(s).value() : nullptr;
  }
  // Every row key of the database, in order.
  std::vector<std::string> RowKeys() {
    std::vector<std::string> keys;
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(DbPath().c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "SELECT key FROM objects WHERE key LIKE 'events%' ORDER BY key", -1, &st,
                       nullptr);
    while (sqlite3_step(st) == SQLITE_ROW) {
      keys.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    return keys;
  }
  std::filesystem::path dir_;
  std::unique_ptr<Store> store_;
};

TEST_F(EventStorageTest, AnEventWrittenThroughOneApiIsOneObjectReadThroughBoth) {
  const int64_t before = store_->revision();
  auto created = store_->Create(V1Events(), "default", SchedulerEvent("e1", "p"), false);
  ASSERT_TRUE(created.ok()) << created.error().message;
  EXPECT_EQ(store_->revision(), before + 1);  // one object, one revision
  EXPECT_EQ((*created->object)["apiVersion"], "events.k8s.io/v1");
  EXPECT_EQ((*created->object)["regarding"], PodRef("p"));
  EXPECT_EQ(Json::parse(*created->text), *created->object);

  auto core = store_->Get(CoreEvents(), "default", "e1");
  ASSERT_TRUE(core.ok()) << core.error().message;
  EXPECT_EQ((*core->object)["apiVersion"], "v1");
  EXPECT_EQ((*core->object)["involvedObject"], PodRef("p"));
  EXPECT_EQ((*core->object)["reportingComponent"], "default-scheduler");
  EXPECT_EQ((*core->object)["metadata"]["uid"], (*created->object)["metadata"]["uid"]);
  EXPECT_EQ(core->rv, created->rv);

  // And the other way: a core/v1 Event (kubelet's, kubectl's) through events.k8s.io/v1.
  Json kubelet = {
      {"metadata", {{"name", "e2"}}}, {"involvedObject", PodRef("p")},        {"reason", "Pulled"},
      {"message", "image present"},   {"source", {{"component", "kubelet"}}}, {"count", 2}};
  ASSERT_TRUE(store_->Create(CoreEvents(), "default", kubelet, false).ok());
  auto through_v1 = store_->Get(V1Events(), "default", "e2");
  ASSERT_TRUE(through_v1.ok());
  EXPECT_EQ((*through_v1->object)["apiVersion"], "events.k8s.io/v1");
  EXPECT_EQ((*through_v1->object)["regarding"], PodRef("p"));
  EXPECT_EQ((*through_v1->object)["note"], "image present");
  EXPECT_EQ((*through_v1->object)["deprecatedSource"], kubelet["source"]);
  EXPECT_EQ((*through_v1->object)["deprecatedCount"], 2);

  auto v1_list = store_->List(V1Events(), "default", nullptr, 0, "");
  ASSERT_TRUE(v1_list.ok());
  ASSERT_EQ(v1_list->items.size(), 2u);
  for (const auto& item : v1_list->items) {
    EXPECT_EQ((*item.object)["apiVersion"], "events.k8s.io/v1");
    EXPECT_TRUE(item.object->contains("regarding"));
  }
  // Stored once: one row each, under core/v1's storage.
  store_.reset();
  EXPECT_EQ(RowKeys(), (std::vector<std::string>{"events/default/e1", "events/default/e2"}));
}

TEST_F(EventStorageTest, SelectorsUpdatesAndDeletesActOnTheOneObject) {
  ASSERT_TRUE(store_->Create(V1Events(), "default", SchedulerEvent("a", "p"), false).ok());
  ASSERT_TRUE(store_->Create(V1Events(), "default", SchedulerEvent("b", "q"), false).ok());
  // A selector of each API names that API's fields.
  auto core_selector = ParseFieldSelector(CoreEvents(), "involvedObject.name=q");
  ASSERT_TRUE(core_selector.ok());
  auto core_list = store_->List(CoreEvents(), "default", *core_selector, 0, "");
  ASSERT_TRUE(core_list.ok());
  ASSERT_EQ(core_list->items.size(), 1u);
  EXPECT_EQ((*core_list->items[0].object)["metadata"]["name"], "b");
  auto v1_selector = ParseFieldSelector(V1Events(), "regarding.name=p");
  ASSERT_TRUE(v1_selector.ok());
  auto v1_list = store_->List(V1Events(), "default", *v1_selector, 0, "");
  ASSERT_TRUE(v1_list.ok());
  ASSERT_EQ(v1_list->items.size(), 1u);
  EXPECT_EQ((*v1_list->items[0].object)["metadata"]["name"], "a");

  // Watchers of both APIs see a change made through either, each in its own form.
  std::vector<Json> core_seen, v1_seen;
  auto core_watch = store_->Watch(CoreEvents(), "default", store_->revision(), nullptr,
                                  [&](const WatchEvent& ev) {
                                    core_seen.push_back(Json::parse(*ev.object.text));
                                    return true;
                                  });
  auto v1_watch = store_->Watch(V1Events(), "default", store_->revision(), *v1_selector,
                                [&](const WatchEvent& ev) {
                                  v1_seen.push_back(Json::parse(*ev.object.text));
                                  return true;
                                });
  ASSERT_TRUE(core_watch.ok() && v1_watch.ok());
  auto updated = store_->Mutate(
      V1Events(), "default", "a",
      [](const Json* current) -> Result<Json> {
        EXPECT_EQ((*current)["apiVersion"], "events.k8s.io/v1");
        Json next = *current;
        next["note"] = "seen again";
        next["series"] = {{"count", 2}, {"lastObservedTime", "2026-11-27T12:05:00.000000Z"}};
        return next;
      },
      false, false);
  ASSERT_TRUE(updated.ok()) << updated.error().message;
  EXPECT_EQ((*updated->object)["note"], "seen again");
  ASSERT_EQ(core_seen.size(), 1u);
  EXPECT_EQ(core_seen[0]["message"], "seen again");
  EXPECT_EQ(core_seen[0]["apiVersion"], "v1");
  ASSERT_EQ(v1_seen.size(), 1u);
  EXPECT_EQ(v1_seen[0]["note"], "seen again");
  EXPECT_EQ(v1_seen[0]["apiVersion"], "events.k8s.io/v1");

  // Deleted through core/v1: gone from events.k8s.io/v1 too; its watcher is told.
  ASSERT_TRUE(store_->Delete(CoreEvents(), "default", "a", {}, false).ok());
  EXPECT_EQ(store_->Get(V1Events(), "default", "a").error().code, ErrorCode::kNotFound);
  ASSERT_EQ(v1_seen.size(), 2u);
  EXPECT_EQ(v1_seen[1]["metadata"]["name"], "a");
  EXPECT_TRUE(v1_seen[1].contains("regarding"));
}

TEST_F(EventStorageTest, ErrorsNameTheApiTheClientUsed) {
  ASSERT_TRUE(store_->Create(V1Events(), "default", SchedulerEvent("e", "p"), false).ok());
  auto again = store_->Create(V1Events(), "default", SchedulerEvent("e", "p"), false);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(again.error().message, "events.events.k8s.io \"e\" already exists");
  auto missing = store_->Get(V1Events(), "default", "nope");
  EXPECT_EQ(missing.error().message, "events.events.k8s.io \"nope\" not found");
  EXPECT_EQ(store_->Get(CoreEvents(), "default", "nope").error().message,
            "events \"nope\" not found");
  auto stale = store_->Mutate(
      V1Events(), "default", "e",
      [](const Json* current) -> Result<Json> {
        Json next = *current;
        next["metadata"]["resourceVersion"] = "1";
        next["note"] = "x";
        return next;
      },
      false, false);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, ErrorCode::kConflict);
  EXPECT_NE(stale.error().message.find("events.events.k8s.io \"e\""), std::string::npos)
      << stale.error().message;
}

// A data directory from before: each events.k8s.io Event under its own storage name, most with
// a core/v1 copy of the same name beside it.
TEST_F(EventStorageTest, OlderDataDirectoriesAreMovedToOneStorage) {
  store_.reset();
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open_v2(DbPath().c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
    Json copied = SchedulerEvent("copied", "p");
    copied["metadata"]["resourceVersion"] = "900";
    Json core_copy = CoreEventFromEventsV1(copied);
    core_copy["source"] = {{"component", "default-scheduler"}};  // the old copy's extra field
    Json alone = SchedulerEvent("alone", "q");
    alone["metadata"]["resourceVersion"] = "901";
    const std::string sql =
        "INSERT INTO objects(key, rv, data) VALUES "
        "('events.events.k8s.io/default/copied', 900, '" +
        copied.dump() + "'), ('events/default/copied', 900, '" + core_copy.dump() +
        "'), ('events.events.k8s.io/default/alone', 901, '" + alone.dump() + "')";
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK)
        << sqlite3_errmsg(db);
    sqlite3_close(db);
  }
  store_ = Open();
  ASSERT_TRUE(store_);
  auto copied = store_->Get(CoreEvents(), "default", "copied");
  ASSERT_TRUE(copied.ok());
  EXPECT_EQ((*copied->object)["source"]["component"], "default-scheduler");  // the copy kept
  auto alone = store_->Get(V1Events(), "default", "alone");
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ((*alone->object)["regarding"], PodRef("q"));
  EXPECT_EQ(alone->rv, 901);
  EXPECT_GE(store_->revision(), 901);
  auto all = store_->List(V1Events(), "", nullptr, 0, "");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->items.size(), 2u);
  store_.reset();
  EXPECT_EQ(RowKeys(), (std::vector<std::string>{"events/default/alone", "events/default/copied"}));
}

}  // namespace
}  // namespace berth::apiserver
