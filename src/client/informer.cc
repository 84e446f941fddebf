#include "client/informer.h"

#include <fmt/format.h>

#include <random>

#include "api/json_parse.h"
#include "simtime/simulated_clock.h"

namespace berth::client {

using Json = nlohmann::json;

Informer::Informer(RestClient* rest, InformerOptions options, InformerHandlers handlers)
    : rest_(rest), options_(std::move(options)), handlers_(std::move(handlers)) {}

Informer::~Informer() { Stop(); }

void Informer::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Informer::Stop() {
  if (stop_.exchange(true)) {
    if (thread_.joinable()) thread_.join();
    return;
  }
  stream_.Cancel();
  wait_cv_.notify_all();
  {
    std::lock_guard lock(local_mu_);  // a local watch waiting is woken after it checks stop_
  }
  local_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

namespace {

// A string member of `obj`, "" when `obj` is not an object or the member is not a string (a
// malformed object from a server is logged by its decoder, never a crash).
std::string StringMember(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

const Json& Metadata(const Json& obj) {
  static const Json kNone;
  if (!obj.is_object()) return kNone;
  auto it = obj.find("metadata");
  return it != obj.end() ? *it : kNone;
}

}  // namespace

std::string Informer::KeyOf(const Json& obj) {
  const Json& m = Metadata(obj);
  std::string ns = StringMember(m, "namespace");
  std::string name = StringMember(m, "name");
  return ns.empty() ? name : ns + "/" + name;
}

std::string Informer::RevisionOf(const Json& obj) {
  return StringMember(Metadata(obj), "resourceVersion");
}

std::optional<Object> Informer::Get(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return std::nullopt;
  return it->second.object;
}

std::vector<Object> Informer::List() const {
  std::lock_guard lock(mu_);
  std::vector<Object> out;
  out.reserve(items_.size());
  for (const auto& [k, v] : items_) out.push_back(v.object);
  return out;
}

void Informer::AddIndex(const std::string& name, IndexFunc fn) {
  std::lock_guard lock(mu_);
  if (indexes_.count(name)) return;
  Index& index = indexes_[name];
  index.fn = std::move(fn);
  for (const auto& [key, item] : items_)
    for (const std::string& v : index.fn(item.object)) index.by_value[v][key] = item.object;
}

std::vector<Object> Informer::ByIndex(const std::string& name, const std::string& value) const {
  std::lock_guard lock(mu_);
  std::vector<Object> out;
  auto index = indexes_.find(name);
  if (index == indexes_.end()) return out;
  auto filed = index->second.by_value.find(value);
  if (filed == index->second.by_value.end()) return out;
  out.reserve(filed->second.size());
  for (const auto& [key, obj] : filed->second) out.push_back(obj);
  return out;
}

void Informer::Unindex(const std::string& key, const Object& obj) {
  for (auto& [name, index] : indexes_) {
    for (const std::string& v : index.fn(obj)) {
      auto filed = index.by_value.find(v);
      if (filed == index.by_value.end()) continue;
      filed->second.erase(key);
      if (filed->second.empty()) index.by_value.erase(filed);
    }
  }
}

void Informer::StoreLocked(const std::string& key, Item item) {
  auto it = items_.find(key);
  if (it != items_.end()) {
    Unindex(key, it->second.object);
    it->second = std::move(item);
  } else {
    it = items_.emplace(key, std::move(item)).first;
  }
  for (auto& [name, index] : indexes_)
    for (const std::string& v : index.fn(it->second.object))
      index.by_value[v][key] = it->second.object;
}

void Informer::EraseLocked(std::map<std::string, Item>::iterator it) {
  Unindex(it->first, it->second.object);
  items_.erase(it);
}

namespace {

// The scheduler reads typed fields only: informer copies of pods and nodes (nearly all of what
// an informer holds) keep no decoded document, which would be most of their memory. Other
// kinds keep theirs, and so do pods with spec.resourceClaims (DynamicResources reads them from
// the document: Pod's layout is frozen in the SDK). The codec also keeps the few fields
// NodeDeclaredFeatures reads from documents (api/declared_features.h): a node's
// status.declaredFeatures alone, and the whole document of a pod that uses them.
DecodeOptions DecodeOptionsFor(const Json& obj, const InformerOptions& informer) {
  DecodeOptions options;
  if (informer.keep_documents || informer.keep_document) return options;
  if (auto k = obj.find("kind"); k != obj.end() && k->is_string()) {
    const auto& kind = k->get_ref<const std::string&>();
    options.keep_raw = kind != "Pod" && kind != "Node";
    if (kind == "Pod") {
      auto spec = obj.find("spec");
      options.keep_raw = spec != obj.end() && spec->is_object() && spec->contains("resourceClaims");
    }
  }
  return options;
}

// The decoded object with only what informer.keep_document keeps of its document (decoded
// whole, then copied once with the smaller document).
Result<Object> KeepingDocument(Result<Object> decoded, const InformerOptions& informer) {
  if (!decoded.ok() || !informer.keep_document) return decoded;
  return std::visit(
      [&](const auto& p) -> Object {
        using T = std::remove_const_t<typename std::decay_t<decltype(p)>::element_type>;
        if (!p || !p->raw) return p;
        auto copy = std::make_shared<T>(*p);
        copy->raw = informer.keep_document(*p->raw);
        return std::shared_ptr<const T>(std::move(copy));
      },
      *decoded);
}

void Trim(Json& obj) {
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return;
  m->erase("managedFields");
  if (auto a = m->find("annotations"); a != m->end() && a->is_object()) {
    a->erase("kubectl.kubernetes.io/last-applied-configuration");
  }
}

// Whether revision `a` is older than `b`, when both are numbers (resourceVersions are opaque
// strings; when they are not numbers nothing is older).
bool OlderRevision(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty() || a.size() > 19 || b.size() > 19) return false;
  for (char c : a + b)
    if (c < '0' || c > '9') return false;
  return std::stoull(a) < std::stoull(b);
}

}  // namespace

bool Informer::ListAndReplace() {
  if (LocalServes()) return ListLocal();
  ++lists_;
  std::map<std::string, std::pair<Document, std::string>> fresh;
  std::string cont, rv;
  do {
    std::string path = fmt::format("{}?limit={}", options_.path, options_.page_size);
    if (!cont.empty()) path += "&continue=" + cont;
    auto page = rest_->Get(path);
    if (!page.ok()) {
      if (options_.optional && page.error().code == ErrorCode::kNotFound) {
        synced_ = true;
        unserved_ = true;
        return false;
      }
      if (options_.log)
        options_.log(fmt::format("listing {}: {}", options_.kind, page.error().message));
      return false;
    }
    // kube-apiserver leaves kind and apiVersion off a list's items; the decoder needs them.
    if (!page->is_object() || !(*page)["items"].is_array()) {
      if (options_.log)
        options_.log(fmt::format("listing {}: the answer is not a list", options_.kind));
      return false;
    }
    const std::string list_api_version = StringMember(*page, "apiVersion");
    for (auto& item : (*page)["items"]) {
      if (!item.is_object()) continue;
      if (!item.contains("kind")) item["kind"] = options_.kind;
      if (!item.contains("apiVersion") && !list_api_version.empty())
        item["apiVersion"] = list_api_version;
      if (options_.trim_metadata) Trim(item);
      std::string key = KeyOf(item);
      std::string item_rv = RevisionOf(item);
      fresh.emplace(std::move(key), std::make_pair(Document{std::move(item), nullptr, nullptr},
                                                   std::move(item_rv)));
    }
    cont = StringMember(Metadata(*page), "continue");
    // The watch resumes from the first page's revision: kube-apiserver serves every page at
    // that revision, but a server that serves later pages at its current state (Berth's own)
    // would otherwise hide what was created meanwhile before the continue point.
    if (rv.empty()) rv = RevisionOf(*page);
  } while (!cont.empty() && !stop_);
  Replace(std::move(fresh), std::move(rv));
  return true;
}

void Informer::Replace(std::map<std::string, std::pair<Document, std::string>> fresh,
                       std::string rv) {
  // Deliver the difference against what we had (a relist after 410 must not lose deletions
  // or repeat unchanged objects).
  std::vector<std::string> gone;
  {
    std::lock_guard lock(mu_);
    for (const auto& [k, v] : items_) {
      if (!fresh.count(k)) gone.push_back(k);
    }
  }
  for (const auto& k : gone) {
    std::optional<Object> old;
    {
      std::lock_guard lock(mu_);
      auto it = items_.find(k);
      old = it->second.object;
      EraseLocked(it);
    }
    if (handlers_.on_delete) handlers_.on_delete(*old);
  }
  for (auto& [k, v] : fresh) {
    std::optional<Object> old;
    {
      std::lock_guard lock(mu_);
      auto it = items_.find(k);
      if (it != items_.end()) {
        if (it->second.rv == v.second) continue;
        old = it->second.object;
      }
    }
    auto decoded = Decode(std::move(v.first), k);
    if (!decoded.ok()) {
      if (options_.log) options_.log(decoded.error().message);
      continue;
    }
    {
      std::lock_guard lock(mu_);
      StoreLocked(k, Item{*decoded, v.second});
    }
    if (old) {
      if (handlers_.on_update) handlers_.on_update(*old, *decoded);
    } else if (handlers_.on_add) {
      handlers_.on_add(*decoded);
    }
  }
  last_rv_ = std::move(rv);
  synced_ = true;
}

RawObject Informer::Shareable(RawObject doc) const {
  if (!options_.trim_metadata || !doc) return doc;
  const Json& meta = Metadata(*doc);
  bool trimmed = meta.is_object() && meta.contains("managedFields");
  if (auto a = meta.is_object() ? meta.find("annotations") : meta.end();
      !trimmed && a != meta.end() && a->is_object())
    trimmed = a->contains("kubectl.kubernetes.io/last-applied-configuration");
  if (!trimmed) return doc;
  Json copy = *doc;
  Trim(copy);
  return std::make_shared<const Json>(std::move(copy));
}

Result<Object> Informer::Decode(Document document, const std::string& key) const {
  // A shared document costs nothing to keep: the object keeps it whole, whatever
  // keep_documents and keep_document say (they trim copies, which this one is not).
  if (document.decoded && document.decoded->document() == document.shared)
    return document.decoded->Get(options_.kind + " " + key);
  if (document.shared)
    return DecodeSharedObject(std::move(document.shared), options_.kind + " " + key);
  const DecodeOptions decode = DecodeOptionsFor(document.owned, options_);
  return KeepingDocument(DecodeObject(std::move(document.owned), options_.kind + " " + key, decode),
                         options_);
}

void Informer::Apply(const std::string& type, Document document) {
  if (!document.shared && options_.trim_metadata) Trim(document.owned);
  const Json& obj = document.doc();
  std::string key = KeyOf(obj);
  std::string rv = RevisionOf(obj);
  if (type == "DELETED") {
    std::optional<Object> old;
    {
      std::lock_guard lock(mu_);
      auto it = items_.find(key);
      if (it == items_.end()) return;
      old = it->second.object;
      EraseLocked(it);
    }
    if (handlers_.on_delete) handlers_.on_delete(*old);
    return;
  }
  auto decoded = Decode(std::move(document), key);
  if (!decoded.ok()) {
    if (options_.log) options_.log(decoded.error().message);
    return;
  }
  std::optional<Object> old;
  {
    std::lock_guard lock(mu_);
    auto it = items_.find(key);
    if (it != items_.end()) {
      if (it->second.rv == rv) return;  // already seen (replayed after a reconnect)
      // Older than the copy a later list page gave (replayed from the first page's revision).
      if (OlderRevision(rv, it->second.rv)) return;
      old = it->second.object;
    }
    StoreLocked(key, Item{*decoded, rv});
  }
  if (old) {
    if (handlers_.on_update) handlers_.on_update(*old, *decoded);
  } else if (handlers_.on_add) {
    handlers_.on_add(*decoded);
  }
}

bool Informer::WatchOnce() {
  if (LocalServes()) return WatchLocal();
  ++watches_;
  // As client-go: a random server-side timeout between 5 and 10 minutes spreads reconnects.
  static thread_local std::mt19937 rng{std::random_device{}()};
  int timeout = options_.watch_timeout_seconds > 0
                    ? options_.watch_timeout_seconds
                    : std::uniform_int_distribution<int>(300, 600)(rng);
  std::string path = fmt::format(
      "{}?watch=true&allowWatchBookmarks=true&resourceVersion={}"
      "&timeoutSeconds={}",
      options_.path, last_rv_, timeout);
  bool gone = false;
  watch_events_ = 0;
  auto status = rest_->Watch(
      path,
      [&](std::string_view line) {
        if (line.empty()) return true;
        // Counted as in transit by the API server of a simulated cluster until handled here.
        struct Handled {
          ~Handled() { simtime::NoteWatchEventHandled(); }
        } handled;
        Json ev;
        const bool parsed = options_.trim_metadata ? ParseJsonFastWithoutManagedFields(line, &ev)
                                                   : ParseJsonFast(line, &ev);
        if (!parsed) ev = Json::parse(line, nullptr, false);
        std::string type = StringMember(ev, "type");
        if (type == "ERROR") {
          ++watch_events_;
          const Json& status = ev["object"];
          if (status.is_object()) {
            auto code = status.find("code");
            if (code != status.end() && code->is_number_integer() && *code == 410) gone = true;
          }
          return false;
        }
        auto object = ev.is_object() ? ev.find("object") : ev.end();
        if ((type != "ADDED" && type != "MODIFIED" && type != "DELETED" && type != "BOOKMARK") ||
            object == ev.end() || !object->is_object()) {
          // Not a watch event (a server or proxy answering with something else): reported,
          // and the stream is opened again rather than trusted further.
          if (options_.log) {
            options_.log(
                fmt::format("watch of {}: not a watch event: {:.200}", options_.kind, line));
          }
          return false;
        }
        ++watch_events_;
        Json& obj = *object;
        std::string rv = RevisionOf(obj);
        if (type == "BOOKMARK") {
          if (!rv.empty()) last_rv_ = rv;
          return !stop_;
        }
        Apply(type, Document{std::move(obj), nullptr, nullptr});
        if (!rv.empty()) last_rv_ = rv;
        return !stop_;
      },
      &stream_, std::chrono::seconds(timeout + 30));
  if (status.ok() && *status == 410) gone = true;
  if (!status.ok() && options_.log && !stop_) {
    options_.log(fmt::format("watch of {} ended: {}; resuming from {}", options_.kind,
                             status.error().message, last_rv_));
  }
  return !gone;
}

void Informer::Run() {
  auto backoff = std::chrono::milliseconds(100);
  // A kind the server does not serve (yet) is asked again from 800 ms, doubling, as client-go's
  // reflector asks after a failed list, but up to 10 s rather than 30 s: a custom resource
  // whose definition is applied later is seen within seconds. A server that failed to answer
  // is asked again sooner.
  auto unserved_backoff = std::chrono::milliseconds(800);
  bool need_list = true;
  while (!stop_) {
    if (need_list) {
      unserved_ = false;
      if (!ListAndReplace()) {
        auto& wait = unserved_ ? unserved_backoff : backoff;
        std::unique_lock lock(wait_mu_);
        wait_cv_.wait_for(lock, wait, [&] { return stop_.load(); });
        wait = std::min(wait * 2, unserved_ ? std::chrono::milliseconds(10000)
                                            : std::chrono::milliseconds(5000));
        continue;
      }
      need_list = false;
      backoff = std::chrono::milliseconds(100);
      unserved_backoff = std::chrono::milliseconds(800);
    }
    auto started = std::chrono::steady_clock::now();
    if (!WatchOnce()) {
      if (options_.log) {
        options_.log(fmt::format("watch of {} expired at {}; relisting", options_.kind, last_rv_));
      }
      need_list = true;
      continue;
    }
    // A stream that broke at once without delivering anything (server down) waits before
    // reconnecting, as client-go's "very short watch"; one that was delivering resumes at once,
    // however often its connection is cut.
    if (std::chrono::steady_clock::now() - started < std::chrono::seconds(1) &&
        watch_events_ == 0 && !stop_) {
      std::unique_lock lock(wait_mu_);
      wait_cv_.wait_for(lock, backoff, [&] { return stop_.load(); });
      backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
    } else {
      backoff = std::chrono::milliseconds(100);
    }
  }
}

}  // namespace berth::client
