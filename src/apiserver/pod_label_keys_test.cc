#include "apiserver/pod_label_keys.h"

#include <gtest/gtest.h>

#include "apiserver/admission.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

const ResourceInfo& Pods() { return *FindResource("", "v1", "pods"); }

Json PodWith(Json labels, Json spec) {
  spec["containers"] = Json::parse(R"([{"name":"c","image":"nginx:1"}])");
  if (!labels.is_object()) labels = Json::object();
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "p"}, {"namespace", "default"}, {"labels", std::move(labels)}}},
          {"spec", std::move(spec)}};
}

VoidResult Create(const ResourceInfo& r, Json& obj) {
  return Admit(r, obj, true, [](const std::string&) { return std::nullopt; });
}

// Test_mutatePodAffinity, "matchLabelKeys are merged into labelSelector with In and
// mismatchLabelKeys are merged with NotIn": every kind of term, required and preferred.
TEST(PodLabelKeysTest, AffinityKeysBecomeInAndNotInRequirements) {
  const Json term = Json::parse(R"({"labelSelector":{"matchLabels":{"region":"Asia"}},
      "topologyKey":"zone","matchLabelKeys":["country"],"mismatchLabelKeys":["city"]})");
  Json spec;
  for (const char* kind : {"podAffinity", "podAntiAffinity"}) {
    spec["affinity"][kind]["requiredDuringSchedulingIgnoredDuringExecution"] = {term};
    spec["affinity"][kind]["preferredDuringSchedulingIgnoredDuringExecution"] = {
        {{"weight", 10}, {"podAffinityTerm", term}}};
  }
  Json pod = PodWith({{"country", "Japan"}, {"city", "Kyoto"}}, spec);
  MergeLabelKeys(pod);
  const Json want = Json::parse(R"({"matchLabels":{"region":"Asia"},"matchExpressions":[
      {"key":"country","operator":"In","values":["Japan"]},
      {"key":"city","operator":"NotIn","values":["Kyoto"]}]})");
  for (const char* kind : {"podAffinity", "podAntiAffinity"}) {
    const Json& a = pod["spec"]["affinity"][kind];
    EXPECT_EQ(a["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"], want);
    EXPECT_EQ(
        a["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]["labelSelector"],
        want);
    // The keys stay: the stored pod has both the lists and the merged selector.
    EXPECT_EQ(a["requiredDuringSchedulingIgnoredDuringExecution"][0]["matchLabelKeys"],
              Json::array({"country"}));
  }
}

// "keys, which are not found in Pod labels, are ignored"; the user's own requirements keep
// their place ahead of the merged ones.
TEST(PodLabelKeysTest, KeysThePodHasNoLabelForAreSkipped) {
  Json pod = PodWith({{"country", "Japan"}}, Json::parse(R"({"affinity":{"podAntiAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"zone",
        "labelSelector":{"matchExpressions":[{"key":"tier","operator":"Exists"}]},
        "matchLabelKeys":["country","planet"],"mismatchLabelKeys":["city"]}]}}})"));
  MergeLabelKeys(pod);
  EXPECT_EQ(pod["spec"]["affinity"]["podAntiAffinity"]
               ["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"],
            Json::parse(R"({"matchExpressions":[{"key":"tier","operator":"Exists"},
                {"key":"country","operator":"In","values":["Japan"]}]})"));
}

// "labelSelector is nil": nothing is added (a nil selector selects no pod either way).
TEST(PodLabelKeysTest, TermsWithoutASelectorAreLeftAlone) {
  const Json spec = Json::parse(R"({"affinity":{"podAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"zone",
        "matchLabelKeys":["country"]}]}},
      "topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone",
        "whenUnsatisfiable":"DoNotSchedule","labelSelector":null,"matchLabelKeys":["country"]}]})");
  Json pod = PodWith({{"country", "Japan"}}, spec);
  MergeLabelKeys(pod);
  EXPECT_EQ(pod["spec"]["affinity"], spec["affinity"]);
  EXPECT_EQ(pod["spec"]["topologySpreadConstraints"], spec["topologySpreadConstraints"]);
}

