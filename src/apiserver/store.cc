#include "apiserver/store.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <tuple>
#include <unordered_map>

#include "api/codec.h"
#include "api/json_parse.h"
#include "api/json_text.h"
#include "apiserver/crd_registry.h"
#include "apiserver/event_conversion.h"

namespace berth::apiserver {

Error NotFoundError(const ResourceInfo& r, std::string_view name) {
  return Error{fmt::format("{} \"{}\" not found", r.StorageName(), name), ErrorCode::kNotFound};
}

Error ConflictError(const ResourceInfo& r, std::string_view name) {
  return Error{fmt::format("Operation cannot be fulfilled on {} \"{}\": the object has been "
                           "modified; please apply your changes to the latest version and try "
                           "again",
                           r.StorageName(), name),
               ErrorCode::kConflict};
}

namespace {

using Json = nlohmann::json;

std::string ObjectKey(std::string_view ns, std::string_view name) {
  return std::string(ns) + "/" + std::string(name);
}

const char* TypeName(WatchEventType t) {
  switch (t) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
  }
  return "";
}

}  // namespace

std::array<std::shared_ptr<const std::string>, 3> WatchEventLineParts(const WatchEvent& event) {
  // Made once, then only read (from any thread).
  static const auto kPrefixes = [] {
    std::array<std::shared_ptr<const std::string>, 3> p;
    for (WatchEventType type :
         {WatchEventType::kAdded, WatchEventType::kModified, WatchEventType::kDeleted}) {
      p[static_cast<size_t>(type)] = std::make_shared<const std::string>(
          std::string(R"({"type":")") + TypeName(type) + R"(","object":)");
    }
    return p;
  }();
  static const auto kSuffix = std::make_shared<const std::string>("}\n");
  return {kPrefixes[static_cast<size_t>(event.type)], event.object.text, kSuffix};
}

namespace {

// A change as a watch with a selector sees it, as kube-apiserver's watch cache reports it: an
// object that starts matching is ADDED, one that stops matching is DELETED (with its last
// matching content at the change's revision), one that matches neither before nor after is
// not reported.
//
// A change made in place (Store::Change) has no previous document: the caller says whether it
// matched (`matched_before`), and its last content is read again from `before_text` only if
// it stopped matching.
std::optional<WatchEvent> ThroughFilter(
    const WatchEvent& ev, const ObjectFilter& filter, std::optional<bool> matched_before = {},
    const std::shared_ptr<const std::string>& before_text = nullptr) {
  const bool now = ev.type != WatchEventType::kDeleted && filter(*ev.object.object);
  bool before = false;
  if (ev.type == WatchEventType::kDeleted) {
    before = filter(*ev.object.object);
  } else if (ev.type == WatchEventType::kModified && matched_before) {
    before = *matched_before;
  } else if (ev.type == WatchEventType::kModified && ev.previous) {
    before = filter(*ev.previous);
  }
  if (now == before || ev.type == WatchEventType::kDeleted ||
      (now && ev.type == WatchEventType::kAdded)) {
    if (!now && !before) return std::nullopt;
    return ev;
  }
  WatchEvent seen;
  seen.object.rv = ev.object.rv;
  if (now) {
    seen.type = WatchEventType::kAdded;
    seen.object = ev.object;
  } else {
    seen.type = WatchEventType::kDeleted;
    Json last;
    if (ev.previous) {
      last = *ev.previous;
    } else if (!before_text || !ParseJsonFast(*before_text, &last)) {
      last = Json::parse(before_text ? *before_text : "{}", nullptr, false);
    }
    last["metadata"]["resourceVersion"] = std::to_string(ev.object.rv);
    seen.object.text = std::make_shared<const std::string>(last.dump());
    seen.object.object = std::make_shared<const Json>(std::move(last));
  }
  return seen;
}

bool HasFinalizers(const Json& meta) {
  auto it = meta.find("finalizers");
  return it != meta.end() && it->is_array() && !it->empty();
}

// A namespace's spec.finalizers (`kubernetes`: the namespace deleter's) hold its removal back
// as metadata.finalizers hold any object's.
bool HasSpecFinalizers(const Json& obj) {
  auto spec = obj.find("spec");
  return spec != obj.end() && spec->is_object() && HasFinalizers(*spec);
}

bool IsNamespaces(const ResourceInfo& r) { return r.group.empty() && r.plural == "namespaces"; }

// Whether `next` is a new generation of `current`: its spec changed, or, for a custom
// resource, anything but metadata (and status, when status is a subresource), as
// apiextensions-apiserver counts.
bool GenerationChanged(const ResourceInfo& r, const Json& current, const Json& next) {
  const CustomResourceVersion* custom = CustomResourceOf(r);
  if (!custom) {
    return next.contains("spec") && current.contains("spec") && next["spec"] != current["spec"];
  }
  const bool status_sub =
      std::find(r.subresources.begin(), r.subresources.end(), "status") != r.subresources.end();
  for (const auto* pair : {&current, &next}) {
    for (const auto& [key, value] : pair->items()) {
      if (key == "metadata" || key == "apiVersion" || key == "kind") continue;
      if (key == "status" && status_sub) continue;
      const Json& other = pair == &current ? next : current;
      auto it = other.find(key);
      if (it == other.end() || *it != value) return true;
    }
  }
  return false;
}

// A resource kept in another's storage and converted on the way in and out: events.k8s.io/v1
// Events are core/v1 Events (event_conversion.h).
struct StorageView {
  const ResourceInfo* storage;
  Json (*to_storage)(Json);
  Json (*from_storage)(Json);
  std::string_view storage_name;  // as errors name it
};

const StorageView* ViewOf(const ResourceInfo& r) {
  static const StorageView kEvents{FindResource("", "v1", "events"), &CoreEventFromEventsV1,
                                   &EventsV1FromCoreEvent, "events"};
  return r.group == "events.k8s.io" && r.plural == "events" ? &kEvents : nullptr;
}

StoredObject Viewed(const StorageView& view, const StoredObject& so) {
  if (!so.object) return so;
  Json obj = view.from_storage(*so.object);
  std::string text;
  text.reserve(so.text ? so.text->size() + 32 : 512);
  AppendJson(obj, &text);
  return StoredObject{so.rv, std::make_shared<const Json>(std::move(obj)),
                      std::make_shared<const std::string>(std::move(text))};
}

// The storage's error as the client's resource names it ("events.events.k8s.io \"x\" ...").
Error Viewed(const StorageView& view, const ResourceInfo& r, Error e) {
  const std::string from = std::string(view.storage_name) + " \"";
  if (size_t at = e.message.find(from); at != std::string::npos) {
    e.message.replace(at, from.size(), r.StorageName() + " \"");
  }
  return e;
}

Result<StoredObject> Viewed(const StorageView& view, const ResourceInfo& r,
                            Result<StoredObject> result) {
  if (!result.ok()) return Viewed(view, r, result.error());
  return Viewed(view, *result);
}

// The event a view's watcher receives. Its `previous` stays unset: selectors have been applied
// to the stored change already (ViewedFilter), and a watcher reads only the object.
WatchEvent Viewed(const StorageView& view, const WatchEvent& ev) {
  return WatchEvent{ev.type, Viewed(view, ev.object), nullptr};
}

// The filter of a view's reader, applied to stored objects.
ObjectFilter ViewedFilter(const StorageView& view, ObjectFilter filter) {
  if (!filter) return filter;
  return [&view, filter = std::move(filter)](const Json& stored) {
    return filter(view.from_storage(stored));
  };
}

// One pending durable change, written by the group-commit thread.
struct PendingWrite {
  std::string key;  // storage/ns/name
  int64_t rv;
  std::shared_ptr<const std::string> text;  // null: delete
};

// A change as the watch history keeps it, for watches that resume from a revision. The text
// is kept; the document trees only while something else holds them (the store, for an object's
// current version): a superseded version's tree is parsed again from its text if a resumed
// watch needs it, rather than kept for the whole window.
struct HistoryEvent {
  const ResourceInfo* resource;
  std::string ns;
  WatchEventType type;
  int64_t rv;
  std::shared_ptr<const std::string> text;
  std::weak_ptr<const Json> object;
  std::shared_ptr<const std::string> previous_text;  // MODIFIED: the version before
  std::weak_ptr<const Json> previous;
};

std::shared_ptr<const Json> TreeOf(const std::weak_ptr<const Json>& tree,
                                   const std::shared_ptr<const std::string>& text) {
  if (auto held = tree.lock()) return held;
  if (!text) return nullptr;
  Json doc;
  if (!ParseJsonFast(*text, &doc)) doc = Json::parse(*text, nullptr, false);
  return std::make_shared<const Json>(std::move(doc));
}

struct Watcher {
  const ResourceInfo* resource;
  std::string ns;
  ObjectFilter filter;
  WatchCallback callback;
  bool dead = false;
};

}  // namespace

struct Store::Impl {
  StoreOptions options;
  mutable std::mutex mu;
  int64_t revision = 0;
  // storage name -> "ns/name" -> object
  std::unordered_map<std::string, std::map<std::string, StoredObject>> objects;
  std::deque<HistoryEvent> history;
  int64_t window_start = 0;  // watches may resume from revisions >= this
  std::list<Watcher> watchers;
  std::mt19937_64 rng{std::random_device{}()};

  // Persistence. A commit thread writes everything pending (the changes queued while it
  // committed the previous group) in one transaction, then wakes the writers waiting for it
  // and runs the WhenDurable callbacks of the revisions now durable. Writers that do not wait
  // (Durability::kLater) leave their thread free for other requests meanwhile, which lets more
  // writes join each group.
  sqlite3* db = nullptr;
  sqlite3_stmt* put = nullptr;
  sqlite3_stmt* del = nullptr;
  sqlite3_stmt* meta = nullptr;
  sqlite3_stmt* begin = nullptr;
  sqlite3_stmt* commit = nullptr;
  std::mutex persist_mu;
  std::condition_variable durable_cv;  // a group committed (or the WAL restarted)
  std::condition_variable commit_cv;   // wakes the commit thread
  std::vector<PendingWrite> pending;
  std::vector<PendingWrite> batch;  // the group being committed (owned by the committer)
  std::vector<std::pair<int64_t, std::function<void(VoidResult)>>> when_durable;
  bool committing = false;
  bool commit_stopping = false;
  // A sync costs the same for one write or fifty. Once groups are this large (the server is
  // busy), the next one starts no sooner than kGroupWindow after the last started, so more
  // writes share each sync; a quiet server's write is committed at once.
  static constexpr size_t kBusyGroup = 4;
  static constexpr std::chrono::microseconds kGroupWindow{1000};
  std::thread committer;
  // The checkpointer holds commits back while it restarts the WAL (see CheckpointLoop).
  bool restarting_wal = false;
  int64_t durable_rv = 0;
  std::string persist_error;

  // Checkpoints (copying the WAL into the database file, with its own sync) run on a thread
  // of their own, on a second connection, so that no writer waits for one.
  sqlite3* checkpoint_db = nullptr;
  std::thread checkpointer;
  std::mutex checkpoint_mu;
  std::condition_variable checkpoint_cv;
  bool checkpoint_wanted = false;
  bool stopping = false;
  // The WAL size (pages) at which the next checkpoint starts: the threshold past what the last
  // checkpoint left. A passive checkpoint leaves the WAL's size as it was (it is reused only
  // from a restart), so a fixed threshold would start one after every commit once crossed.
  std::atomic<int> next_checkpoint_pages{0};
  std::atomic<int64_t> checkpoints_run{0};

  ~Impl() {
    if (checkpointer.joinable()) {
      {
        std::lock_guard lock(checkpoint_mu);
        stopping = true;
      }
      checkpoint_cv.notify_all();
      checkpointer.join();
    }
    if (checkpoint_db) sqlite3_close(checkpoint_db);
    if (committer.joinable()) {
      // The commit thread commits what is still pending before it ends.
      {
        std::lock_guard lock(persist_mu);
        commit_stopping = true;
      }
      commit_cv.notify_all();
      committer.join();
    }
    sqlite3_finalize(put);
    sqlite3_finalize(del);
    sqlite3_finalize(meta);
    sqlite3_finalize(begin);
    sqlite3_finalize(commit);
    if (db) sqlite3_close(db);
  }

  std::string NewUid() {
    std::uniform_int_distribution<uint64_t> dist;
    uint64_t a = dist(rng), b = dist(rng);
    a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
    b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
    return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff,
                       a & 0xffff, b >> 48, b & 0xffffffffffffULL);
  }

  std::string RandomSuffix() {
    static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
    std::uniform_int_distribution<int> dist(0, sizeof(kAlphabet) - 2);
    std::string s;
    for (int i = 0; i < 5; ++i) s.push_back(kAlphabet[dist(rng)]);
    return s;
  }

  StoredObject Seal(Json obj, int64_t rv) {
    obj["metadata"]["resourceVersion"] = std::to_string(rv);
    StoredObject so;
    so.rv = rv;
    std::string text;
    text.reserve(1024);
    AppendJson(obj, &text);
    so.text = std::make_shared<const std::string>(std::move(text));
    so.object = std::make_shared<const Json>(std::move(obj));
    return so;
  }

  // Whether `obj` matches each live selector watcher of `r` in `ns`, in Publish's order.
  std::vector<char> MatchedBefore(const ResourceInfo& r, std::string_view ns, const Json& obj) {
    std::vector<char> matched;
    for (const Watcher& w : watchers) {
      if (w.dead || w.resource != &r || (!w.ns.empty() && w.ns != ns) || !w.filter) continue;
      matched.push_back(w.filter(obj) ? 1 : 0);
    }
    return matched;
  }

  // Records a change: watchers, history, persistence. Called with `mu` held.
  // `before`: for MODIFIED, the version it replaces.
  // `matched_before`: for a change made in place (no previous document), whether the object
  // matched each selector watcher before it, in the order of MatchedBefore.
  void Publish(const ResourceInfo& r, std::string_view ns, const std::string& key,
               WatchEventType type, const StoredObject& so, const StoredObject* before = nullptr,
               const std::vector<char>* matched_before = nullptr) {
    WatchEvent ev{type, so, before ? before->object : nullptr};
    size_t selector_watcher = 0;
    for (Watcher& w : watchers) {
      if (w.dead || w.resource != &r || (!w.ns.empty() && w.ns != ns)) continue;
      if (!w.filter) {
        // A watcher that refuses an event is finished; its registration removes it.
        if (!w.callback(ev)) w.dead = true;
        continue;
      }
      std::optional<bool> was;
      if (matched_before) was = (*matched_before)[selector_watcher++] != 0;
      auto seen = ThroughFilter(ev, w.filter, was, before ? before->text : nullptr);
      if (seen && !w.callback(*seen)) w.dead = true;
    }
    history.push_back(HistoryEvent{&r, std::string(ns), type, so.rv, so.text, so.object,
                                   before ? before->text : nullptr,
                                   before ? before->object : nullptr});
    while (history.size() > options.event_window) {
      window_start = history.front().rv;
      history.pop_front();
    }
    if (db && collecting) {
      collecting->push_back({r.StorageName() + "/" + key, so.rv,
                             type == WatchEventType::kDeleted ? nullptr : so.text});
    } else if (db) {
      bool wake = false;
      {
        std::lock_guard lock(persist_mu);
        pending.push_back({r.StorageName() + "/" + key, so.rv,
                           type == WatchEventType::kDeleted ? nullptr : so.text});
        // The commit thread waits only while nothing is pending (CommitLoop): a later write
        // joins the next group without a wake-up.
        wake = pending.size() == 1;
      }
      // No system call when the commit thread is busy committing (it is not waiting).
      if (wake) commit_cv.notify_one();
    }
  }

  // While set (with `mu` held), Publish collects the changes' writes here instead of queueing
  // them one by one: see OneTransaction.
  std::vector<PendingWrite>* collecting = nullptr;

  // The changes published while one lives (with `mu` held throughout) are queued together when
  // it ends, so the commit thread takes all of them into one transaction or none: a crash
  // keeps every one of them or none. Revisions stay in order, since no other change can be
  // published meanwhile.
  class OneTransaction {
   public:
    // Within another (a namespace removed by DeleteMany), the outer one collects.
    explicit OneTransaction(Impl& impl) : impl_(impl), nested_(impl.collecting != nullptr) {
      if (!nested_) impl_.collecting = &writes_;
    }
    ~OneTransaction() {
      if (nested_) return;
      impl_.collecting = nullptr;
      if (writes_.empty()) return;
      bool wake = false;
      {
        std::lock_guard lock(impl_.persist_mu);
        wake = impl_.pending.empty();
        impl_.pending.insert(impl_.pending.end(), std::make_move_iterator(writes_.begin()),
                             std::make_move_iterator(writes_.end()));
      }
      if (wake) impl_.commit_cv.notify_one();
    }
    OneTransaction(const OneTransaction&) = delete;
    OneTransaction& operator=(const OneTransaction&) = delete;

   private:
    Impl& impl_;
    const bool nested_;
    std::vector<PendingWrite> writes_;
  };

  // Returns once revision `rv` (already published) is durable.
  VoidResult WaitDurable(int64_t rv) {
    if (!db) return {};
    std::unique_lock lock(persist_mu);
    durable_cv.wait(lock, [&] { return durable_rv >= rv || !persist_error.empty(); });
    if (durable_rv >= rv) return {};
    return Error{"storage: " + persist_error, ErrorCode::kUnavailable};
  }

  void WhenDurable(int64_t rv, std::function<void(VoidResult)> done) {
    if (!db) return done({});
    std::unique_lock lock(persist_mu);
    if (durable_rv >= rv) {
      lock.unlock();
      return done({});
    }
    if (!persist_error.empty()) {
      Error e{"storage: " + persist_error, ErrorCode::kUnavailable};
      lock.unlock();
      return done(e);
    }
    when_durable.emplace_back(rv, std::move(done));
  }

  // The commit thread: one transaction per group of pending changes. A failed commit stops
  // persistence (every later write reports the error) rather than acknowledge writes out of
  // revision order.
  void CommitLoop() {
    std::unique_lock lock(persist_mu);
    auto last_start = std::chrono::steady_clock::time_point{};
    size_t last_size = 0;
    for (;;) {
      commit_cv.wait(lock, [&] {
        return (!pending.empty() && !restarting_wal) || (commit_stopping && pending.empty());
      });
      if (pending.empty()) return;  // stopping, and everything is committed
      const auto window_end = last_start + kGroupWindow;
      if (last_size >= kBusyGroup && std::chrono::steady_clock::now() < window_end) {
        commit_cv.wait_until(lock, window_end, [&] { return commit_stopping; });
        continue;  // the WAL may be restarting meanwhile
      }
      last_start = std::chrono::steady_clock::now();
      last_size = pending.size();
      bool ok = false;
      int64_t max_rv = 0;
      if (persist_error.empty()) {
        committing = true;
        batch.swap(pending);
        lock.unlock();
        std::tie(ok, max_rv) = CommitBatch();
        lock.lock();
        if (ok) {
          durable_rv = std::max(durable_rv, max_rv);
        } else {
          persist_error = sqlite3_errmsg(db);
          sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
        }
        committing = false;
      } else {
        pending.clear();
      }
      std::vector<std::function<void(VoidResult)>> ready;
      std::vector<std::pair<int64_t, std::function<void(VoidResult)>>> later;
      for (auto& [rv, done] : when_durable) {
        if (rv <= durable_rv || !persist_error.empty()) {
          ready.push_back(std::move(done));
        } else {
          later.emplace_back(rv, std::move(done));
        }
      }
      when_durable.swap(later);
      const VoidResult result =
          persist_error.empty()
              ? VoidResult{}
              : VoidResult{Error{"storage: " + persist_error, ErrorCode::kUnavailable}};
      durable_cv.notify_all();
      lock.unlock();
      for (auto& done : ready) done(result);
      lock.lock();
    }
  }

  // Writes `batch` in one transaction. Only the writer that set `committing` calls it.
  //
  // Pages written per commit are most of its cost (each a WAL frame, written and synced): an
  // update rewrites its row in place (an upsert, not a delete and an insert, which would touch
  // the old row's page, a new one and the key index), and the revision row is written only
  // when the group's last change is a deletion. Otherwise that change's row carries the
  // revision, and loading takes the larger of the two.
  std::pair<bool, int64_t> CommitBatch() {
    int64_t max_rv = 0, max_put_rv = 0;
    sqlite3_reset(begin);
    bool ok = sqlite3_step(begin) == SQLITE_DONE;
    for (const auto& w : batch) {
      if (!ok) break;
      max_rv = std::max(max_rv, w.rv);
      if (w.text) max_put_rv = std::max(max_put_rv, w.rv);
      sqlite3_stmt* st = w.text ? put : del;
      sqlite3_reset(st);
      sqlite3_bind_text(st, 1, w.key.data(), static_cast<int>(w.key.size()), SQLITE_STATIC);
      if (w.text) {
        sqlite3_bind_int64(st, 2, w.rv);
        sqlite3_bind_text(st, 3, w.text->data(), static_cast<int>(w.text->size()), SQLITE_STATIC);
      }
      ok = sqlite3_step(st) == SQLITE_DONE;
    }
    if (ok && max_put_rv < max_rv) {
      sqlite3_reset(meta);
      sqlite3_bind_int64(meta, 1, max_rv);
      ok = sqlite3_step(meta) == SQLITE_DONE;
    }
    if (ok) {
      sqlite3_reset(commit);
      ok = sqlite3_step(commit) == SQLITE_DONE;
    }
    batch.clear();
    return {ok, max_rv};
  }

  // Called by SQLite after each commit with the WAL's size in pages; once the WAL has grown
  // `checkpoint_pages` past what the last checkpoint left, wakes the checkpointer.
  static int OnWalCommit(void* arg, sqlite3*, const char*, int pages) {
    auto* impl = static_cast<Impl*>(arg);
    int next = impl->next_checkpoint_pages.load(std::memory_order_relaxed);
    // A WAL smaller than the mark was restarted: count from its start again.
    if (pages + impl->options.checkpoint_pages < next) {
      next = impl->options.checkpoint_pages;
      impl->next_checkpoint_pages.store(next, std::memory_order_relaxed);
    }
    if (pages >= next) {
      {
        std::lock_guard lock(impl->checkpoint_mu);
        impl->checkpoint_wanted = true;
      }
      impl->checkpoint_cv.notify_one();
    }
    return SQLITE_OK;
  }

  void CheckpointLoop() {
    for (;;) {
      {
        std::unique_lock lock(checkpoint_mu);
        checkpoint_cv.wait(lock, [&] { return checkpoint_wanted || stopping; });
        if (stopping) return;
        checkpoint_wanted = false;
      }
      // PASSIVE copies what it can without blocking writers. The WAL is reused from its start
      // only once a checkpoint has copied all of it before the next write, which a passive one
      // racing a steady stream of writes never does. When the WAL has grown to four times the
      // threshold anyway, RESTART copies the frames written meanwhile and makes the next
      // writer start over, holding writers back for that and two syncs.
      int wal_pages = 0;
      ++checkpoints_run;
      sqlite3_wal_checkpoint_v2(checkpoint_db, nullptr, SQLITE_CHECKPOINT_PASSIVE, &wal_pages,
                                nullptr);
      next_checkpoint_pages.store(std::max(wal_pages, 0) + options.checkpoint_pages,
                                  std::memory_order_relaxed);
      if (wal_pages >= 4 * options.checkpoint_pages) {
        // Writers would win SQLite's busy-handler race for the write lock every time: the
        // group commit is held back instead (writes keep queueing meanwhile).
        {
          std::unique_lock lock(persist_mu);
          restarting_wal = true;
          durable_cv.wait(lock, [&] { return !committing; });
        }
        sqlite3_wal_checkpoint_v2(checkpoint_db, nullptr, SQLITE_CHECKPOINT_RESTART, nullptr,
                                  nullptr);
        next_checkpoint_pages.store(options.checkpoint_pages, std::memory_order_relaxed);
        {
          std::lock_guard lock(persist_mu);
          restarting_wal = false;
        }
        commit_cv.notify_all();
      }
    }
  }

  VoidResult OpenDatabase() {
    auto fail = [&](std::string_view what) {
      std::string msg =
          fmt::format("{}: {}: {}", options.path, what, db ? sqlite3_errmsg(db) : "cannot open");
      return Error{msg, ErrorCode::kUnavailable};
    };
    if (sqlite3_open_v2(options.path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                        nullptr) != SQLITE_OK) {
      return fail("opening the database");
    }
    const char* setup =
        "PRAGMA journal_mode=WAL;"
        "PRAGMA synchronous=FULL;"
        "CREATE TABLE IF NOT EXISTS objects(key TEXT PRIMARY KEY, rv INTEGER NOT NULL, "
        "data TEXT NOT NULL);"
        "CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value INTEGER NOT NULL);";
    if (sqlite3_exec(db, setup, nullptr, nullptr, nullptr) != SQLITE_OK) {
      return fail("setting up the database");
    }
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE name = 'revision'", -1, &st, nullptr);
    if (sqlite3_step(st) == SQLITE_ROW) revision = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_prepare_v2(db, "SELECT key, rv, data FROM objects", -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW) {
      std::string key(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
      int64_t rv = sqlite3_column_int64(st, 1);
      const char* data = reinterpret_cast<const char*>(sqlite3_column_text(st, 2));
      Json obj;
      if (!ParseJsonFast(data, &obj)) obj = Json::parse(data, nullptr, false);
      if (obj.is_discarded()) {
        sqlite3_finalize(st);
        return Error{fmt::format("{}: object {} is not valid JSON", options.path, key),
                     ErrorCode::kInvalid};
      }
      size_t slash = key.find('/');
      StoredObject so;
      so.rv = rv;
      so.text = std::make_shared<const std::string>(data);
      so.object = std::make_shared<const Json>(std::move(obj));
      objects[key.substr(0, slash)][key.substr(slash + 1)] = std::move(so);
      revision = std::max(revision, rv);
    }
    sqlite3_finalize(st);
    durable_rv = revision;
    if (sqlite3_prepare_v2(db,
                           "INSERT INTO objects(key, rv, data) VALUES(?, ?, ?) ON CONFLICT(key) "
                           "DO UPDATE SET rv = excluded.rv, data = excluded.data",
                           -1, &put, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &begin, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "COMMIT", -1, &commit, nullptr) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "DELETE FROM objects WHERE key = ?", -1, &del, nullptr) !=
            SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta(name, value) VALUES('revision', ?)", -1,
                           &meta, nullptr) != SQLITE_OK) {
      return fail("preparing statements");
    }
    if (auto migrated = MigrateEventsV1Rows(); !migrated.ok()) return migrated;
    // A writer waits while a checkpoint finishes (see CheckpointLoop) instead of failing.
    sqlite3_busy_timeout(db, 10000);
    // Replaces SQLite's automatic checkpoint, which would run inside a writer's commit.
    next_checkpoint_pages = options.checkpoint_pages;
    sqlite3_wal_hook(db, &Impl::OnWalCommit, this);
    if (sqlite3_open_v2(options.path.c_str(), &checkpoint_db, SQLITE_OPEN_READWRITE, nullptr) !=
        SQLITE_OK) {
      return Error{fmt::format("{}: opening the database for checkpoints: {}", options.path,
                               checkpoint_db ? sqlite3_errmsg(checkpoint_db) : "cannot open"),
                   ErrorCode::kUnavailable};
    }
    sqlite3_busy_timeout(checkpoint_db, 1000);
    // A connection finds the WAL only when it first reads the database; until then a
    // checkpoint through it reports "not in WAL mode" and copies nothing (the WAL would grow
    // without bound, and every commit would extend the file and so sync its inode too).
    if (sqlite3_exec(checkpoint_db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr,
                     nullptr) != SQLITE_OK) {
      return Error{fmt::format("{}: reading the database for checkpoints: {}", options.path,
                               sqlite3_errmsg(checkpoint_db)),
                   ErrorCode::kUnavailable};
    }
    checkpointer = std::thread([this] { CheckpointLoop(); });
    committer = std::thread([this] { CommitLoop(); });
    return {};
  }

  std::map<std::string, StoredObject>& Objects(const ResourceInfo& r) {
    return objects[r.StorageName()];
  }

  // Data directories written before events.k8s.io Events were kept as core/v1 Events hold
  // them under their own storage name too, beside a core/v1 copy of the same name. The copy
  // is what the Event is now; an Event without one is converted. Runs once, at open.
  VoidResult MigrateEventsV1Rows() {
    auto legacy = objects.find("events.events.k8s.io");
    if (legacy == objects.end()) return {};
    auto& core = objects["events"];
    bool ok = sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK;
    for (auto& [key, so] : legacy->second) {
      if (!ok) break;
      if (!core.count(key)) {
        Json obj = CoreEventFromEventsV1(*so.object);
        std::string text;
        AppendJson(obj, &text);
        StoredObject converted{so.rv, std::make_shared<const Json>(std::move(obj)),
                               std::make_shared<const std::string>(std::move(text))};
        const std::string row = "events/" + key;
        sqlite3_reset(put);
        sqlite3_bind_text(put, 1, row.data(), static_cast<int>(row.size()), SQLITE_STATIC);
        sqlite3_bind_int64(put, 2, converted.rv);
        sqlite3_bind_text(put, 3, converted.text->data(), static_cast<int>(converted.text->size()),
                          SQLITE_STATIC);
        ok = sqlite3_step(put) == SQLITE_DONE;
        core.emplace(key, std::move(converted));
      }
      const std::string old_row = "events.events.k8s.io/" + key;
      sqlite3_reset(del);
      sqlite3_bind_text(del, 1, old_row.data(), static_cast<int>(old_row.size()), SQLITE_STATIC);
      ok = ok && sqlite3_step(del) == SQLITE_DONE;
    }
    if (ok) ok = sqlite3_exec(db, "COMMIT", nullptr, nullptr, nullptr) == SQLITE_OK;
    if (!ok) {
      std::string msg = fmt::format("{}: moving events.k8s.io Events to core/v1 storage: {}",
                                    options.path, sqlite3_errmsg(db));
      sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      return Error{msg, ErrorCode::kUnavailable};
    }
    objects.erase(legacy);
    return {};
  }

  // Where `r`'s object ns/name is kept: its map, its key there, and its entry (the map's end
  // when absent). Called with `mu` held.
  struct Slot {
    std::map<std::string, StoredObject>& objects;
    std::string key;
    std::map<std::string, StoredObject>::iterator it;
  };
  Slot Locate(const ResourceInfo& r, std::string_view ns, std::string_view name) {
    auto& m = Objects(r);
    std::string key = ObjectKey(ns, name);
    auto it = m.find(key);
    return Slot{m, std::move(key), it};
  }

  // Namespace `ns`, or null. Called with `mu` held.
  const StoredObject* FindNamespace(std::string_view ns) {
    auto it = objects.find("namespaces");
    if (it == objects.end()) return nullptr;
    auto found = it->second.find(ObjectKey("", ns));
    return found == it->second.end() ? nullptr : &found->second;
  }

  // Removes the namespace at `it` of `m`, whose last version is `last`, and whatever is still
  // in it, in one transaction: its objects first, as they would go one by one, then the
  // namespace. Called with `mu` held; `rv` receives the namespace's revision.
  StoredObject RemoveNamespace(const ResourceInfo& r, std::map<std::string, StoredObject>& m,
                               std::map<std::string, StoredObject>::iterator it, Json last,
                               int64_t* rv) {
    OneTransaction transaction(*this);
    const std::string name = last["metadata"].value("name", "");
    const std::string prefix = name + "/";
    std::vector<const ResourceInfo*> kinds;
    for (const auto& res : ServedResources()) kinds.push_back(&res);
    for (const ResourceInfo* custom : CustomStorageResources()) kinds.push_back(custom);
    for (const ResourceInfo* kind : kinds) {
      const ResourceInfo& res = *kind;
      if (!res.namespaced || res.create_only || ViewOf(res)) continue;
      auto found = objects.find(res.StorageName());
      if (found == objects.end()) continue;
      auto& content = found->second;
      for (auto o = content.lower_bound(prefix);
           o != content.end() && o->first.compare(0, prefix.size(), prefix) == 0;) {
        StoredObject gone = Seal(Json(*o->second.object), ++revision);
        const std::string key = o->first;
        o = content.erase(o);
        Publish(res, name, key, WatchEventType::kDeleted, gone);
      }
    }
    *rv = ++revision;
    StoredObject removed = Seal(std::move(last), *rv);
    const std::string key = it->first;
    m.erase(it);
    Publish(r, "", key, WatchEventType::kDeleted, removed);
    return removed;
  }

  // Store::Delete of one object, with `mu` held. `rv` receives the change's revision (left as
  // it was when nothing changed).
  Result<StoredObject> DeleteLocked(const ResourceInfo& r, std::string_view ns,
                                    std::string_view name, const DeletePreconditions& preconditions,
                                    bool dry_run, int64_t* rv, const GraceFn& grace = nullptr) {
    auto [m, key, it] = Locate(r, ns, name);
    if (it == m.end()) return NotFoundError(r, name);
    const Json& meta = (*it->second.object)["metadata"];
    if (const auto& uid = preconditions.uid; uid && meta.value("uid", "") != *uid) {
      return Error{fmt::format("Precondition failed: UID in precondition: {}, UID in object meta: "
                               "{}",
                               *uid, meta.value("uid", "")),
                   ErrorCode::kConflict};
    }
    if (const auto& want = preconditions.resource_version;
        want && meta.value("resourceVersion", "") != *want) {
      return Error{fmt::format("Precondition failed: ResourceVersion in precondition: {}, "
                               "ResourceVersion in object meta: {}",
                               *want, meta.value("resourceVersion", "")),
                   ErrorCode::kConflict};
    }
    const GraceDecision decision = grace ? grace(*it->second.object) : GraceDecision{};
    if (decision.action == GraceDecision::kPending) return it->second;
    if (decision.action == GraceDecision::kMark) {
      // Marked for a graceful deletion: whoever stops the object (a pod's kubelet) deletes it
      // again with no grace when done.
      if (dry_run) return it->second;
      Json obj = *it->second.object;
      obj["metadata"]["deletionTimestamp"] = decision.deletion_timestamp;
      obj["metadata"]["deletionGracePeriodSeconds"] = decision.grace_seconds;
      if (obj["metadata"].contains("generation")) {
        obj["metadata"]["generation"] = obj["metadata"].value("generation", int64_t{0}) + 1;
      }
      *rv = ++revision;
      StoredObject graceful = Seal(std::move(obj), *rv);
      const StoredObject before = std::exchange(it->second, graceful);
      Publish(r, ns, key, WatchEventType::kModified, graceful, &before);
      return graceful;
    }
    const bool marked = meta.contains("deletionTimestamp");
    if (IsNamespaces(r) && !marked) {
      // The namespace starts terminating; it goes once the deleter has emptied it.
      Json obj = *it->second.object;
      obj["metadata"]["deletionTimestamp"] = FormatTimestamp(NowUnixSeconds());
      obj["status"]["phase"] = "Terminating";
      if (dry_run) return Seal(std::move(obj), it->second.rv);
      *rv = ++revision;
      StoredObject terminating = Seal(std::move(obj), *rv);
      const StoredObject before = std::exchange(it->second, terminating);
      Publish(r, ns, key, WatchEventType::kModified, terminating, &before);
      return terminating;
    }
    const bool held =
        HasFinalizers(meta) || (IsNamespaces(r) && HasSpecFinalizers(*it->second.object));
    if (held) {
      // Marked for deletion; the object goes when its last finalizer is removed.
      if (marked || dry_run) return it->second;
      Json obj = *it->second.object;
      obj["metadata"]["deletionTimestamp"] = FormatTimestamp(NowUnixSeconds());
      obj["metadata"]["deletionGracePeriodSeconds"] = 0;
      *rv = ++revision;
      StoredObject marking = Seal(std::move(obj), *rv);
      const StoredObject before = std::exchange(it->second, marking);
      Publish(r, ns, key, WatchEventType::kModified, marking, &before);
      return marking;
    }
    if (dry_run) return it->second;
    if (IsNamespaces(r)) return RemoveNamespace(r, m, it, Json(*it->second.object), rv);
    *rv = ++revision;
    StoredObject last = Seal(Json(*it->second.object), *rv);
    m.erase(it);
    Publish(r, ns, key, WatchEventType::kDeleted, last);
    return last;
  }
};

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::Open(const StoreOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (!options.path.empty()) {
    if (auto r = impl->OpenDatabase(); !r.ok()) return r.error();
  }
  impl->window_start = impl->revision;
  auto store = std::unique_ptr<Store>(new Store(std::move(impl)));
  // The namespaces every cluster has.
  const ResourceInfo* ns = FindResource("", "v1", "namespaces");
  for (const char* name : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    if (store->Get(*ns, "", name).ok()) continue;
    Json doc = {{"apiVersion", "v1"},
                {"kind", "Namespace"},
                {"metadata", {{"name", name}, {"labels", {{"kubernetes.io/metadata.name", name}}}}},
                {"spec", {{"finalizers", {"kubernetes"}}}},
                {"status", {{"phase", "Active"}}}};
    auto created = store->Create(*ns, "", std::move(doc), false);
    if (!created.ok()) return created.error();
  }
  return store;
}

