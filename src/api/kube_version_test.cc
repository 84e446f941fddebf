#include "api/kube_version.h"

#include <gtest/gtest.h>

#include <string_view>

namespace berth {
namespace {

int Compare(std::string_view a, std::string_view b) {
  auto va = ParseKubeVersion(a);
  auto vb = ParseKubeVersion(b);
  EXPECT_TRUE(va.has_value()) << a;
  EXPECT_TRUE(vb.has_value()) << b;
  if (!va || !vb) return 99;
  return CompareKubeVersions(*va, *vb);
}

TEST(KubeVersion, SemanticVersionsParse) {
  auto v = ParseSemanticKubeVersion("v1.39.0-alpha.2.39+049eafd34dfbd2");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->components, (std::vector<uint64_t>{1, 39, 0}));
  EXPECT_EQ(v->pre_release, "alpha.2.39");
  EXPECT_EQ(v->build_metadata, "049eafd34dfbd2");
  EXPECT_TRUE(ParseSemanticKubeVersion(" 1.37.0 ").has_value());
  EXPECT_TRUE(ParseSemanticKubeVersion("1.0.0-x-y.z+build.1").has_value());
}

TEST(KubeVersion, MalformedSemanticVersionsAreRefused) {
  for (std::string_view bad : {"", "1.2", "1.2.3.4", "01.2.3", "1.02.3", "1.2.3-", "1.2.3-a..b",
                               "1.2.3-01", "1.2.3+", "1.2.3_x", "x1.2.3", "1.2.3-a b"}) {
    EXPECT_FALSE(ParseSemanticKubeVersion(bad).has_value()) << bad;
  }
  // A numeric pre-release identifier may be zero itself.
  EXPECT_TRUE(ParseSemanticKubeVersion("1.2.3-0").has_value());
}

TEST(KubeVersion, GenericVersionsIgnoreWhatFollowsTheNumbers) {
  auto v = ParseGenericKubeVersion("1.2.3.4-whatever");
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->components, (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_FALSE(v->semantic);
  EXPECT_FALSE(ParseGenericKubeVersion("1").has_value());
  EXPECT_FALSE(ParseGenericKubeVersion("01.2").has_value());
  // Later components may have leading zeros in a generic version.
  EXPECT_TRUE(ParseGenericKubeVersion("1.02").has_value());
  // ParseKubeVersion falls back to generic when semantic fails.
  auto fallback = ParseKubeVersion("1.37");
  ASSERT_TRUE(fallback.has_value());
  EXPECT_FALSE(fallback->semantic);
}

TEST(KubeVersion, ComponentsCompareNumerically) {
  EXPECT_LT(Compare("1.9.0", "1.10.0"), 0);
  EXPECT_GT(Compare("v1.37.1", "1.37.0"), 0);
  EXPECT_EQ(Compare("1.37.0", "v1.37.0"), 0);
  // Missing components count as zero.
  EXPECT_EQ(Compare("1.37", "1.37.0"), 0);
  EXPECT_GT(Compare("1.37.0.1", "1.37"), 0);
}

TEST(KubeVersion, PreReleasesOrderBelowTheirRelease) {
  EXPECT_LT(Compare("1.39.0-alpha.2.39+049eafd34dfbd2", "1.39.0"), 0);
  EXPECT_GT(Compare("1.39.0-alpha.2.39+049eafd34dfbd2", "1.38.0"), 0);
  // semver.org's example order.
  const char* kOrder[] = {"1.0.0-alpha",  "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta",
                          "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1",       "1.0.0"};
  for (size_t i = 0; i + 1 < std::size(kOrder); ++i) {
    EXPECT_LT(Compare(kOrder[i], kOrder[i + 1]), 0) << kOrder[i] << " < " << kOrder[i + 1];
    EXPECT_GT(Compare(kOrder[i + 1], kOrder[i]), 0);
  }
  // Build metadata does not count.
  EXPECT_EQ(Compare("1.0.0+a", "1.0.0+b"), 0);
  // Against a generic version only the components count.
  EXPECT_EQ(Compare("1.0.0-alpha", "1.0"), 0);
}

}  // namespace
}  // namespace berth
