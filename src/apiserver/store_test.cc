#include "apiserver/store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <map>
#include <thread>
#include <vector>

#include "apiserver/event_conversion.h"
#include "apiserver/event_test_builders.h"
#include "apiserver/selectors.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

const ResourceInfo& Pods() { return *FindResource("", "v1", "pods"); }
const ResourceInfo& Nodes() { return *FindResource("", "v1", "nodes"); }

Json PodDoc(const std::string& name) {
  return {{"metadata", {{"name", name}}}, {"spec", {{"containers", {{{"name", "c"}}}}}}};
}

class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("berth-store-test-" + std::to_string(::getpid()) + "-" +
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

TEST_F(StoreTest, CreateFillsMetadataAndRejectsDuplicates) {
  auto store = Open();
  auto created = store->Create(Pods(), "default", PodDoc("a"), false);
  ASSERT_TRUE(created.ok()) << created.error().message;
  const Json& meta = (*created->object)["metadata"];
  EXPECT_EQ(meta["namespace"], "default");
  EXPECT_EQ(meta["uid"].get<std::string>().size(), 36u);
  EXPECT_EQ(meta["resourceVersion"], std::to_string(created->rv));
  EXPECT_EQ(meta["generation"], 1);
  EXPECT_EQ((*created->object)["kind"], "Pod");
  auto dup = store->Create(Pods(), "default", PodDoc("a"), false);
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, ErrorCode::kAlreadyExists);
  EXPECT_EQ(dup.error().message, "pods \"a\" already exists");
  auto no_ns = store->Create(Pods(), "missing", PodDoc("b"), false);
  ASSERT_FALSE(no_ns.ok());
  EXPECT_EQ(no_ns.error().message, "namespaces \"missing\" not found");
}

TEST_F(StoreTest, StaleUpdateConflictsAndSpecChangeBumpsGeneration) {
  auto store = Open();
  auto created = store->Create(Pods(), "default", PodDoc("a"), false);
  ASSERT_TRUE(created.ok());
  Json stale = *created->object;
  auto updated = store->Mutate(
      Pods(), "default", "a",
      [](const Json* cur) -> Result<Json> {
        Json next = *cur;
        next["spec"]["nodeName"] = "n1";
        return next;
      },
      false, false);
  ASSERT_TRUE(updated.ok());
  EXPECT_GT(updated->rv, created->rv);
  EXPECT_EQ((*updated->object)["metadata"]["generation"], 2);
  auto conflict = store->Mutate(
      Pods(), "default", "a", [&](const Json*) -> Result<Json> { return stale; }, false, false);
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error().code, ErrorCode::kConflict);
}

TEST_F(StoreTest, GenerateNameAndPaging) {
  auto store = Open();
  for (int i = 0; i < 5; ++i) {
    Json doc = PodDoc("");
    doc["metadata"].erase("name");
    doc["metadata"]["generateName"] = "web-";
    ASSERT_TRUE(store->Create(Pods(), "default", doc, false).ok());
  }
  auto page1 = store->List(Pods(), "default", {}, 2, "");
  ASSERT_TRUE(page1.ok());
  ASSERT_EQ(page1->items.size(), 2u);
  EXPECT_FALSE(page1->continue_token.empty());
  auto page2 = store->List(Pods(), "default", {}, 10, page1->continue_token);
  ASSERT_TRUE(page2.ok());
  EXPECT_EQ(page2->items.size(), 3u);
  EXPECT_TRUE(page2->continue_token.empty());
  EXPECT_EQ((*page2->items[0].object)["metadata"]["name"].get<std::string>().rfind("web-", 0), 0u);
}