int64_t Store::revision() const {
  std::lock_guard lock(impl_->mu);
  return impl_->revision;
}

int64_t Store::checkpoints() const { return impl_->checkpoints_run.load(); }

Result<StoredObject> Store::Get(const ResourceInfo& r, std::string_view ns, std::string_view name) {
  if (const StorageView* view = ViewOf(r)) return Viewed(*view, r, Get(*view->storage, ns, name));
  std::lock_guard lock(impl_->mu);
  auto [m, key, it] = impl_->Locate(r, ns, name);
  if (it == m.end()) return NotFoundError(r, name);
  return it->second;
}

Result<StoredObject> Store::Create(const ResourceInfo& r, std::string_view ns, Json obj,
                                   bool dry_run, Durability durability) {
  if (const StorageView* view = ViewOf(r)) {
    return Viewed(
        *view, r,
        Create(*view->storage, ns, view->to_storage(std::move(obj)), dry_run, durability));
  }
  int64_t rv;
  StoredObject result;
  {
    std::lock_guard lock(impl_->mu);
    Json& meta = obj["metadata"];
    if (!meta.is_object()) meta = Json::object();
    std::string name = meta.value("name", "");
    auto& m = impl_->Objects(r);
    if (name.empty()) {
      std::string prefix = meta.value("generateName", "");
      if (prefix.empty()) {
        return Error{fmt::format("{} \"\" is invalid: metadata.name: Required value: name or "
                                 "generateName is required",
                                 r.kind),
                     ErrorCode::kInvalid};
      }
      // Cut as kube-apiserver's generator cuts it, so the name stays within a label's 63.
      prefix.resize(std::min<size_t>(prefix.size(), 58));
      do {
        name = prefix + impl_->RandomSuffix();
      } while (m.count(ObjectKey(ns, name)) > 0);
      meta["name"] = name;
    }
    if (r.namespaced) {
      const StoredObject* space = impl_->FindNamespace(ns);
      if (!space) {
        return Error{fmt::format("namespaces \"{}\" not found", ns), ErrorCode::kNotFound};
      }
      // Checked under the lock that the namespace's deletion takes: no object slips in after
      // the deleter has listed the namespace's content (kube-apiserver's NamespaceLifecycle).
      if ((*space->object)["metadata"].contains("deletionTimestamp")) {
        return Error{fmt::format("{} \"{}\" is forbidden: unable to create new content in "
                                 "namespace {} because it is being terminated",
                                 r.StorageName(), name, ns),
                     ErrorCode::kForbidden};
      }
    }
    const std::string key = ObjectKey(ns, name);
    // One search of the (large) map serves the existence check and the insertion below.
    auto at = m.lower_bound(key);
    if (at != m.end() && at->first == key) {
      return Error{fmt::format("{} \"{}\" already exists", r.StorageName(), name),
                   ErrorCode::kAlreadyExists};
    }
    if (r.namespaced) {
      meta["namespace"] = std::string(ns);
    } else {
      meta.erase("namespace");
    }
    meta["uid"] = impl_->NewUid();
    meta["creationTimestamp"] = FormatTimestamp(NowUnixSeconds());
    if (obj.contains("spec") || CustomResourceOf(r)) meta["generation"] = 1;
    obj["apiVersion"] = r.GroupVersion();
    obj["kind"] = r.kind;
    if (dry_run) return impl_->Seal(std::move(obj), impl_->revision);
    rv = ++impl_->revision;
    result = impl_->Seal(std::move(obj), rv);
    m.emplace_hint(at, key, result);
    impl_->Publish(r, ns, key, WatchEventType::kAdded, result);
  }
  if (durability == Durability::kLater) return result;
  if (auto d = impl_->WaitDurable(rv); !d.ok()) return d.error();
  return result;
}

