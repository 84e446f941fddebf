#include "apiserver/crd_schema.h"

#include <gtest/gtest.h>

#include <string>

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

std::vector<std::string> ValidationTexts(const Json& schema, const Json& obj) {
  return ToStrings(ValidateAgainstSchema(schema, obj));
}

std::vector<std::string> StructuralTexts(const Json& schema) {
  return ToStrings(StructuralSchemaErrors(schema));
}

// The PodGroup schema of scheduler-plugins (trimmed to what the checks use), with a few
// keywords it lacks added under `extra`.
Json Schema() {
  return Json::parse(R"({
    "type": "object",
    "properties": {
      "apiVersion": {"type": "string"}, "kind": {"type": "string"},
      "metadata": {"type": "object"},
      "spec": {"type": "object", "required": ["minMember"], "properties": {
        "minMember": {"type": "integer", "minimum": 1, "format": "int32"},
        "scheduleTimeoutSeconds": {"type": "integer", "default": 60},
        "minResources": {"type": "object", "additionalProperties": {
          "anyOf": [{"type": "integer"}, {"type": "string"}],
          "pattern": "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
          "x-kubernetes-int-or-string": true}},
        "mode": {"type": "string", "enum": ["Strict", "Loose"], "default": "Strict"},
        "name": {"type": "string", "minLength": 2, "maxLength": 5},
        "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
        "ratio": {"type": "number", "maximum": 1, "exclusiveMaximum": true},
        "note": {"type": "string", "nullable": true},
        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "nested": {"type": "object", "default": {}, "properties": {
          "level": {"type": "integer", "default": 3}}}
      }},
      "status": {"type": "object", "properties": {"phase": {"type": "string"}}}
    }
  })");
}

Json Object(const std::string& spec) {
  return Json::parse(R"({"apiVersion":"x.io/v1","kind":"K","metadata":{"name":"a"},"spec":)" +
                     spec + "}");
}

std::vector<std::string> Errors(const std::string& spec) {
  Json obj = Object(spec);
  PruneUnknownFields(Schema(), obj);
  ApplySchemaDefaults(Schema(), obj);
  return ValidationTexts(Schema(), obj);
}

TEST(CrdSchemaTest, PruningDropsUndeclaredFieldsAndNamesThem) {
  Json obj = Object(R"({"minMember":1,"bogus":1,"free":{"anything":{"x":1}},
                       "tags":["a"],"minResources":{"cpu":"1"}})");
  obj["extra"] = true;
  obj["metadata"]["labels"] = {{"a", "b"}};
  std::vector<std::string> pruned;
  PruneUnknownFields(Schema(), obj, &pruned);
  EXPECT_EQ(pruned, (std::vector<std::string>{"extra", "spec.bogus"}));
  EXPECT_FALSE(obj.contains("extra"));
  EXPECT_FALSE(obj["spec"].contains("bogus"));
  // Preserved subtrees, maps (additionalProperties) and metadata stay whole.
  EXPECT_EQ(obj["spec"]["free"]["anything"]["x"], 1);
  EXPECT_EQ(obj["spec"]["minResources"]["cpu"], "1");
  EXPECT_EQ(obj["metadata"]["labels"]["a"], "b");
}

TEST(CrdSchemaTest, DefaultsFillAbsentFieldsAndNonNullableNulls) {
  Json obj = Object(R"({"minMember":1,"mode":null,"note":null,"scheduleTimeoutSeconds":null})");
  obj["spec"]["name"] = nullptr;  // non-nullable without a default: dropped
  ApplySchemaDefaults(Schema(), obj);
  EXPECT_EQ(obj["spec"]["scheduleTimeoutSeconds"], 60);
  EXPECT_EQ(obj["spec"]["mode"], "Strict");
  EXPECT_TRUE(obj["spec"]["note"].is_null());  // nullable: kept
  EXPECT_FALSE(obj["spec"].contains("name"));
  // A defaulted object is defaulted inside too.
  EXPECT_EQ(obj["spec"]["nested"]["level"], 3);
  EXPECT_TRUE(ValidationTexts(Schema(), obj).empty());
}

