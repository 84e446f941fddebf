#include "apiserver/admission.h"

#include <gtest/gtest.h>

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

VoidResult AdmitNode(const std::string& name) {
  Json node = {{"metadata", {{"name", name}}}};
  return Admit(*FindResource("", "v1", "nodes"), node, true,
               [](const std::string&) { return std::nullopt; });
}

TEST(AdmissionTest, NamesMustBeLowercaseRfc1123Subdomains) {
  for (const char* ok : {"a", "node-1", "a.b-c.d", "0abc9", "x.y"}) {
    EXPECT_TRUE(AdmitNode(ok).ok()) << ok;
  }
  for (const char* bad : {"Node", "-a", "a-", "a..b", ".a", "a.", "a_b", "a.-b", "a b"}) {
    auto r = AdmitNode(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalid) << bad;
    EXPECT_NE(r.error().message.find("metadata.name"), std::string::npos) << r.error().message;
  }
  EXPECT_FALSE(AdmitNode(std::string(254, 'a')).ok());
  EXPECT_TRUE(AdmitNode(std::string(253, 'a')).ok());
}

// Whatever path a write takes to admission (a patch, an apply, a scale), a value of the wrong
// type is refused there, in the decoder's words.
TEST(AdmissionTest, ValuesOfTheWrongTypeAreRefusedOnEveryWrite) {
  for (bool is_create : {true, false}) {
    Json node = Json::parse(R"({"metadata":{"name":"n"},"status":{"conditions":"x"}})");
    auto r = Admit(*FindResource("", "v1", "nodes"), node, is_create,
                   [](const std::string&) { return std::nullopt; });
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, ErrorCode::kBadRequest);
    EXPECT_EQ(r.error().message,
              "Node in version \"v1\" cannot be handled as a Node: json: cannot unmarshal string "
              "into Go struct field NodeStatus.status.conditions of type []v1.NodeCondition");
  }
}

Json Admitted(const char* group, const char* plural, Json obj) {
  auto ok = Admit(*FindResource(group, "v1", plural), obj, true,
                  [](const std::string&) { return std::nullopt; });
  EXPECT_TRUE(ok.ok()) << ok.error().message;
  return obj;
}

TEST(AdmissionTest, WorkloadsGetTheApiDefaults) {
  const Json tmpl = {{"metadata", {{"labels", {{"app", "web"}}}}},
                     {"spec", {{"containers", {{{"name", "c"}, {"image", "nginx:1.27"}}}}}}};
  const Json selector = {{"matchLabels", {{"app", "web"}}}};
  Json deploy =
      Admitted("apps", "deployments", {{"spec", {{"selector", selector}, {"template", tmpl}}}});
  EXPECT_EQ(deploy["spec"]["replicas"], 1);
  EXPECT_EQ(deploy["spec"]["strategy"], Json::parse(R"({"type":"RollingUpdate",
                "rollingUpdate":{"maxUnavailable":"25%","maxSurge":"25%"}})"));
  EXPECT_EQ(deploy["spec"]["revisionHistoryLimit"], 10);
  EXPECT_EQ(deploy["spec"]["progressDeadlineSeconds"], 600);
  const Json& pod_spec = deploy["spec"]["template"]["spec"];
  EXPECT_EQ(pod_spec["schedulerName"], "default-scheduler");
  EXPECT_EQ(pod_spec["restartPolicy"], "Always");
  EXPECT_EQ(pod_spec["containers"][0]["imagePullPolicy"], "IfNotPresent");
  EXPECT_EQ(pod_spec["containers"][0]["terminationMessagePolicy"], "File");

  // What is set stays; a Recreate strategy gets no rolling update.
  Json kept = Admitted("apps", "deployments",
                       {{"spec",
                         {{"replicas", 0},
                          {"selector", selector},
                          {"strategy", {{"type", "Recreate"}}},
                          {"template", tmpl}}}});
  EXPECT_EQ(kept["spec"]["replicas"], 0);
  EXPECT_EQ(kept["spec"]["strategy"], (Json{{"type", "Recreate"}}));

  Json sts =
      Admitted("apps", "statefulsets", {{"spec", {{"selector", selector}, {"template", tmpl}}}});
  EXPECT_EQ(sts["spec"]["podManagementPolicy"], "OrderedReady");
  EXPECT_EQ(sts["spec"]["updateStrategy"]["rollingUpdate"]["partition"], 0);
  EXPECT_EQ(sts["spec"]["persistentVolumeClaimRetentionPolicy"]["whenScaled"], "Retain");

  Json ds =
      Admitted("apps", "daemonsets", {{"spec", {{"selector", selector}, {"template", tmpl}}}});
  EXPECT_FALSE(ds["spec"].contains("replicas"));
  EXPECT_EQ(ds["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"], 1);
  EXPECT_EQ(ds["spec"]["revisionHistoryLimit"], 10);

  Json rs =
      Admitted("apps", "replicasets", {{"spec", {{"selector", selector}, {"template", tmpl}}}});
  EXPECT_EQ(rs["spec"]["replicas"], 1);
  EXPECT_FALSE(rs["spec"].contains("revisionHistoryLimit"));

  Json rc = Admitted("", "replicationcontrollers", {{"spec", {{"template", tmpl}}}});
  EXPECT_EQ(rc["spec"]["selector"], (Json{{"app", "web"}}));
  EXPECT_EQ(rc["metadata"]["labels"], (Json{{"app", "web"}}));
}

}  // namespace
}  // namespace berth::apiserver
