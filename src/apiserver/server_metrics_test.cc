// The server's own metrics through its HTTP surface: every request counted with its code (a
// write once committed), the stored objects per resource; and the OpenAPI documents it serves.
#include <gtest/gtest.h>

#include <string>

#include "apiserver/server_test_fixture.h"

namespace berth::apiserver::testing {
namespace {

class ServerMetricsTest : public ServerHttpTest {};

TEST_F(ServerMetricsTest, CountsRequestsByVerbResourceAndCodeAndStoredObjects) {
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("p1")).status, 201);
  ASSERT_EQ(Do(http::verb::get, std::string(kPods) + "/nope").status, 404);
  ASSERT_EQ(Do(http::verb::get, kPods).status, 200);
  const std::string text = server_->Metrics();
  for (const char* want :
       {"apiserver_request_total{verb=\"POST\",dry_run=\"\",group=\"\",version=\"v1\","
        "resource=\"pods\",subresource=\"\",scope=\"namespace\",component=\"apiserver\","
        "code=\"201\"} 1",
        "apiserver_request_total{verb=\"GET\",dry_run=\"\",group=\"\",version=\"v1\","
        "resource=\"pods\",subresource=\"\",scope=\"resource\",component=\"apiserver\","
        "code=\"404\"} 1",
        "apiserver_request_total{verb=\"LIST\",dry_run=\"\",group=\"\",version=\"v1\","
        "resource=\"pods\",subresource=\"\",scope=\"namespace\",component=\"apiserver\","
        "code=\"200\"} 1",
        "apiserver_storage_objects{resource=\"pods\"} 1",
        // A bootstrap object: the `kubernetes` Service.
        "apiserver_storage_objects{resource=\"services\"} 1"}) {
    EXPECT_NE(text.find(want), std::string::npos) << want << "\n" << text;
  }
}

TEST_F(ServerMetricsTest, ServesTheOpenApiDocuments) {
  Reply index = Do(http::verb::get, "/openapi/v3");
  ASSERT_EQ(index.status, 200);
  std::string url = index.body["paths"]["apis/apps/v1"]["serverRelativeURL"];
  Reply apps = Do(http::verb::get, url);
  ASSERT_EQ(apps.status, 200);
  EXPECT_TRUE(apps.body["components"]["schemas"].contains("io.k8s.api.apps.v1.Deployment"));
  EXPECT_EQ(Do(http::verb::get, "/openapi/v3/apis/nosuch/v1").status, 404);
  Reply v2 = Do(http::verb::get, "/openapi/v2");
  ASSERT_EQ(v2.status, 200);
  EXPECT_TRUE(v2.body["definitions"].contains("io.k8s.api.core.v1.Pod"));
}

}  // namespace
}  // namespace berth::apiserver::testing