TEST(CrdSchemaTest, ValidObjectsPass) {
  EXPECT_TRUE(Errors(R"({"minMember":3,"minResources":{"cpu":"500m","memory":1024,
                        "gpu":"1Gi"},"tags":["a","b"],"ratio":0.5,"name":"ab"})")
                  .empty());
}

TEST(CrdSchemaTest, ErrorsAreKubeApiserversFieldErrors) {
  EXPECT_EQ(Errors(R"({"minMember":0})"),
            (std::vector<std::string>{"spec.minMember: Invalid value: 0: spec.minMember in body "
                                      "should be greater than or equal to 1"}));
  EXPECT_EQ(Errors(R"({"minMember":"x"})"),
            (std::vector<std::string>{"spec.minMember: Invalid value: \"string\": spec.minMember "
                                      "in body must be of type integer: \"string\""}));
  EXPECT_EQ(Errors(R"({})"), (std::vector<std::string>{"spec.minMember: Required value"}));
  EXPECT_EQ(Errors(R"({"minMember":1,"mode":"Other"})"),
            (std::vector<std::string>{"spec.mode: Unsupported value: \"Other\": supported "
                                      "values: \"Strict\", \"Loose\""}));
  EXPECT_EQ(Errors(R"({"minMember":1,"name":"a"})"),
            (std::vector<std::string>{"spec.name: Invalid value: \"a\": spec.name in body "
                                      "should be at least 2 chars long"}));
  EXPECT_EQ(Errors(R"({"minMember":1,"name":"abcdef"})"),
            (std::vector<std::string>{"spec.name: Too long: may not be longer than 5"}));
  EXPECT_EQ(Errors(R"({"minMember":1,"tags":["a","b","c"]})"),
            (std::vector<std::string>{"spec.tags: Too many: 3: must have at most 2 items"}));
  EXPECT_EQ(Errors(R"({"minMember":1,"ratio":1})"),
            (std::vector<std::string>{"spec.ratio: Invalid value: 1: spec.ratio in body should "
                                      "be less than 1"}));
  EXPECT_EQ(Errors(R"({"minMember":1,"tags":[1]})"),
            (std::vector<std::string>{"spec.tags[0]: Invalid value: \"integer\": spec.tags[0] "
                                      "in body must be of type string: \"integer\""}));
}

TEST(CrdSchemaTest, IntOrStringMapsCheckTypeAndPattern) {
  auto errs = Errors(R"({"minMember":1,"minResources":{"cpu":"lots","gpu":true}})");
  ASSERT_EQ(errs.size(), 2u);
  EXPECT_EQ(errs[0].rfind("spec.minResources.cpu: Invalid value: \"lots\": "
                          "spec.minResources.cpu in body should match '^(\\+|-)?",
                          0),
            0u)
      << errs[0];
  EXPECT_EQ(errs[1],
            "spec.minResources.gpu: Invalid value: \"boolean\": spec.minResources.gpu "
            "in body must be of type integer,string: \"boolean\"");
}

TEST(CrdSchemaTest, CompositionKeywordsAreEvaluated) {
  Json schema = Json::parse(R"({"type":"object","properties":{
    "a":{"type":"string","anyOf":[{"pattern":"^x"},{"pattern":"^y"}]},
    "b":{"type":"integer","oneOf":[{"minimum":5},{"maximum":10}]},
    "c":{"type":"string","not":{"enum":["no"]}},
    "d":{"type":"integer","allOf":[{"minimum":1},{"maximum":2}]}}})");
  EXPECT_TRUE(ValidationTexts(schema, {{"a", "xa"}, {"b", 2}, {"c", "ok"}, {"d", 1}}).empty());
  auto errs = ValidationTexts(schema, {{"a", "za"}, {"b", 7}, {"c", "no"}, {"d", 3}});
  EXPECT_EQ(errs, (std::vector<std::string>{
                      "a: Invalid value: \"\": a in body must validate at least one schema (anyOf)",
                      "b: Invalid value: \"\": b in body must validate one and only one schema "
                      "(oneOf)",
                      "c: Invalid value: \"\": c in body must not validate the schema (not)",
                      "d: Invalid value: 3: d in body should be less than or equal to 2"}));
}

