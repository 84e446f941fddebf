#include "apiserver/store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <map>
#include <thread>

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

}  // namespace
}  // namespace berth::apiserver
