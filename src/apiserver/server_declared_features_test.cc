// Node status.declaredFeatures through the API server: stored and served as written, and
// checked as kube-apiserver's validateNodeDeclaredFeatures checks it.
#include <gtest/gtest.h>

#include <string>

#include "apiserver/server_test_fixture.h"

namespace berth::apiserver {
namespace {

namespace http = boost::beast::http;
using Json = nlohmann::json;
using DeclaredFeaturesTest = testing::ServerHttpTest;
using testing::Reply;

constexpr const char* kNodes = "/api/v1/nodes";

std::string NodeWith(const Json& features) {
  return Json{{"apiVersion", "v1"},
              {"kind", "Node"},
              {"metadata", {{"name", "n1"}}},
              {"status", {{"declaredFeatures", features}}}}
      .dump();
}

TEST_F(DeclaredFeaturesTest, StoredAndServed) {
  const Json features = {"GuaranteedQoSPodCPUResize", "InPlacePodLevelResourcesVerticalScaling",
                         "MyFeature/mySubFeature"};
  ASSERT_EQ(Do(http::verb::post, kNodes, NodeWith(features)).status, 201);
  Reply got = Do(http::verb::get, std::string(kNodes) + "/n1");
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.body["status"]["declaredFeatures"], features);
  // The kubelet's way: a merge patch of the status subresource.
  Reply patched = Do(http::verb::patch, std::string(kNodes) + "/n1/status",
                     R"({"status":{"declaredFeatures":["RestartAllContainersOnContainerExits"]}})",
                     "application/merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.body.dump();
  EXPECT_EQ(patched.body["status"]["declaredFeatures"],
            Json({"RestartAllContainersOnContainerExits"}));
}

TEST_F(DeclaredFeaturesTest, InvalidListsAreRefusedAsKubeApiserverRefusesThem) {
  struct Case {
    Json features;
    std::string message;
  };
  const std::string name_rule =
      "must start with an UpperCamelCase segment, with subsequent segments separated by '/' "
      "(e.g., MyFeature or MyFeature/mySubFeature), and contain only alphanumeric characters "
      "and slashes";
  const std::string long_name = "A" + std::string(253, 'b');
  const Case cases[] = {
      {{"myFeature"},
       R"(Node "n1" is invalid: status.declaredFeatures[0]: Invalid value: )"
       R"("myFeature": invalid feature name "myFeature": )" +
           name_rule},
      {{"My-Feature"},
       R"(Node "n1" is invalid: status.declaredFeatures[0]: Invalid value: )"
       R"("My-Feature": invalid feature name "My-Feature": )" +
           name_rule},
      {{"MyFeature/"},
       R"(Node "n1" is invalid: status.declaredFeatures[0]: Invalid value: )"
       R"("MyFeature/": invalid feature name "MyFeature/": )" +
           name_rule},
      {{"MyFeature/1x"},
       R"(Node "n1" is invalid: status.declaredFeatures[0]: Invalid value: )"
       R"("MyFeature/1x": invalid feature name "MyFeature/1x": )" +
           name_rule},
      {{"B", "A"},
       R"(Node "n1" is invalid: status.declaredFeatures[1]: Invalid value: "A": )"
       R"(list must be sorted alphabetically)"},
      {{"A", "A"}, R"(Node "n1" is invalid: status.declaredFeatures[1]: Duplicate value: "A")"},
      {{long_name},
       R"(Node "n1" is invalid: status.declaredFeatures[0]: Invalid value: ")" + long_name +
           R"(": invalid feature name ")" + long_name +
           R"(": must be no more than 253 characters)"},
  };
  for (const Case& c : cases) {
    Reply r = Do(http::verb::post, kNodes, NodeWith(c.features));
    EXPECT_EQ(r.status, 422) << c.features.dump();
    EXPECT_EQ(r.body["message"], c.message) << c.features.dump();
  }
  EXPECT_EQ(Do(http::verb::get, std::string(kNodes) + "/n1").status, 404);
  // A status write is checked too.
  ASSERT_EQ(Do(http::verb::post, kNodes, NodeWith(Json::array())).status, 201);
  Reply r = Do(http::verb::patch, std::string(kNodes) + "/n1/status",
               R"({"status":{"declaredFeatures":["Z","A"]}})", "application/merge-patch+json");
  EXPECT_EQ(r.status, 422) << r.body.dump();
}

}  // namespace
}  // namespace berth::apiserver
