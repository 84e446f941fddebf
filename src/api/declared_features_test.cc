#include "api/declared_features.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "api/codec.h"

namespace berth {
namespace {

using Json = nlohmann::json;

// Decoded as an informer that drops documents decodes.
Object DecodeDropping(Json doc) {
  DecodeOptions options;
  options.keep_raw = false;
  auto obj = DecodeObject(std::move(doc), "test", options);
  EXPECT_TRUE(obj.ok());
  return std::move(obj).value();
}

TEST(DeclaredFeatures, NodesKeepOnlyTheirDeclaredFeatures) {
  Json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata", {{"name", "n"}, {"labels", {{"a", "b"}}}}},
               {"status",
                {{"declaredFeatures", {"A", "B"}}, {"nodeInfo", {{"kubeletVersion", "v1.37.0"}}}}}};
  auto with = std::get<std::shared_ptr<const Node>>(DecodeDropping(node));
  ASSERT_NE(with->raw, nullptr);
  EXPECT_EQ(*with->raw, Json({{"status", {{"declaredFeatures", {"A", "B"}}}}}));
  EXPECT_TRUE(declared_features::NodeDeclaresAll(*with, std::vector<std::string>{"B", "A"}));
  EXPECT_FALSE(declared_features::NodeDeclaresAll(*with, std::vector<std::string>{"C"}));
  node["status"].erase("declaredFeatures");
  auto without = std::get<std::shared_ptr<const Node>>(DecodeDropping(node));
  EXPECT_EQ(without->raw, nullptr);
  EXPECT_FALSE(declared_features::SameDeclaredFeatures(*with, *without));
  EXPECT_TRUE(declared_features::SameDeclaredFeatures(*without, *without));
}

TEST(DeclaredFeatures, PodsThatNeedFeaturesKeepTheirDocument) {
  auto pod = [](Json spec) {
    return Json{{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", "p"}, {"namespace", "default"}}},
                {"spec", std::move(spec)}};
  };
  const Json container = {{"name", "c"}, {"image", "i"}};
  auto plain = std::get<std::shared_ptr<const Pod>>(
      DecodeDropping(pod({{"hostNetwork", true}, {"containers", {container}}})));
  EXPECT_EQ(plain->raw, nullptr);
  EXPECT_TRUE(declared_features::InferForScheduling(*plain).empty());

  auto userns = std::get<std::shared_ptr<const Pod>>(DecodeDropping(
      pod({{"hostNetwork", true}, {"hostUsers", false}, {"containers", {container}}})));
  ASSERT_NE(userns->raw, nullptr);
  EXPECT_EQ(declared_features::InferForScheduling(*userns),
            std::vector<std::string>{"UserNamespacesHostNetworkSupport"});

  Json restarting = container;
  restarting["restartPolicyRules"] = {{{"action", "RestartAllContainers"}}};
  auto init = std::get<std::shared_ptr<const Pod>>(
      DecodeDropping(pod({{"initContainers", {restarting}}, {"containers", {container}}})));
  ASSERT_NE(init->raw, nullptr);
  EXPECT_EQ(declared_features::InferForScheduling(*init),
            std::vector<std::string>{"RestartAllContainersOnContainerExits"});
  // Another action needs nothing.
  restarting["restartPolicyRules"] = {{{"action", "Restart"}}};
  auto other =
      std::get<std::shared_ptr<const Pod>>(DecodeDropping(pod({{"containers", {restarting}}})));
  EXPECT_TRUE(declared_features::InferForScheduling(*other).empty());
}

TEST(DeclaredFeatures, KubeletDefaultsAreSortedAndNeededByNoNewPod) {
  const std::vector<std::string> defaults = declared_features::KubeletDefaults("v1.37.0");
  EXPECT_EQ(defaults, (std::vector<std::string>{"GuaranteedQoSPodCPUResize",
                                                "InPlacePodLevelResourcesVerticalScaling"}));
  for (const auto& f : declared_features::AllFeatures()) {
    if (f.declared_by_default) EXPECT_EQ(f.infer_for_scheduling, nullptr) << f.name;
  }
}

// ---- version bounds (upstream's framework tests: DiscoverNodeFeatures, InferForPodScheduling)

using declared_features::Feature;

bool NeedsHostNetwork(const Pod& pod) { return pod.spec.host_network; }

KubeVersion V(std::string_view text) {
  auto v = ParseKubeVersion(text);
  EXPECT_TRUE(v.has_value()) << text;
  return v.value_or(KubeVersion{});
}

std::shared_ptr<const Pod> HostNetworkPod(bool host_network) {
  Pod pod;
  pod.metadata.name = "p";
  pod.spec.host_network = host_network;
  return std::make_shared<const Pod>(std::move(pod));
}

TEST(DeclaredFeaturesBounds, PodWithFeatureIsInferredBelowTheBoundOrWithoutOne) {
  const Feature unbounded[] = {{"PodLevelResources", "g", false, &NeedsHostNetwork}};
  EXPECT_EQ(declared_features::InferForScheduling(*HostNetworkPod(true), unbounded, V("1.30.0")),
            std::vector<std::string>{"PodLevelResources"});
  EXPECT_TRUE(declared_features::InferForScheduling(*HostNetworkPod(false), unbounded, V("1.30.0"))
                  .empty());
  // The bound is inclusive.
  const Feature bounded[] = {{"PodLevelResources", "g", false, &NeedsHostNetwork, "1.30.0"}};
  EXPECT_EQ(declared_features::InferForScheduling(*HostNetworkPod(true), bounded, V("1.30.0")),
            std::vector<std::string>{"PodLevelResources"});
}

TEST(DeclaredFeaturesBounds, FeatureUniversallyAvailableIsNotInferred) {
  const Feature bounded[] = {{"PodLevelResources", "g", false, &NeedsHostNetwork, "1.30.0"}};
  EXPECT_TRUE(
      declared_features::InferForScheduling(*HostNetworkPod(true), bounded, V("1.31.0")).empty());
  // A patch release after the bound is past it too: versions compare in full.
  EXPECT_TRUE(
      declared_features::InferForScheduling(*HostNetworkPod(true), bounded, V("v1.30.1")).empty());
}

TEST(DeclaredFeaturesBounds, PreReleaseSchedulerVersionIsBelowTheBound) {
  const Feature bounded[] = {{"PodLevelResources", "g", false, &NeedsHostNetwork, "1.30.0"}};
  EXPECT_EQ(declared_features::InferForScheduling(*HostNetworkPod(true), bounded,
                                                  V("0.0.0-alpha.2.39+049eafd34dfbd2")),
            std::vector<std::string>{"PodLevelResources"});
  // A pre-release of the bound's own version is below it.
  EXPECT_EQ(declared_features::InferForScheduling(*HostNetworkPod(true), bounded, V("1.30.0-rc.1")),
            std::vector<std::string>{"PodLevelResources"});
}

TEST(DeclaredFeaturesBounds, OnlyFeaturesWithinTheirBoundAreRequired) {
  const Feature registry[] = {{"FeatureA", "g", false, &NeedsHostNetwork, "1.36.0"},
                              {"FeatureB", "g", false, &NeedsHostNetwork, "1.38.0"},
                              {"FeatureC", "g", false, &NeedsHostNetwork}};
  EXPECT_EQ(declared_features::InferForScheduling(*HostNetworkPod(true), registry, V("1.37.0")),
            (std::vector<std::string>{"FeatureB", "FeatureC"}));
}

TEST(DeclaredFeaturesBounds, KubeletDeclaresFeaturesUpToTheirBound) {
  const Feature registry[] = {{"FeatureA", "feature-a", true, nullptr, "1.38.0"},
                              {"FeatureB", "feature-b", true, nullptr, "1.38.0"},
                              {"FeatureC", "feature-c", false, nullptr}};
  EXPECT_EQ(declared_features::KubeletDefaults("v1.38.0", registry),
            (std::vector<std::string>{"FeatureA", "FeatureB"}));
  // Past the bound: not published.
  EXPECT_TRUE(declared_features::KubeletDefaults("v1.39.0", registry).empty());
  EXPECT_TRUE(
      declared_features::KubeletDefaults("1.39.0-alpha.2.39+049eafd34dfbd2", registry).empty());
  // No usable version: no bound applies.
  EXPECT_EQ(declared_features::KubeletDefaults("", registry),
            (std::vector<std::string>{"FeatureA", "FeatureB"}));
  // Names given explicitly are filtered the same way; unknown names are kept.
  EXPECT_EQ(
      declared_features::WithoutPastBound({"FeatureA", "FeatureC", "Other"}, "v1.39.0", registry),
      (std::vector<std::string>{"FeatureC", "Other"}));
}

TEST(DeclaredFeaturesBounds, BuiltInFeaturesHaveValidBoundsAndTheSchedulerVersionParses) {
  auto scheduler = ParseKubeVersion(declared_features::kSchedulerVersion);
  ASSERT_TRUE(scheduler.has_value());
  EXPECT_TRUE(scheduler->semantic);
  for (const Feature& f : declared_features::AllFeatures()) {
    if (!f.max_version.empty()) {
      EXPECT_TRUE(ParseSemanticKubeVersion(f.max_version).has_value()) << f.name;
    }
    // v1.37 bounds none of its features: every one is still relevant to this scheduler.
    EXPECT_TRUE(declared_features::RelevantAt(f, *scheduler)) << f.name;
  }
}

}  // namespace
}  // namespace berth
