// fieldValidation through the API server's HTTP surface: create, update, the four patch types
// and bindings, with Strict, Warn (the default) and Ignore.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "apiserver/server_test_fixture.h"

namespace berth::apiserver {
namespace {

namespace http = boost::beast::http;
using Json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

using FieldValidationServerTest = testing::ServerHttpTest;
using testing::Reply;

TEST_F(FieldValidationServerTest, StrictCreateRejectsUnknownFieldsAndStoresNothing) {
  Reply r = Do(http::verb::post, std::string(kPods) + "?fieldValidation=Strict",
               PodJson("p", R"("nodeSelectorr":{"a":"b"},)", R"(,"imagePullPolicyy":"Always")"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["reason"], "BadRequest");
  EXPECT_EQ(r.body["message"],
            R"(Pod in version "v1" cannot be handled as a Pod: strict decoding error: )"
            R"(unknown field "spec.containers[0].imagePullPolicyy", )"
            R"(unknown field "spec.nodeSelectorr")");
  EXPECT_EQ(Do(http::verb::get, std::string(kPods) + "/p").status, 404);
}

TEST_F(FieldValidationServerTest, StrictCreateRejectsDuplicateFields) {
  Reply r = Do(http::verb::post, std::string(kPods) + "?fieldValidation=Strict",
               PodJson("p", "", R"(,"image":"y")"));
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["message"],
            R"(Pod in version "v1" cannot be handled as a Pod: strict decoding error: )"
            R"(duplicate field "spec.containers[0].image")");
}

TEST_F(FieldValidationServerTest, WarnIsTheDefaultAndDropsTheField) {
  Reply r =
      Do(http::verb::post, kPods, PodJson("p", R"("foo":1,)", R"(,"imagePullPolicyy":"Always")"));
  ASSERT_EQ(r.status, 201) << r.body.dump();
  EXPECT_THAT(r.warnings,
              ElementsAre(R"(299 - "unknown field \"spec.containers[0].imagePullPolicyy\"")",
                          R"(299 - "unknown field \"spec.foo\"")"));
  EXPECT_FALSE(r.body["spec"].contains("foo"));
  Reply got = Do(http::verb::get, std::string(kPods) + "/p");
  ASSERT_EQ(got.status, 200);
  EXPECT_FALSE(got.body["spec"].contains("foo"));
  EXPECT_FALSE(got.body["spec"]["containers"][0].contains("imagePullPolicyy"));
  EXPECT_EQ(got.body["spec"]["containers"][0]["image"], "x");
  EXPECT_THAT(got.warnings, IsEmpty());
}

TEST_F(FieldValidationServerTest, IgnoreAcceptsSilentlyAndDropsTheField) {
  Reply r = Do(http::verb::post, std::string(kPods) + "?fieldValidation=Ignore",
               PodJson("p", R"("foo":1,)"));
  ASSERT_EQ(r.status, 201);
  EXPECT_THAT(r.warnings, IsEmpty());
  EXPECT_FALSE(Do(http::verb::get, std::string(kPods) + "/p").body["spec"].contains("foo"));
}

TEST_F(FieldValidationServerTest, AnUnsupportedDirectiveIsInvalid) {
  Reply r = Do(http::verb::post, std::string(kPods) + "?fieldValidation=Sometimes", PodJson("p"));
  EXPECT_EQ(r.status, 422);
  EXPECT_THAT(r.body["message"].get<std::string>(),
              HasSubstr(R"(CreateOptions.meta.k8s.io "" is invalid: fieldValidation: )"
                        R"(Unsupported value: "Sometimes")"));
  EXPECT_EQ(Do(http::verb::get, std::string(kPods) + "/p").status, 404);
}

TEST_F(FieldValidationServerTest, UpdateChecksTheBody) {
  Reply created = Do(http::verb::post, kPods, PodJson("p"));
  ASSERT_EQ(created.status, 201);
  Json pod = created.body;
  pod["spec"]["containers"][0]["bogus"] = true;
  Reply strict = Do(http::verb::put, std::string(kPods) + "/p?fieldValidation=Strict", pod.dump());
  EXPECT_EQ(strict.status, 400);
  EXPECT_THAT(strict.body["message"].get<std::string>(),
              HasSubstr(R"(strict decoding error: unknown field "spec.containers[0].bogus")"));
  Reply warn = Do(http::verb::put, std::string(kPods) + "/p", pod.dump());
  ASSERT_EQ(warn.status, 200) << warn.body.dump();
  EXPECT_THAT(warn.warnings, ElementsAre(R"(299 - "unknown field \"spec.containers[0].bogus\"")"));
  EXPECT_FALSE(warn.body["spec"]["containers"][0].contains("bogus"));
}

TEST_F(FieldValidationServerTest, MergeAndStrategicPatchesCheckThePatchedObject) {
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("p")).status, 201);
  const std::string target = std::string(kPods) + "/p";
  for (const char* type :
       {"application/merge-patch+json", "application/strategic-merge-patch+json"}) {
    SCOPED_TRACE(type);
    Reply strict = Do(http::verb::patch, target + "?fieldValidation=Strict",
                      R"({"metadata":{"labels":{"a":"b"}},"spec":{"bogus":1}})", type);
    EXPECT_EQ(strict.status, 422);
    EXPECT_THAT(strict.body["message"].get<std::string>(),
                HasSubstr(R"(is invalid: patch: Invalid value: )"));
    EXPECT_THAT(strict.body["message"].get<std::string>(),
                HasSubstr(R"(: strict decoding error: unknown field "spec.bogus")"));
    EXPECT_FALSE(Do(http::verb::get, target).body["metadata"].contains("labels"));

    Reply dup = Do(http::verb::patch, target + "?fieldValidation=Strict",
                   R"({"metadata":{"labels":{"a":"b","a":"c"}}})", type);
    EXPECT_EQ(dup.status, 422);
    EXPECT_THAT(dup.body["message"].get<std::string>(),
                HasSubstr(R"(strict decoding error: duplicate field "metadata.labels.a")"));

    Reply warn = Do(http::verb::patch, target,
                    R"({"metadata":{"labels":{"a":"b"}},"spec":{"bogus":1}})", type);
    ASSERT_EQ(warn.status, 200) << warn.body.dump();
    EXPECT_THAT(warn.warnings, ElementsAre(R"(299 - "unknown field \"spec.bogus\"")"));
    EXPECT_EQ(warn.body["metadata"]["labels"]["a"], "b");
    EXPECT_FALSE(warn.body["spec"].contains("bogus"));
    ASSERT_EQ(Do(http::verb::patch, target, R"({"metadata":{"labels":null}})",
                 "application/merge-patch+json")
                  .status,
              200);
  }
}

TEST_F(FieldValidationServerTest, JsonPatchChecksItsOperationsAndTheResult) {
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("p")).status, 201);
  const std::string target = std::string(kPods) + "/p";
  Reply warn = Do(http::verb::patch, target,
                  R"([{"op":"add","path":"/spec/bogus","value":1,"comment":"x"}])",
                  "application/json-patch+json");
  ASSERT_EQ(warn.status, 200) << warn.body.dump();
  EXPECT_THAT(warn.warnings, ElementsAre(R"(299 - "json patch unknown field \"[0].comment\"")",
                                         R"(299 - "unknown field \"spec.bogus\"")"));
  Reply strict =
      Do(http::verb::patch, target + "?fieldValidation=Strict",
         R"([{"op":"add","path":"/spec/bogus","value":1}])", "application/json-patch+json");
  EXPECT_EQ(strict.status, 422);
  Reply ignore =
      Do(http::verb::patch, target + "?fieldValidation=Ignore",
         R"([{"op":"add","path":"/spec/bogus","value":1}])", "application/json-patch+json");
  EXPECT_EQ(ignore.status, 200);
  EXPECT_THAT(ignore.warnings, IsEmpty());
  EXPECT_FALSE(ignore.body["spec"].contains("bogus"));
}

