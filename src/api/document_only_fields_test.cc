// DocumentOnlyFields: what an edited copy keeps of its original's document.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/codec.h"

namespace berth {
namespace {

RawObject Doc(const char* text) {
  return std::make_shared<const nlohmann::json>(nlohmann::json::parse(text));
}

TEST(DocumentOnlyFieldsTest, PodWithResourceClaimsKeepsItsDocument) {
  RawObject doc = Doc(R"({"kind":"Pod","metadata":{"name":"p"},
      "spec":{"resourceClaims":[{"name":"gpu","resourceClaimTemplateName":"t"}]}})");
  EXPECT_EQ(DocumentOnlyFields(doc), doc);
}

TEST(DocumentOnlyFieldsTest, PlainPodKeepsNothing) {
  EXPECT_EQ(DocumentOnlyFields(Doc(R"({"kind":"Pod","metadata":{"name":"p"},"spec":{}})")),
            nullptr);
  EXPECT_EQ(DocumentOnlyFields(nullptr), nullptr);
}

TEST(DocumentOnlyFieldsTest, NodeKeepsOnlyItsDeclaredFeatures) {
  RawObject kept = DocumentOnlyFields(Doc(R"({"kind":"Node","metadata":{"name":"n",
      "labels":{"zone":"a"}},"status":{"declaredFeatures":["F1"]}})"));
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(*kept, nlohmann::json::parse(R"({"status":{"declaredFeatures":["F1"]}})"));
  EXPECT_EQ(DocumentOnlyFields(Doc(R"({"kind":"Node","metadata":{"name":"n"}})")), nullptr);
}

}  // namespace
}  // namespace berth
