// Store: the embedded API server's objects — in memory for reads, lists and watches, persisted
// to SQLite (WAL) for durability.
//
// Semantics follow kube-apiserver's storage layer: one global revision counter
// (resourceVersion), optimistic concurrency, uid/creationTimestamp/generation filled in, watches
// that resume from a revision within a window of recent events (older: Gone), and a write
// acknowledged only once it is durable. Each object's JSON is encoded once per revision and the
// same text is shared by every reader and watcher.
//
// Threads: every method is thread-safe. Writes apply in memory under one lock and deliver their
// watch event to the watchers' callbacks (which must not block: they queue). A commit thread
// writes every change pending since its last commit in one SQLite transaction (group commit);
// a write waits for it (Durability::kAwait) or returns at once and its caller asks WhenDurable
// before acknowledging it (kLater: an HTTP handler does not hold its I/O thread meanwhile).
// WAL checkpoints run on a thread of their own.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/api_error.h"
#include "apiserver/resources.h"
#include "berth/api/result.h"
#include "berth/framework/clock.h"

namespace berth::apiserver {

struct StoredObject {
  int64_t rv = 0;
  std::shared_ptr<const nlohmann::json> object;
  std::shared_ptr<const std::string> text;  // object encoded as JSON
};

// DeleteOptions.preconditions.
struct DeletePreconditions {
  std::optional<std::string> uid;
  std::optional<std::string> resource_version;
};

// How a DELETE goes for an object that supports graceful deletion (pods), decided from the
// current object under the store's lock: at once (kNow, finalizers still honoured), marked
// with deletionTimestamp and deletionGracePeriodSeconds (kMark), or left as it is because a
// graceful deletion no shorter is already running (kPending).
struct GraceDecision {
  enum Action { kNow, kMark, kPending } action = kNow;
  int64_t grace_seconds = 0;
  std::string deletion_timestamp;  // RFC 3339, for kMark
};
using GraceFn = std::function<GraceDecision(const nlohmann::json& current)>;

enum class WatchEventType { kAdded, kModified, kDeleted };

struct WatchEvent {
  WatchEventType type;
  StoredObject object;
  // For MODIFIED: the object before the change. A watch with a selector needs it to report an
  // object that stops matching (DELETED) or starts matching (ADDED).
  std::shared_ptr<const nlohmann::json> previous;
};

// The event's line on a watch stream, `{"type":"ADDED","object":<text>}\n`, in three parts:
// the object's text is shared with the store and every other watcher, not copied per event.
std::array<std::shared_ptr<const std::string>, 3> WatchEventLineParts(const WatchEvent& event);

using ObjectFilter = std::function<bool(const nlohmann::json&)>;
// Receives a watch event; returns false to end the watch. Called with the store's lock held:
// it must only queue.
using WatchCallback = std::function<bool(const WatchEvent&)>;

struct ListResult {
  std::vector<StoredObject> items;
  int64_t rv = 0;
  std::string continue_token;
};

struct StoreOptions {
  std::string path;              // SQLite database file; empty: memory only
  size_t event_window = 200000;  // watch history kept for resuming
  int checkpoint_pages = 1000;   // WAL size (pages) that starts a checkpoint
  // Set: UIDs come from this seed, and a generateName's suffix from the seed, the prefix and how
  // many names that prefix made before (`berth scenario run`: the same run, the same names).
  std::optional<uint64_t> seed;
};

// A registered watch; destroying it (or Stop) unregisters.
class WatchRegistration {
 public:
  virtual ~WatchRegistration() = default;
};

// When a write returns. kAwait: once durable. kLater: once applied in memory (visible to
// reads and watches); the caller acknowledges it only after WhenDurable(rv) says so.
enum class Durability { kAwait, kLater };

class Store {
 public:
  static Result<std::unique_ptr<Store>> Open(const StoreOptions& options);
  ~Store();

