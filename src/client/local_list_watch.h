// LocalListWatch: lists and watches served inside the process, for the components `berth up`
// runs beside its own API server (controllers, simulated kubelets, the scheduler). Their
// informers read the server's stored documents themselves, shared and immutable, instead of
// having each one encoded, sent over TLS and parsed again by every watcher: that parse was
// most of a watcher's cost, and every informer's own copy of the documents most of its memory.
// Writes still go through the API over HTTP (admission, validation, defaults, durability).
//
// Implemented over the API server's store (daemon/in_process_list_watch.h); an informer
// without one, or whose path it does not serve, lists and watches over HTTP as any client.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/codec.h"
#include "berth/api/objects.h"
#include "berth/api/result.h"

namespace berth::client {

// One decode of a served document, shared by every informer that receives the same version:
// the first to need it decodes it (on its own thread), the others take the same immutable
// object. Thread-safe.
class SharedDecode {
 public:
  explicit SharedDecode(RawObject doc) : doc_(std::move(doc)) {}
  const RawObject& document() const { return doc_; }
  // `where` prefixes an error message (the first caller's is kept).
  const Result<Object>& Get(std::string_view where) const {
    std::call_once(once_, [&] { result_.emplace(DecodeSharedObject(doc_, where)); });
    return *result_;
  }

 private:
  RawObject doc_;
  mutable std::once_flag once_;
  mutable std::optional<Result<Object>> result_;
};

class LocalListWatch {
 public:
  struct ListResult {
    std::vector<RawObject> items;  // in key order, each with kind and apiVersion
    std::string resource_version;  // the revision the list is at, to watch from
  };
  struct Event {
    enum class Type { kAdded, kModified, kDeleted } type;
    RawObject object;  // for kDeleted: the last version
    std::string resource_version;
    // The decode of `object` other watchers of the same change share (null: none offered).
    std::shared_ptr<const SharedDecode> decoded;
  };
  // Ends the watch when destroyed: no event is delivered after the destructor returns.
  class Registration {
   public:
    virtual ~Registration() = default;
  };
  // Called for each event in order, on the writer's thread while the store is locked: it
  // must only queue. Returning false ends the watch (no more events are delivered).
  using EventSink = std::function<bool(Event)>;

  virtual ~LocalListWatch() = default;
  // Whether `path` (a collection path without a query, such as "/api/v1/pods") is served here.
  // Paths with a query (selectors) and resources whose stored form differs from what the API
  // serves are not: their informers use HTTP.
  virtual bool Serves(std::string_view path) const = 0;
  // Every object of the collection. Errors carry the API's codes.
  virtual Result<ListResult> List(std::string_view path) = 0;
  // The changes after `resource_version`; ErrorCode::kGone when the store no longer holds
  // them (the caller lists again).
  virtual Result<std::unique_ptr<Registration>> Watch(std::string_view path,
                                                      std::string_view resource_version,
                                                      EventSink sink) = 0;
};

}  // namespace berth::client
