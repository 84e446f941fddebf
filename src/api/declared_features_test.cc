#include "api/declared_features.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
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
  const std::vector<std::string> defaults = declared_features::KubeletDefaults();
  EXPECT_EQ(defaults, (std::vector<std::string>{"GuaranteedQoSPodCPUResize",
                                                "InPlacePodLevelResourcesVerticalScaling"}));
  for (const auto& f : declared_features::AllFeatures()) {
    if (f.declared_by_default) EXPECT_EQ(f.infer_for_scheduling, nullptr) << f.name;
  }
}

}  // namespace
}  // namespace berth