TEST(CrdSchemaTest, NullsNeedNullable) {
  Json schema = Json::parse(R"({"type":"object","properties":{
    "n":{"type":"string","nullable":true},"s":{"type":"string"}}})");
  EXPECT_TRUE(ValidationTexts(schema, {{"n", nullptr}}).empty());
  EXPECT_EQ(ValidationTexts(schema, {{"s", nullptr}}),
            (std::vector<std::string>{"s: Invalid value: \"null\": s in body must be of type "
                                      "string: \"null\""}));
}

TEST(CrdSchemaTest, StructuralSchemasNeedTypesAndValidPatterns) {
  EXPECT_TRUE(StructuralTexts(Schema()).empty());
  Json untyped = Json::parse(R"({"type":"object","properties":{"spec":{"properties":{}}}})");
  EXPECT_EQ(StructuralTexts(untyped),
            (std::vector<std::string>{"spec.validation.openAPIV3Schema.properties[spec].type: "
                                      "Required value: must not be empty for specified object "
                                      "fields"}));
  Json not_object = Json::parse(R"({"type":"string"})");
  EXPECT_EQ(StructuralTexts(not_object),
            (std::vector<std::string>{"spec.validation.openAPIV3Schema.type: Invalid value: "
                                      "\"string\": must be object at the root"}));
  Json bad_pattern =
      Json::parse(R"({"type":"object","properties":{"a":{"type":"string","pattern":"(["}}})");
  auto errs = StructuralTexts(bad_pattern);
  ASSERT_EQ(errs.size(), 1u);
  EXPECT_EQ(errs[0].rfind("spec.validation.openAPIV3Schema.properties[a].pattern: Invalid value: "
                          "\"([\": must be a valid regular expression, but isn't: ",
                          0),
            0u)
      << errs[0];
}

// Patterns are matched in time linear in the value: a value that makes a backtracking matcher
// overflow its stack or run for ever is simply matched.
TEST(CrdSchemaTest, PatternsOnHostileValuesAreMatchedInLinearTime) {
  Json schema = Json::parse(R"({"type":"object","properties":{
    "long":{"type":"string","pattern":"^(a|b)*$"},
    "exp":{"type":"string","pattern":"^(a+)+$"}}})");
  EXPECT_TRUE(ValidationTexts(schema, {{"long", std::string(2'000'000, 'a')},
                                       {"exp", std::string(100'000, 'a')}})
                  .empty());
  auto errs = ValidationTexts(
      schema, {{"long", std::string(2'000'000, 'a') + "c"}, {"exp", std::string(40, 'a') + "b"}});
  ASSERT_EQ(errs.size(), 2u);
  EXPECT_NE(errs[1].find("\": long in body should match '^(a|b)*$'"), std::string::npos);
  EXPECT_EQ(errs[0], "exp: Invalid value: \"" + std::string(40, 'a') +
                         "b\": exp in body should match '^(a+)+$'");
}

// Recursion follows the object's depth, which the request decoder bounds; a deep object still
// validates without overflowing.
TEST(CrdSchemaTest, DeepPreservedObjectsAreHandled) {
  Json schema = Json::parse(R"({"type":"object","x-kubernetes-preserve-unknown-fields":true})");
  Json deep = Json::object();
  Json* cur = &deep;
  for (int i = 0; i < 500; ++i) cur = &((*cur)["x"] = Json::object());
  PruneUnknownFields(schema, deep);
  ApplySchemaDefaults(schema, deep);
  EXPECT_TRUE(ValidationTexts(schema, deep).empty());
}

}  // namespace
}  // namespace berth::apiserver
