// The informer over a LocalListWatch: an in-memory twin serves the list and the watch, and no
// HTTP server exists (the RestClient points at a closed port, so any HTTP read would fail).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "client/client_test_util.h"
#include "client/informer.h"

namespace berth::client {
namespace {

using Json = nlohmann::json;

RawObject NodeDoc(const std::string& name, int rv, bool managed_fields = false) {
  Json n = {{"kind", "Node"},
            {"apiVersion", "v1"},
            {"metadata", {{"name", name}, {"resourceVersion", std::to_string(rv)}}}};
  if (managed_fields) n["metadata"]["managedFields"] = Json::array({{{"manager", "kubectl"}}});
  return std::make_shared<const Json>(std::move(n));
}

// Serves "/api/v1/nodes": each list returns the front of `listings` (the last one stays);
// each watch first answers with `watch_errors` (front first, then none), then delivers what the
// test pushes.
class FakeLocal final : public LocalListWatch {
 public:
  struct Reg final : Registration {
    explicit Reg(FakeLocal* f) : fake(f) {}
    ~Reg() override {
      std::lock_guard lock(fake->mu);
      fake->sink = nullptr;
    }
    FakeLocal* fake;
  };

  bool Serves(std::string_view path) const override { return path == "/api/v1/nodes"; }
  Result<ListResult> List(std::string_view) override {
    std::lock_guard lock(mu);
    ++lists;
    ListResult out = listings.front();
    if (listings.size() > 1) listings.pop_front();
    return out;
  }
  Result<std::unique_ptr<Registration>> Watch(std::string_view, std::string_view rv,
                                              EventSink s) override {
    std::lock_guard lock(mu);
    watched_from.push_back(std::string(rv));
    if (!watch_errors.empty()) {
      ErrorCode code = watch_errors.front();
      watch_errors.pop_front();
      return Error{"watch refused", code};
    }
    for (int i = 0; i < flood; ++i)
      if (!s({Event::Type::kModified, NodeDoc("a", 100 + i), std::to_string(100 + i)})) break;
    flood = 0;
    sink = std::move(s);
    return std::unique_ptr<Registration>(std::make_unique<Reg>(this));
  }
  // Delivers an event on the open watch; false when none is open or it refused the event.
  bool Push(Event::Type type, RawObject doc) {
    std::lock_guard lock(mu);
    if (!sink) return false;
    std::string rv = (*doc)["metadata"]["resourceVersion"].get<std::string>();
    return sink({type, std::move(doc), rv});
  }
  bool Watching() {
    std::lock_guard lock(mu);
    return sink != nullptr;
  }

