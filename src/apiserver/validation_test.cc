#include "apiserver/validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

const ResourceInfo& Kind(const char* group, const char* plural) {
  return *FindResource(group, "v1", plural);
}

Json Pod(const std::string& spec_extra = "", const std::string& container_extra = "") {
  return Json::parse(R"({"metadata":{"name":"p","labels":{"app":"web","example.com/tier":"a"}},
      "spec":{)" + spec_extra +
                     R"("containers":[{"name":"c","image":"x")" + container_extra + "}]}}");
}

std::string Problem(const ResourceInfo& r, const Json& obj) {
  auto ok = ValidateObject(r, obj);
  if (ok.ok()) return "";
  EXPECT_EQ(ok.error().code, ErrorCode::kInvalid);
  return ok.error().message;
}

TEST(ValidationTest, ValidObjectsPass) {
  const ResourceInfo& pods = Kind("", "pods");
  EXPECT_EQ(Problem(pods, Pod(R"("tolerations":[{"key":"k","operator":"Exists","effect":"NoExecute",
      "tolerationSeconds":300},{"operator":"Exists"}],"affinity":{"nodeAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":
      [{"key":"zone","operator":"In","values":["a"]}]}]}}},)",
                              R"(,"resources":{"requests":{"cpu":"500m"},"limits":{"cpu":"1"}})")),
            "");
  EXPECT_EQ(Problem(Kind("apps", "deployments"),
                    Json::parse(R"({"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":
                        {"app":"web"}},"template":{"metadata":{"labels":{"app":"web","v":"1"}},
                        "spec":{"containers":[{"name":"c","image":"x"}]}}}})")),
            "");
  EXPECT_EQ(Problem(Kind("", "nodes"), Json::parse(R"({"metadata":{"name":"n"},"spec":{"taints":[
      {"key":"node.kubernetes.io/not-ready","effect":"NoExecute"}]}})")),
            "");
}

TEST(ValidationTest, PodSpecsKubeApiserverRefuses) {
  const ResourceInfo& pods = Kind("", "pods");
  Json dup = Pod();
  dup["spec"]["containers"].push_back({{"name", "c"}, {"image", "y"}});
  EXPECT_EQ(Problem(pods, dup),
            "Pod \"p\" is invalid: spec.containers[1].name: Duplicate value: \"c\"");
  Json no_image = Pod();
  no_image["spec"]["containers"][0].erase("image");
  EXPECT_EQ(Problem(pods, no_image),
            "Pod \"p\" is invalid: spec.containers[0].image: Required value");
  EXPECT_EQ(Problem(pods, Pod("", R"(,"resources":{"requests":{"cpu":"2"},"limits":{"cpu":"1"}})")),
            "Pod \"p\" is invalid: spec.containers[0].resources.requests: Invalid value: \"2\": "
            "must be less than or equal to cpu limit of 1");
  EXPECT_THAT(Problem(pods, Pod(R"("tolerations":[{"key":"k","operator":"Exists","value":"v"}],)")),
              HasSubstr("spec.tolerations[0].operator: Invalid value: \"Exists\": value must be "
                        "empty when `operator` is 'Exists'"));
  EXPECT_THAT(Problem(pods, Pod(R"("tolerations":[{"key":"k","effect":"Sometimes"}],)")),
              HasSubstr("spec.tolerations[0].effect: Unsupported value: \"Sometimes\""));
  EXPECT_THAT(Problem(pods, Pod(R"("tolerations":[{"value":"v"}],)")),
              HasSubstr("operator must be Exists when `key` is empty"));
  EXPECT_THAT(
      Problem(pods,
              Pod(R"("affinity":{"nodeAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":
          [{"weight":1,"preference":{"matchExpressions":[{"key":"a","operator":"Bogus"}]}}]}},)")),
      HasSubstr("spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
                "preference.matchExpressions[0].operator: Unsupported value: \"Bogus\""));
  Json bad_label = Pod();
  bad_label["metadata"]["labels"]["a b"] = "x";
  EXPECT_THAT(Problem(pods, bad_label),
              HasSubstr("metadata.labels: Invalid value: \"a b\": name part must consist of"));
  Json bad_value = Pod();
  bad_value["metadata"]["labels"]["a"] = "-x";
  EXPECT_THAT(Problem(pods, bad_value), HasSubstr("a valid label must be an empty string"));
}

TEST(ValidationTest, NodesWorkloadsAndClasses) {
  EXPECT_THAT(Problem(Kind("", "nodes"), Json::parse(R"({"metadata":{"name":"n"},"spec":{"taints":[
      {"key":"k","effect":"Bogus"}]}})")),
              HasSubstr("spec.taints[0].effect: Unsupported value: \"Bogus\""));
  const ResourceInfo& deployments = Kind("apps", "deployments");
  EXPECT_EQ(Problem(deployments, Json::parse(R"({"metadata":{"name":"d"},"spec":{"template":{
      "metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}})")),
            "Deployment \"d\" is invalid: spec.selector: Required value");
  EXPECT_THAT(Problem(deployments, Json::parse(R"({"metadata":{"name":"d"},"spec":{"selector":{
      "matchLabels":{"app":"db"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{
      "containers":[{"name":"c","image":"x"}]}}}})")),
              HasSubstr("`selector` does not match template `labels`"));
  EXPECT_THAT(Problem(Kind("scheduling.k8s.io", "priorityclasses"),
                      Json::parse(R"({"metadata":{"name":"system-mine"},"value":1})")),
              HasSubstr("'system-' prefix are reserved"));
  EXPECT_EQ(
      Problem(Kind("scheduling.k8s.io", "priorityclasses"),
              Json::parse(R"({"metadata":{"name":"system-node-critical"},"value":2000001000})")),
      "");
}

}  // namespace
}  // namespace berth::apiserver