// An object created between two pages, before the continue key, is in neither page: the list
// reports the first page's revision so that a watch from it still delivers the object.
TEST_F(StoreTest, PagesReportTheFirstPagesRevisionSoAWatchCatchesObjectsCreatedMeanwhile) {
  auto store = Open();
  for (const char* name : {"b", "c", "d"}) {
    ASSERT_TRUE(store->Create(Pods(), "default", PodDoc(name), false).ok());
  }
  auto page1 = store->List(Pods(), "default", {}, 2, "");
  ASSERT_TRUE(page1.ok());
  ASSERT_EQ(page1->items.size(), 2u);
  ASSERT_TRUE(store->Create(Pods(), "default", PodDoc("a"), false).ok());
  auto page2 = store->List(Pods(), "default", {}, 2, page1->continue_token);
  ASSERT_TRUE(page2.ok());
  ASSERT_EQ(page2->items.size(), 1u);
  EXPECT_EQ((*page2->items[0].object)["metadata"]["name"], "d");
  EXPECT_EQ(page2->rv, page1->rv);
  std::vector<std::string> watched;
  auto reg = store->Watch(Pods(), "default", page2->rv, {}, [&](const WatchEvent& ev) {
    watched.push_back((*ev.object.object)["metadata"]["name"].get<std::string>());
    return true;
  });
  ASSERT_TRUE(reg.ok());
  EXPECT_EQ(watched, std::vector<std::string>{"a"});
  EXPECT_FALSE(store->List(Pods(), "default", {}, 2, "default/b").ok());  // not a token
}

TEST_F(StoreTest, WatchResumesFromRevisionAndOldRevisionsAreGone) {
  auto store = Store::Open({.path = "", .event_window = 5});
  ASSERT_TRUE(store.ok());
  auto& s = **store;
  int64_t start = s.revision();
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(s.Create(Nodes(), "", PodDoc("n" + std::to_string(i)), false).ok());
  std::vector<std::string> seen;
  auto reg = s.Watch(Nodes(), "", start, {}, [&](const WatchEvent& ev) {
    seen.push_back((*ev.object.object)["metadata"]["name"]);
    return true;
  });
  ASSERT_TRUE(reg.ok());
  EXPECT_EQ(seen, (std::vector<std::string>{"n0", "n1", "n2"}));
  ASSERT_TRUE(s.Delete(Nodes(), "", "n1", {}, false).ok());
  EXPECT_EQ(seen.back(), "n1");
  for (int i = 3; i < 12; ++i)
    ASSERT_TRUE(s.Create(Nodes(), "", PodDoc("n" + std::to_string(i)), false).ok());
  auto old = s.Watch(Nodes(), "", start, {}, [](const WatchEvent&) { return true; });
  ASSERT_FALSE(old.ok());
  EXPECT_EQ(old.error().code, ErrorCode::kGone);
  EXPECT_NE(old.error().message.find("too old resource version"), std::string::npos);
}

TEST_F(StoreTest, WatcherThatRefusesStopsReceivingWhileWritesGoOn) {
  auto store = Open();
  int delivered = 0;
  auto reg = store->Watch(Pods(), "", std::nullopt, {}, [&](const WatchEvent&) {
    ++delivered;
    return false;  // a slow reader the server dropped
  });
  ASSERT_TRUE(reg.ok());
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(store->Create(Pods(), "default", PodDoc("p" + std::to_string(i)), false).ok());
  }
  EXPECT_EQ(delivered, 1);
}

