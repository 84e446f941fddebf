#include "apiserver/resource_path.h"

#include <gtest/gtest.h>

#include <string>

namespace berth::apiserver {
namespace {

TEST(ResourcePathTest, SplitsCoreAndGroupPaths) {
  auto pod = ParseResourcePath("/api/v1/namespaces/default/pods/web/status");
  ASSERT_TRUE(pod.has_value());
  EXPECT_EQ(pod->group, "");
  EXPECT_EQ(pod->version, "v1");
  EXPECT_EQ(pod->ns, "default");
  EXPECT_EQ(pod->plural, "pods");
  EXPECT_EQ(pod->name, "web");
  EXPECT_EQ(pod->subresource, "status");
  EXPECT_FALSE(pod->extra_segments);

  auto deployments = ParseResourcePath("/apis/apps/v1/deployments");
  ASSERT_TRUE(deployments.has_value());
  EXPECT_EQ(deployments->group, "apps");
  EXPECT_EQ(deployments->plural, "deployments");
  EXPECT_EQ(deployments->ns, "");
  EXPECT_EQ(deployments->name, "");
}

TEST(ResourcePathTest, TheNamespaceItselfAndItsSubresources) {
  for (const char* sub : {"status", "finalize"}) {
    const std::string path = std::string("/api/v1/namespaces/team/") + sub;  // the views' text
    auto p = ParseResourcePath(path);
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(p->plural, "namespaces");
    EXPECT_EQ(p->name, "team");
    EXPECT_EQ(p->subresource, sub);
    EXPECT_EQ(p->ns, "");
  }
}

TEST(ResourcePathTest, OtherPathsAndExtraSegments) {
  EXPECT_FALSE(ParseResourcePath("/api/v1").has_value());
  EXPECT_FALSE(ParseResourcePath("/apis/apps").has_value());
  EXPECT_FALSE(ParseResourcePath("/openapi/v3").has_value());
  EXPECT_FALSE(ParseResourcePath("/healthz").has_value());
  EXPECT_TRUE(ParseResourcePath("/api/v1/nodes/a/status/x")->extra_segments);
  EXPECT_TRUE(ParseResourcePath("/api/v1/namespaces/d/pods/p/status/x")->extra_segments);
}

}  // namespace
}  // namespace berth::apiserver
