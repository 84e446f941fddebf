#include "api/json_parse.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth {
namespace {

using Json = nlohmann::json;
using ::testing::ElementsAre;

// The same document as nlohmann's parser, down to each number's kind, which decides how it is
// compared and written out again.
void ExpectSameAsNlohmann(const std::string& text) {
  Json fast;
  ASSERT_TRUE(ParseJsonFast(text, &fast)) << text;
  const Json want = Json::parse(text);
  EXPECT_EQ(fast, want) << text;
  EXPECT_EQ(fast.dump(), want.dump()) << text;
  std::function<void(const Json&, const Json&)> same_kinds = [&](const Json& a, const Json& b) {
    ASSERT_EQ(a.type(), b.type()) << a.dump() << " in " << text;
    if (a.is_object()) {
      for (auto it = a.begin(); it != a.end(); ++it) same_kinds(it.value(), b.at(it.key()));
    } else if (a.is_array()) {
      for (size_t i = 0; i < a.size(); ++i) same_kinds(a[i], b[i]);
    }
  };
  same_kinds(fast, want);
}

TEST(JsonParseTest, BuildsWhatNlohmannBuilds) {
  ExpectSameAsNlohmann(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0","namespace":"default",)"
      R"("labels":{"app":"web"},"managedFields":[{"fieldsV1":{"f:spec":{"f:containers":{}}}}]},)"
      R"("spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"100m"}}}],)"
      R"("priority":-5,"terminationGracePeriodSeconds":30,"enableServiceLinks":true,)"
      R"("nodeName":null}})");
  ExpectSameAsNlohmann(R"([0,5,-5,1.0,-2.5e-3,1e2,9223372036854775807,9223372036854775808,)"
                       R"(18446744073709551615,-9223372036854775808,true,false,null,"",{},[]])");
  ExpectSameAsNlohmann(R"(" caf\u00e9 \"q\" \\ \n \ud83d\ude00 é ")");
  ExpectSameAsNlohmann("  42  ");
  // "-0" is nlohmann's signed zero and this parser's unsigned one: equal, and written alike.
  Json zero;
  ASSERT_TRUE(ParseJsonFast("[-0]", &zero));
  EXPECT_EQ(zero, Json::parse("[-0]"));
  EXPECT_EQ(zero.dump(), "[0]");
  ExpectSameAsNlohmann(R"({"b":1,"a":2,"c":{"z":[],"y":{}}})");  // keys out of order
}

// An informer's parse leaves out metadata.managedFields, wherever an object's metadata is (a
// watch event's object, a list's items), and nothing else.
TEST(JsonParseTest, WithoutManagedFieldsDropsOnlyThoseOfMetadata) {
  const std::string text =
      R"({"type":"MODIFIED","object":{"metadata":{"name":"p","managedFields":[{"manager":"m"}],)"
      R"("labels":{"managedFields":"a label"}},"spec":{"managedFields":1},)"
      R"("items":[{"metadata":{"managedFields":[],"uid":"u"}}]}})";
  Json doc;
  ASSERT_TRUE(ParseJsonFastWithoutManagedFields(text, &doc));
  Json want = Json::parse(text);
  want["object"]["metadata"].erase("managedFields");
  want["object"]["items"][0]["metadata"].erase("managedFields");
  EXPECT_EQ(doc, want);
  Json full;
  ASSERT_TRUE(ParseJsonFast(text, &full));
  EXPECT_EQ(full, Json::parse(text));
}

TEST(JsonParseTest, RepeatedKeysAreNotedWithTheirPathAndTheLastWins) {
  Json out;
  std::vector<std::string> dups;
  ASSERT_TRUE(ParseJsonFast(
      R"({"metadata":{"name":"a","name":"b"},"spec":{"containers":[{"name":"c"},
         {"name":"d","image":"x","image":{"deep":1}}]},"kind":"Pod","kind":"Pod"})",
      &out, 512, &dups));
  EXPECT_THAT(dups, ElementsAre("metadata.name", "spec.containers[1].image", "kind"));
  EXPECT_EQ(out["metadata"]["name"], "b");
  EXPECT_EQ(out["spec"]["containers"][1]["image"], Json({{"deep", 1}}));
  EXPECT_EQ(out["spec"]["containers"][0]["name"], "c");
  // Without a list to fill, repetitions still resolve the same way.
  ASSERT_TRUE(ParseJsonFast(R"({"a":1,"a":[2]})", &out));
  EXPECT_EQ(out, Json({{"a", {2}}}));
}

TEST(JsonParseTest, RefusesWhatItCannotTakeAsItIs) {
  Json out;
  EXPECT_FALSE(ParseJsonFast(R"({"a":)", &out));
  EXPECT_FALSE(ParseJsonFast(R"({"a":1} x)", &out));
  EXPECT_FALSE(ParseJsonFast("", &out));
  EXPECT_FALSE(ParseJsonFast("{'a':1}", &out));
  EXPECT_FALSE(ParseJsonFast("\"\xff\"", &out));  // not UTF-8
  // nlohmann reads these (as a double; skipping the mark): the caller's fallback does too.
  EXPECT_FALSE(ParseJsonFast("123456789012345678901234567890", &out));
  EXPECT_FALSE(ParseJsonFast("\xEF\xBB\xBF{}", &out));
  // The depth limit counts containers, the root included.
  EXPECT_FALSE(ParseJsonFast(std::string(600, '[') + std::string(600, ']'), &out, 512));
  EXPECT_TRUE(ParseJsonFast(std::string(512, '[') + std::string(512, ']'), &out, 512));
  EXPECT_FALSE(ParseJsonFast(std::string(513, '[') + std::string(513, ']'), &out, 512));
  EXPECT_FALSE(ParseJsonFast(R"({"a":{"b":{}}})", &out, 2));
  EXPECT_TRUE(ParseJsonFast(R"({"a":{"b":1}})", &out, 2));
  // Large text is left to nlohmann, which needs no index beside the document.
  const std::string list = "[\"" + std::string(kFastJsonMaxBytes, 'x') + "\"]";
  EXPECT_FALSE(ParseJsonFast(list, &out));
  EXPECT_TRUE(ParseJsonFast("[\"" + std::string(kFastJsonMaxBytes - 4, 'x') + "\"]", &out));
}

TEST(JsonParseTest, ReadsTextThatEndsAtTheEdgeOfItsBuffer) {
  // A view into a larger buffer: only the viewed bytes are JSON.
  const std::string buffer = R"({"type":"ADDED","object":{"kind":"Node"}}{"garbage")";
  Json out;
  ASSERT_TRUE(ParseJsonFast(std::string_view(buffer).substr(0, 41), &out));
  EXPECT_EQ(out["object"]["kind"], "Node");
}

}  // namespace
}  // namespace berth
