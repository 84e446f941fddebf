// Reads of the API: one object (as itself or a Table), lists (items spliced in as stored
// text), watch streams, and the reaper thread that ends, bookmarks and cleans up after them.
#include <fmt/format.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "apiserver/crd_registry.h"
#include "apiserver/event_expiry.h"
#include "apiserver/query_params.h"
#include "apiserver/server_internal.h"
#include "simtime/simulated_clock.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

// Writes one watch event line, counted as in transit until an informer of a simulated cluster
// has handled it (simtime/simulated_clock.h): counted first, so that no reader can finish
// with it before it is counted.
template <class Chunk>
bool CountedWrite(net::StreamSink& sink, Chunk&& chunk) {
  simtime::NoteWatchEventQueued();
  if (sink.Write(std::forward<Chunk>(chunk))) return true;
  simtime::NoteWatchEventHandled();
  return false;
}

}  // namespace

HttpResponse Server::Impl::SingleObject(HttpRequest& req, const Target& t, const StoredObject& so,
                                        int status) {
  if (WantsTable(req) && req.method == "GET") {
    HttpResponse r = JsonResponse(
        status,
        ToTable(*t.resource, {so.object.get()}, so.rv, IncludeFor(req), NowUnixSeconds()).dump());
    return r;
  }
  return JsonResponse(status, *so.text);
}

HttpResponse Server::Impl::List(HttpRequest& req, const Target& t) {
  auto selected = SelectorFilter(req, *t.resource);
  if (!selected.ok()) return ErrorResponse(selected.error());
  ObjectFilter filter = std::move(selected).value();
  int64_t limit = 0;
  if (auto l = req.Query("limit")) limit = std::atoll(l->c_str());
  auto list = store->List(*t.resource, t.ns, filter, limit, req.Query("continue").value_or(""));
  if (!list.ok()) return ErrorResponse(list.error());
  if (WantsTable(req)) {
    std::vector<const Json*> objs;
    for (const auto& so : list->items) objs.push_back(so.object.get());
    Json table = ToTable(*t.resource, objs, list->rv, IncludeFor(req), NowUnixSeconds());
    if (!list->continue_token.empty()) table["metadata"]["continue"] = list->continue_token;
    return JsonResponse(200, table.dump());
  }
  // Items are spliced in as stored text: no re-encoding.
  Json meta = {{"resourceVersion", std::to_string(list->rv)}};
  if (!list->continue_token.empty()) meta["continue"] = list->continue_token;
  std::string body = fmt::format(R"({{"kind":"{}List","apiVersion":"{}","metadata":{},"items":[)",
                                 t.resource->kind, t.resource->GroupVersion(), meta.dump());
  for (size_t i = 0; i < list->items.size(); ++i) {
    if (i) body += ',';
    body += *list->items[i].text;
  }
  body += "]}";
  return JsonResponse(200, body);
}

