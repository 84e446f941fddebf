// CustomResourceDefinitions through the API server's HTTP surface: the CRD's own validation and
// status, discovery, custom objects' schema, status and scale subresources, several versions,
// and what happens to the objects when the CRD, their namespace or the server goes.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "apiserver/server_test_fixture.h"

namespace berth::apiserver {
namespace {

namespace http = boost::beast::http;
using testing::Json;
using testing::Reply;
using CrdServerTest = testing::ServerHttpTest;

constexpr const char* kCrds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
constexpr const char* kWidgets = "/apis/example.berth.dev/v1/namespaces/default/widgets";

Json Version(const std::string& name, bool served, bool storage) {
  return Json::parse(R"({"name":")" + name + R"(","served":)" + (served ? "true" : "false") +
                     R"(,"storage":)" + (storage ? "true" : "false") + R"(,
    "subresources":{"status":{},"scale":{"specReplicasPath":".spec.replicas",
                                         "statusReplicasPath":".status.replicas"}},
    "additionalPrinterColumns":[{"name":"Replicas","type":"integer","jsonPath":".spec.replicas"}],
    "schema":{"openAPIV3Schema":{"type":"object","properties":{
      "spec":{"type":"object","required":["size"],"properties":{
        "size":{"type":"string","enum":["S","M","L"]},
        "replicas":{"type":"integer","minimum":0,"default":1}}},
      "status":{"type":"object","properties":{"replicas":{"type":"integer"},
                                              "phase":{"type":"string"}}}}}}})");
}

Json WidgetCrd(std::vector<Json> versions = {}) {
  if (versions.empty()) versions.push_back(Version("v1", true, true));
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", "widgets.example.berth.dev"}}},
          {"spec",
           {{"group", "example.berth.dev"},
            {"scope", "Namespaced"},
            {"names",
             {{"plural", "widgets"},
              {"kind", "Widget"},
              {"shortNames", {"wd"}},
              {"categories", {"all"}}}},
            {"versions", versions}}}};
}

std::string Widget(const std::string& name, const std::string& spec,
                   const std::string& version = "v1") {
  return R"({"apiVersion":"example.berth.dev/)" + version +
         R"(","kind":"Widget","metadata":{"name":")" + name + R"("},"spec":)" + spec + "}";
}

// Waits (bounded) for `done`, which the server's CRD cleanup thread makes true.
template <typename F>
bool Eventually(F done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return done();
}

const Json* Condition(const Json& crd, const std::string& type) {
  for (const auto& c : crd["status"]["conditions"]) {
    if (c["type"] == type) return &c;
  }
  return nullptr;
}

TEST_F(CrdServerTest, InvalidCrdsAreRefusedNamingTheField) {
  Json crd = WidgetCrd();
  crd["metadata"]["name"] = "widgets.other.dev";
  Reply r = Do(http::verb::post, kCrds, crd.dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(r.body["message"],
            "CustomResourceDefinition.apiextensions.k8s.io \"widgets.other.dev\" is invalid: "
            "metadata.name: Invalid value: \"widgets.other.dev\": must be "
            "spec.names.plural+\".\"+spec.group");
  crd = WidgetCrd({Version("v1", true, true), Version("v2", true, true)});
  r = Do(http::verb::post, kCrds, crd.dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.body["message"].get<std::string>().find(
                "must have exactly one version marked as storage version"),
            std::string::npos)
      << r.body.dump();
  crd = WidgetCrd();
  crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"].erase("type");
  r = Do(http::verb::post, kCrds, crd.dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.body["message"].get<std::string>().find(
                "spec.versions[0].schema.openAPIV3Schema.properties[spec].type: Required value"),
            std::string::npos)
      << r.body.dump();
  crd = WidgetCrd();
  crd["spec"]["group"] = "nodot";
  crd["metadata"]["name"] = "widgets.nodot";
  r = Do(http::verb::post, kCrds, crd.dump());
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.body["message"].get<std::string>().find(
                "spec.group: Invalid value: \"nodot\": should be a domain with at least one dot"),
            std::string::npos)
      << r.body.dump();
}