// A watch with a selector sees an object leave it (DELETED, with the last matching content at
// the change's revision) and come back (ADDED), live and when resumed from a revision: a
// scheduler's informer drops finished pods that way.
TEST_F(StoreTest, SelectorWatchesSeeObjectsLeaveAndReturn) {
  auto store = Open();
  auto selector = ParseFieldSelector(Pods(), "status.phase!=Succeeded");
  ASSERT_TRUE(selector.ok());
  auto created = store->Create(Pods(), "default", PodDoc("p"), false);
  ASSERT_TRUE(created.ok());
  std::vector<std::pair<WatchEventType, Json>> seen;
  auto reg = store->Watch(Pods(), "default", created->rv, *selector, [&](const WatchEvent& ev) {
    seen.emplace_back(ev.type, Json::parse(*ev.object.text));
    std::string line;
    for (const auto& part : WatchEventLineParts(ev)) line += *part;
    EXPECT_EQ(line.back(), '\n');
    const Json event = Json::parse(line.substr(0, line.size() - 1));
    EXPECT_EQ(event["object"], Json::parse(*ev.object.text));
    EXPECT_EQ(event["type"], ev.type == WatchEventType::kAdded      ? "ADDED"
                             : ev.type == WatchEventType::kModified ? "MODIFIED"
                                                                    : "DELETED");
    return true;
  });
  ASSERT_TRUE(reg.ok());
  auto set_phase = [&](const std::string& phase) {
    auto r = store->Mutate(
        Pods(), "default", "p",
        [&](const Json* cur) -> Result<Json> {
          Json next = *cur;
          next["status"]["phase"] = phase;
          return next;
        },
        false, false);
    EXPECT_TRUE(r.ok());
    return r->rv;
  };
  set_phase("Running");
  const int64_t left = set_phase("Succeeded");
  set_phase("Succeeded");  // unchanged: no revision, no event
  auto stays_out = store->Mutate(
      Pods(), "default", "p",
      [&](const Json* cur) -> Result<Json> {
        Json next = *cur;
        next["metadata"]["labels"]["x"] = "y";
        return next;
      },
      false, false);
  ASSERT_TRUE(stays_out.ok());
  set_phase("Running");
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].first, WatchEventType::kModified);
  EXPECT_EQ(seen[1].first, WatchEventType::kDeleted);
  EXPECT_EQ(seen[1].second["status"]["phase"], "Running");  // the last content that matched
  EXPECT_EQ(seen[1].second["metadata"]["resourceVersion"], std::to_string(left));
  EXPECT_EQ(seen[2].first, WatchEventType::kAdded);
  EXPECT_EQ(seen[2].second["metadata"]["labels"]["x"], "y");
  reg->reset();

  // Resumed from the first revision: the same story from the history, down to the content.
  // The superseded versions' documents are no longer held: they are read again from their text.
  std::vector<WatchEventType> replayed;
  std::vector<Json> replayed_objects;
  auto again = store->Watch(Pods(), "default", created->rv, *selector, [&](const WatchEvent& ev) {
    replayed.push_back(ev.type);
    replayed_objects.push_back(Json::parse(*ev.object.text));
    return true;
  });
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(replayed,
            (std::vector<WatchEventType>{WatchEventType::kModified, WatchEventType::kDeleted,
                                         WatchEventType::kAdded}));
  ASSERT_EQ(replayed_objects.size(), seen.size());
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(replayed_objects[i], seen[i].second) << i;
  // Deleting a pod the selector does not match reports nothing; one it matches, DELETED.
  set_phase("Succeeded");
  ASSERT_TRUE(store->Delete(Pods(), "default", "p", {}, false).ok());
  EXPECT_EQ(replayed.back(), WatchEventType::kDeleted);
  EXPECT_EQ(replayed.size(), 4u);
}