Result<StoredObject> Store::Mutate(const ResourceInfo& r, std::string_view ns,
                                   std::string_view name, const MutateFn& fn, bool allow_create,
                                   bool dry_run, bool* created, Durability durability) {
  if (const StorageView* view = ViewOf(r)) {
    MutateFn stored_fn = [&](const Json* current) -> Result<Json> {
      std::optional<Json> viewed;
      if (current) viewed = view->from_storage(*current);
      auto next = fn(viewed ? &*viewed : nullptr);
      if (!next.ok()) return next.error();
      return view->to_storage(std::move(next).value());
    };
    return Viewed(
        *view, r,
        Mutate(*view->storage, ns, name, stored_fn, allow_create, dry_run, created, durability));
  }
  if (created) *created = false;
  const nlohmann::json* current = nullptr;
  {
    std::unique_lock lock(impl_->mu);
    auto [m, key, it] = impl_->Locate(r, ns, name);
    if (it != m.end()) current = it->second.object.get();
    if (!current && !allow_create) return NotFoundError(r, name);
    auto next = fn(current);
    if (!next.ok()) return next.error();
    Json obj = std::move(next).value();
    if (!current) {
      lock.unlock();
      if (created) *created = true;
      obj["metadata"]["name"] = std::string(name);
      obj["metadata"].erase("resourceVersion");
      return Create(r, ns, std::move(obj), dry_run, durability);
    }
    const Json& cur_meta = (*current)["metadata"];
    Json& meta = obj["metadata"];
    if (!meta.is_object()) meta = Json::object();
    if (meta.contains("resourceVersion") && meta["resourceVersion"].is_string() &&
        !meta["resourceVersion"].get<std::string>().empty() &&
        meta["resourceVersion"] != cur_meta["resourceVersion"]) {
      return ConflictError(r, name);
    }
    if (meta.contains("name") && meta["name"] != cur_meta["name"]) {
      return Error{fmt::format("the name of the object ({}) does not match the name on the URL "
                               "({})",
                               meta["name"].dump(), name),
                   ErrorCode::kBadRequest};
    }
    // Immutable metadata the server owns.
    for (const char* field : {"name", "namespace", "uid", "creationTimestamp", "deletionTimestamp",
                              "deletionGracePeriodSeconds"}) {
      if (cur_meta.contains(field)) {
        meta[field] = cur_meta[field];
      } else {
        meta.erase(field);
      }
    }
    const bool being_deleted = cur_meta.contains("deletionTimestamp");
    // A graceful deletion still running (a pod its kubelet is stopping) is not finished by an
    // update; only a deletion held back by finalizers alone is.
    const bool grace_pending = cur_meta.value("deletionGracePeriodSeconds", int64_t{0}) > 0;
    if (being_deleted && !grace_pending && !HasFinalizers(meta) &&
        !(IsNamespaces(r) && HasSpecFinalizers(obj)) && !dry_run) {
      // The last finalizer is gone: the deletion it held back happens now.
      int64_t rv = 0;
      StoredObject last;
      if (IsNamespaces(r)) {
        last = impl_->RemoveNamespace(r, m, it, std::move(obj), &rv);
      } else {
        rv = ++impl_->revision;
        last = impl_->Seal(std::move(obj), rv);
        m.erase(it);
        impl_->Publish(r, ns, key, WatchEventType::kDeleted, last);
      }
      lock.unlock();
      if (durability == Durability::kLater) return last;
      if (auto d = impl_->WaitDurable(rv); !d.ok()) return d.error();
      return last;
    }
    if (being_deleted && HasFinalizers(meta)) {
      const Json& before = cur_meta.contains("finalizers") ? cur_meta["finalizers"] : Json::array();
      for (const auto& f : meta["finalizers"]) {
        if (std::find(before.begin(), before.end(), f) == before.end()) {
          return Error{fmt::format("{} \"{}\" is forbidden: no new finalizers can be added if "
                                   "the object is being deleted, found new finalizers [{}]",
                                   r.plural, name, f.is_string() ? f.get<std::string>() : f.dump()),
                       ErrorCode::kForbidden};
        }
      }
    }
    const bool spec_changed = GenerationChanged(r, *current, obj);
    if (spec_changed) {
      meta["generation"] = cur_meta.value("generation", 0) + 1;
    } else if (cur_meta.contains("generation")) {
      meta["generation"] = cur_meta["generation"];
    }
    obj["apiVersion"] = r.GroupVersion();
    obj["kind"] = r.kind;
    // A changed spec already tells the objects apart (a binding's does): no second comparison.
    if ((!spec_changed && obj == *current) || dry_run) {
      // Unchanged: no new revision, as kube-apiserver.
      return dry_run ? impl_->Seal(std::move(obj), it->second.rv) : it->second;
    }
    int64_t rv = ++impl_->revision;
    StoredObject result = impl_->Seal(std::move(obj), rv);
    const StoredObject before = std::exchange(it->second, result);
    impl_->Publish(r, ns, key, WatchEventType::kModified, result, &before);
    lock.unlock();
    if (durability == Durability::kLater) return result;
    if (auto d = impl_->WaitDurable(rv); !d.ok()) return d.error();
    return result;
  }
}