// Test_mutateTopologySpreadConstraints: matchLabelKeys become In requirements; an empty
// selector gets its first expressions.
TEST(PodLabelKeysTest, SpreadConstraintKeysBecomeInRequirements) {
  Json pod = PodWith({{"app", "web"}, {"pod-template-hash", "abc"}},
                     Json::parse(R"({"topologySpreadConstraints":[
      {"maxSkew":1,"topologyKey":"zone","whenUnsatisfiable":"DoNotSchedule",
       "labelSelector":{"matchLabels":{"app":"web"}},"matchLabelKeys":["pod-template-hash"]},
      {"maxSkew":1,"topologyKey":"host","whenUnsatisfiable":"ScheduleAnyway",
       "labelSelector":{},"matchLabelKeys":["app","absent"]}]})"));
  MergeLabelKeys(pod);
  const Json& c = pod["spec"]["topologySpreadConstraints"];
  EXPECT_EQ(c[0]["labelSelector"], Json::parse(R"({"matchLabels":{"app":"web"},
      "matchExpressions":[{"key":"pod-template-hash","operator":"In","values":["abc"]}]})"));
  EXPECT_EQ(c[1]["labelSelector"], Json::parse(R"({"matchExpressions":[
      {"key":"app","operator":"In","values":["web"]}]})"));
}

// Creating a pod merges and validates; the merged pod passes.
TEST(PodLabelKeysTest, CreateMergesBeforeValidating) {
  Json pod = PodWith({{"app", "web"}, {"pod-template-hash", "abc"}},
                     Json::parse(R"({"affinity":{"podAntiAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":[{"topologyKey":"kubernetes.io/hostname",
        "labelSelector":{"matchLabels":{"app":"web"}},"matchLabelKeys":["pod-template-hash"]}]}}})"));
  ASSERT_TRUE(Create(Pods(), pod).ok());
  EXPECT_EQ(
      pod["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
         [0]["labelSelector"]["matchExpressions"],
      Json::parse(R"([{"key":"pod-template-hash","operator":"In","values":["abc"]}])"));
  // An update merges nothing more, and the stored merge passes validation again.
  Json next = pod;
  next["metadata"]["labels"]["pod-template-hash"] = "def";
  ASSERT_TRUE(Admit(Pods(), next, false, {}).ok());
  ASSERT_TRUE(ValidateUpdate(Pods(), pod, next).ok());
  EXPECT_EQ(next["spec"], pod["spec"]);
}

struct InvalidCase {
  const char* name;
  Json labels;
  const char* spec;
  std::string message;  // after `Pod "p" is invalid: `
};

// Validation cases of kube-apiserver (validation_test.go's TestValidatePodSpec affinity and
// topology spread cases), with the messages and field paths it gives.
TEST(PodLabelKeysTest, InvalidKeysGetKubeApiserversErrors) {
  const std::string req =
      "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]";
  const std::string pref =
      "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
      ".podAffinityTerm";
  const std::vector<InvalidCase> cases = {
      {"key in both matchLabelKeys and labelSelector (pod has the label)",
       {{"key", "value1"}},
       R"({"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
          {"topologyKey":"zone","matchLabelKeys":["key"],"labelSelector":{"matchExpressions":[
            {"key":"key","operator":"In","values":["value1"]}]}}]}}})",
       req + "[0]: Invalid value: \"key\": exists in both matchLabelKeys and labelSelector"},
      {"key in both matchLabels and matchLabelKeys",
       {{"key", "value1"}},
       R"({"affinity":{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[
          {"weight":10,"podAffinityTerm":{"topologyKey":"zone","matchLabelKeys":["key"],
            "labelSelector":{"matchLabels":{"key":"value1"}}}}]}}})",
       pref + "[0]: Invalid value: \"key\": exists in both matchLabelKeys and labelSelector"},
      {"a key named twice in matchLabelKeys reports its last index",
       {{"app", "a"}},
       R"({"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
          {"topologyKey":"zone","labelSelector":{},"matchLabelKeys":["app","app"]}]}}})",
       req + "[1]: Invalid value: \"app\": exists in both matchLabelKeys and labelSelector"},
      {"key in both matchLabelKeys and mismatchLabelKeys",
       {},
       R"({"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
          {"topologyKey":"zone","labelSelector":{},"matchLabelKeys":["samekey"],
           "mismatchLabelKeys":["samekey"]}]}}})",
       req + ".matchLabelKeys[0]: Invalid value: \"samekey\": exists in both matchLabelKeys and "
             "mismatchLabelKeys"},
      {"matchLabelKeys without labelSelector",
       {},
       R"({"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
          {"topologyKey":"zone","matchLabelKeys":["key"]}]}}})",
       req + ".matchLabelKeys: Forbidden: must not be specified when labelSelector is not set"},
      {"invalid label name in mismatchLabelKeys",
       {},
       R"({"affinity":{"podAntiAffinity":{"preferredDuringSchedulingIgnoredDuringExecution":[
          {"weight":1,"podAffinityTerm":{"topologyKey":"zone","labelSelector":{},
            "mismatchLabelKeys":["/simple"]}}]}}})",
       pref + ".mismatchLabelKeys[0]: Invalid value: \"/simple\": prefix part must be non-empty"},
      {"spread constraint: key in both matchLabelKeys and labelSelector",
       {{"foo", "bar"}},
       R"({"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone",
          "whenUnsatisfiable":"DoNotSchedule","matchLabelKeys":["foo"],
          "labelSelector":{"matchLabels":{"foo":"bar"}}}]})",
       "spec.topologySpreadConstraints[0][0]: Invalid value: \"foo\": exists in both "
       "matchLabelKeys and labelSelector"},
      {"spread constraint: matchLabelKeys without labelSelector",
       {{"foo", "bar"}},
       R"({"topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone",
          "whenUnsatisfiable":"DoNotSchedule","matchLabelKeys":["foo"]}]})",
       "spec.topologySpreadConstraints[0].matchLabelKeys: Forbidden: must not be specified when "
       "labelSelector is not set"},
      {"several errors are aggregated in order",
       {},
       R"({"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
          {"topologyKey":"zone","matchLabelKeys":["a"],"mismatchLabelKeys":["a"]}]}}})",
       "[" + req +
           ".matchLabelKeys: Forbidden: must not be specified when labelSelector is not set, " +
           req +
           ".mismatchLabelKeys: Forbidden: must not be specified when labelSelector is not "
           "set, " +
           req +
           ".matchLabelKeys[0]: Invalid value: \"a\": exists in both matchLabelKeys and "
           "mismatchLabelKeys]"},
  };
  for (const InvalidCase& c : cases) {
    Json pod = PodWith(c.labels, Json::parse(c.spec));
    auto r = Create(Pods(), pod);
    ASSERT_FALSE(r.ok()) << c.name;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalid) << c.name;
    EXPECT_EQ(r.error().message, "Pod \"p\" is invalid: " + c.message) << c.name;
  }
}

