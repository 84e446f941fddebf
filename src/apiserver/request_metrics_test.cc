// apiserver_request_total's labels for each kind of request, deferred answers counted when
// sent, and apiserver_storage_objects counted from the store.
#include "apiserver/request_metrics.h"

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "apiserver/resources.h"
#include "apiserver/store.h"

namespace berth::apiserver {
namespace {

net::HttpRequest Request(std::string method, std::string path,
                         std::vector<std::pair<std::string, std::string>> query = {},
                         std::vector<std::pair<std::string, std::string>> headers = {}) {
  net::HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.query = std::move(query);
  r.headers = std::move(headers);
  return r;
}

std::string Describe(const RequestLabels& l) {
  return std::string(l.verb) + " " + std::string(l.group) + "/" + std::string(l.version) + " " +
         std::string(l.resource) + "/" + std::string(l.subresource) + " " + std::string(l.scope) +
         (l.dry_run.empty() ? "" : " dry");
}

TEST(RequestMetricsTest, LabelsNameVerbResourceAndScopeAsKubeApiserverDoes) {
  EXPECT_EQ(Describe(ClassifyRequest(Request("GET", "/api/v1/namespaces/default/pods"))),
            "LIST /v1 pods/ namespace");
  EXPECT_EQ(Describe(ClassifyRequest(Request("GET", "/api/v1/pods", {{"watch", "true"}}))),
            "WATCH /v1 pods/ cluster");
  EXPECT_EQ(Describe(ClassifyRequest(Request("GET", "/api/v1/namespaces/default/pods/p"))),
            "GET /v1 pods/ resource");
  EXPECT_EQ(Describe(ClassifyRequest(Request("POST", "/api/v1/namespaces/default/pods/p/binding"))),
            "POST /v1 pods/binding resource");
  EXPECT_EQ(Describe(ClassifyRequest(Request("PATCH", "/apis/apps/v1/namespaces/a/deployments/d",
                                             {{"dryRun", "All"}},
                                             {{"content-type", "application/apply-patch+yaml"}}))),
            "APPLY apps/v1 deployments/ resource dry");
  EXPECT_EQ(Describe(ClassifyRequest(Request("DELETE", "/api/v1/nodes/n1"))),
            "DELETE /v1 nodes/ resource");
  EXPECT_EQ(Describe(ClassifyRequest(Request("GET", "/api/v1/namespaces/kube-system"))),
            "GET /v1 namespaces/ resource");
  // Outside the resource API, and unknown resources: no resource labels.
  EXPECT_EQ(Describe(ClassifyRequest(Request("GET", "/openapi/v2"))), "GET / / ");
  EXPECT_EQ(Describe(ClassifyRequest(Request("GET", "/api/v1/widgets"))), "GET / / ");
}

TEST(RequestMetricsTest, CountsAnswersByCodeAndDeferredOnesWhenSent) {
  RequestMetrics metrics;
  auto store = Store::Open({});
  ASSERT_TRUE(store.ok());
  auto get = Request("GET", "/api/v1/namespaces/default/pods/p");
  metrics.Serve(get, [](net::HttpRequest&) {
    net::HttpResponse r;
    r.status = 404;
    return r;
  });
  auto post = Request("POST", "/api/v1/namespaces/default/configmaps");
  net::HttpResponse deferred = metrics.Serve(post, [](net::HttpRequest&) {
    net::HttpResponse r;
    r.deferred = [](std::function<void(net::HttpResponse)> reply) {
      net::HttpResponse answer;
      answer.status = 201;
      reply(std::move(answer));
    };
    return r;
  });
  const std::string post_series =
      "apiserver_request_total{verb=\"POST\",dry_run=\"\",group=\"\",version=\"v1\","
      "resource=\"configmaps\",subresource=\"\",scope=\"namespace\",component=\"apiserver\","
      "code=\"201\"} 1";
  std::string text = metrics.Expose(**store);
  EXPECT_NE(text.find("apiserver_request_total{verb=\"GET\",dry_run=\"\",group=\"\","
                      "version=\"v1\",resource=\"pods\",subresource=\"\",scope=\"resource\","
                      "component=\"apiserver\",code=\"404\"} 1"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find(post_series), std::string::npos) << "counted before it was sent";
  int sent_status = 0;
  ASSERT_TRUE(deferred.deferred);
  deferred.deferred([&](net::HttpResponse r) { sent_status = r.status; });
  EXPECT_EQ(sent_status, 201);
  text = metrics.Expose(**store);
  EXPECT_NE(text.find(post_series), std::string::npos) << text;
}

TEST(RequestMetricsTest, StorageObjectsCountEachResource) {
  RequestMetrics metrics;
  auto store = Store::Open({});
  ASSERT_TRUE(store.ok());
  const ResourceInfo* nodes = FindResource("", "v1", "nodes");
  for (const char* name : {"n1", "n2"}) {
    ASSERT_TRUE((*store)->Create(*nodes, "", {{"metadata", {{"name", name}}}}, false).ok());
  }
  std::string text = metrics.Expose(**store);
  EXPECT_NE(text.find("apiserver_storage_objects{resource=\"nodes\"} 2"), std::string::npos)
      << text;
  EXPECT_NE(text.find("apiserver_storage_objects{resource=\"deployments.apps\"} 0"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace berth::apiserver