TEST_F(FieldValidationServerTest, ApplyRejectsUndeclaredFieldsWhateverTheDirective) {
  const std::string target = std::string(kPods) + "/p?fieldManager=test";
  for (const char* fv : {"", "&fieldValidation=Ignore"}) {
    Reply r = Do(http::verb::patch, target + fv,
                 R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default"},
                     "spec":{"containers":[{"name":"c","image":"x","imagee":"y"}]}})",
                 "application/apply-patch+yaml");
    EXPECT_EQ(r.status, 400);
    EXPECT_EQ(r.body["message"],
              "failed to create typed patch object (default/p; /v1, Kind=Pod): "
              ".spec.containers[0].imagee: field not declared in schema");
  }
  const std::string dup = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
      "spec":{"containers":[{"name":"c","image":"x","image":"x"}]}})";
  Reply strict = Do(http::verb::patch, target + "&fieldValidation=Strict", dup,
                    "application/apply-patch+yaml");
  EXPECT_EQ(strict.status, 400);
  EXPECT_EQ(strict.body["message"],
            "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal "
            "errors:\n  key \"image\" already set in map");
  Reply warn = Do(http::verb::patch, target, dup, "application/apply-patch+yaml");
  EXPECT_EQ(warn.status, 201) << warn.body.dump();
  EXPECT_THAT(warn.warnings, ElementsAre(R"(299 - "key \"image\" already set in map")"));
}

