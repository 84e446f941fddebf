#include "ui/web_view.h"

#include <fmt/format.h>

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "api/codec.h"
#include "apiserver/resources.h"
#include "apiserver/store.h"
#include "explain/explain.h"
#include "ui/assets.h"

namespace berth::ui {
namespace {

using net::HttpRequest;
using net::HttpResponse;

HttpResponse JsonAnswer(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "application/json";
  r.headers.emplace_back("Cache-Control", "no-store");
  r.body = std::move(body);
  return r;
}

HttpResponse ErrorAnswer(int status, const std::string& message) {
  return JsonAnswer(status, nlohmann::json{{"error", message}}.dump());
}

std::string ContentType(std::string_view name) {
  if (name.ends_with(".html")) return "text/html; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  return "application/octet-stream";
}

HttpResponse ServeAsset(const HttpRequest& req) {
  if (req.method != "GET" && req.method != "HEAD") return ErrorAnswer(405, "method not allowed");
  std::string_view name = req.path;
  name.remove_prefix(std::min(name.size(), std::string_view("/ui").size()));
  while (!name.empty() && name.front() == '/') name.remove_prefix(1);
  if (name.empty()) name = "index.html";
  auto body = FindAsset(name);
  if (!body) return ErrorAnswer(404, "not found");
  HttpResponse r;
  r.content_type = ContentType(name);
  r.body = std::string(*body);
  // Everything the page loads comes from here; nothing inline, nothing from elsewhere.
  r.headers.emplace_back("Content-Security-Policy",
                         "default-src 'none'; script-src 'self'; style-src 'self'; "
                         "connect-src 'self'; img-src 'self' data:; frame-ancestors 'none'; "
                         "base-uri 'none'; form-action 'none'");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  r.headers.emplace_back("Cache-Control", "no-cache");
  return r;
}

// The pod's key from ?namespace=&name= ("default" when the namespace is absent).
std::optional<std::string> PodKey(const HttpRequest& req) {
  auto name = req.Query("name");
  if (!name || name->empty()) return std::nullopt;
  std::string ns = req.Query("namespace").value_or("");
  return (ns.empty() ? std::string("default") : ns) + "/" + *name;
}

// Every stored object of a kind the scheduler models, decoded as `berth explain` reads
// manifests. Objects that do not decode are left out: the explanation is of what the
// scheduler itself would see, and its informers skip them too.
Result<std::vector<Object>> StoredObjects(apiserver::Store& store) {
  static const std::set<std::string> kModeled = {"Pod",
                                                 "Node",
                                                 "Namespace",
                                                 "Service",
                                                 "ReplicationController",
                                                 "ReplicaSet",
                                                 "StatefulSet",
                                                 "PersistentVolume",
                                                 "PersistentVolumeClaim",
                                                 "StorageClass",
                                                 "CSINode",
                                                 "PodDisruptionBudget",
                                                 "PriorityClass"};
  std::vector<Object> objects;
  for (const apiserver::ResourceInfo& r : apiserver::ServedResources()) {
    if (r.create_only || !kModeled.count(r.kind)) continue;
    auto list = store.List(r, "", {}, 0, "");
    if (!list.ok()) return list.error();
    for (const auto& so : list->items) {
      nlohmann::json doc = *so.object;
      doc["apiVersion"] = r.GroupVersion();
      doc["kind"] = r.kind;
      auto obj = DecodeObject(std::move(doc), r.kind);
      if (obj.ok()) objects.push_back(std::move(obj).value());
    }
  }
  return objects;
}

}  // namespace

std::optional<std::string_view> FindAsset(std::string_view name) {
  for (const auto& [file, body] : EmbeddedAssets()) {
    if (file == name) return body;
  }
  return std::nullopt;
}

std::vector<apiserver::ExtraRoute> WebViewRoutes(const WebViewOptions& options) {
  auto explain_mu = std::make_shared<std::mutex>();
  auto data = [options, explain_mu](HttpRequest& req, apiserver::Store& store) -> HttpResponse {
    if (req.method != "GET") return ErrorAnswer(405, "method not allowed");
    std::string path = req.path;
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    auto key = PodKey(req);
    if (path == "/ui/api/decision") {
      if (!key) return ErrorAnswer(400, "name is required");
      if (!options.decisions) return ErrorAnswer(404, "no scheduler runs in this process");
      auto d = options.decisions->Get(*key);
      if (!d)
        return ErrorAnswer(
            404, fmt::format("no scheduling attempt of {} is kept: none since berth up started, "
                             "or older than the latest ones kept",
                             *key));
      return JsonAnswer(200, std::move(*d));
    }
    if (path == "/ui/api/timeline") {
      if (!options.timeline) return ErrorAnswer(404, "no timeline is kept in this process");
      return JsonAnswer(200, options.timeline->ToJson().dump());
    }
    if (path == "/ui/api/explain") {
      if (!key) return ErrorAnswer(400, "name is required");
      if (!options.config || !options.registry) return ErrorAnswer(404, "explanations are off");
      // Each explanation schedules the pod several times over a copy of the whole cluster (on
      // large clusters, for minutes). One at a time, and the others are turned away rather than
      // queued: a queue would hold I/O threads the API server and the scheduler need.
      std::unique_lock lock(*explain_mu, std::try_to_lock);
      if (!lock.owns_lock()) {
        HttpResponse busy =
            ErrorAnswer(503, "another explanation is being computed; try again shortly");
        busy.headers.emplace_back("Retry-After", "3");
        return busy;
      }
      auto objects = StoredObjects(store);
      if (!objects.ok()) return ErrorAnswer(500, objects.error().message);
      explain::ExplainOptions eo;
      eo.config_source = options.config_source;
      auto e = explain::Explain(*options.config, *options.registry, *objects, *key, eo);
      if (!e.ok()) {
        const bool missing = e.error().code == ErrorCode::kNotFound;
        return ErrorAnswer(missing ? 404 : 500, e.error().message);
      }
      return JsonAnswer(200, explain::ToJson(*e).dump());
    }
    return ErrorAnswer(404, "not found");
  };
  auto assets = [](HttpRequest& req, apiserver::Store&) { return ServeAsset(req); };
  return {{.prefix = "/ui/api", .is_public = false, .handler = data},
          {.prefix = "/ui", .is_public = true, .handler = assets}};
}

}  // namespace berth::ui