namespace {
// A change made by Store::Change, with a throw (a document of an unexpected shape) answered as
// an error.
Result<bool> ApplyChange(const Store::ChangeFn& change, Json& obj) {
  try {
    return change(obj);
  } catch (const std::exception& e) {
    return Error{fmt::format("internal error: {}", e.what()), ErrorCode::kUnknown};
  }
}
}  // namespace

Result<StoredObject> Store::Change(const ResourceInfo& r, std::string_view ns,
                                   std::string_view name, const ChangeFn& change, bool dry_run,
                                   Durability durability) {
  int64_t rv;
  StoredObject result;
  {
    std::unique_lock lock(impl_->mu);
    auto [m, key, it] = impl_->Locate(r, ns, name);
    if (it == m.end()) return NotFoundError(r, name);
    // Someone else holds this version (a reader, a list, a watcher): change a copy instead.
    if (dry_run || ViewOf(r) || it->second.object.use_count() != 1) {
      lock.unlock();
      return Mutate(
          r, ns, name,
          [&](const Json* current) -> Result<Json> {
            Json next = *current;
            if (auto changed = ApplyChange(change, next); !changed.ok()) return changed.error();
            return next;
          },
          false, dry_run, nullptr, durability);
    }
    // Only the store holds it, and only under this lock can anyone else get it (the watch
    // history keeps weak references, taken under the lock): it is changed where it is.
    const std::vector<char> matched_before = impl_->MatchedBefore(r, ns, *it->second.object);
    Json& obj = const_cast<Json&>(*it->second.object);
    const int64_t generation = obj["metadata"].value("generation", int64_t{0});
    auto spec_changed = ApplyChange(change, obj);
    if (!spec_changed.ok()) {
      // A change that failed half way (a document of an unexpected shape) must not leave the
      // stored tree unlike its text: the version is read back from its text.
      it->second.object = TreeOf({}, it->second.text);
      return spec_changed.error();
    }
    // As Mutate: a changed spec is a new generation.
    if (*spec_changed) obj["metadata"]["generation"] = generation + 1;
    rv = ++impl_->revision;
    const StoredObject before{it->second.rv, nullptr, it->second.text};
    result = impl_->Seal(std::move(obj), rv);
    it->second = result;
    impl_->Publish(r, ns, key, WatchEventType::kModified, result, &before, &matched_before);
  }
  if (durability == Durability::kLater) return result;
  if (auto d = impl_->WaitDurable(rv); !d.ok()) return d.error();
  return result;
}

