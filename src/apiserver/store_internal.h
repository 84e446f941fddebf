// What the pieces of the Store share, and nothing outside it includes: Store::Impl (the
// objects, the watch history and watchers, the SQLite connection and its threads) and the
// helpers more than one piece calls.
//
// The pieces: store.cc (opening, reads, lists, object bookkeeping), store_writes.cc (create,
// update, in-place changes), store_delete.cc (deletions, finalizers, namespaces),
// store_watch.cc (watch fan-out and history), store_views.cc (resources kept in another's
// storage) and store_persistence.cc (SQLite: loading, group commit, checkpoints).
#pragma once

#include <sqlite3.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "apiserver/store.h"

namespace berth::apiserver {

// "ns/name": an object's key within its resource's map (ns empty for cluster-scoped objects).
inline std::string ObjectKey(std::string_view ns, std::string_view name) {
  return std::string(ns) + "/" + std::string(name);
}

// Whether metadata (or a namespace's spec) lists finalizers that hold a deletion back.
bool HasFinalizers(const nlohmann::json& meta);
// A namespace's spec.finalizers (`kubernetes`: the namespace deleter's) hold its removal back
// as metadata.finalizers hold any object's.
bool HasSpecFinalizers(const nlohmann::json& obj);
inline bool IsNamespaces(const ResourceInfo& r) {
  return r.group.empty() && r.plural == "namespaces";
}

// The document tree of a version the watch history keeps: the one still held elsewhere, else
// parsed again from its text (null without either).
std::shared_ptr<const nlohmann::json> TreeOf(const std::weak_ptr<const nlohmann::json>& tree,
                                             const std::shared_ptr<const std::string>& text);

// ---------------------------------------------------------------- views (store_views.cc)

// A resource kept in another's storage and converted on the way in and out: events.k8s.io/v1
// Events are core/v1 Events (event_conversion.h).
struct StorageView {
  const ResourceInfo* storage;
  nlohmann::json (*to_storage)(nlohmann::json);
  nlohmann::json (*from_storage)(nlohmann::json);
  std::string_view storage_name;  // as errors name it
};

// The view `r` is, or null when `r` is kept in its own storage.
const StorageView* ViewOf(const ResourceInfo& r);
// A stored object, error, result or watch event as the view's reader sees it.
StoredObject Viewed(const StorageView& view, const StoredObject& so);
ApiError Viewed(const StorageView& view, const ResourceInfo& r, ApiError e);
Result<StoredObject> Viewed(const StorageView& view, const ResourceInfo& r,
                            Result<StoredObject> result);
WatchEvent Viewed(const StorageView& view, const WatchEvent& ev);
// The filter of a view's reader, applied to stored objects.
ObjectFilter ViewedFilter(const StorageView& view, ObjectFilter filter);

// ---------------------------------------------------------------- Store::Impl

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
  std::weak_ptr<const nlohmann::json> object;
  std::shared_ptr<const std::string> previous_text;  // MODIFIED: the version before
  std::weak_ptr<const nlohmann::json> previous;
};

struct Watcher {
  const ResourceInfo* resource;
  std::string ns;
  ObjectFilter filter;
  WatchCallback callback;
  bool dead = false;
};

struct Store::Impl {
  using Json = nlohmann::json;

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

  // While set (with `mu` held), Publish collects the changes' writes here instead of queueing
  // them one by one: see OneTransaction.
  std::vector<PendingWrite>* collecting = nullptr;

  ~Impl();

  // ---- objects (store.cc); called with `mu` held

  std::string NewUid();
  // The random part of a generateName's name, from kube-apiserver's alphabet.
  std::string RandomSuffix(const std::string& prefix);
  // Names made per generateName prefix (StoreOptions::seed).
  std::unordered_map<std::string, uint64_t> generated;
  // `obj` at revision `rv`, its resourceVersion set and its text encoded once.
  StoredObject Seal(Json obj, int64_t rv);
  std::map<std::string, StoredObject>& Objects(const ResourceInfo& r);
  // Where `r`'s object ns/name is kept: its map, its key there, and its entry (the map's end
  // when absent).
  struct Slot {
    std::map<std::string, StoredObject>& objects;
    std::string key;
    std::map<std::string, StoredObject>::iterator it;
  };
  Slot Locate(const ResourceInfo& r, std::string_view ns, std::string_view name);
  // Namespace `ns`, or null.
  const StoredObject* FindNamespace(std::string_view ns);
  // `so`, once revision `rv` is durable when `durability` asks to wait (called without `mu`).
  Result<StoredObject> Acknowledge(StoredObject so, int64_t rv, Durability durability);

