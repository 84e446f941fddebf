// Matching a claim to a volume (index.go's findMatchingVolume without a node).
#include "controllers/volume_util.h"

#include <gtest/gtest.h>

namespace berth::controllers {
namespace {

Json Volume(const std::string& name, const std::string& size, const std::string& cls = "fast") {
  return {{"metadata", {{"name", name}, {"labels", {{"tier", "gold"}}}}},
          {"spec",
           {{"capacity", {{"storage", size}}},
            {"accessModes", {"ReadWriteOnce", "ReadOnlyMany"}},
            {"storageClassName", cls}}},
          {"status", {{"phase", "Available"}}}};
}

Json Claim(const std::string& size, const std::string& cls = "fast") {
  return {{"metadata", {{"name", "data"}, {"namespace", "default"}, {"uid", "uid-1"}}},
          {"spec",
           {{"accessModes", {"ReadWriteOnce"}},
            {"storageClassName", cls},
            {"resources", {{"requests", {{"storage", size}}}}}}}};
}

std::string Match(const Json& pvc, const std::vector<Json>& volumes, bool delayed = false) {
  std::vector<const Json*> ptrs;
  for (const Json& v : volumes) ptrs.push_back(&v);
  const Json* pv = FindBestMatch(pvc, ptrs, delayed);
  return pv ? NameOf(*pv) : "";
}

TEST(FindBestMatchTest, SmallestVolumeLargeEnough) {
  EXPECT_EQ(
      Match(Claim("1Gi"), {Volume("big", "10Gi"), Volume("small", "2Gi"), Volume("tiny", "500Mi")}),
      "small");
  EXPECT_EQ(Match(Claim("20Gi"), {Volume("big", "10Gi")}), "");
}

TEST(FindBestMatchTest, ClassAccessModesVolumeModeAndSelectorMustMatch) {
  EXPECT_EQ(Match(Claim("1Gi", "slow"), {Volume("a", "2Gi")}), "");
  Json rwx = Claim("1Gi");
  rwx["spec"]["accessModes"] = {"ReadWriteMany"};
  EXPECT_EQ(Match(rwx, {Volume("a", "2Gi")}), "");
  Json block = Claim("1Gi");
  block["spec"]["volumeMode"] = "Block";
  EXPECT_EQ(Match(block, {Volume("a", "2Gi")}), "");
  Json selective = Claim("1Gi");
  selective["spec"]["selector"] = {{"matchLabels", {{"tier", "silver"}}}};
  EXPECT_EQ(Match(selective, {Volume("a", "2Gi")}), "");
  selective["spec"]["selector"] = {{"matchLabels", {{"tier", "gold"}}}};
  EXPECT_EQ(Match(selective, {Volume("a", "2Gi")}), "a");
}

TEST(FindBestMatchTest, SkipsClaimedUnavailableAndDeletingVolumes) {
  Json claimed = Volume("claimed", "1Gi");
  claimed["spec"]["claimRef"] = {{"namespace", "default"}, {"name", "other"}};
  Json released = Volume("released", "1Gi");
  released["status"]["phase"] = "Released";
  Json deleting = Volume("deleting", "1Gi");
  deleting["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  EXPECT_EQ(Match(Claim("1Gi"), {claimed, released, deleting, Volume("free", "5Gi")}), "free");
}

TEST(FindBestMatchTest, PreBoundVolumeWinsAndIsTheOnlyMatchWhenBindingIsDelayed) {
  Json prebound = Volume("prebound", "8Gi", "other-class");
  prebound["spec"]["claimRef"] = {{"namespace", "default"}, {"name", "data"}};
  EXPECT_EQ(Match(Claim("1Gi"), {Volume("small", "2Gi"), prebound}), "prebound");
  EXPECT_EQ(Match(Claim("1Gi"), {Volume("small", "2Gi"), prebound}, /*delayed=*/true), "prebound");
  EXPECT_EQ(Match(Claim("1Gi"), {Volume("small", "2Gi")}, /*delayed=*/true), "");
  // A claimRef with another uid names an earlier claim of that name.
  prebound["spec"]["claimRef"]["uid"] = "uid-0";
  EXPECT_EQ(Match(Claim("1Gi"), {prebound}), "");
  // Still too small is too small.
  prebound["spec"]["claimRef"]["uid"] = "uid-1";
  EXPECT_EQ(Match(Claim("9Gi"), {prebound}), "");
}

TEST(VolumeUtilTest, ClassesFromTheFieldOrTheBetaAnnotation) {
  Json pvc = Claim("1Gi");
  EXPECT_EQ(ClaimClass(pvc), "fast");
  pvc["spec"].erase("storageClassName");
  EXPECT_EQ(ClaimClass(pvc), "");
  pvc["metadata"]["annotations"] = {{"volume.beta.kubernetes.io/storage-class", "beta"}};
  EXPECT_EQ(ClaimClass(pvc), "beta");
  Json wffc = {{"volumeBindingMode", "WaitForFirstConsumer"}};
  EXPECT_TRUE(IsDelayedBinding(&wffc));
  EXPECT_FALSE(IsDelayedBinding(nullptr));
}

TEST(VolumeUtilTest, DefaultClassIsTheNewestThenTheFirstByName) {
  auto sc = [](const std::string& name, const std::string& created, bool is_default) {
    Json c = {{"metadata", {{"name", name}, {"creationTimestamp", created}}}};
    if (is_default)
      c["metadata"]["annotations"] = {{"storageclass.kubernetes.io/is-default-class", "true"}};
    return c;
  };
  EXPECT_EQ(DefaultClassName({sc("plain", "2026-01-01T00:00:00Z", false)}), "");
  EXPECT_EQ(DefaultClassName({sc("old", "2026-01-01T00:00:00Z", true),
                              sc("new", "2026-01-02T00:00:00Z", true),
                              sc("newest-plain", "2026-01-03T00:00:00Z", false)}),
            "new");
  EXPECT_EQ(DefaultClassName(
                {sc("b", "2026-01-01T00:00:00Z", true), sc("a", "2026-01-01T00:00:00Z", true)}),
            "a");
}

}  // namespace
}  // namespace berth::controllers
