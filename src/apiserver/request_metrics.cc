#include "apiserver/request_metrics.h"

#include <algorithm>
#include <array>
#include <vector>

#include "apiserver/resource_path.h"
#include "apiserver/resources.h"
#include "apiserver/reviews.h"
#include "apiserver/store.h"

namespace berth::apiserver {
namespace {

// The method as a static string: label values must outlive the request.
std::string_view StaticMethod(std::string_view method) {
  static constexpr std::array<std::string_view, 7> kMethods = {"GET",    "POST", "PUT",    "PATCH",
                                                               "DELETE", "HEAD", "OPTIONS"};
  for (std::string_view m : kMethods) {
    if (m == method) return m;
  }
  return "OTHER";
}

}  // namespace

RequestLabels ClassifyRequest(const net::HttpRequest& req) {
  RequestLabels l;
  l.verb = StaticMethod(req.method);
  // Trailing slashes are ignored here (kube-apiserver's route matching does too).
  std::string_view path = req.path;
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  const std::optional<ResourcePath> p = ParseResourcePath(path);
  // Outside the resource API (discovery, OpenAPI, health, metrics, the web view): no resource.
  if (!p) return l;
  const std::string_view sub = p->subresource;
  const ResourceInfo* res = FindResource(p->group, p->version, p->plural);
  if (!res) return l;  // unknown: counted without a resource, to keep the series bounded
  l.group = res->group;
  l.version = res->version;
  l.resource = res->plural;
  if (!sub.empty()) {
    auto it = std::find(res->subresources.begin(), res->subresources.end(), sub);
    if (it != res->subresources.end()) l.subresource = *it;
  }
  l.scope = !p->name.empty() ? "resource" : !p->ns.empty() ? "namespace" : "cluster";
  if (auto dry = req.Query("dryRun"); dry && !dry->empty()) l.dry_run = "All";
  if (l.verb == "GET" && p->name.empty()) {
    auto watch = req.Query("watch");
    l.verb = watch && (*watch == "true" || *watch == "1") ? "WATCH" : "LIST";
  } else if (l.verb == "PATCH" &&
             req.Header("content-type").find("apply-patch") != std::string::npos) {
    l.verb = "APPLY";
  }
  return l;
}

RequestMetrics::RequestMetrics()
    : requests_(registry_.Counter(
          "apiserver_request_total",
          "Requests answered, by verb, dry run, group, version, resource, subresource, scope, "
          "component and HTTP status code.",
          {"verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component",
           "code"})),
      storage_objects_(registry_.Gauge("apiserver_storage_objects",
                                       "Objects stored, by resource, counted when scraped.",
                                       {"resource"})) {}

void RequestMetrics::Count(const RequestLabels& l, int status) {
  const std::string code = std::to_string(status);
  requests_->Add({l.verb, l.dry_run, l.group, l.version, l.resource, l.subresource, l.scope,
                  "apiserver", code});
}

net::HttpResponse RequestMetrics::Counted(const RequestLabels& labels, net::HttpResponse r) {
  if (!r.deferred) {
    Count(labels, r.status);
    return r;
  }
  r.deferred = [this, labels, inner = std::move(r.deferred)](
                   std::function<void(net::HttpResponse)> reply) mutable {
    inner([this, labels, reply = std::move(reply)](net::HttpResponse answer) mutable {
      Count(labels, answer.status);
      reply(std::move(answer));
    });
  };
  return r;
}

std::string RequestMetrics::Expose(Store& store) {
  storage_objects_->Reset();
  for (const ResourceInfo& r : ServedResources()) {
    if (r.create_only || IsReview(r)) continue;  // never stored
    int64_t count = 0;
    auto counted = store.List(
        r, "",
        [&count](const nlohmann::json&) {
          ++count;
          return false;  // counted, not copied
        },
        0, "");
    if (counted.ok()) storage_objects_->Set({r.StorageName()}, static_cast<double>(count));
  }
  return registry_.Expose();
}

}  // namespace berth::apiserver