  // ---- deletions (store_delete.cc); called with `mu` held

  // Store::Delete of one object. `rv` receives the change's revision (left as it was when
  // nothing changed).
  Result<StoredObject> DeleteLocked(const ResourceInfo& r, std::string_view ns,
                                    std::string_view name, const DeletePreconditions& preconditions,
                                    bool dry_run, int64_t* rv, const GraceFn& grace = nullptr);
  // Removes the object at `it` of `m` (key `key`) with `last` as its final version, as the
  // deletion its last finalizer held back; a namespace goes with its content
  // (RemoveNamespace). `rv` receives the revision.
  StoredObject FinishDeletion(const ResourceInfo& r, std::string_view ns, const std::string& key,
                              std::map<std::string, StoredObject>& m,
                              std::map<std::string, StoredObject>::iterator it, Json last,
                              int64_t* rv);
  // Removes the namespace at `it` of `m`, whose last version is `last`, and whatever is still
  // in it, in one transaction: its objects first, as they would go one by one, then the
  // namespace. `rv` receives the namespace's revision.
  StoredObject RemoveNamespace(const ResourceInfo& r, std::map<std::string, StoredObject>& m,
                               std::map<std::string, StoredObject>::iterator it, Json last,
                               int64_t* rv);

  // ---- watch fan-out and history (store_watch.cc); called with `mu` held

  // Whether `obj` matches each live selector watcher of `r` in `ns`, in Publish's order.
  std::vector<char> MatchedBefore(const ResourceInfo& r, std::string_view ns, const Json& obj);
  // Records a change: watchers, history, persistence.
  // `before`: for MODIFIED, the version it replaces.
  // `matched_before`: for a change made in place (no previous document), whether the object
  // matched each selector watcher before it, in the order of MatchedBefore.
  void Publish(const ResourceInfo& r, std::string_view ns, const std::string& key,
               WatchEventType type, const StoredObject& so, const StoredObject* before = nullptr,
               const std::vector<char>* matched_before = nullptr);

  // ---- persistence (store_persistence.cc)

  // Hands a published change to the commit thread (or to the OneTransaction collecting).
  // Called with `mu` held.
  void QueueWrite(PendingWrite write);
  // The changes published while one lives (with `mu` held throughout) are queued together when
  // it ends, so the commit thread takes all of them into one transaction or none: a crash
  // keeps every one of them or none. Revisions stay in order, since no other change can be
  // published meanwhile.
  class OneTransaction {
   public:
    // Within another (a namespace removed by DeleteMany), the outer one collects.
    explicit OneTransaction(Impl& impl);
    ~OneTransaction();
    OneTransaction(const OneTransaction&) = delete;
    OneTransaction& operator=(const OneTransaction&) = delete;

   private:
    Impl& impl_;
    const bool nested_;
    std::vector<PendingWrite> writes_;
  };
  // Returns once revision `rv` (already published) is durable.
  VoidResult WaitDurable(int64_t rv);
  void WhenDurable(int64_t rv, std::function<void(VoidResult)> done);
  // The commit thread: one transaction per group of pending changes.
  void CommitLoop();
  // Writes `batch` in one transaction. Only the writer that set `committing` calls it.
  std::pair<bool, int64_t> CommitBatch();
  // Called by SQLite after each commit with the WAL's size in pages; once the WAL has grown
  // `checkpoint_pages` past what the last checkpoint left, wakes the checkpointer.
  static int OnWalCommit(void* arg, sqlite3*, const char*, int pages);
  void CheckpointLoop();
  // Opens (or creates) the database, loads its objects and starts the commit and checkpoint
  // threads.
  VoidResult OpenDatabase();
  // Data directories written before events.k8s.io Events were kept as core/v1 Events hold
  // them under their own storage name too. Runs once, at open.
  VoidResult MigrateEventsV1Rows();
};

}  // namespace berth::apiserver
