// The pods/resize subresource: what a resize may change and the rules kube-apiserver applies.
#include "apiserver/pod_resize.h"

#include <gtest/gtest.h>

#include "apiserver/server_test_fixture.h"

namespace berth::apiserver {
namespace {

namespace http = boost::beast::http;
using testing::Json;
using testing::Reply;
using PodResizeTest = testing::ServerHttpTest;

constexpr const char* kMergePatch = "application/merge-patch+json";

std::string Resources(const std::string& requests, const std::string& limits = "") {
  std::string out = R"(,"resources":{"requests":)" + requests;
  if (!limits.empty()) out += R"(,"limits":)" + limits;
  return out + "}";
}

TEST_F(PodResizeTest, ChangesOnlyTheContainersResources) {
  ASSERT_EQ(Do(http::verb::post, kPods,
               PodJson("web", "", Resources(R"({"cpu":"100m","memory":"64Mi"})")))
                .status,
            201);
  const std::string resize = std::string(kPods) + "/web/resize";
  // Labels and images written through the subresource are dropped; resources are kept.
  Reply r = Do(http::verb::patch, resize,
               R"({"metadata":{"labels":{"x":"y"}},"spec":{"containers":[{"name":"c",
                   "image":"other","resources":{"requests":{"cpu":"300m","memory":"64Mi"}}}]}})",
               "application/strategic-merge-patch+json");
  ASSERT_EQ(r.status, 200) << r.body.dump();
  EXPECT_EQ(r.body["spec"]["containers"][0]["resources"]["requests"]["cpu"], "300m");
  EXPECT_EQ(r.body["spec"]["containers"][0]["image"], "x");
  EXPECT_FALSE(r.body["metadata"].contains("labels"));
  // The same change through the pod itself is refused, as before.
  Reply direct = Do(http::verb::patch, std::string(kPods) + "/web",
                    R"({"spec":{"containers":[{"name":"c","resources":{"requests":
                        {"cpu":"400m","memory":"64Mi"}}}]}})",
                    "application/strategic-merge-patch+json");
  EXPECT_EQ(direct.status, 422);
  // Discovery lists the subresource with the verbs kubectl needs.
  Reply discovery = Do(http::verb::get, "/api/v1");
  bool listed = false;
  for (const Json& res : discovery.body["resources"]) {
    if (res["name"] == "pods/resize") {
      listed = true;
      EXPECT_EQ(res["kind"], "Pod");
      EXPECT_EQ(res["verbs"], Json::parse(R"(["get","patch","update"])"));
    }
  }
  EXPECT_TRUE(listed);
}

TEST_F(PodResizeTest, RefusesWhatKubeApiserverRefuses) {
  ASSERT_EQ(Do(http::verb::post, kPods,
               PodJson("g", "",
                       Resources(R"({"cpu":"1","memory":"1Gi"})", R"({"cpu":"1","memory":"1Gi"})")))
                .status,
            201);
  const std::string resize = std::string(kPods) + "/g/resize";
  struct Case {
    const char* patch;
    const char* message;
  } cases[] = {
      // Guaranteed to Burstable.
      {R"({"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"500m"}}}]}})",
       "Pod \"g\" is invalid: spec: Invalid value: \"Guaranteed\": Pod QOS Class may not change "
       "as a result of resizing"},
      // A limit removed (and with it the QoS class).
      {R"({"spec":{"containers":[{"name":"c","resources":{"limits":{"memory":null}}}]}})",
       "Pod \"g\" is invalid: [spec: Invalid value: \"Guaranteed\": Pod QOS Class may not change "
       "as a result of resizing, spec.containers[0].resources.limits: Forbidden: resource "
       "limits cannot be removed]"},
      // Memory lowered without a restart policy that allows it.
      {R"({"spec":{"containers":[{"name":"c","resources":{"requests":{"memory":"512Mi"},
           "limits":{"memory":"512Mi"}}}]}})",
       "Pod \"g\" is invalid: spec.containers[0].resources.limits[memory]: Forbidden: memory "
       "limits cannot be decreased unless resizePolicy is RestartContainer"},
      // Another resource.
      {R"({"spec":{"containers":[{"name":"c","resources":{"requests":{"example.com/gpu":"1"},
           "limits":{"example.com/gpu":"1"}}}]}})",
       "Pod \"g\" is invalid: spec: Forbidden: only cpu and memory resources are mutable"},
  };
  for (const Case& c : cases) {
    Reply r = Do(http::verb::patch, resize, c.patch, "application/strategic-merge-patch+json");
    EXPECT_EQ(r.status, 422) << c.patch;
    EXPECT_EQ(r.body["message"], c.message) << r.body.dump();
  }
  // With RestartContainer for memory, lowering it is a valid resize.
  Reply ok = Do(http::verb::patch, resize,
                R"({"spec":{"containers":[{"name":"c","resizePolicy":[{"resourceName":"memory",
                    "restartPolicy":"RestartContainer"}],"resources":{"requests":{"memory":"512Mi"},
                    "limits":{"memory":"512Mi"}}}]}})",
                "application/strategic-merge-patch+json");
  ASSERT_EQ(ok.status, 200) << ok.body.dump();
  EXPECT_EQ(ok.body["spec"]["containers"][0]["resources"]["limits"]["memory"], "512Mi");
}

