#include "apiserver/request_metrics.h"

#include <algorithm>
#include <array>
#include <vector>

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

// The path's segments after the leading slash.
std::vector<std::string_view> Segments(std::string_view path) {
  std::vector<std::string_view> seg;
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  for (size_t i = 1; i <= path.size();) {
    size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    seg.push_back(path.substr(i, j - i));
    i = j + 1;
  }
  return seg;
}

}  // namespace

RequestLabels ClassifyRequest(const net::HttpRequest& req) {
  RequestLabels l;
  l.verb = StaticMethod(req.method);
  std::vector<std::string_view> seg = Segments(req.path);
  std::string_view group, version;
  size_t rest = 0;
  if (seg.size() >= 3 && seg[0] == "api") {
    version = seg[1];
    rest = 2;
  } else if (seg.size() >= 4 && seg[0] == "apis") {
    group = seg[1];
    version = seg[2];
    rest = 3;
  } else {
    return l;  // outside the resource API: discovery, OpenAPI, health, metrics, the web view
  }
  std::vector<std::string_view> r(seg.begin() + rest, seg.end());
  std::string_view ns, plural, name, sub;
  if (r.size() >= 3 && r[0] == "namespaces" && r[2] != "status" && r[2] != "finalize") {
    ns = r[1];
    plural = r[2];
    if (r.size() >= 4) name = r[3];
    if (r.size() >= 5) sub = r[4];
  } else {
    plural = r[0];
    if (r.size() >= 2) name = r[1];
    if (r.size() >= 3) sub = r[2];
  }
  const ResourceInfo* res = FindResource(group, version, plural);
  if (!res) return l;  // unknown: counted without a resource, to keep the series bounded
  l.group = res->group;
  l.version = res->version;
  l.resource = res->plural;
  if (!sub.empty()) {
    auto it = std::find(res->subresources.begin(), res->subresources.end(), sub);
    if (it != res->subresources.end()) l.subresource = *it;
  }
  l.scope = !name.empty() ? "resource" : !ns.empty() ? "namespace" : "cluster";
  if (auto dry = req.Query("dryRun"); dry && !dry->empty()) l.dry_run = "All";
  if (l.verb == "GET" && name.empty()) {
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