// Nothing of the wrong type is stored: the registry and the cleanup read stored CRDs freely.
TEST_F(CrdServerTest, CrdsOfTheWrongShapeAreBadRequests) {
  const std::vector<std::pair<std::string, Json>> cases = {
      {"/spec/versions/0/subresources", Json::array({1})},
      {"/spec/versions/0/additionalPrinterColumns", "x"},
      {"/spec/versions/0/served", "yes"},
      {"/spec/names/shortNames", "wd"},
      {"/spec/versions/0/schema/openAPIV3Schema/properties/spec/required", "size"},
      {"/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/size/maxLength", -1},
      {"/status", "x"}};
  for (const auto& [pointer, value] : cases) {
    Json crd = WidgetCrd();
    crd[Json::json_pointer(pointer)] = value;
    Reply r = Do(http::verb::post, kCrds, crd.dump());
    EXPECT_EQ(r.status, 400) << pointer << ": " << r.body.dump();
  }
  Reply shape = Do(http::verb::post, kCrds, [] {
    Json crd = WidgetCrd();
    crd["spec"]["versions"][0]["subresources"] = Json::array({1});
    return crd.dump();
  }());
  EXPECT_EQ(shape.body["message"],
            "CustomResourceDefinition in version \"v1\" cannot be handled as a "
            "CustomResourceDefinition: a field has the wrong type: "
            "spec.versions[0].subresources: must be an object");
  // None was stored: the well-formed one is created.
  EXPECT_EQ(Do(http::verb::post, kCrds, WidgetCrd().dump()).status, 201);
}

TEST_F(CrdServerTest, AnEstablishedCrdIsServedAndDiscovered) {
  Reply r = Do(http::verb::post, kCrds, WidgetCrd().dump());
  ASSERT_EQ(r.status, 201) << r.body.dump();
  ASSERT_NE(Condition(r.body, "Established"), nullptr);
  EXPECT_EQ((*Condition(r.body, "Established"))["status"], "True");
  EXPECT_EQ((*Condition(r.body, "NamesAccepted"))["status"], "True");
  EXPECT_EQ(r.body["status"]["acceptedNames"]["kind"], "Widget");
  EXPECT_EQ(r.body["status"]["storedVersions"], Json::array({"v1"}));
  EXPECT_EQ(r.body["spec"]["names"]["singular"], "widget");
  EXPECT_EQ(r.body["spec"]["names"]["listKind"], "WidgetList");
  Reply disc = Do(http::verb::get, "/apis/example.berth.dev/v1");
  ASSERT_EQ(disc.status, 200);
  bool found = false;
  for (const auto& res : disc.body["resources"]) {
    if (res["name"] != "widgets") continue;
    found = true;
    EXPECT_EQ(res["kind"], "Widget");
    EXPECT_EQ(res["shortNames"], Json::array({"wd"}));
    EXPECT_EQ(res["categories"], Json::array({"all"}));
    EXPECT_EQ(res["namespaced"], true);
  }
  EXPECT_TRUE(found) << disc.body.dump();
  // A second CRD of the group whose short name is taken is not accepted, nor served.
  Json other = WidgetCrd();
  other["metadata"]["name"] = "gadgets.example.berth.dev";
  other["spec"]["names"] = {{"plural", "gadgets"}, {"kind", "Gadget"}, {"shortNames", {"wd"}}};
  Reply conflict = Do(http::verb::post, kCrds, other.dump());
  ASSERT_EQ(conflict.status, 201) << conflict.body.dump();
  EXPECT_EQ((*Condition(conflict.body, "NamesAccepted"))["reason"], "ShortNamesConflict");
  EXPECT_EQ((*Condition(conflict.body, "Established"))["status"], "False");
  EXPECT_EQ(Do(http::verb::get, "/apis/example.berth.dev/v1/namespaces/default/gadgets").status,
            404);
}

TEST_F(CrdServerTest, AnUpdateKeepsTheScopeAndTheStoredVersionsThatRemain) {
  ASSERT_EQ(Do(http::verb::post, kCrds,
               WidgetCrd({Version("v1", true, true), Version("v1beta1", true, false)}).dump())
                .status,
            201);
  const std::string path = std::string(kCrds) + "/widgets.example.berth.dev";
  Json crd = Do(http::verb::get, path).body;
  crd["spec"]["scope"] = "Cluster";
  Reply scope = Do(http::verb::put, path, crd.dump());
  EXPECT_EQ(scope.status, 422);
  EXPECT_NE(scope.body["message"].get<std::string>().find(
                "spec.scope: Invalid value: \"Cluster\": field is immutable"),
            std::string::npos)
      << scope.body.dump();
  // The storage version moves to v1beta1: both are stored versions; dropping v1 keeps one.
  crd = Do(http::verb::get, path).body;
  crd["spec"]["versions"][0]["storage"] = false;
  crd["spec"]["versions"][1]["storage"] = true;
  Reply moved = Do(http::verb::put, path, crd.dump());
  ASSERT_EQ(moved.status, 200) << moved.body.dump();
  EXPECT_EQ(moved.body["status"]["storedVersions"], Json::array({"v1", "v1beta1"}));
  crd = moved.body;
  crd["spec"]["versions"].erase(0);
  Reply dropped = Do(http::verb::put, path, crd.dump());
  ASSERT_EQ(dropped.status, 200) << dropped.body.dump();
  EXPECT_EQ(dropped.body["status"]["storedVersions"], Json::array({"v1beta1"}));
  EXPECT_EQ(Do(http::verb::get, kWidgets).status, 404);
}