// Store::Change: a binding's write, made in place when only the store holds the object. What
// readers and watchers see must be what a copying Mutate gives them.
// Long by design: one sequence of writes, each checked against readers and both watchers.
TEST_F(StoreTest, ChangesInPlaceLookLikeCopiedOnesToReadersAndWatchers) {
  auto store = Open();
  auto unassigned = ParseFieldSelector(Pods(), "spec.nodeName=");
  auto assigned = ParseFieldSelector(Pods(), "spec.nodeName!=");
  ASSERT_TRUE(unassigned.ok() && assigned.ok());
  const int64_t start = store->revision();
  std::vector<std::pair<WatchEventType, Json>> left, joined, all;
  auto record = [](std::vector<std::pair<WatchEventType, Json>>* into) {
    return [into](const WatchEvent& ev) {
      into->emplace_back(ev.type, Json::parse(*ev.object.text));
      return true;
    };
  };
  auto w1 = store->Watch(Pods(), "default", start, *unassigned, record(&left));
  auto w2 = store->Watch(Pods(), "", start, *assigned, record(&joined));
  auto w3 = store->Watch(Pods(), "default", start, nullptr, record(&all));
  ASSERT_TRUE(w1.ok() && w2.ok() && w3.ok());
  auto bind = [&](const std::string& name, const std::string& node) {
    return store->Change(
        Pods(), "default", name,
        [&](Json& pod) -> Result<bool> {
          if (!pod["spec"].value("nodeName", "").empty()) {
            return Error{"already bound", ErrorCode::kConflict};
          }
          pod["spec"]["nodeName"] = node;
          return true;
        },
        false);
  };
  ASSERT_TRUE(store->Create(Pods(), "default", PodDoc("alone"), false).ok());
  auto held = store->Create(Pods(), "default", PodDoc("held"), false);
  ASSERT_TRUE(held.ok());
  const Json held_before = *held->object;  // `held` keeps the version: it must not change

  auto bound = bind("alone", "n1");
  ASSERT_TRUE(bound.ok()) << bound.error().message;
  EXPECT_EQ((*bound->object)["spec"]["nodeName"], "n1");
  EXPECT_EQ((*bound->object)["metadata"]["generation"], 2);
  EXPECT_EQ((*bound->object)["metadata"]["resourceVersion"], std::to_string(bound->rv));
  EXPECT_EQ(Json::parse(*bound->text), *bound->object);
  auto copied = bind("held", "n2");
  ASSERT_TRUE(copied.ok());
  EXPECT_EQ(*held->object, held_before);
  EXPECT_EQ((*copied->object)["spec"]["nodeName"], "n2");
  EXPECT_EQ((*copied->object)["metadata"]["generation"], 2);

  // Refused: nothing changes, no revision.
  const int64_t rv = store->revision();
  auto again = bind("alone", "n3");
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().code, ErrorCode::kConflict);
  EXPECT_EQ(store->revision(), rv);
  EXPECT_EQ((*store->Get(Pods(), "default", "alone")->object)["spec"]["nodeName"], "n1");
  EXPECT_EQ(bind("missing", "n1").error().code, ErrorCode::kNotFound);

  // Live: the unassigned watch saw each pod leave with its last unassigned content; the
  // assigned one saw each arrive.
  ASSERT_EQ(left.size(), 4u);  // two ADDED, two DELETED
  for (int i : {2, 3}) {
    EXPECT_EQ(left[i].first, WatchEventType::kDeleted);
    EXPECT_FALSE(left[i].second["spec"].contains("nodeName"));
  }
  EXPECT_EQ(left[2].second["metadata"]["resourceVersion"], std::to_string(bound->rv));
  ASSERT_EQ(joined.size(), 2u);
  EXPECT_EQ(joined[0].first, WatchEventType::kAdded);
  EXPECT_EQ(joined[0].second, *bound->object);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[2].first, WatchEventType::kModified);
  EXPECT_EQ(all[2].second, *bound->object);

  // Resumed from the start, the same events from the history.
  std::vector<std::pair<WatchEventType, Json>> replayed;
  auto w4 = store->Watch(Pods(), "default", start, *unassigned, record(&replayed));
  ASSERT_TRUE(w4.ok());
  ASSERT_EQ(replayed.size(), left.size());
  for (size_t i = 0; i < left.size(); ++i) {
    EXPECT_EQ(replayed[i].first, left[i].first) << i;
    EXPECT_EQ(replayed[i].second, left[i].second) << i;
  }
  // A change that fails half way, by throwing or by refusing after it changed something,
  // leaves the stored version whole: its tree is its text again, and no revision is used. Both
  // ways: "alone" is held (`bound`), so it is changed as a copy; "third" is changed in place.
  ASSERT_TRUE(store->Create(Pods(), "default", PodDoc("third"), false).ok());
  for (const char* name : {"alone", "third"}) {
    for (bool throws : {true, false}) {
      const int64_t before = store->revision();
      auto broken = store->Change(
          Pods(), "default", name,
          [&](Json& pod) -> Result<bool> {
            pod["spec"]["nodeName"] = "half";
            if (throws) return pod["spec"]["nodeName"].get<int>() > 0;  // a type_error
            return Error{"refused late", ErrorCode::kConflict};
          },
          false);
      ASSERT_FALSE(broken.ok());
      EXPECT_EQ(store->revision(), before);
      auto whole = store->Get(Pods(), "default", name);
      ASSERT_TRUE(whole.ok());
      EXPECT_EQ(*whole->object, Json::parse(*whole->text)) << name;
      EXPECT_NE((*whole->object)["spec"].value("nodeName", ""), "half") << name;
    }
  }
  ASSERT_TRUE(bind("third", "n4").ok());  // and it still binds
}