HttpResponse Server::Impl::Watch(HttpRequest& req, const Target& t) {
  auto selected = SelectorFilter(req, *t.resource);
  if (!selected.ok()) return ErrorResponse(selected.error());
  ObjectFilter filter = std::move(selected).value();
  std::optional<int64_t> from_rv;
  std::string rv = req.Query("resourceVersion").value_or("");
  const bool initial_events = ParseBool(req.Query("sendInitialEvents"));
  if (!rv.empty() && rv != "0" && !initial_events) {
    char* end = nullptr;
    from_rv = std::strtoll(rv.c_str(), &end, 10);
    if (!end || *end) {
      return ErrorResponse(
          Error{fmt::format("invalid resourceVersion \"{}\"", rv), ErrorCode::kBadRequest});
    }
  }
  auto w = std::make_shared<ActiveWatch>();
  w->bookmarks = ParseBool(req.Query("allowWatchBookmarks"));
  w->kind = t.resource->kind;
  w->api_version = t.resource->GroupVersion();
  auto timeout = ParseInt64Param(req.Query("timeoutSeconds").value_or(""));
  if (!timeout.ok()) return ErrorResponse(timeout.error());
  w->deadline = WatchDeadline(std::chrono::steady_clock::now(), timeout->value_or(0));
  w->last_bookmark = std::chrono::steady_clock::now();
  const bool table = WantsTable(req);
  const IncludeObject include = IncludeFor(req);
  HttpResponse resp;
  const ResourceInfo* res = t.resource;
  std::string ns = t.ns;
  resp.stream = [this, w, res, ns, from_rv, filter, table, include,
                 initial_events](std::shared_ptr<net::StreamSink> sink) {
    w->sink = sink;
    auto first = std::make_shared<bool>(true);
    const CustomResourceVersion* custom = CustomResourceOf(*res);
    const bool rewrite = custom && custom->several_versions;
    WatchCallback cb = [sink, table, include, res, first, rewrite](const WatchEvent& ev) {
      if (!table && rewrite) {
        auto parts = WatchEventLineParts(ev);
        return CountedWrite(*sink, *parts[0] + WithServedVersion(*res, *parts[1]) + *parts[2]);
      }
      if (!table) return CountedWrite(*sink, WatchEventLineParts(ev));
      Json obj =
          ToTable(*res, {ev.object.object.get()}, ev.object.rv, include, NowUnixSeconds(), *first);
      *first = false;
      const char* type = ev.type == WatchEventType::kAdded      ? "ADDED"
                         : ev.type == WatchEventType::kModified ? "MODIFIED"
                                                                : "DELETED";
      return CountedWrite(*sink, Json{{"type", type}, {"object", std::move(obj)}}.dump() + "\n");
    };
    int64_t start_rv = 0;
    auto reg = store->Watch(*res, ns, from_rv, filter, cb, &start_rv);
    if (!reg.ok()) {
      // As kube-apiserver: 200, then an ERROR event with the Status, then the end.
      CountedWrite(*sink,
                   Json{{"type", "ERROR"}, {"object", StatusBody(reg.error())}}.dump() + "\n");
      sink->Close();
      return;
    }
    w->registration = std::move(reg).value();
    if (initial_events) {
      Json bookmark = {{"type", "BOOKMARK"},
                       {"object",
                        {{"kind", w->kind},
                         {"apiVersion", w->api_version},
                         {"metadata",
                          {{"resourceVersion", std::to_string(start_rv)},
                           {"annotations", {{"k8s.io/initial-events-end", "true"}}}}}}}};
      CountedWrite(*sink, bookmark.dump() + "\n");
    }
    std::lock_guard lock(watches_mu);
    watches.push_back(w);
  };
  return resp;
}

void Server::Impl::ReapLoop() {
  const auto ttl = options.event_ttl;
  const auto sweep_every = std::min<std::chrono::steady_clock::duration>(
      std::chrono::minutes(1), std::max<std::chrono::seconds>(ttl, std::chrono::seconds(1)));
  auto next_sweep = std::chrono::steady_clock::now() + sweep_every;
  std::unique_lock lock(reaper_mu);
  while (!stopping) {
    reaper_cv.wait_for(lock, std::chrono::milliseconds(500));
    auto now = std::chrono::steady_clock::now();
    if (ttl.count() > 0 && now >= next_sweep && !stopping) {
      next_sweep = now + sweep_every;
      lock.unlock();
      ExpireEvents(*store, NowUnixSeconds() - ttl.count());
      lock.lock();
    }
    std::vector<std::shared_ptr<ActiveWatch>> finished;
    {
      std::lock_guard wl(watches_mu);
      for (auto it = watches.begin(); it != watches.end();) {
        auto& w = *it;
        if (!w->sink->closed() && now >= w->deadline) w->sink->Close();
        if (w->sink->closed() || stopping) {
          finished.push_back(w);
          it = watches.erase(it);
          continue;
        }
        if (w->bookmarks && now - w->last_bookmark > std::chrono::seconds(10)) {
          w->last_bookmark = now;
          Json bm = {{"type", "BOOKMARK"},
                     {"object",
                      {{"kind", w->kind},
                       {"apiVersion", w->api_version},
                       {"metadata", {{"resourceVersion", std::to_string(store->revision())}}}}}};
          CountedWrite(*w->sink, bm.dump() + "\n");
        }
        ++it;
      }
    }
    // Unregistering takes the store's lock: outside the watch list's lock.
    lock.unlock();
    for (auto& w : finished) {
      w->sink->Close();
      w->registration.reset();
    }
    finished.clear();
    lock.lock();
  }
}

}  // namespace berth::apiserver
