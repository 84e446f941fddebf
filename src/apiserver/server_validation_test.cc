// Poison input through the API server's HTTP surface: values of the wrong type on every write
// path, names no URL can address, and query parameters kube-apiserver refuses. Each is refused
// with kube-apiserver's code, stores nothing, and leaves the lists readable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "apiserver/server_test_fixture.h"

namespace berth::apiserver {
namespace {

namespace http = boost::beast::http;
using Json = nlohmann::json;
using ::testing::HasSubstr;

using ValidationServerTest = testing::ServerHttpTest;
using testing::Reply;

constexpr const char* kNodes = "/api/v1/nodes";
constexpr const char* kConfigMaps = "/api/v1/namespaces/default/configmaps";

TEST_F(ValidationServerTest, WrongTypedNodeIsRefusedAndTheListStaysReadable) {
  ASSERT_EQ(Do(http::verb::post, kNodes, R"({"metadata":{"name":"good"}})").status, 201);
  Reply r = Do(http::verb::post, kNodes,
               R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"bad"},
                   "status":{"conditions":"x"}})");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["reason"], "BadRequest");
  EXPECT_EQ(r.body["message"],
            R"(Node in version "v1" cannot be handled as a Node: json: cannot unmarshal string )"
            R"(into Go struct field NodeStatus.status.conditions of type []v1.NodeCondition)");
  r = Do(http::verb::post, kNodes, R"({"metadata":{"name":"bad","labels":[1]}})");
  EXPECT_EQ(r.status, 400) << r.body.dump();
  EXPECT_THAT(r.body["message"].get<std::string>(),
              HasSubstr("Go struct field ObjectMeta.metadata.labels of type map[string]string"));
  EXPECT_EQ(Do(http::verb::get, std::string(kNodes) + "/bad").status, 404);
  Reply list = Do(http::verb::get, kNodes);
  ASSERT_EQ(list.status, 200);
  ASSERT_EQ(list.body["items"].size(), 1u);
  EXPECT_EQ(list.body["items"][0]["metadata"]["name"], "good");
}

TEST_F(ValidationServerTest, WrongTypesAreRefusedOnEveryWritePath) {
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("p")).status, 201);
  const std::string pod = std::string(kPods) + "/p";
  Reply got = Do(http::verb::get, pod);
  Json status_write = got.body;
  status_write["status"]["containerStatuses"] = "x";
  // The status subresource, written whole.
  Reply put = Do(http::verb::put, pod + "/status", status_write.dump());
  EXPECT_EQ(put.status, 400) << put.body.dump();
  EXPECT_THAT(put.body["message"].get<std::string>(),
              HasSubstr("Go struct field PodStatus.status.containerStatuses of type "
                        "[]v1.ContainerStatus"));
  // Patched: the patched object does not decode (422, as kube-apiserver words a patch).
  for (const char* type :
       {"application/merge-patch+json", "application/strategic-merge-patch+json"}) {
    Reply patch =
        Do(http::verb::patch, pod + "/status", R"({"status":{"containerStatuses":"x"}})", type);
    EXPECT_EQ(patch.status, 422) << type << patch.body.dump();
    EXPECT_THAT(patch.body["message"].get<std::string>(),
                HasSubstr("is invalid: patch: Invalid value: "));
  }
  Reply json_patch =
      Do(http::verb::patch, pod,
         R"([{"op":"add","path":"/spec/containers/0/ports","value":[{"containerPort":"80"}]}])",
         "application/json-patch+json");
  EXPECT_EQ(json_patch.status, 422) << json_patch.body.dump();
  // Server-side apply, updating and creating.
  Reply apply = Do(http::verb::patch, pod + "?fieldManager=m",
                   R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":[1]}})",
                   "application/apply-patch+yaml");
  EXPECT_EQ(apply.status, 400) << apply.body.dump();
  Reply apply_new = Do(http::verb::patch, std::string(kConfigMaps) + "/c?fieldManager=m",
                       R"({"apiVersion":"v1","kind":"ConfigMap","data":{"k":1}})",
                       "application/apply-patch+yaml");
  EXPECT_EQ(apply_new.status, 400) << apply_new.body.dump();
  EXPECT_EQ(Do(http::verb::get, std::string(kConfigMaps) + "/c").status, 404);
  // An update of the main resource.
  Json update = got.body;
  update["spec"]["containers"][0]["ports"] = Json::array({{{"containerPort", 99999999999}}});
  EXPECT_EQ(Do(http::verb::put, pod, update.dump()).status, 400);
  // Nothing of it was stored: the pod reads back and the list decodes.
  Reply after = Do(http::verb::get, kPods);
  ASSERT_EQ(after.status, 200);
  ASSERT_EQ(after.body["items"].size(), 1u);
  EXPECT_FALSE(after.body["items"][0]["status"].contains("containerStatuses"));
  EXPECT_FALSE(after.body["items"][0]["spec"]["containers"][0].contains("ports"));
}