TEST_F(CrdServerTest, CustomObjectsAreDefaultedValidatedAndPruned) {
  ASSERT_EQ(Do(http::verb::post, kCrds, WidgetCrd().dump()).status, 201);
  Reply bad = Do(http::verb::post, kWidgets, Widget("bad", R"({"size":"XL"})"));
  EXPECT_EQ(bad.status, 422);
  EXPECT_EQ(bad.body["message"],
            "Widget.example.berth.dev \"bad\" is invalid: spec.size: "
            "Unsupported value: \"XL\": supported values: \"S\", \"M\", "
            "\"L\"");
  EXPECT_EQ(bad.body["details"]["causes"][0]["field"], "spec.size");
  Reply strict = Do(http::verb::post, std::string(kWidgets) + "?fieldValidation=Strict",
                    Widget("strict", R"({"size":"S","colour":"red"})"));
  EXPECT_EQ(strict.status, 400);
  EXPECT_NE(strict.body["message"].get<std::string>().find(
                "strict decoding error: unknown field \"spec.colour\""),
            std::string::npos)
      << strict.body.dump();
  Reply ok = Do(http::verb::post, kWidgets, Widget("w", R"({"size":"S","colour":"red"})"));
  ASSERT_EQ(ok.status, 201) << ok.body.dump();
  EXPECT_FALSE(ok.body["spec"].contains("colour"));
  EXPECT_EQ(ok.body["spec"]["replicas"], 1);
  EXPECT_EQ(ok.body["metadata"]["generation"], 1);
  // Status is the subresource's: ignored on the main resource, spec changes bump generation.
  const std::string w = std::string(kWidgets) + "/w";
  Reply patched = Do(http::verb::patch, w, R"({"spec":{"size":"M"},"status":{"phase":"Up"}})",
                     "application/merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.body.dump();
  EXPECT_EQ(patched.body["metadata"]["generation"], 2);
  EXPECT_FALSE(patched.body.contains("status"));
  Reply status = Do(http::verb::patch, w + "/status", R"({"status":{"phase":"Up"}})",
                    "application/merge-patch+json");
  ASSERT_EQ(status.status, 200) << status.body.dump();
  EXPECT_EQ(status.body["status"]["phase"], "Up");
  EXPECT_EQ(status.body["metadata"]["generation"], 2);
  Reply strict_patch = Do(http::verb::patch, w + "?fieldValidation=Strict",
                          R"({"spec":{"colour":"red"}})", "application/merge-patch+json");
  EXPECT_EQ(strict_patch.status, 422);
  EXPECT_NE(strict_patch.body["message"].get<std::string>().find(
                "strict decoding error: unknown field \"spec.colour\""),
            std::string::npos)
      << strict_patch.body.dump();
  // Server-side apply types the applied configuration: undeclared fields fail it.
  Reply apply = Do(http::verb::patch, w + "?fieldManager=t",
                   Widget("w", R"({"size":"M","colour":"red"})"), "application/apply-patch+yaml");
  EXPECT_EQ(apply.status, 400);
  EXPECT_EQ(apply.body["message"],
            "failed to create typed patch object (/w; example.berth.dev/v1, Kind=Widget): "
            ".spec.colour: field not declared in schema")
      << apply.body.dump();
  Reply json_patch = Do(http::verb::patch, w, R"([{"op":"replace","path":"/spec/size","value":1}])",
                        "application/json-patch+json");
  EXPECT_EQ(json_patch.status, 422) << json_patch.body.dump();
  // Field selectors on metadata.name and metadata.namespace.
  Reply list = Do(http::verb::get, std::string(kWidgets) + "?fieldSelector=metadata.name%3Dw");
  ASSERT_EQ(list.status, 200) << list.body.dump();
  EXPECT_EQ(list.body["kind"], "WidgetList");
  EXPECT_EQ(list.body["items"].size(), 1u);
  list = Do(http::verb::get,
            "/apis/example.berth.dev/v1/widgets?fieldSelector=metadata.namespace%3Dother");
  ASSERT_EQ(list.status, 200) << list.body.dump();
  EXPECT_TRUE(list.body["items"].empty());
}

TEST_F(CrdServerTest, ScaleSubresourceReadsAndWritesTheNamedPaths) {
  ASSERT_EQ(Do(http::verb::post, kCrds, WidgetCrd().dump()).status, 201);
  ASSERT_EQ(Do(http::verb::post, kWidgets, Widget("w", R"({"size":"S","replicas":2})")).status,
            201);
  const std::string scale = std::string(kWidgets) + "/w/scale";
  Reply got = Do(http::verb::get, scale);
  ASSERT_EQ(got.status, 200) << got.body.dump();
  EXPECT_EQ(got.body["kind"], "Scale");
  EXPECT_EQ(got.body["spec"]["replicas"], 2);
  Reply set =
      Do(http::verb::patch, scale, R"({"spec":{"replicas":5}})", "application/merge-patch+json");
  ASSERT_EQ(set.status, 200) << set.body.dump();
  EXPECT_EQ(Do(http::verb::get, std::string(kWidgets) + "/w").body["spec"]["replicas"], 5);
  Reply negative =
      Do(http::verb::patch, scale, R"({"spec":{"replicas":-1}})", "application/merge-patch+json");
  EXPECT_EQ(negative.status, 422) << negative.body.dump();
}

TEST_F(CrdServerTest, VersionsShareObjectsAndReadAsTheirOwn) {
  ASSERT_EQ(Do(http::verb::post, kCrds,
               WidgetCrd({Version("v1", true, true), Version("v1beta1", true, false)}).dump())
                .status,
            201);
  const std::string beta = "/apis/example.berth.dev/v1beta1/namespaces/default/widgets";
  Reply made = Do(http::verb::post, beta, Widget("b", R"({"size":"S"})", "v1beta1"));
  ASSERT_EQ(made.status, 201) << made.body.dump();
  EXPECT_EQ(made.body["apiVersion"], "example.berth.dev/v1beta1");
  Reply v1 = Do(http::verb::get, std::string(kWidgets) + "/b");
  ASSERT_EQ(v1.status, 200);
  EXPECT_EQ(v1.body["apiVersion"], "example.berth.dev/v1");
  Reply list = Do(http::verb::get, kWidgets);
  ASSERT_EQ(list.body["items"].size(), 1u);
  EXPECT_EQ(list.body["items"][0]["apiVersion"], "example.berth.dev/v1");
  Reply disc = Do(http::verb::get, "/apis/example.berth.dev");
  EXPECT_EQ(disc.body["preferredVersion"]["version"], "v1") << disc.body.dump();
}

TEST_F(CrdServerTest, CrdsAndObjectsSurviveARestart) {
  ASSERT_EQ(Do(http::verb::post, kCrds, WidgetCrd().dump()).status, 201);
  ASSERT_EQ(Do(http::verb::post, kWidgets, Widget("kept", R"({"size":"L"})")).status, 201);
  Restart();
  Reply got = Do(http::verb::get, std::string(kWidgets) + "/kept");
  ASSERT_EQ(got.status, 200) << got.body.dump();
  EXPECT_EQ(got.body["spec"]["size"], "L");
  EXPECT_EQ(Do(http::verb::post, kWidgets, Widget("bad", R"({"size":"XL"})")).status, 422);
}

TEST_F(CrdServerTest, DeletingTheCrdRemovesItsObjects) {
  ASSERT_EQ(Do(http::verb::post, kCrds, WidgetCrd().dump()).status, 201);
  ASSERT_EQ(Do(http::verb::post, kWidgets, Widget("a", R"({"size":"S"})")).status, 201);
  ASSERT_EQ(Do(http::verb::post, kWidgets, Widget("b", R"({"size":"S"})")).status, 201);
  const std::string crd = std::string(kCrds) + "/widgets.example.berth.dev";
  ASSERT_EQ(Do(http::verb::delete_, crd).status, 200);
  EXPECT_TRUE(Eventually([&] { return Do(http::verb::get, crd).status == 404; }));
  EXPECT_EQ(Do(http::verb::get, kWidgets).status, 404);
  // Defined again, the resource starts empty.
  ASSERT_EQ(Do(http::verb::post, kCrds, WidgetCrd().dump()).status, 201);
  Reply list = Do(http::verb::get, kWidgets);
  ASSERT_EQ(list.status, 200);
  EXPECT_TRUE(list.body["items"].empty()) << list.body.dump();
}

TEST_F(CrdServerTest, DeletingANamespaceRemovesItsCustomObjects) {
  ASSERT_EQ(Do(http::verb::post, kCrds, WidgetCrd().dump()).status, 201);
  ASSERT_EQ(Do(http::verb::post, "/api/v1/namespaces", R"({"metadata":{"name":"team"}})").status,
            201);
  const std::string team = "/apis/example.berth.dev/v1/namespaces/team/widgets";
  ASSERT_EQ(Do(http::verb::post, team, Widget("t", R"({"size":"S"})")).status, 201);
  ASSERT_EQ(Do(http::verb::delete_, "/api/v1/namespaces/team").status, 200);
  EXPECT_TRUE(
      Eventually([&] { return Do(http::verb::get, "/api/v1/namespaces/team").status == 404; }));
  EXPECT_TRUE(Do(http::verb::get, "/apis/example.berth.dev/v1/widgets").body["items"].empty());
}

}  // namespace
}  // namespace berth::apiserver