Result<StoredObject> Store::Delete(const ResourceInfo& r, std::string_view ns,
                                   std::string_view name, const DeletePreconditions& preconditions,
                                   bool dry_run, Durability durability, const GraceFn& grace) {
  if (const StorageView* view = ViewOf(r)) {
    return Viewed(
        *view, r,
        DeleteObject(*view->storage, ns, name, preconditions, dry_run, durability, grace));
  }
  return DeleteObject(r, ns, name, preconditions, dry_run, durability, grace);
}

Result<StoredObject> Store::DeleteObject(const ResourceInfo& r, std::string_view ns,
                                         std::string_view name,
                                         const DeletePreconditions& preconditions, bool dry_run,
                                         Durability durability, const GraceFn& grace) {
  int64_t rv = 0;
  StoredObject last;
  {
    std::lock_guard lock(impl_->mu);
    auto gone = impl_->DeleteLocked(r, ns, name, preconditions, dry_run, &rv, grace);
    if (!gone.ok()) return gone.error();
    last = std::move(gone).value();
  }
  if (rv == 0 || durability == Durability::kLater) return last;
  if (auto d = impl_->WaitDurable(rv); !d.ok()) return d.error();
  return last;
}

Result<int64_t> Store::DeleteMany(const std::vector<ObjectRef>& objects, Durability durability) {
  int64_t last_rv = 0;
  {
    std::lock_guard lock(impl_->mu);
    Impl::OneTransaction transaction(*impl_);
    for (const ObjectRef& o : objects) {
      const StorageView* view = ViewOf(*o.resource);
      DeletePreconditions preconditions;
      if (!o.uid.empty()) preconditions.uid = o.uid;
      // Gone already, or another object of that name now: left alone.
      (void)impl_->DeleteLocked(view ? *view->storage : *o.resource, o.ns, o.name, preconditions,
                                false, &last_rv);
    }
  }
  if (last_rv == 0 || durability == Durability::kLater) return last_rv;
  if (auto d = impl_->WaitDurable(last_rv); !d.ok()) return d.error();
  return last_rv;
}

