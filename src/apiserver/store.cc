// The Store: opening it, reads and lists, and the bookkeeping of its objects (uids, names,
// revisions). Writes, deletions, watches, views and persistence are in the files beside it
// (store_internal.h names them).
#include "apiserver/store.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iterator>
#include <string>
#include <utility>

#include "api/json_text.h"
#include "apiserver/store_internal.h"

namespace berth::apiserver {

ApiError NotFoundError(const ResourceInfo& r, std::string_view name) {
  return Error{fmt::format("{} \"{}\" not found", r.StorageName(), name), ErrorCode::kNotFound};
}

ApiError ConflictError(const ResourceInfo& r, std::string_view name) {
  return Error{fmt::format("Operation cannot be fulfilled on {} \"{}\": the object has been "
                           "modified; please apply your changes to the latest version and try "
                           "again",
                           r.StorageName(), name),
               ErrorCode::kConflict};
}

ApiError UidPreconditionError(const ResourceInfo& r, std::string_view ns, std::string_view name,
                              std::string_view want, std::string_view have) {
  const std::string key = ns.empty() ? fmt::format("/registry/{}/{}", r.plural, name)
                                     : fmt::format("/registry/{}/{}/{}", r.plural, ns, name);
  return Error{fmt::format("Operation cannot be fulfilled on {} \"{}\": StorageError: invalid "
                           "object, Code: 4, Key: {}, ResourceVersion: 0, AdditionalErrorMsg: "
                           "Precondition failed: UID in precondition: {}, UID in object meta: {}",
                           r.StorageName(), name, key, want, have),
               ErrorCode::kConflict};
}

namespace {
using Json = nlohmann::json;
}  // namespace

std::string Store::Impl::NewUid() {
  std::uniform_int_distribution<uint64_t> dist;
  uint64_t a = dist(rng), b = dist(rng);
  a = (a & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;
  b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", a >> 32, (a >> 16) & 0xffff, a & 0xffff,
                     b >> 48, b & 0xffffffffffffULL);
}

std::string Store::Impl::RandomSuffix(const std::string& prefix) {
  static constexpr char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  std::uniform_int_distribution<int> dist(0, sizeof(kAlphabet) - 2);
  std::string s;
  if (options.seed) {
    // Per prefix: names of one owner do not depend on how other writers' creates interleave.
    const uint64_t n = generated[prefix]++;
    std::seed_seq seq{static_cast<uint32_t>(*options.seed),
                      static_cast<uint32_t>(*options.seed >> 32),
                      static_cast<uint32_t>(std::hash<std::string>{}(prefix)),
                      static_cast<uint32_t>(n), static_cast<uint32_t>(n >> 32)};
    std::mt19937_64 named(seq);
    for (int i = 0; i < 5; ++i) s.push_back(kAlphabet[dist(named)]);
    return s;
  }
  for (int i = 0; i < 5; ++i) s.push_back(kAlphabet[dist(rng)]);
  return s;
}

StoredObject Store::Impl::Seal(Json obj, int64_t rv) {
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

std::map<std::string, StoredObject>& Store::Impl::Objects(const ResourceInfo& r) {
  return objects[r.StorageName()];
}

Store::Impl::Slot Store::Impl::Locate(const ResourceInfo& r, std::string_view ns,
                                      std::string_view name) {
  auto& m = Objects(r);
  std::string key = ObjectKey(ns, name);
  auto it = m.find(key);
  return Slot{m, std::move(key), it};
}

const StoredObject* Store::Impl::FindNamespace(std::string_view ns) {
  auto it = objects.find("namespaces");
  if (it == objects.end()) return nullptr;
  auto found = it->second.find(ObjectKey("", ns));
  return found == it->second.end() ? nullptr : &found->second;
}

Result<StoredObject> Store::Impl::Acknowledge(StoredObject so, int64_t rv, Durability durability) {
  if (durability == Durability::kLater) return so;
  if (auto d = WaitDurable(rv); !d.ok()) return d.error();
  return so;
}

Store::Store(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::Open(const StoreOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (options.seed) impl->rng.seed(*options.seed);
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
std::atomic<const Clock*> server_clock{nullptr};
}  // namespace

void SetServerClock(const Clock* clock) { server_clock.store(clock); }

int64_t NowUnixSeconds() {
  if (const Clock* c = server_clock.load(std::memory_order_acquire)) {
    return std::chrono::duration_cast<std::chrono::seconds>(c->Now().time_since_epoch()).count();
  }
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace berth::apiserver
