// scheduling.k8s.io/v1beta1 Workload and PodGroup through the API server: served only with the
// GenericWorkload gate, defaulted and validated as kube-apiserver v1.37 does, with a status
// subresource, and not replaced by a CustomResourceDefinition of the same name.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "apiserver/server_test_fixture.h"

namespace berth::apiserver {
namespace {

namespace http = boost::beast::http;
using Json = nlohmann::json;
using testing::Reply;

constexpr const char* kPodGroups = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups";
constexpr const char* kWorkloads = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/workloads";

std::string PodGroup(const std::string& name, const Json& policy, const Json& extra = {}) {
  Json spec = {{"schedulingPolicy", policy}};
  if (extra.is_object()) spec.update(extra);
  return Json{{"apiVersion", "scheduling.k8s.io/v1beta1"},
              {"kind", "PodGroup"},
              {"metadata", {{"name", name}}},
              {"spec", spec}}
      .dump();
}

Json Gang(int min_count) { return {{"gang", {{"minCount", min_count}}}}; }

class WorkloadApiTest : public testing::ServerHttpTest {
 protected:
  void SetUp() override {
    workload_api_ = true;
    ServerHttpTest::SetUp();
  }
};

using WorkloadApiGateOffTest = testing::ServerHttpTest;

TEST_F(WorkloadApiGateOffTest, NotServed) {
  EXPECT_EQ(Do(http::verb::post, kPodGroups, PodGroup("g", Gang(2))).status, 404);
  EXPECT_EQ(Do(http::verb::get, "/apis/scheduling.k8s.io/v1beta1").status, 404);
}

TEST_F(WorkloadApiTest, DiscoveryListsBothKindsBesideV1) {
  Reply group = Do(http::verb::get, "/apis/scheduling.k8s.io");
  ASSERT_EQ(group.status, 200) << group.body.dump();
  EXPECT_EQ(group.body["preferredVersion"]["version"], "v1");
  bool v1beta1 = false;
  for (const auto& v : group.body["versions"]) v1beta1 |= v["version"] == "v1beta1";
  EXPECT_TRUE(v1beta1) << group.body.dump();
  Reply resources = Do(http::verb::get, "/apis/scheduling.k8s.io/v1beta1");
  ASSERT_EQ(resources.status, 200);
  std::set<std::string> names;
  for (const auto& r : resources.body["resources"]) names.insert(r["name"].get<std::string>());
  EXPECT_TRUE(names.count("podgroups") && names.count("podgroups/status") &&
              names.count("workloads"))
      << resources.body.dump();
}

TEST_F(WorkloadApiTest, PodGroupIsDefaultedAndKeepsNoStatusOnCreate) {
  Json extra = {{"workloadRef", {{"workloadName", "train"}, {"templateName", "workers"}}}};
  std::string body = PodGroup("g", Gang(4), extra);
  Json with_status = Json::parse(body);
  with_status["status"] = {{"conditions", Json::array()}};
  with_status["spec"]["unknownField"] = 1;
  Reply created = Do(http::verb::post, kPodGroups, with_status.dump());
  ASSERT_EQ(created.status, 201) << created.body.dump();
  EXPECT_EQ(created.body["spec"]["disruptionMode"], Json({{"single", Json::object()}}));
  EXPECT_EQ(created.body["spec"]["schedulingPolicy"]["gang"]["minCount"], 4);
  EXPECT_FALSE(created.body["spec"].contains("unknownField"));
  EXPECT_FALSE(created.body.contains("status"));
  EXPECT_EQ(created.body["apiVersion"], "scheduling.k8s.io/v1beta1");

  // The status subresource writes status only.
  Json status = created.body;
  status["status"] = {{"conditions",
                       {{{"type", "PodGroupInitiallyScheduled"},
                         {"status", "True"},
                         {"reason", "Scheduled"},
                         {"message", ""},
                         {"lastTransitionTime", "2026-11-29T00:00:00Z"}}}}};
  status["spec"]["schedulingPolicy"]["gang"]["minCount"] = 9;
  Reply updated = Do(http::verb::put, std::string(kPodGroups) + "/g/status", status.dump());
  ASSERT_EQ(updated.status, 200) << updated.body.dump();
  EXPECT_EQ(updated.body["status"]["conditions"][0]["type"], "PodGroupInitiallyScheduled");
  EXPECT_EQ(updated.body["spec"]["schedulingPolicy"]["gang"]["minCount"], 4);
}

TEST_F(WorkloadApiTest, PodGroupPolicyIsExactlyOneWithAPositiveMinCount) {
  Reply neither = Do(http::verb::post, kPodGroups, PodGroup("a", Json::object()));
  EXPECT_EQ(neither.status, 422);
  EXPECT_EQ(neither.body["message"],
            R"(PodGroup.scheduling.k8s.io "a" is invalid: spec.schedulingPolicy: Invalid value: )"
            R"("": must specify exactly one of: `basic`, `gang`)");
  Reply both = Do(http::verb::post, kPodGroups,
                  PodGroup("b", {{"basic", Json::object()}, {"gang", {{"minCount", 1}}}}));
  EXPECT_EQ(both.status, 422) << both.body.dump();
  Reply zero = Do(http::verb::post, kPodGroups, PodGroup("c", Gang(0)));
  EXPECT_EQ(zero.status, 422);
  EXPECT_EQ(zero.body["message"],
            R"(PodGroup.scheduling.k8s.io "c" is invalid: spec.schedulingPolicy.gang.minCount: )"
            R"(Invalid value: 0: must be greater than or equal to 1)");
  EXPECT_EQ(zero.body["details"]["causes"][0]["field"], "spec.schedulingPolicy.gang.minCount");
  Reply wrong_type =
      Do(http::verb::post, kPodGroups, PodGroup("d", {{"gang", {{"minCount", "three"}}}}));
  EXPECT_EQ(wrong_type.status, 422) << wrong_type.body.dump();
  Reply bad_ref =
      Do(http::verb::post, kPodGroups,
         PodGroup("e", Gang(1),
                  {{"workloadRef", {{"workloadName", "Not_A_Name"}, {"templateName", "w"}}}}));
  EXPECT_EQ(bad_ref.status, 422);
  EXPECT_EQ(bad_ref.body["details"]["causes"][0]["field"], "spec.workloadRef.workloadName");
}

TEST_F(WorkloadApiTest, PodGroupUpdatesKeepTheImmutableFieldsAndThePolicyKind) {
  ASSERT_EQ(Do(http::verb::post, kPodGroups, PodGroup("g", Gang(4))).status, 201);
  const std::string path = std::string(kPodGroups) + "/g";
  // minCount may change.
  Reply scaled =
      Do(http::verb::patch, path, R"({"spec":{"schedulingPolicy":{"gang":{"minCount":6}}}})",
         "application/merge-patch+json");
  ASSERT_EQ(scaled.status, 200) << scaled.body.dump();
  EXPECT_EQ(scaled.body["spec"]["schedulingPolicy"]["gang"]["minCount"], 6);
  // The gang may not be swapped for basic.
  Reply swapped =
      Do(http::verb::patch, path, R"({"spec":{"schedulingPolicy":{"gang":null,"basic":{}}}})",
         "application/merge-patch+json");
  EXPECT_EQ(swapped.status, 422);
  EXPECT_NE(swapped.body["message"].get<std::string>().find(
                "spec.schedulingPolicy.gang: Forbidden: field cannot be cleared once set"),
            std::string::npos)
      << swapped.body.dump();
  Reply priority =
      Do(http::verb::patch, path, R"({"spec":{"priority":5}})", "application/merge-patch+json");
  EXPECT_EQ(priority.status, 422);
  EXPECT_EQ(priority.body["details"]["causes"][0]["field"], "spec.priority");
}

TEST_F(WorkloadApiTest, WorkloadTemplatesAreCheckedAndCannotBeAddedOrRemoved) {
  auto workload = [](const Json& templates) {
    return Json{{"apiVersion", "scheduling.k8s.io/v1beta1"},
                {"kind", "Workload"},
                {"metadata", {{"name", "w"}}},
                {"spec", {{"podGroupTemplates", templates}}}}
        .dump();
  };
  Json one = {{{"name", "workers"}, {"schedulingPolicy", Gang(3)}}};
  Reply none = Do(http::verb::post, kWorkloads, workload(Json::array()));
  EXPECT_EQ(none.status, 422) << none.body.dump();
  Json duplicate = one;
  duplicate.push_back(one[0]);
  Reply dup = Do(http::verb::post, kWorkloads, workload(duplicate));
  EXPECT_EQ(dup.status, 422) << dup.body.dump();
  Reply created = Do(http::verb::post, kWorkloads, workload(one));
  ASSERT_EQ(created.status, 201) << created.body.dump();
  Json two = one;
  two.push_back({{"name", "driver"}, {"schedulingPolicy", {{"basic", Json::object()}}}});
  Json next = created.body;
  next["spec"]["podGroupTemplates"] = two;
  Reply added = Do(http::verb::put, std::string(kWorkloads) + "/w", next.dump());
  EXPECT_EQ(added.status, 422);
  EXPECT_NE(added.body["message"].get<std::string>().find("items cannot be added"),
            std::string::npos)
      << added.body.dump();
  next["spec"]["podGroupTemplates"] = one;
  next["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] = 5;
  Reply scaled = Do(http::verb::put, std::string(kWorkloads) + "/w", next.dump());
  EXPECT_EQ(scaled.status, 200) << scaled.body.dump();
}

TEST_F(WorkloadApiTest, ACustomResourceDefinitionOfTheSameNameChangesNothing) {
  // A CRD a user wrote for these kinds before they were built in: stored, but the built-in
  // kind keeps serving, and deleting the CRD does not stop it.
  Json crd = {{"apiVersion", "apiextensions.k8s.io/v1"},
              {"kind", "CustomResourceDefinition"},
              {"metadata",
               {{"name", "podgroups.scheduling.k8s.io"},
                {"annotations", {{"api-approved.kubernetes.io", "unapproved, test"}}}}},
              {"spec",
               {{"group", "scheduling.k8s.io"},
                {"scope", "Namespaced"},
                {"names", {{"plural", "podgroups"}, {"kind", "PodGroup"}}},
                {"versions",
                 {{{"name", "v1beta1"},
                   {"served", true},
                   {"storage", true},
                   {"schema",
                    {{"openAPIV3Schema",
                      {{"type", "object"}, {"x-kubernetes-preserve-unknown-fields", true}}}}}}}}}}};
  const char* kCrds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
  ASSERT_EQ(Do(http::verb::post, kCrds, crd.dump()).status, 201);
  EXPECT_EQ(Do(http::verb::post, kPodGroups, PodGroup("a", Gang(0))).status, 422);
  ASSERT_EQ(Do(http::verb::post, kPodGroups, PodGroup("kept", Gang(2))).status, 201);
  const std::string crd_path = std::string(kCrds) + "/podgroups.scheduling.k8s.io";
  ASSERT_EQ(Do(http::verb::delete_, crd_path).status, 200);
  // The CRD's cleanup (its finalizer) runs; once the CRD is gone, the built-in kind's object
  // is still there.
  for (int i = 0; i < 200 && Do(http::verb::get, crd_path).status != 404; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(Do(http::verb::get, crd_path).status, 404);
  EXPECT_EQ(Do(http::verb::get, std::string(kPodGroups) + "/kept").status, 200);
  EXPECT_EQ(Do(http::verb::post, kPodGroups, PodGroup("b", Gang(2))).status, 201);
}

}  // namespace
}  // namespace berth::apiserver
