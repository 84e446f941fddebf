// The Store's persistence in SQLite (WAL): loading the objects at open, the group commit
// (every change pending since the last commit in one transaction, acknowledged once durable)
// and WAL checkpoints on a thread of their own (store_internal.h describes the threads).
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <utility>

#include "api/json_parse.h"
#include "api/json_text.h"
#include "apiserver/event_conversion.h"
#include "apiserver/store_internal.h"

namespace berth::apiserver {

Store::Impl::~Impl() {
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

void Store::Impl::QueueWrite(PendingWrite write) {
  if (collecting) {
    collecting->push_back(std::move(write));
    return;
  }
  bool wake = false;
  {
    std::lock_guard lock(persist_mu);
    pending.push_back(std::move(write));
    // The commit thread waits only while nothing is pending (CommitLoop): a later write
    // joins the next group without a wake-up.
    wake = pending.size() == 1;
  }
  // No system call when the commit thread is busy committing (it is not waiting).
  if (wake) commit_cv.notify_one();
}

Store::Impl::OneTransaction::OneTransaction(Impl& impl)
    : impl_(impl), nested_(impl.collecting != nullptr) {
  if (!nested_) impl_.collecting = &writes_;
}

Store::Impl::OneTransaction::~OneTransaction() {
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

VoidResult Store::Impl::WaitDurable(int64_t rv) {
  if (!db) return {};
  std::unique_lock lock(persist_mu);
  durable_cv.wait(lock, [&] { return durable_rv >= rv || !persist_error.empty(); });
  if (durable_rv >= rv) return {};
  return Error{"storage: " + persist_error, ErrorCode::kUnavailable};
}

void Store::Impl::WhenDurable(int64_t rv, std::function<void(VoidResult)> done) {
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

void Store::WhenDurable(int64_t rv, std::function<void(VoidResult)> done) {
  impl_->WhenDurable(rv, std::move(done));
}

// A failed commit stops persistence (every later write reports the error) rather than
// acknowledge writes out of revision order.
void Store::Impl::CommitLoop() {
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

// Pages written per commit are most of its cost (each a WAL frame, written and synced): an
// update rewrites its row in place (an upsert, not a delete and an insert, which would touch
// the old row's page, a new one and the key index), and the revision row is written only
// when the group's last change is a deletion. Otherwise that change's row carries the
// revision, and loading takes the larger of the two.
std::pair<bool, int64_t> Store::Impl::CommitBatch() {
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

int Store::Impl::OnWalCommit(void* arg, sqlite3*, const char*, int pages) {
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

void Store::Impl::CheckpointLoop() {
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

VoidResult Store::Impl::OpenDatabase() {
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
      sqlite3_prepare_v2(db, "DELETE FROM objects WHERE key = ?", -1, &del, nullptr) != SQLITE_OK ||
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

// Such directories hold events.k8s.io Events beside a core/v1 copy of the same name. The copy
// is what the Event is now; an Event without one is converted.
VoidResult Store::Impl::MigrateEventsV1Rows() {
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

}  // namespace berth::apiserver
