#include "apiserver/field_validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "apiserver/resources.h"
#include "apiserver/reviews.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
using ::testing::ElementsAre;

const FieldSchema& SchemaOf(std::string_view group, std::string_view kind) {
  const FieldSchema* s = FindFieldSchema(group, kind);
  EXPECT_NE(s, nullptr) << group << "/" << kind;
  return *s;
}

std::vector<std::string> Drop(std::string_view group, std::string_view kind, Json& obj) {
  std::vector<std::string> problems;
  DropUnknownFields(SchemaOf(group, kind), obj, &problems);
  return problems;
}

TEST(FieldValidationTest, EveryServedKindHasASchema) {
  for (const ResourceInfo& r : ServedResources()) {
    if (IsReview(r)) continue;  // answered, never stored: nothing to validate
    // CustomResourceDefinitions are checked by their own admission (crd_admission.h).
    if (r.group == "apiextensions.k8s.io") continue;
    EXPECT_NE(FindFieldSchema(r.group, r.kind), nullptr) << r.GroupVersion() << " " << r.kind;
  }
  EXPECT_EQ(FindFieldSchema("", "Deployment"), nullptr);  // apps, not core
  EXPECT_EQ(FindFieldSchema("example.com", "Widget"), nullptr);
}

TEST(FieldValidationTest, UnknownFieldInAListItemIsDroppedAndNamedWithItsIndex) {
  Json pod = Json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
    "spec":{"containers":[{"name":"a","image":"x"},
                          {"name":"b","image":"y","imagePullPolicyy":"Always"}],
            "nodeSelectorr":{"a":"b"}}})");
  auto problems = Drop("", "Pod", pod);
  EXPECT_THAT(problems, ElementsAre(R"(unknown field "spec.containers[1].imagePullPolicyy")",
                                    R"(unknown field "spec.nodeSelectorr")"));
  EXPECT_FALSE(pod["spec"]["containers"][1].contains("imagePullPolicyy"));
  EXPECT_FALSE(pod["spec"].contains("nodeSelectorr"));
  EXPECT_EQ(pod["spec"]["containers"][1]["image"], "y");
}

TEST(FieldValidationTest, MapKeysAreFreeAndKnownFieldsStay) {
  Json pod = Json::parse(R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"p","labels":{"any-key":"v"},"annotations":{"x/y":"z"}},
    "spec":{"nodeSelector":{"disk":"ssd"},"containers":[{"name":"c","image":"x",
      "resources":{"requests":{"cpu":"1","example.com/gpu":"2"}},
      "ports":[{"containerPort":80,"protocol":"TCP"}],
      "livenessProbe":{"httpGet":{"port":"http","path":"/"}}}],
      "overhead":{"memory":"1Mi"}}})");
  const Json before = pod;
  EXPECT_TRUE(Drop("", "Pod", pod).empty());
  EXPECT_EQ(pod, before);
  Json cm =
      Json::parse(R"({"kind":"ConfigMap","data":{"anything":"v"},"binaryData":{"b":"AA=="}})");
  EXPECT_TRUE(Drop("", "ConfigMap", cm).empty());
}

TEST(FieldValidationTest, StatusAndMetadataFieldsAreKnown) {
  Json pod = Json::parse(R"({"metadata":{"name":"p","uid":"u","resourceVersion":"3",
      "ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n","uid":"x"}],
      "managedFields":[{"manager":"m","operation":"Update","fieldsType":"FieldsV1",
                        "fieldsV1":{"f:spec":{"f:whatever":{}}}}]},
    "status":{"phase":"Running","nominatedNodeName":"n","conditions":[{"type":"PodScheduled",
      "status":"True","bogus":1}]}})");
  EXPECT_THAT(Drop("", "Pod", pod), ElementsAre(R"(unknown field "status.conditions[0].bogus")"));
  // FieldsV1 is free: its keys are field paths, not fields.
  EXPECT_TRUE(pod["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"].contains("f:whatever"));
}

TEST(FieldValidationTest, RawExtensionSubtreesAcceptAnything) {
  Json rev = Json::parse(R"({"apiVersion":"apps/v1","kind":"ControllerRevision","revision":1,
    "data":{"spec":{"template":{"anything":{"goes":[1,2]}}}},"junk":true})");
  EXPECT_THAT(Drop("apps", "ControllerRevision", rev), ElementsAre(R"(unknown field "junk")"));
  EXPECT_EQ(rev["data"]["spec"]["template"]["anything"]["goes"][1], 2);
}