TEST_F(StoreTest, DeletePreconditionsMustMatch) {
  auto store = Open();
  auto created = store->Create(Pods(), "default", PodDoc("p"), false);
  ASSERT_TRUE(created.ok());
  auto stale = store->Delete(Pods(), "default", "p", {.resource_version = "1"}, false);
  ASSERT_FALSE(stale.ok());
  EXPECT_EQ(stale.error().code, ErrorCode::kConflict);
  EXPECT_NE(stale.error().message.find("ResourceVersion in precondition: 1"), std::string::npos);
  auto other_uid = store->Delete(Pods(), "default", "p", {.uid = "other"}, false);
  ASSERT_FALSE(other_uid.ok());
  EXPECT_EQ(other_uid.error().code, ErrorCode::kConflict);
  EXPECT_TRUE(store->Get(Pods(), "default", "p").ok());
  EXPECT_TRUE(
      store
          ->Delete(Pods(), "default", "p", {.resource_version = std::to_string(created->rv)}, false)
          .ok());
  EXPECT_FALSE(store->Get(Pods(), "default", "p").ok());
}

TEST_F(StoreTest, StateSurvivesReopen) {
  int64_t rv;
  {
    auto store = Open();
    auto c = store->Create(Pods(), "default", PodDoc("keep"), false);
    ASSERT_TRUE(c.ok());
    rv = c->rv;
    ASSERT_TRUE(store->Create(Pods(), "default", PodDoc("gone"), false).ok());
    ASSERT_TRUE(store->Delete(Pods(), "default", "gone", {}, false).ok());
  }
  auto store = Open();
  auto got = store->Get(Pods(), "default", "keep");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->rv, rv);
  EXPECT_FALSE(store->Get(Pods(), "default", "gone").ok());
  auto next = store->Create(Pods(), "default", PodDoc("after"), false);
  ASSERT_TRUE(next.ok());
  EXPECT_GT(next->rv, rv + 1);  // the revision continues past the deletion
}

