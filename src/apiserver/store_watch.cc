// The Store's watch side: fan-out of each change to the registered watchers (through their
// selectors, as kube-apiserver's watch cache reports a change), the window of recent changes
// watches resume from, and Store::Watch itself.
#include <fmt/format.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "api/json_parse.h"
#include "apiserver/store_internal.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

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

}  // namespace

std::shared_ptr<const Json> TreeOf(const std::weak_ptr<const Json>& tree,
                                   const std::shared_ptr<const std::string>& text) {
  if (auto held = tree.lock()) return held;
  if (!text) return nullptr;
  Json doc;
  if (!ParseJsonFast(*text, &doc)) doc = Json::parse(*text, nullptr, false);
  return std::make_shared<const Json>(std::move(doc));
}

std::vector<char> Store::Impl::MatchedBefore(const ResourceInfo& r, std::string_view ns,
                                             const Json& obj) {
  std::vector<char> matched;
  for (const Watcher& w : watchers) {
    if (w.dead || w.resource != &r || (!w.ns.empty() && w.ns != ns) || !w.filter) continue;
    matched.push_back(w.filter(obj) ? 1 : 0);
  }
  return matched;
}

void Store::Impl::Publish(const ResourceInfo& r, std::string_view ns, const std::string& key,
                          WatchEventType type, const StoredObject& so, const StoredObject* before,
                          const std::vector<char>* matched_before) {
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
  if (db) {
    QueueWrite(
        {r.StorageName() + "/" + key, so.rv, type == WatchEventType::kDeleted ? nullptr : so.text});
  }
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

}  // namespace berth::apiserver
