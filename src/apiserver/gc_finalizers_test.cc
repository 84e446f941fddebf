#include "apiserver/gc_finalizers.h"

#include <gtest/gtest.h>

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

TEST(GcFinalizersTest, PolicySetsItsFinalizerAndDropsTheOther) {
  const Json others = Json::array({"example.com/keep", "foregroundDeletion"});
  EXPECT_EQ(WithGcFinalizers(others, "Orphan", false), Json::array({"example.com/keep", "orphan"}));
  EXPECT_EQ(WithGcFinalizers(Json::array(), "Foreground", false),
            Json::array({"foregroundDeletion"}));
  EXPECT_EQ(WithGcFinalizers(others, "Background", false), Json::array({"example.com/keep"}));
}

TEST(GcFinalizersTest, MarkedObjectGetsNoNewFinalizer) {
  const Json held = Json::array({"orphan"});
  EXPECT_EQ(WithGcFinalizers(held, "Foreground", true), held);
  EXPECT_EQ(WithGcFinalizers(held, "Background", true), Json::array());
}

TEST(GcFinalizersTest, ReadsPolicyAndOrphanDependents) {
  std::optional<std::string> out;
  ASSERT_TRUE(ReadPropagation({{"orphanDependents", true}}, out).ok());
  EXPECT_EQ(out, "Orphan");
  out.reset();
  ASSERT_TRUE(ReadPropagation({{"orphanDependents", false}}, out).ok());
  EXPECT_EQ(out, "Background");
  out.reset();
  auto bad = ReadPropagation({{"propagationPolicy", "Later"}}, out);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalid);
  out.reset();
  EXPECT_FALSE(
      ReadPropagation({{"propagationPolicy", "Orphan"}, {"orphanDependents", true}}, out).ok());
  // From the query first, then a body that agrees.
  out = "Foreground";
  EXPECT_TRUE(ReadPropagation({{"propagationPolicy", "Foreground"}}, out).ok());
  EXPECT_FALSE(ReadPropagation({{"propagationPolicy", "Orphan"}}, out).ok());
}

}  // namespace
}  // namespace berth::apiserver