  std::mutex mu;
  std::deque<ListResult> listings;
  std::deque<ErrorCode> watch_errors;
  int flood = 0;  // events the next watch is handed before it returns
  int lists = 0;
  std::vector<std::string> watched_from;
  EventSink sink;
};

struct Recorder {
  std::mutex mu;
  std::vector<std::string> events;
  std::vector<Object> objects;
  InformerHandlers Handlers() {
    auto name = [](const Object& o) {
      return std::get<std::shared_ptr<const Node>>(o)->metadata.name;
    };
    return {[this, name](const Object& o) { Record("add " + name(o), o); },
            [this, name](const Object&, const Object& o) { Record("update " + name(o), o); },
            [this, name](const Object& o) { Record("delete " + name(o), o); }};
  }
  void Record(std::string e, const Object& o) {
    std::lock_guard lock(mu);
    events.push_back(std::move(e));
    objects.push_back(o);
  }
  size_t size() {
    std::lock_guard lock(mu);
    return events.size();
  }
};

bool WaitFor(const std::function<bool()>& done) {
  for (int i = 0; i < 500; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

std::unique_ptr<RestClient> UnreachableRest(LocalListWatch* local) {
  auto rest = RestFor("http://127.0.0.1:9", "", RestOptions{.qps = 0, .max_retries = 0});
  rest->set_local(local);
  return rest;
}

// A node informer of `rest` recording into `rec`, started and watching `local`.
std::unique_ptr<Informer> StartWatching(FakeLocal& local, RestClient* rest, Recorder& rec) {
  auto inf =
      std::make_unique<Informer>(rest, InformerOptions{"/api/v1/nodes", "Node"}, rec.Handlers());
  inf->Start();
  EXPECT_TRUE(WaitFor([&] { return local.Watching(); }));
  return inf;
}

// Listed and watched objects keep the served documents themselves (no copy), are delivered in
// order, and the watch starts from the list's revision and then from the last event's.
TEST(InformerLocalTest, ListAndWatchShareTheServedDocuments) {
  FakeLocal local;
  RawObject a = NodeDoc("a", 1), b = NodeDoc("b", 2);
  local.listings = {{{a, b}, "10"}};
  auto rest = UnreachableRest(&local);
  Recorder rec;
  auto inf = StartWatching(local, rest.get(), rec);
  EXPECT_TRUE(inf->HasSynced());
  RawObject a2 = NodeDoc("a", 11);
  ASSERT_TRUE(local.Push(LocalListWatch::Event::Type::kModified, a2));
  ASSERT_TRUE(local.Push(LocalListWatch::Event::Type::kDeleted, NodeDoc("b", 12)));
  ASSERT_TRUE(WaitFor([&] { return rec.size() == 4; }));
  inf->Stop();
  EXPECT_FALSE(local.Watching());  // Stop ended the watch
  std::lock_guard lock(rec.mu);
  EXPECT_EQ(rec.events, (std::vector<std::string>{"add a", "add b", "update a", "delete b"}));
  EXPECT_EQ(std::get<std::shared_ptr<const Node>>(rec.objects[0])->raw, a);
  EXPECT_EQ(std::get<std::shared_ptr<const Node>>(rec.objects[2])->raw, a2);
  EXPECT_EQ(local.watched_from, (std::vector<std::string>{"10"}));
  ASSERT_EQ(inf->List().size(), 1u);
  EXPECT_EQ(std::get<std::shared_ptr<const Node>>(*inf->Get("a"))->raw, a2);
}

// An event offering a shared decode of its document is taken as decoded: informers given the
// same event hold the same typed object.
TEST(InformerLocalTest, ASharedDecodeIsTakenAsIs) {
  FakeLocal local;
  local.listings = {{{}, "10"}};
  auto rest = UnreachableRest(&local);
  Recorder rec;
  auto inf = StartWatching(local, rest.get(), rec);
  RawObject doc = NodeDoc("a", 11);
  auto shared = std::make_shared<const SharedDecode>(doc);
  const Object expected = *shared->Get("node a");
  {
    std::lock_guard lock(local.mu);
    ASSERT_TRUE(local.sink({LocalListWatch::Event::Type::kAdded, doc, "11", shared}));
  }
  ASSERT_TRUE(WaitFor([&] { return rec.size() == 1; }));
  inf->Stop();
  EXPECT_EQ(std::get<std::shared_ptr<const Node>>(*inf->Get("a")),
            std::get<std::shared_ptr<const Node>>(expected));
}

// A watch refused with Gone lists again and delivers only the difference; another refusal is
// tried again from the same revision.
TEST(InformerLocalTest, GoneListsAgainAndOtherRefusalsRetryTheWatch) {
  FakeLocal local;
  // The watch after the first list is refused with Gone; the second list changes b and drops a.
  local.listings = {{{NodeDoc("a", 1), NodeDoc("b", 2)}, "10"},
                    {{NodeDoc("b", 15), NodeDoc("c", 16)}, "20"}};
  local.watch_errors = {ErrorCode::kGone, ErrorCode::kUnavailable};
  auto rest = UnreachableRest(&local);
  Recorder rec;
  auto inf = StartWatching(local, rest.get(), rec);
  inf->Stop();
  std::lock_guard lock(rec.mu);
  std::lock_guard l2(local.mu);
  EXPECT_EQ(local.lists, 2);
  EXPECT_EQ(rec.events,
            (std::vector<std::string>{"add a", "add b", "delete a", "update b", "add c"}));
  // Gone at "10"; after the second list "20" refused as unavailable, then "20" again.
  EXPECT_EQ(local.watched_from, (std::vector<std::string>{"10", "20", "20"}));
  EXPECT_EQ(inf->List().size(), 2u);
}

// A served document carrying what trim_metadata drops is copied and trimmed; others are kept.
TEST(InformerLocalTest, DocumentsWithManagedFieldsAreTrimmedCopies) {
  FakeLocal local;
  RawObject managed = NodeDoc("m", 1, true), plain = NodeDoc("p", 2);
  local.listings = {{{managed, plain}, "10"}};
  auto rest = UnreachableRest(&local);
  Recorder rec;
  auto inf = StartWatching(local, rest.get(), rec);
  inf->Stop();
  RawObject kept = std::get<std::shared_ptr<const Node>>(*inf->Get("m"))->raw;
  ASSERT_NE(kept, nullptr);
  EXPECT_NE(kept, managed);
  EXPECT_FALSE((*kept)["metadata"].contains("managedFields"));
  EXPECT_TRUE((*managed)["metadata"].contains("managedFields"));  // the served one is untouched
  EXPECT_EQ(std::get<std::shared_ptr<const Node>>(*inf->Get("p"))->raw, plain);
}

// A watcher too far behind is cut off: the events it had queued are delivered, then it lists
// again rather than miss any.
TEST(InformerLocalTest, AWatcherTooFarBehindListsAgain) {
  FakeLocal local;
  local.listings = {{{NodeDoc("a", 1)}, "10"}};
  local.flood = 1001;  // one more than the informer queues
  auto rest = UnreachableRest(&local);
  std::atomic<int> updates{0};
  InformerOptions options{"/api/v1/nodes", "Node"};
  options.local_backlog = 1000;
  Informer inf(rest.get(), options, {{}, [&](const Object&, const Object&) { ++updates; }, {}});
  inf.Start();
  ASSERT_TRUE(WaitFor([&] {
    std::lock_guard lock(local.mu);
    return local.lists == 2 && local.sink != nullptr;
  }));
  inf.Stop();
  // The queued events, then the second list's copy of "a" (another revision).
  EXPECT_EQ(updates.load(), 1001);
}

}  // namespace
}  // namespace berth::client