TEST(FieldValidationTest, IntOrStringAndQuantityAreLeaves) {
  Json pdb = Json::parse(R"({"spec":{"minAvailable":"50%","maxUnavailable":1,
    "selector":{"matchLabels":{"a":"b"},"matchExpressions":[{"key":"k","operator":"In",
    "values":["v"],"valuez":1}]}}})");
  EXPECT_THAT(Drop("policy", "PodDisruptionBudget", pdb),
              ElementsAre(R"(unknown field "spec.selector.matchExpressions[0].valuez")"));
}

TEST(FieldValidationTest, ApplyStyleNamesAndLeavesTheObject) {
  const Json dep = Json::parse(
      R"({"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicaz":2,
      "template":{"spec":{"containers":[{"name":"c","imagee":"x"}]}}}})");
  EXPECT_THAT(FindUnknownFields(SchemaOf("apps", "Deployment"), dep, FieldPathStyle::kApply),
              ElementsAre(".spec.replicaz", ".spec.template.spec.containers[0].imagee"));
  EXPECT_THAT(FindUnknownFields(SchemaOf("apps", "Deployment"), dep, FieldPathStyle::kDecoder),
              ElementsAre(R"(unknown field "spec.replicaz")",
                          R"(unknown field "spec.template.spec.containers[0].imagee")"));
  EXPECT_TRUE(dep["spec"].contains("replicaz"));
}

TEST(FieldValidationTest, DuplicateKeysAreNotedWithTheirPathAndTheLastWins) {
  Json out;
  std::vector<std::string> dups;
  ASSERT_TRUE(ParseJsonNotingDuplicates(
      R"({"metadata":{"name":"a","name":"b"},"spec":{"containers":[{"name":"c"},
         {"name":"d","image":"x","image":"y"}]},"kind":"Pod","kind":"Pod"})",
      512, &out, &dups));
  EXPECT_THAT(dups, ElementsAre("metadata.name", "spec.containers[1].image", "kind"));
  EXPECT_EQ(out["metadata"]["name"], "b");
  EXPECT_EQ(out["spec"]["containers"][1]["image"], "y");
  EXPECT_EQ(out["spec"]["containers"][0]["name"], "c");
}

TEST(FieldValidationTest, ParsesWhatTheDomParserParses) {
  const std::string text =
      R"([{"a":[1,-2,3.5,1e3,18446744073709551615,true,false,null,"s\u00e9"]},{},[],"x"])";
  Json out;
  std::vector<std::string> dups;
  ASSERT_TRUE(ParseJsonNotingDuplicates(text, 512, &out, &dups));
  EXPECT_EQ(out, Json::parse(text));
  EXPECT_TRUE(dups.empty());
  EXPECT_FALSE(ParseJsonNotingDuplicates(R"({"a":)", 512, &out, nullptr));
  EXPECT_FALSE(ParseJsonNotingDuplicates(R"({"a":1} x)", 512, &out, nullptr));
  // Too deep for the limit: refused, not overflowed.
  EXPECT_FALSE(
      ParseJsonNotingDuplicates(std::string(600, '[') + std::string(600, ']'), 512, &out, nullptr));
  EXPECT_TRUE(
      ParseJsonNotingDuplicates(std::string(100, '[') + std::string(100, ']'), 512, &out, nullptr));
}

TEST(FieldValidationTest, DirectiveValues) {
  EXPECT_EQ(*ParseFieldValidation(std::nullopt, "CreateOptions"), FieldValidation::kWarn);
  EXPECT_EQ(*ParseFieldValidation("", "CreateOptions"), FieldValidation::kWarn);
  EXPECT_EQ(*ParseFieldValidation("Strict", "CreateOptions"), FieldValidation::kStrict);
  EXPECT_EQ(*ParseFieldValidation("Ignore", "CreateOptions"), FieldValidation::kIgnore);
  auto bad = ParseFieldValidation("strict", "PatchOptions");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(bad.error().message,
            R"(PatchOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: )"
            R"("strict": supported values: "", "Ignore", "Strict", "Warn")");
}

TEST(FieldValidationTest, WarningHeaderQuotes) {
  EXPECT_EQ(WarningHeaderValue(R"(unknown field "spec.a\b")"),
            R"(299 - "unknown field \"spec.a\\b\"")");
}

}  // namespace
}  // namespace berth::apiserver
