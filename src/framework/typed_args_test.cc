#include "berth/framework/typed_args.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth {
namespace {

struct Rule {
  std::string name;
  int32_t weight = 1;
};

struct Args {
  bool enabled = true;
  int32_t weight = 1;
  int64_t big = 5;
  double ratio = 0.5;
  std::string label = "zone";
  std::vector<std::string> allow;
  std::map<std::string, std::string> tags;
  Rule primary;
  std::vector<Rule> rules;
};

TypedArgs<Rule> RuleSchema() {
  return TypedArgs<Rule>()
      .Field("name", &Rule::name)
      .Field("weight", &Rule::weight)
      .Validate([](const Rule& r) -> VoidResult {
        if (r.name.empty()) return Error{"name: required value"};
        return {};
      });
}

TypedArgs<Args> Schema() {
  return TypedArgs<Args>("TestArgs")
      .Field("enabled", &Args::enabled)
      .Field("weight", &Args::weight)
      .Field("big", &Args::big)
      .Field("ratio", &Args::ratio)
      .Field("label", &Args::label)
      .Field("allow", &Args::allow)
      .Field("tags", &Args::tags)
      .Field("primary", &Args::primary,
             TypedArgs<Rule>().Field("name", &Rule::name).Field("weight", &Rule::weight))
      .Field("rules", &Args::rules, RuleSchema())
      .Validate([](const Args& a) -> VoidResult {
        if (a.weight < 1 || a.weight > 100) {
          return Error{"weight: invalid value " + std::to_string(a.weight) +
                       ": must be in the range 1-100"};
        }
        return {};
      });
}

const std::string kPath = "profiles[0].pluginConfig[1].args";

std::string DecodeError(const std::string& yaml_as_json) {
  nlohmann::json raw = nlohmann::json::parse(yaml_as_json);
  auto r = Schema().Decoder()(&raw, kPath);
  return r.ok() ? "" : r.error().message;
}

TEST(TypedArgs, NullAndEmptyKeepDefaults) {
  ArgsDecoder decode = Schema().Decoder();
  nlohmann::json null_json;
  nlohmann::json empty = nlohmann::json::object();
  nlohmann::json null_field = {{"label", nullptr}};
  const nlohmann::json* inputs[] = {nullptr, &null_json, &empty, &null_field};
  for (const nlohmann::json* raw : inputs) {
    auto r = decode(raw, kPath);
    ASSERT_TRUE(r.ok()) << r.error().message;
    EXPECT_EQ((*r)->Kind(), "TestArgs");
    const Args& a = ArgsOf<Args>(r->get());
    EXPECT_TRUE(a.enabled);
    EXPECT_EQ(a.weight, 1);
    EXPECT_EQ(a.big, 5);
    EXPECT_EQ(a.ratio, 0.5);
    EXPECT_EQ(a.label, "zone");
    EXPECT_TRUE(a.allow.empty());
    EXPECT_TRUE(a.rules.empty());
  }
}

TEST(TypedArgs, EveryType) {
  nlohmann::json raw = nlohmann::json::parse(R"({
    "enabled": false, "weight": 7, "big": 9000000000, "ratio": 2, "label": "rack",
    "allow": ["a", "b"], "tags": {"k": "v"}, "primary": {"name": "p"},
    "rules": [{"name": "r1", "weight": 3}, {"name": "r2"}]})");
  auto r = Schema().Decode(&raw, kPath);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_FALSE(r->enabled);
  EXPECT_EQ(r->weight, 7);
  EXPECT_EQ(r->big, 9000000000);
  EXPECT_EQ(r->ratio, 2.0);
  EXPECT_EQ(r->label, "rack");
  EXPECT_EQ(r->allow, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(r->tags, (std::map<std::string, std::string>{{"k", "v"}}));
  EXPECT_EQ(r->primary.name, "p");
  EXPECT_EQ(r->primary.weight, 1);
  ASSERT_EQ(r->rules.size(), 2u);
  EXPECT_EQ(r->rules[0].weight, 3);
  EXPECT_EQ(r->rules[1].name, "r2");
  EXPECT_EQ(r->rules[1].weight, 1);
}

TEST(TypedArgs, WholeFloatIsAnInteger) {
  nlohmann::json raw = {{"weight", 10.0}};
  auto r = Schema().Decode(&raw, kPath);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->weight, 10);
}