  Result<StoredObject> Get(const ResourceInfo& r, std::string_view ns, std::string_view name);
  // Creates the object (metadata.name or generateName required). Namespaced objects need their
  // namespace to exist.
  Result<StoredObject> Create(const ResourceInfo& r, std::string_view ns, nlohmann::json obj,
                              bool dry_run, Durability durability = Durability::kAwait);
  // Read-modify-write of one object under the store's lock. `fn` gets the current object (null
  // when absent) and returns the new one; a metadata.resourceVersion in the result that differs
  // from the current one is a Conflict. Absent objects are NotFound unless `allow_create`.
  // `created` (optional) tells whether the call created the object.
  using MutateFn = std::function<Result<nlohmann::json>(const nlohmann::json* current)>;
  Result<StoredObject> Mutate(const ResourceInfo& r, std::string_view ns, std::string_view name,
                              const MutateFn& fn, bool allow_create, bool dry_run,
                              bool* created = nullptr, Durability durability = Durability::kAwait);
  // A change made in place under the store's lock, for a write that only sets fields (a
  // binding). `change` gets the current object and either refuses, with an error, leaving it as
  // it was, or changes it and says whether its spec changed (a new generation, as Mutate).
  // When no reader holds the current version, it is changed without a copy; otherwise (and
  // for dry runs) a copy is, through Mutate. Absent objects are NotFound. A `change` that
  // fails, or throws, after changing something leaves the stored version as it was (read back
  // from its text); a throw is answered as an error.
  using ChangeFn = std::function<Result<bool>(nlohmann::json& object)>;
  Result<StoredObject> Change(const ResourceInfo& r, std::string_view ns, std::string_view name,
                              const ChangeFn& change, bool dry_run,
                              Durability durability = Durability::kAwait);
  // Deletes; the preconditions that are set must match (Conflict otherwise). Returns the last
  // state. An object with metadata.finalizers is only marked (deletionTimestamp set, a
  // MODIFIED event) and goes when an update removes its last finalizer.
  //
  // Namespaces follow kube-apiserver's lifecycle: the first Delete marks the namespace
  // Terminating (deletionTimestamp and status.phase, one MODIFIED event); from then on no object
  // can be created in it (Forbidden), and the namespace deleter (namespace_deleter.h) removes
  // its content and then its `kubernetes` finalizer. A Terminating namespace goes once it has
  // no finalizers left, in spec or metadata: through the update that removes the last one, or
  // a later Delete. What content is still in it then goes with it, in the same transaction, so
  // no object outlives its namespace.
  // `grace`, when set, decides from the current object whether the deletion is graceful
  // (GraceDecision); the other preconditions are checked first.
  Result<StoredObject> Delete(const ResourceInfo& r, std::string_view ns, std::string_view name,
                              const DeletePreconditions& preconditions, bool dry_run,
                              Durability durability = Durability::kAwait,
                              const GraceFn& grace = nullptr);
  // Deletes each object as Delete does (one with metadata.finalizers is only marked), under one
  // hold of the lock and in one transaction: a crash keeps all of these changes or none. An
  // object already gone, or whose uid is not the one given, is left alone. `grace`, when set,
  // decides each deletion as Delete's does (so every object given must support graceful
  // deletion). Returns the revision of the last change (0: nothing changed).
  struct ObjectRef {
    const ResourceInfo* resource;
    std::string ns;
    std::string name;
    std::string uid;  // empty: any
  };
  Result<int64_t> DeleteMany(const std::vector<ObjectRef>& objects,
                             Durability durability = Durability::kAwait,
                             const GraceFn& grace = nullptr);
  // Calls `done` once revision `rv` (a write's StoredObject::rv) is durable, or with the
  // storage error that stops it being so: at once on this thread when it already is, else on
  // the commit thread after the group's commit (so `done` must only hand the answer off).
  void WhenDurable(int64_t rv, std::function<void(VoidResult)> done);
  // Lists in key order (namespace/name). `ns` empty: all namespaces. `limit` 0: all.
  Result<ListResult> List(const ResourceInfo& r, std::string_view ns, const ObjectFilter& filter,
                          int64_t limit, std::string_view continue_token);
  // Starts a watch. `from_rv` null: synthetic ADDED events for the current state first; else
  // the events after that revision (Gone when older than the window). `initial_rv` receives the
  // revision the watch starts at.
  Result<std::unique_ptr<WatchRegistration>> Watch(const ResourceInfo& r, std::string_view ns,
                                                   std::optional<int64_t> from_rv,
                                                   ObjectFilter filter, WatchCallback callback,
                                                   int64_t* initial_rv = nullptr);
  int64_t revision() const;
  // WAL checkpoints started so far (for tests and diagnostics).
  int64_t checkpoints() const;

  struct Impl;

 private:
  explicit Store(std::unique_ptr<Impl> impl);
  Result<StoredObject> DeleteObject(const ResourceInfo& r, std::string_view ns,
                                    std::string_view name, const DeletePreconditions& preconditions,
                                    bool dry_run, Durability durability,
                                    const GraceFn& grace = nullptr);
  std::unique_ptr<Impl> impl_;
};

// The server's clock in whole seconds since the epoch: the timestamps the server writes
// (creationTimestamp, deletionTimestamp, event and condition times). The wall clock unless
// SetServerClock installed another.
int64_t NowUnixSeconds();
// The clock NowUnixSeconds reads, for the whole process (one simulated cluster at a time:
// `berth scenario run`); null: the wall clock again. `clock` must outlive its use.
void SetServerClock(const Clock* clock);

// Error messages in kube-apiserver's words.
ApiError NotFoundError(const ResourceInfo& r, std::string_view name);
ApiError ConflictError(const ResourceInfo& r, std::string_view name);
// An update whose body names another object's UID (kube-apiserver takes a UID in an update's
// body as a precondition): 409 with the storage layer's words.
ApiError UidPreconditionError(const ResourceInfo& r, std::string_view ns, std::string_view name,
                              std::string_view want, std::string_view have);

}  // namespace berth::apiserver
