#include "controllers/deployment_util.h"

#include <gtest/gtest.h>

namespace berth::controllers {
namespace {

Json Template(const std::string& extra_container_fields) {
  return Json::parse(R"({"metadata":{"labels":{"app":"web"}},
    "spec":{"containers":[{"name":"c","image":"nginx")" +
                     extra_container_fields + R"(}]}})");
}

// `kubectl rollout undo` sends the ReplicaSet's template back with "resources": {} and
// "creationTimestamp": null: it is still that ReplicaSet's template, not a new one.
TEST(DeploymentUtilTest, EmptyFieldsAClientSentDoNotMakeANewTemplate) {
  Json from_undo = Template(R"(,"resources":{})");
  from_undo["metadata"]["creationTimestamp"] = nullptr;
  Json stored = Template("");
  stored["metadata"]["labels"]["pod-template-hash"] = "abc";
  EXPECT_TRUE(EqualIgnoreHash(from_undo, stored));
  EXPECT_EQ(ComputeHash(from_undo, std::nullopt), ComputeHash(Template(""), std::nullopt));
  EXPECT_FALSE(EqualIgnoreHash(Template(R"(,"resources":{"limits":{"cpu":"1"}})"), stored));
}

TEST(DeploymentUtilTest, CollisionCountChangesTheHash) {
  EXPECT_NE(ComputeHash(Template(""), std::nullopt), ComputeHash(Template(""), 1));
  EXPECT_NE(ComputeHash(Template(""), 1), ComputeHash(Template(""), 2));
}

TEST(DeploymentUtilTest, FencepostsRoundSurgeUpAndUnavailableDown) {
  auto f = ResolveFenceposts(Json("25%"), Json("25%"), 10);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->max_surge, 3);
  EXPECT_EQ(f->max_unavailable, 2);
  auto zero = ResolveFenceposts(Json(0), Json("10%"), 5);
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->max_unavailable, 1);  // both zero would block the rollout
}

}  // namespace
}  // namespace berth::controllers
