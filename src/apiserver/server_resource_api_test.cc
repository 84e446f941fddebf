// resource.k8s.io/v1 through the API server's HTTP surface: routing, discovery, defaults on
// create, 422 with kube-apiserver's message and causes, and the ResourceClaim status subresource.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "apiserver/server_test_fixture.h"

namespace berth::apiserver {
namespace {

namespace http = boost::beast::http;
using Json = nlohmann::json;

using ResourceApiServerTest = testing::ServerHttpTest;
using testing::Reply;

constexpr const char* kClaims = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims";
constexpr const char* kTemplates =
    "/apis/resource.k8s.io/v1/namespaces/default/resourceclaimtemplates";
constexpr const char* kClasses = "/apis/resource.k8s.io/v1/deviceclasses";
constexpr const char* kSlices = "/apis/resource.k8s.io/v1/resourceslices";

TEST_F(ResourceApiServerTest, DiscoveryListsTheFourResources) {
  Reply list = Do(http::verb::get, "/apis/resource.k8s.io/v1");
  ASSERT_EQ(list.status, 200) << list.body.dump();
  std::vector<std::string> names;
  for (const auto& r : list.body["resources"]) names.push_back(r["name"]);
  EXPECT_THAT(names,
              ::testing::IsSupersetOf({"deviceclasses", "resourceclaims", "resourceclaims/status",
                                       "resourceclaimtemplates", "resourceslices"}));
}

TEST_F(ResourceApiServerTest, CreateDefaultsAndRefusesWithCauses) {
  Reply tmpl = Do(http::verb::post, kTemplates,
                  R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate",
                      "metadata":{"name":"gpu"},
                      "spec":{"spec":{"devices":{"requests":[
                        {"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}}})");
  ASSERT_EQ(tmpl.status, 201) << tmpl.body.dump();
  EXPECT_EQ(tmpl.body["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"], 1);

  Reply bad = Do(http::verb::post, kClaims,
                 R"({"metadata":{"name":"bad"},"spec":{"devices":{"requests":[
                      {"name":"a"},{"name":"a","exactly":{"deviceClassName":"c","count":-1}}]}}})");
  ASSERT_EQ(bad.status, 422) << bad.body.dump();
  EXPECT_EQ(bad.body["message"],
            "ResourceClaim.resource.k8s.io \"bad\" is invalid: [spec.devices.requests[0]: "
            "Required value: exactly one of `exactly` or `firstAvailable` is required, "
            "spec.devices.requests[1].exactly.count: Invalid value: -1: must be greater than "
            "zero, spec.devices.requests[1]: Duplicate value: \"a\"]");
  const Json& causes = bad.body["details"]["causes"];
  ASSERT_EQ(causes.size(), 3u) << bad.body.dump();
  EXPECT_EQ(causes[0]["reason"], "FieldValueRequired");
  EXPECT_EQ(causes[1]["field"], "spec.devices.requests[1].exactly.count");
  EXPECT_EQ(causes[2]["reason"], "FieldValueDuplicate");
  EXPECT_EQ(Do(http::verb::get, std::string(kClaims) + "/bad").status, 404);

  // A detail holding ", " stays one cause.
  Reply mode = Do(http::verb::post, kClaims,
                  R"({"metadata":{"name":"mode"},"spec":{"devices":{"requests":[
                       {"name":"a","exactly":{"deviceClassName":"c","allocationMode":"Some"}},
                       {"name":"B","exactly":{"deviceClassName":"c"}}]}}})");
  ASSERT_EQ(mode.status, 422) << mode.body.dump();
  ASSERT_EQ(mode.body["details"]["causes"].size(), 2u) << mode.body.dump();
  EXPECT_EQ(mode.body["details"]["causes"][0]["message"],
            "Unsupported value: \"Some\": supported values: \"All\", \"ExactCount\"");
  EXPECT_EQ(mode.body["details"]["causes"][0]["reason"], "FieldValueNotSupported");
  EXPECT_EQ(mode.body["details"]["causes"][1]["field"], "spec.devices.requests[1].name");
}

TEST_F(ResourceApiServerTest, StatusIsWrittenThroughTheSubresourceOnly) {
  ASSERT_EQ(Do(http::verb::post, kClaims,
               R"({"metadata":{"name":"c"},"spec":{"devices":{"requests":[
                    {"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}})")
                .status,
            201);
  const std::string claim = std::string(kClaims) + "/c";
  const std::string allocation =
      R"({"devices":{"results":[{"request":"gpu","driver":"gpu.example.com","pool":"node-1",
          "device":"gpu-0"}]}})";
  // Through the main resource, status is kept as stored.
  Reply main = Do(http::verb::patch, claim, R"({"status":{"allocation":)" + allocation + "}}",
                  "application/merge-patch+json");
  ASSERT_EQ(main.status, 200) << main.body.dump();
  EXPECT_FALSE(main.body.contains("status") && main.body["status"].contains("allocation"));
  Reply reserved_only =
      Do(http::verb::patch, claim + "/status",
         R"({"status":{"reservedFor":[{"resource":"pods","name":"p","uid":"u1"}]}})",
         "application/merge-patch+json");
  EXPECT_EQ(reserved_only.status, 422) << reserved_only.body.dump();
  Reply status = Do(http::verb::patch, claim + "/status",
                    R"({"status":{"allocation":)" + allocation +
                        R"(,"reservedFor":[{"resource":"pods","name":"p","uid":"u1"}]}})",
                    "application/merge-patch+json");
  ASSERT_EQ(status.status, 200) << status.body.dump();
  EXPECT_EQ(status.body["status"]["allocation"]["devices"]["results"][0]["device"], "gpu-0");
  // The spec cannot change.
  Reply spec = Do(http::verb::patch, claim,
                  R"({"spec":{"devices":{"requests":[{"name":"other",
                      "exactly":{"deviceClassName":"gpu.example.com"}}]}}})",
                  "application/merge-patch+json");
  EXPECT_EQ(spec.status, 422) << spec.body.dump();
  EXPECT_THAT(spec.body["message"].get<std::string>(), ::testing::HasSubstr("field is immutable"));
}

TEST_F(ResourceApiServerTest, SlicesAndClassesAreClusterScoped) {
  Reply cls = Do(http::verb::post, kClasses,
                 R"({"metadata":{"name":"gpu.example.com"},"spec":{"selectors":[{"cel":{
                      "expression":"device.driver == \"gpu.example.com\""}}]}})");
  ASSERT_EQ(cls.status, 201) << cls.body.dump();
  Reply slice = Do(http::verb::post, kSlices,
                   R"({"metadata":{"name":"node-1-gpu"},"spec":{"driver":"gpu.example.com",
                        "nodeName":"node-1","pool":{"name":"node-1","resourceSliceCount":1},
                        "devices":[{"name":"gpu-0","capacity":{"memory":{"value":"80Gi"}}}]}})");
  ASSERT_EQ(slice.status, 201) << slice.body.dump();
  Reply selected =
      Do(http::verb::get, std::string(kSlices) + "?fieldSelector=spec.nodeName%3Dnode-1");
  ASSERT_EQ(selected.status, 200) << selected.body.dump();
  EXPECT_EQ(selected.body["items"].size(), 1u);
  Reply other = Do(http::verb::get, std::string(kSlices) + "?fieldSelector=spec.driver%3Dx");
  ASSERT_EQ(other.status, 200);
  EXPECT_EQ(other.body["items"].size(), 0u);
}

}  // namespace
}  // namespace berth::apiserver