TEST_F(PodResizeTest, PodsWithPodLevelResourcesAreNotResized) {
  ASSERT_EQ(
      Do(http::verb::post, kPods,
         PodJson("pl", R"("resources":{"requests":{"cpu":"1"}},)", Resources(R"({"cpu":"500m"})")))
          .status,
      201);
  Reply r = Do(http::verb::patch, std::string(kPods) + "/pl/resize",
               R"({"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"600m"}}}]}})",
               "application/strategic-merge-patch+json");
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(r.body["message"],
            "Pod \"pl\" is invalid: : Forbidden: pods with pod-level resources cannot be resized");
}

TEST_F(PodResizeTest, ARunningContainerWithoutReportedResourcesIsOnANodeThatCannotResize) {
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("old", "", Resources(R"({"cpu":"100m"})"))).status,
            201);
  ASSERT_EQ(Do(http::verb::patch, std::string(kPods) + "/old/status",
               R"({"status":{"phase":"Running","containerStatuses":[{"name":"c","ready":true,
                   "restartCount":0,"image":"x","imageID":"","state":{"running":{}}}]}})",
               kMergePatch)
                .status,
            200);
  Reply r = Do(http::verb::patch, std::string(kPods) + "/old/resize",
               R"({"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"200m"}}}]}})",
               "application/strategic-merge-patch+json");
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(r.body["message"],
            "Pod \"old\" is invalid: spec: Forbidden: Pod running on node without support for "
            "resize");
}

TEST(ComputePodQosTest, FollowsKubeApiserver) {
  auto qos = [](const char* spec) { return ComputePodQos(Json::parse(spec)); };
  EXPECT_EQ(qos(R"({"containers":[{"name":"a"}]})"), "BestEffort");
  EXPECT_EQ(qos(R"({"containers":[{"name":"a","resources":{"requests":{"cpu":"1"}}}]})"),
            "Burstable");
  EXPECT_EQ(qos(R"({"containers":[{"name":"a","resources":{"requests":{"cpu":"1","memory":"1Gi"},
                 "limits":{"cpu":"1000m","memory":"1Gi"}}}]})"),
            "Guaranteed");
  // Only cpu and memory count; a zero request is no request.
  EXPECT_EQ(qos(R"({"containers":[{"name":"a","resources":{"requests":{"example.com/gpu":"1",
                 "cpu":"0"}}}]})"),
            "BestEffort");
  // An init container without limits makes the pod Burstable.
  EXPECT_EQ(qos(R"({"initContainers":[{"name":"i","resources":{"requests":{"cpu":"1"}}}],
                 "containers":[{"name":"a","resources":{"requests":{"cpu":"1","memory":"1Gi"},
                 "limits":{"cpu":"1","memory":"1Gi"}}}]})"),
            "Burstable");
  // Pod-level resources decide when set.
  EXPECT_EQ(qos(R"({"resources":{"requests":{"cpu":"1","memory":"1Gi"},
                 "limits":{"cpu":"1","memory":"1Gi"}},"containers":[{"name":"a"}]})"),
            "Guaranteed");
}

}  // namespace
}  // namespace berth::apiserver