void Store::WhenDurable(int64_t rv, std::function<void(VoidResult)> done) {
  impl_->WhenDurable(rv, std::move(done));
}

Result<ListResult> Store::List(const ResourceInfo& r, std::string_view ns,
                               const ObjectFilter& filter, int64_t limit,
                               std::string_view continue_token) {
  if (const StorageView* view = ViewOf(r)) {
    auto list = List(*view->storage, ns, ViewedFilter(*view, filter), limit, continue_token);
    if (!list.ok()) return Viewed(*view, r, list.error());
    for (StoredObject& item : list->items) item = Viewed(*view, item);
    return list;
  }
  std::lock_guard lock(impl_->mu);
  auto& m = impl_->Objects(r);
  ListResult out;
  out.rv = impl_->revision;
  // The continue token is "<revision>:<last key returned>": the next page starts after that
  // key, at the current state (kube-apiserver would serve the original revision; lists here
  // are served from memory, which keeps no old states). Every page reports the first page's
  // revision, so that a watch from it replays whatever changed while the pages were read
  // (objects created meanwhile before the key would otherwise be in no page and no watch).
  std::string start = ns.empty() ? std::string() : std::string(ns) + "/";
  auto it = m.lower_bound(start);
  if (!continue_token.empty()) {
    size_t colon = continue_token.find(':');
    int64_t first_rv = 0;
    bool valid = colon != std::string_view::npos && colon > 0 && colon <= 18;
    for (size_t i = 0; valid && i < colon; ++i) {
      valid = continue_token[i] >= '0' && continue_token[i] <= '9';
      first_rv = first_rv * 10 + (continue_token[i] - '0');
    }
    std::string after(valid ? continue_token.substr(colon + 1) : std::string_view());
    if (!valid || first_rv > out.rv || (!ns.empty() && after.rfind(start, 0) != 0)) {
      return Error{"continue token does not match the request", ErrorCode::kBadRequest};
    }
    out.rv = first_rv;
    it = m.upper_bound(after);
  }
  for (; it != m.end(); ++it) {
    if (!ns.empty() && it->first.rfind(start, 0) != 0) break;
    if (filter && !filter(*it->second.object)) continue;
    if (limit > 0 && static_cast<int64_t>(out.items.size()) == limit) {
      out.continue_token =
          out.items.empty() ? "" : fmt::format("{}:{}", out.rv, std::prev(it)->first);
      // prev(it) may be a filtered-out object; the token only needs to be past the last
      // returned one, and skipped objects did not match anyway.
      break;
    }
    out.items.push_back(it->second);
  }
  return out;
}