TEST(TypedArgs, WrongTypesNameThePath) {
  struct Case {
    std::string raw, want;
  } cases[] = {
      {R"([1])", kPath + ": expected an object, got a list"},
      {R"({"enabled": "yes"})", kPath + ".enabled: expected a boolean, got a string"},
      {R"({"weight": "3"})", kPath + ".weight: expected an integer, got a string"},
      {R"({"weight": 1.5})", kPath + ".weight: invalid value 1.5: expected an integer"},
      {R"({"weight": 3000000000})", kPath + ".weight: invalid value 3000000000: out of range"},
      {R"({"big": true})", kPath + ".big: expected an integer, got a boolean"},
      {R"({"ratio": "x"})", kPath + ".ratio: expected a number, got a string"},
      {R"({"label": 3})", kPath + ".label: expected a string, got a number"},
      {R"({"allow": "a"})", kPath + ".allow: expected a list, got a string"},
      {R"({"allow": ["a", 2]})", kPath + ".allow[1]: expected a string, got a number"},
      {R"({"tags": {"k": 1}})", kPath + ".tags.k: expected a string, got a number"},
      {R"({"primary": {"weight": "x"}})",
       kPath + ".primary.weight: expected an integer, got a string"},
      {R"({"rules": [{"name": "a"}, {"name": "b", "weight": []}]})",
       kPath + ".rules[1].weight: expected an integer, got a list"},
  };
  for (const Case& c : cases) EXPECT_EQ(DecodeError(c.raw), c.want) << c.raw;
}

TEST(TypedArgs, UnknownFieldsAreRejected) {
  EXPECT_EQ(DecodeError(R"({"weight": 2, "wieght": 3})"), kPath + ".wieght: unknown field");
  EXPECT_EQ(DecodeError(R"({"primary": {"nme": "x"}})"), kPath + ".primary.nme: unknown field");
  EXPECT_EQ(DecodeError(R"({"rules": [{"name": "x", "w": 1}]})"),
            kPath + ".rules[0].w: unknown field");
}

TEST(TypedArgs, ValidationErrorsNameThePath) {
  EXPECT_EQ(DecodeError(R"({"weight": 0})"),
            kPath + ".weight: invalid value 0: must be in the range 1-100");
  EXPECT_EQ(DecodeError(R"({"rules": [{"name": "a"}, {"weight": 2}]})"),
            kPath + ".rules[1].name: required value");
  nlohmann::json raw = {{"weight", 0}};
  auto r = Schema().Decoder()(&raw, kPath);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalid);
}

TEST(TypedArgs, EncodeRoundTrips) {
  nlohmann::json raw = nlohmann::json::parse(R"({
    "enabled": false, "weight": 7, "big": 9000000000, "ratio": 0.25, "label": "rack",
    "allow": ["a"], "tags": {"k": "v"}, "primary": {"name": "p", "weight": 4},
    "rules": [{"name": "r1", "weight": 3}]})");
  auto decoded = Schema().Decoder()(&raw, kPath);
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  nlohmann::json encoded;
  (*decoded)->Encode(encoded);
  EXPECT_EQ(encoded, raw);

  // Defaults encode every field, and decode back to the same values.
  auto defaults = Schema().Decoder()(nullptr, kPath);
  ASSERT_TRUE(defaults.ok());
  nlohmann::json printed;
  (*defaults)->Encode(printed);
  EXPECT_EQ(printed["label"], "zone");
  EXPECT_EQ(printed["allow"], nlohmann::json::array());
  auto again = Schema().Decode(&printed, kPath);
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(again->label, "zone");
  EXPECT_EQ(again->weight, 1);
}

TEST(TypedArgs, ArgsOfOtherArgsGivesDefaults) {
  EXPECT_EQ(ArgsOf<Args>(nullptr).label, "zone");
  auto rule = RuleSchema().Decoder();
  nlohmann::json raw = {{"name", "x"}};
  auto r = rule(&raw, kPath);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(ArgsOf<Args>(r->get()).weight, 1);
  EXPECT_EQ(ArgsOf<Rule>(r->get()).name, "x");
}

}  // namespace
}  // namespace berth