// Without the label, a key the user also selects on merges nothing and is valid; a key of
// mismatchLabelKeys may be in the selector (NotIn narrows it further).
TEST(PodLabelKeysTest, ValidCombinations) {
  for (const char* spec : {
           R"({"affinity":{"podAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
              {"topologyKey":"zone","matchLabelKeys":["key"],"labelSelector":{"matchExpressions":[
                {"key":"key","operator":"Exists"}]}}]}}})",
           R"({"affinity":{"podAntiAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":[
              {"topologyKey":"zone","mismatchLabelKeys":["tenant"],"labelSelector":{
                "matchExpressions":[{"key":"tenant","operator":"Exists"}]}}]}}})",
       }) {
    Json pod = PodWith({{"tenant", "t1"}}, Json::parse(spec));
    auto r = Create(Pods(), pod);
    EXPECT_TRUE(r.ok()) << r.error().message;
  }
}

// A template is validated as written (nothing is merged into it): the same key in
// matchLabels and matchLabelKeys passes there and fails on the pod created from it.
TEST(PodLabelKeysTest, TemplatesAreValidatedUnmerged) {
  const Json tmpl_spec = Json::parse(R"({"containers":[{"name":"c","image":"nginx:1"}],
      "topologySpreadConstraints":[{"maxSkew":1,"topologyKey":"zone",
        "whenUnsatisfiable":"DoNotSchedule","matchLabelKeys":["app"],
        "labelSelector":{"matchLabels":{"app":"web"}}}]})");
  Json deploy = {
      {"metadata", {{"name", "web"}, {"namespace", "default"}}},
      {"spec",
       {{"selector", {{"matchLabels", {{"app", "web"}}}}},
        {"template", {{"metadata", {{"labels", {{"app", "web"}}}}}, {"spec", tmpl_spec}}}}}};
  auto ok = Create(*FindResource("apps", "v1", "deployments"), deploy);
  EXPECT_TRUE(ok.ok()) << ok.error().message;
  Json pod = PodWith({{"app", "web"}}, tmpl_spec);
  EXPECT_FALSE(Create(Pods(), pod).ok());

  Json bad = deploy;
  bad["spec"]["template"]["spec"]["topologySpreadConstraints"][0].erase("labelSelector");
  auto r = Create(*FindResource("apps", "v1", "deployments"), bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "Deployment \"web\" is invalid: spec.template.spec.topologySpreadConstraints[0]."
            "matchLabelKeys: Forbidden: must not be specified when labelSelector is not set");
  // An update is refused too, unless what is stored already broke the rule.
  EXPECT_FALSE(ValidateUpdate(*FindResource("apps", "v1", "deployments"), deploy, bad).ok());
  EXPECT_TRUE(ValidateUpdate(*FindResource("apps", "v1", "deployments"), bad, bad).ok());
}

}  // namespace
}  // namespace berth::apiserver