TEST_F(ValidationServerTest, NamesNoUrlCanAddressAreRefused) {
  for (const std::string& name :
       {std::string("a/b"), std::string(".."), std::string("%"), std::string(65536, 'a')}) {
    Reply r = Do(http::verb::post, kConfigMaps,
                 Json{{"metadata", {{"name", name}}}, {"data", {{"k", "v"}}}}.dump());
    EXPECT_EQ(r.status, 422) << name.substr(0, 8);
    EXPECT_EQ(r.body["reason"], "Invalid");
    EXPECT_EQ(r.body["details"]["causes"][0]["field"], "metadata.name") << r.body.dump(1).size();
  }
  Reply gen = Do(http::verb::post, kConfigMaps, R"({"metadata":{"generateName":"Web-"}})");
  EXPECT_EQ(gen.status, 422);
  EXPECT_EQ(gen.body["details"]["causes"][0]["field"], "metadata.generateName");
  Reply list = Do(http::verb::get, kConfigMaps);
  ASSERT_EQ(list.status, 200);
  for (const Json& cm : list.body["items"]) {
    EXPECT_NE(cm["metadata"]["name"], "..");
    EXPECT_NE(cm["metadata"]["name"], "a/b");
  }
  // A long generateName is cut, as kube-apiserver cuts it, so the name it makes is valid.
  Reply cut = Do(http::verb::post, "/api/v1/namespaces/default/services",
                 Json{{"metadata", {{"generateName", std::string(62, 'a') + "-"}}},
                      {"spec", {{"ports", {{{"port", 80}}}}}}}
                     .dump());
  ASSERT_EQ(cut.status, 201) << cut.body.dump();
  EXPECT_EQ(cut.body["metadata"]["name"].get<std::string>().size(), 63u);
}

TEST_F(ValidationServerTest, PortsOutOfRangeAreInvalid) {
  Reply r = Do(http::verb::post, kPods,
               PodJson("p", "", R"(,"ports":[{"containerPort":80,"hostPort":99999}])"));
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(r.body["message"],
            R"(Pod "p" is invalid: spec.containers[0].ports[0].hostPort: Invalid value: 99999: )"
            R"(must be between 1 and 65535, inclusive)");
  r = Do(http::verb::post, kPods, PodJson("p", "", R"(,"ports":[{"containerPort":0}])"));
  EXPECT_EQ(r.status, 422);
  EXPECT_THAT(r.body["message"].get<std::string>(),
              HasSubstr("spec.containers[0].ports[0].containerPort: Required value"));
  r = Do(http::verb::post, kPods, PodJson("p", "", R"(,"ports":[{"containerPort":70000}])"));
  EXPECT_EQ(r.status, 422);
}

TEST_F(ValidationServerTest, QueryParametersAreRefusedAsUpstreamRefusesThem) {
  Reply dry = Do(http::verb::post, std::string(kConfigMaps) + "?dryRun=Bogus",
                 R"({"metadata":{"name":"c"}})");
  EXPECT_EQ(dry.status, 422);
  EXPECT_EQ(dry.body["message"],
            R"(CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: )"
            R"([]string{"Bogus"}: supported values: "All")");
  EXPECT_EQ(Do(http::verb::get, std::string(kConfigMaps) + "/c").status, 404);
  EXPECT_EQ(Do(http::verb::post, kConfigMaps, R"({"metadata":{"name":"c"}})").status, 201);
  EXPECT_EQ(Do(http::verb::delete_, std::string(kConfigMaps) + "/c?dryRun=Bogus").status, 422);
  // A negative limit is no limit.
  Reply all = Do(http::verb::get, std::string(kConfigMaps) + "?limit=-1");
  ASSERT_EQ(all.status, 200);
  EXPECT_FALSE(all.body["metadata"].contains("continue"));
  for (const char* q : {"?limit=abc", "?resourceVersion=abc", "?watch=1&timeoutSeconds=abc",
                        "?watch=1&timeoutSeconds=1.5"}) {
    Reply r = Do(http::verb::get, std::string(kConfigMaps) + q);
    EXPECT_EQ(r.status, 400) << q;
    EXPECT_EQ(r.body["reason"], "BadRequest") << q;
  }
  // A negative timeout ends the watch at once, as kube-apiserver's timer does.
  Reply ended = Do(http::verb::get, std::string(kConfigMaps) + "?watch=1&timeoutSeconds=-1");
  EXPECT_EQ(ended.status, 200);
}

TEST_F(ValidationServerTest, UnknownBodyMediaTypeIs415) {
  Reply r = Do(http::verb::post, kConfigMaps, R"({"metadata":{"name":"c"}})", "text/plain");
  EXPECT_EQ(r.status, 415);
  EXPECT_EQ(r.body["reason"], "UnsupportedMediaType");
  EXPECT_EQ(Do(http::verb::get, std::string(kConfigMaps) + "/c").status, 404);
  EXPECT_EQ(Do(http::verb::post, kConfigMaps, R"({"metadata":{"name":"c"}})",
               "application/json; charset=utf-8")
                .status,
            201);
}

}  // namespace
}  // namespace berth::apiserver
