// Informer: keeps a local copy of one kind of object in sync with the API server — a paged
// list, then a watch from the list's resourceVersion with bookmarks; a broken stream resumes
// from the last revision seen, and 410 Gone relists and delivers the difference — so handlers
// see every change exactly once, in order.
//
// Threads: each informer runs one thread; handlers are called on it, in order. Reads of the
// store (Get/List) may come from any thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "api/codec.h"
#include "client/rest_client.h"

namespace berth::client {

struct InformerHandlers {
  std::function<void(const Object&)> on_add;
  std::function<void(const Object& old_obj, const Object& new_obj)> on_update;
  std::function<void(const Object&)> on_delete;
};

// The values an object is filed under in one index of an informer's store (client-go's
// IndexFunc): e.g. the UID of its controller. No values: not in that index.
using IndexFunc = std::function<std::vector<std::string>(const Object&)>;

struct InformerOptions {
  std::string path;  // collection path, e.g. "/api/v1/pods"
  std::string kind;  // for messages
  int page_size = 500;
  // Drop what the scheduler never reads before decoding (managedFields, last-applied).
  bool trim_metadata = true;
  std::function<void(const std::string& message)> log;  // warnings (reconnects, relists)
  // Server-side watch timeout; 0: random between 5 and 10 minutes, as client-go.
  int watch_timeout_seconds = 0;
  // Keep each pod's and node's decoded document (for extenders, which receive whole objects);
  // otherwise they are dropped, being most of an informer's memory.
  bool keep_documents = false;
  // When set, what each object keeps of its document, whatever keep_documents says: a reader
  // that needs a few fields the decoded object lacks keeps those, not the whole tree.
  std::function<RawObject(const nlohmann::json& doc)> keep_document;
  // A kind the server may not serve (a CustomResourceDefinition not installed): a 404 on the
  // list counts as synced and empty, and the list is tried again later, without a log line.
  bool optional = false;
  // Over a LocalListWatch: events queued before the informer handles them. A watcher further
  // behind (a burst of writes while its handlers are slow) is cut off and lists again, as the
  // API server cuts off an HTTP watcher whose stream backs up; queued events hold their
  // versions' documents alive, so the bound is on memory too.
  size_t local_backlog = 500000;
};

class Informer {
 public:
  Informer(RestClient* rest, InformerOptions options, InformerHandlers handlers);
  ~Informer();
  void Start();
  void Stop();
  bool HasSynced() const { return synced_; }
  // The stored object by "namespace/name" (or "name" for cluster-scoped kinds).
  std::optional<Object> Get(const std::string& key) const;
  std::vector<Object> List() const;
  // Adds an index of the store (before Start; a name already added is kept as it is).
  void AddIndex(const std::string& name, IndexFunc fn);
  // The stored objects filed under `value` in index `name`, ordered by key as List(); kept in
  // step with the store (an object is in it exactly when Get returns it).
  std::vector<Object> ByIndex(const std::string& name, const std::string& value) const;
  template <class T>
  std::vector<std::shared_ptr<const T>> ListTyped() const {
    std::vector<std::shared_ptr<const T>> out;
    std::lock_guard lock(mu_);
    out.reserve(items_.size());
    for (const auto& [k, v] : items_) {
      if (auto p = std::get_if<std::shared_ptr<const T>>(&v.object)) out.push_back(*p);
    }
    return out;
  }
  // Counters for tests: how many lists and watches ran.
  int lists() const { return lists_; }
  int watches() const { return watches_; }

 private:
  struct Item {
    Object object;
    std::string rv;
  };
  struct Index {
    IndexFunc fn;
    std::unordered_map<std::string, std::map<std::string, Object>> by_value;
  };
  // Store writes: items_ and every index together (mu_ held).
  void StoreLocked(const std::string& key, Item item);
  void EraseLocked(std::map<std::string, Item>::iterator it);
  void Unindex(const std::string& key, const Object& obj);
  // A listed or watched document: parsed here (`owned`), or shared with the API server of
  // this process (`shared`, never changed), perhaps with its decode shared by other informers
  // (`decoded`, of `shared`).
  struct Document {
    nlohmann::json owned;
    RawObject shared;
    std::shared_ptr<const SharedDecode> decoded;
    const nlohmann::json& doc() const { return shared ? *shared : owned; }
  };
  void Run();
  bool ListAndReplace();  // false on failure (retried)
  // Returns false when the watch must be replaced by a relist (410).
  bool WatchOnce();
  // The same over rest_->local() (informer_local.cc).
  bool LocalServes() const;
  bool ListLocal();
  bool WatchLocal();
  // A shared document as this informer keeps it: itself, or a trimmed copy when it carries
  // what trim_metadata drops.
  RawObject Shareable(RawObject doc) const;
  // Delivers the difference between the store and a full list at revision `rv`.
  void Replace(std::map<std::string, std::pair<Document, std::string>> fresh, std::string rv);
  Result<Object> Decode(Document document, const std::string& key) const;
  void Apply(const std::string& type, Document document);
  static std::string KeyOf(const nlohmann::json& obj);
  static std::string RevisionOf(const nlohmann::json& obj);

  RestClient* rest_;
  InformerOptions options_;
  InformerHandlers handlers_;
  mutable std::mutex mu_;
  std::map<std::string, Item> items_;
  std::map<std::string, Index> indexes_;
  std::string last_rv_;
  int watch_events_ = 0;  // events the current watch delivered (informer thread only)
  std::atomic<bool> synced_{false};
  std::atomic<bool> stop_{false};
  std::atomic<int> lists_{0}, watches_{0};
  // The last list found the resource not served (an optional kind): asked again with the
  // reflector's longer backoff (Run).
  bool unserved_ = false;
  net::StreamHandle stream_;
  // A local watch's events, queued by the store's writers (local_mu_).
  std::mutex local_mu_;
  std::condition_variable local_cv_;
  std::deque<LocalListWatch::Event> local_events_;
  bool local_overflow_ = false;
  std::mutex wait_mu_;
  std::condition_variable wait_cv_;
  std::thread thread_;
};

}  // namespace berth::client