// The revision row is written only when a group ends with a deletion; otherwise the last
// written row carries the revision. Either way a reopened store continues past every
// acknowledged revision, and an update in place keeps the other objects intact.
TEST_F(StoreTest, RevisionContinuesAfterUpdatesAndDeletesAcrossReopens) {
  int64_t last;
  {
    auto store = Open();
    ASSERT_TRUE(store->Create(Pods(), "default", PodDoc("a"), false).ok());
    ASSERT_TRUE(store->Create(Pods(), "default", PodDoc("b"), false).ok());
    auto u = store->Mutate(
        Pods(), "default", "a",
        [](const Json* cur) -> Result<Json> {
          Json next = *cur;
          next["metadata"]["labels"]["x"] = "1";
          return next;
        },
        false, false);
    ASSERT_TRUE(u.ok());
    ASSERT_TRUE(store->Delete(Pods(), "default", "b", {}, false).ok());
    auto c = store->Create(Pods(), "default", PodDoc("c"), false);
    ASSERT_TRUE(c.ok());
    last = c->rv;
  }
  {
    auto store = Open();
    EXPECT_EQ(store->revision(), last);
    auto a = store->Get(Pods(), "default", "a");
    ASSERT_TRUE(a.ok());
    EXPECT_EQ((*a->object)["metadata"]["labels"]["x"], "1");
    EXPECT_FALSE(store->Get(Pods(), "default", "b").ok());
    auto d = store->Delete(Pods(), "default", "c", {}, false);
    ASSERT_TRUE(d.ok());
    last = store->revision();
  }
  auto store = Open();
  EXPECT_EQ(store->revision(), last);  // the deletion's revision, from the revision row
  auto next = store->Create(Pods(), "default", PodDoc("after"), false);
  ASSERT_TRUE(next.ok());
  EXPECT_GT(next->rv, last);
}

// Checkpoints keep the WAL bounded: the changes move into the database file and the WAL is
// reused from its start (an ever-growing WAL also makes every commit sync the file's size).
TEST_F(StoreTest, CheckpointsKeepTheWalBounded) {
  auto opened = Store::Open({.path = (dir_ / "state.db").string(), .checkpoint_pages = 100});
  ASSERT_TRUE(opened.ok());
  auto store = std::move(opened).value();
  for (int i = 0; i < 1500; ++i) {
    ASSERT_TRUE(store->Create(Pods(), "default", PodDoc("p" + std::to_string(i)), false).ok());
  }
  // 1,500 creates, each its own commit, write about 3,500 WAL pages (14 MB) when nothing is
  // checkpointed; checkpoints from 100 pages (restarting ones from 400) keep it to several
  // hundred (more when the checkpointer is starved of CPU, so the bound is loose).
  EXPECT_LT(std::filesystem::file_size(dir_ / "state.db-wal"), 8u << 20);
  EXPECT_GT(std::filesystem::file_size(dir_ / "state.db"), 16u << 10);
  // One checkpoint per 100 pages the WAL grew, not one after every commit once the WAL is past
  // the threshold (a passive checkpoint leaves its size as it was): ~3,500 pages written make
  // a few dozen, where every commit would make over a thousand.
  EXPECT_GT(store->checkpoints(), 0);
  EXPECT_LT(store->checkpoints(), 300);
}