namespace {
class Registration final : public WatchRegistration {
 public:
  Registration(Store::Impl* impl, std::list<Watcher>::iterator it) : impl_(impl), it_(it) {}
  ~Registration() override;

 private:
  Store::Impl* impl_;
  std::list<Watcher>::iterator it_;
};
}  // namespace

Registration::~Registration() {
  std::lock_guard lock(impl_->mu);
  impl_->watchers.erase(it_);
}

Result<std::unique_ptr<WatchRegistration>> Store::Watch(const ResourceInfo& r, std::string_view ns,
                                                        std::optional<int64_t> from_rv,
                                                        ObjectFilter filter, WatchCallback callback,
                                                        int64_t* initial_rv) {
  if (const StorageView* view = ViewOf(r)) {
    // The view's watcher gets the stored changes converted; a change to a stored object and
    // its filter see the view's form.
    WatchCallback viewed = [view, callback = std::move(callback)](const WatchEvent& ev) {
      return callback(Viewed(*view, ev));
    };
    auto reg = Watch(*view->storage, ns, from_rv, ViewedFilter(*view, std::move(filter)),
                     std::move(viewed), initial_rv);
    if (!reg.ok()) return Viewed(*view, r, reg.error());
    return reg;
  }
  std::lock_guard lock(impl_->mu);
  if (initial_rv) *initial_rv = impl_->revision;
  auto matches = [&](const StoredObject& so) { return !filter || filter(*so.object); };
  bool alive = true;
  if (!from_rv) {
    auto& m = impl_->Objects(r);
    std::string start = ns.empty() ? std::string() : std::string(ns) + "/";
    for (auto it = m.lower_bound(start); it != m.end() && alive; ++it) {
      if (!ns.empty() && it->first.rfind(start, 0) != 0) break;
      if (!matches(it->second)) continue;
      WatchEvent ev{WatchEventType::kAdded, it->second, nullptr};
      alive = callback(ev);
    }
  } else {
    if (*from_rv < impl_->window_start) {
      return Error{
          fmt::format("too old resource version: {} ({})", *from_rv, impl_->window_start + 1),
          ErrorCode::kGone};
    }
    for (size_t i = 0; i < impl_->history.size() && alive; ++i) {
      const HistoryEvent& h = impl_->history[i];
      if (h.rv <= *from_rv || h.resource != &r) continue;
      if (!ns.empty() && h.ns != ns) continue;
      WatchEvent ev{
          h.type, StoredObject{h.rv, TreeOf(h.object, h.text), h.text},
          h.type == WatchEventType::kModified ? TreeOf(h.previous, h.previous_text) : nullptr};
      if (!filter) {
        alive = callback(ev);
        continue;
      }
      if (auto seen = ThroughFilter(ev, filter)) alive = callback(*seen);
    }
  }
  impl_->watchers.push_back(Watcher{&r, std::string(ns), std::move(filter), std::move(callback)});
  auto it = std::prev(impl_->watchers.end());
  if (!alive) it->dead = true;
  return std::unique_ptr<WatchRegistration>(new Registration(impl_.get(), it));
}

int64_t NowUnixSeconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace berth::apiserver
