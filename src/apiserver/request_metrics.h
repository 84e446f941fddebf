// The API server's own Prometheus metrics, under kube-apiserver's names:
// apiserver_request_total{verb,dry_run,group,version,resource,subresource,scope,component,code}
// counts answered requests, apiserver_storage_objects{resource} the stored objects per
// resource (counted when scraped).
//
// Threads: Serve runs on the HTTP I/O threads and a deferred answer is counted on whichever
// thread sends it; every method is thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "net/http_server.h"
#include "observe/metrics.h"

namespace berth::apiserver {

class Store;

// What a request is, as the labels of apiserver_request_total name it (all but the code).
// The views point into static storage (the resource table, literals), never into the request.
struct RequestLabels {
  std::string_view verb;  // GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE, ...
  std::string_view dry_run;
  std::string_view group, version, resource, subresource;
  std::string_view scope;  // resource, namespace, cluster; "" outside the resource API
};

RequestLabels ClassifyRequest(const net::HttpRequest& req);

class RequestMetrics {
 public:
  RequestMetrics();
  // Answers `req` with `handle(req)` and counts the answer, once it is sent when deferred.
  template <class Handler>
  net::HttpResponse Serve(net::HttpRequest& req, Handler&& handle) {
    const RequestLabels labels = ClassifyRequest(req);
    return Counted(labels, handle(req));
  }
  // The text exposition, with the stored objects counted from `store` now.
  std::string Expose(Store& store);

 private:
  net::HttpResponse Counted(const RequestLabels& labels, net::HttpResponse response);
  void Count(const RequestLabels& labels, int status);

  observe::MetricsRegistry registry_;
  observe::MetricFamily* requests_;
  observe::MetricFamily* storage_objects_;
};

}  // namespace berth::apiserver