// A child process writes from 4 threads and reports every acknowledged write; it is killed
// with SIGKILL mid-stream. Every acknowledged object must be there after reopening, with the
// resourceVersion that was acknowledged.
TEST_F(StoreTest, WhenDurableAnswersAfterTheCommitOrAtOnce) {
  auto store = Open();
  auto c = store->Create(Pods(), "default", PodDoc("later"), false, Durability::kLater);
  ASSERT_TRUE(c.ok());
  std::promise<std::thread::id> committed;
  store->WhenDurable(c->rv, [&](VoidResult ok) {
    EXPECT_TRUE(ok.ok());
    committed.set_value(std::this_thread::get_id());
  });
  auto done = committed.get_future();
  ASSERT_EQ(done.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  (void)done.get();
  // Durable now: answered on the calling thread before WhenDurable returns.
  bool at_once = false;
  store->WhenDurable(c->rv, [&](VoidResult ok) { at_once = ok.ok(); });
  EXPECT_TRUE(at_once);
  store.reset();
  EXPECT_TRUE(Open()->Get(Pods(), "default", "later").ok());
  // A store without a database has nothing to wait for.
  auto memory = Store::Open({});
  ASSERT_TRUE(memory.ok());
  auto m = (*memory)->Create(Pods(), "default", PodDoc("m"), false, Durability::kLater);
  ASSERT_TRUE(m.ok());
  bool memory_at_once = false;
  (*memory)->WhenDurable(m->rv, [&](VoidResult ok) { memory_at_once = ok.ok(); });
  EXPECT_TRUE(memory_at_once);
}

TEST_F(StoreTest, AcknowledgedWritesSurviveKill9) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    auto store = Store::Open({.path = (dir_ / "state.db").string()});
    if (!store.ok()) _exit(2);
    std::mutex out_mu;
    std::vector<std::thread> threads;
    // Half the writers wait in the call; the others acknowledge from WhenDurable, as the
    // HTTP handlers do, and write again before the previous acknowledgement came.
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        const bool later = t % 2 == 1;
        for (int i = 0;; ++i) {
          std::string name = "p" + std::to_string(t) + "-" + std::to_string(i);
          auto c = (*store)->Create(Pods(), "default", PodDoc(name), false,
                                    later ? Durability::kLater : Durability::kAwait);
          if (!c.ok()) _exit(3);
          std::string line = name + " " + std::to_string(c->rv) + "\n";
          auto ack = [&out_mu, fd = fds[1], line](VoidResult durable) {
            if (!durable.ok()) _exit(5);
            std::lock_guard lock(out_mu);
            if (write(fd, line.data(), line.size()) < 0) _exit(4);
          };
          if (later) {
            (*store)->WhenDurable(c->rv, ack);
          } else {
            ack({});
          }
        }
      });
    }
    for (auto& th : threads) th.join();
    _exit(0);
  }
  close(fds[1]);
  std::map<std::string, int64_t> acked;
  std::string buf;
  char chunk[4096];
  while (acked.size() < 400) {
    ssize_t n = read(fds[0], chunk, sizeof(chunk));
    ASSERT_GT(n, 0) << "writer died early";
    buf.append(chunk, n);
    size_t nl;
    while ((nl = buf.find('\n')) != std::string::npos) {
      std::string line = buf.substr(0, nl);
      buf.erase(0, nl + 1);
      size_t sp = line.find(' ');
      acked[line.substr(0, sp)] = std::stoll(line.substr(sp + 1));
    }
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  close(fds[0]);
  auto store = Open();
  for (const auto& [name, rv] : acked) {
    auto got = store->Get(Pods(), "default", name);
    ASSERT_TRUE(got.ok()) << name << " was acknowledged but is lost";
    EXPECT_EQ(got->rv, rv) << name;
  }
}

const ResourceInfo& CoreEvents() { return *FindResource("", "v1", "events"); }
const ResourceInfo& V1Events() { return *FindResource("events.k8s.io", "v1", "events"); }

using testing::PodRef;
using testing::SchedulerEvent;

// events.k8s.io/v1 Events kept as core/v1 Events: one object, one revision, one row, served
// through both APIs.
class EventStorageTest : public StoreTest {
 protected:
  void SetUp() override {
    StoreTest::SetUp();
    store_ = Open();
  }
  void TearDown() override {
    store_.reset();
    StoreTest::TearDown();
  }
  std::string DbPath() const { return (dir_ / "state.db").string(); }
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
  auto listed = [&](const ResourceInfo& r, const char* selector) {
    std::vector<std::string> names;
    auto filter = ParseFieldSelector(r, selector);
    EXPECT_TRUE(filter.ok()) << selector;
    if (!filter.ok()) return names;
    auto list = store_->List(r, "default", *filter, 0, "");
    EXPECT_TRUE(list.ok()) << selector;
    if (!list.ok()) return names;
    for (const auto& item : list->items) names.push_back((*item.object)["metadata"]["name"]);
    return names;
  };
  EXPECT_EQ(listed(CoreEvents(), "involvedObject.name=q"), std::vector<std::string>{"b"});
  EXPECT_EQ(listed(V1Events(), "regarding.name=p"), std::vector<std::string>{"a"});
  auto v1_selector = ParseFieldSelector(V1Events(), "regarding.name=p");
  ASSERT_TRUE(v1_selector.ok());

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