// Creating a pod by server-side apply resolves its priority class before the store's lock is
// taken (the lookup lists priority classes, which needs that lock).
TEST_F(FieldValidationServerTest, ApplyCreatesPodsWithTheirPriority) {
  Reply named = Do(http::verb::patch, std::string(kPods) + "/hi?fieldManager=test",
                   R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"hi"},"spec":{
                       "priorityClassName":"system-cluster-critical",
                       "containers":[{"name":"c","image":"x"}]}})",
                   "application/apply-patch+yaml");
  ASSERT_EQ(named.status, 201) << named.body.dump();
  EXPECT_EQ(named.body["spec"]["priority"], 2000000000);
  Reply plain = Do(http::verb::patch, std::string(kPods) + "/lo?fieldManager=test",
                   R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"lo"},"spec":{
                       "containers":[{"name":"c","image":"x"}]}})",
                   "application/apply-patch+yaml");
  ASSERT_EQ(plain.status, 201) << plain.body.dump();
  EXPECT_EQ(plain.body["spec"]["priority"], 0);
  Reply missing = Do(http::verb::patch, std::string(kPods) + "/no?fieldManager=test",
                     R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"no"},"spec":{
                         "priorityClassName":"nope","containers":[{"name":"c","image":"x"}]}})",
                     "application/apply-patch+yaml");
  EXPECT_EQ(missing.status, 403) << missing.body.dump();
}

TEST_F(FieldValidationServerTest, BindingsAreChecked) {
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("p")).status, 201);
  Reply strict = Do(http::verb::post, "/api/v1/namespaces/default/bindings?fieldValidation=Strict",
                    R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},
                        "target":{"kind":"Node","name":"n1","nodeName":"n1"}})");
  EXPECT_EQ(strict.status, 400);
  EXPECT_EQ(strict.body["message"],
            R"(Binding in version "v1" cannot be handled as a Binding: strict decoding error: )"
            R"(unknown field "target.nodeName")");
  Reply warn = Do(http::verb::post, "/api/v1/namespaces/default/bindings",
                  R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},
                      "target":{"kind":"Node","name":"n1","nodeName":"n1"}})");
  EXPECT_EQ(warn.status, 201);
  EXPECT_THAT(warn.warnings, ElementsAre(R"(299 - "unknown field \"target.nodeName\"")"));
  EXPECT_EQ(Do(http::verb::get, std::string(kPods) + "/p").body["spec"]["nodeName"], "n1");
}

}  // namespace
}  // namespace berth::apiserver
