// Naming and making a StatefulSet's pods and claims.
#include "controllers/stateful_set_util.h"

#include <gtest/gtest.h>

namespace berth::controllers {
namespace {

Json Set(const Json& extra_spec = Json::object()) {
  Json set = Json::parse(R"({"apiVersion":"apps/v1","kind":"StatefulSet",
    "metadata":{"name":"web","namespace":"ns","uid":"s1"},
    "spec":{"replicas":3,"serviceName":"svc","selector":{"matchLabels":{"app":"web"}},
      "template":{"metadata":{"labels":{"app":"web"}},
        "spec":{"containers":[{"name":"c","image":"nginx"}],
                "volumes":[{"name":"data","emptyDir":{}},{"name":"cfg","emptyDir":{}}]}},
      "volumeClaimTemplates":[{"metadata":{"name":"data","labels":{"tier":"db"}},
        "spec":{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}}]}})");
  for (const auto& [k, v] : extra_spec.items()) set["spec"][k] = v;
  return set;
}

TEST(StatefulSetUtilTest, OrdinalsParseOnlyTheSetsNames) {
  EXPECT_EQ(OrdinalOf("web", "web-0"), 0);
  EXPECT_EQ(OrdinalOf("web", "web-12"), 12);
  EXPECT_EQ(OrdinalOf("web", "web-01"), std::nullopt);
  EXPECT_EQ(OrdinalOf("web", "web-"), std::nullopt);
  EXPECT_EQ(OrdinalOf("web", "web-x"), std::nullopt);
  EXPECT_EQ(OrdinalOf("web", "webby-1"), std::nullopt);
  EXPECT_EQ(OrdinalOf("web", "web-a-1"), std::nullopt);
  EXPECT_EQ(StartOrdinal(Set()), 0);
  EXPECT_EQ(StartOrdinal(Set({{"ordinals", {{"start", 5}}}})), 5);
}

TEST(StatefulSetUtilTest, PodHasIdentityLabelsAndClaimVolumes) {
  const Json set = Set();
  Json pod = NewStatefulPod(set, set["spec"]["template"], 2, "web-abc");
  EXPECT_EQ(pod["metadata"]["name"], "web-2");
  const Json& labels = pod["metadata"]["labels"];
  EXPECT_EQ(labels["statefulset.kubernetes.io/pod-name"], "web-2");
  EXPECT_EQ(labels["apps.kubernetes.io/pod-index"], "2");
  EXPECT_EQ(labels["controller-revision-hash"], "web-abc");
  EXPECT_EQ(labels["app"], "web");
  EXPECT_EQ(pod["spec"]["hostname"], "web-2");
  EXPECT_EQ(pod["spec"]["subdomain"], "svc");
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["uid"], "s1");
  const Json& volumes = pod["spec"]["volumes"];
  ASSERT_EQ(volumes.size(), 2u);  // the template's "data" is replaced by the claim
  EXPECT_EQ(volumes[0]["name"], "data");
  EXPECT_EQ(volumes[0]["persistentVolumeClaim"]["claimName"], "data-web-2");
  EXPECT_EQ(volumes[1]["name"], "cfg");
}

TEST(StatefulSetUtilTest, ClaimsAreUnownedByDefaultAndOwnedWhenDeletedWithTheSet) {
  const Json set = Set();
  Json claim = NewClaim(set, set["spec"]["volumeClaimTemplates"][0], 1);
  EXPECT_EQ(claim["metadata"]["name"], "data-web-1");
  EXPECT_EQ(claim["metadata"]["namespace"], "ns");
  EXPECT_EQ(claim["metadata"]["labels"]["tier"], "db");
  EXPECT_EQ(claim["metadata"]["labels"]["app"], "web");
  EXPECT_FALSE(claim["metadata"].contains("ownerReferences"));
  const Json owned_set =
      Set({{"persistentVolumeClaimRetentionPolicy", {{"whenDeleted", "Delete"}}}});
  Json owned = NewClaim(owned_set, owned_set["spec"]["volumeClaimTemplates"][0], 1);
  ASSERT_EQ(owned["metadata"]["ownerReferences"].size(), 1u);
  EXPECT_EQ(owned["metadata"]["ownerReferences"][0]["uid"], "s1");
  EXPECT_EQ(owned["metadata"]["ownerReferences"][0]["controller"], false);
}

}  // namespace
}  // namespace berth::controllers
