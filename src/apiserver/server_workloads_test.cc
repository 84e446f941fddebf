// What kubectl needs for workload objects and for asking about itself: the `scale`
// subresource (`kubectl scale`), the review kinds (`kubectl auth can-i`, `kubectl auth whoami`),
// the "all" category (`kubectl get all`) and the workload and service columns of `kubectl get`.
#include <gtest/gtest.h>

#include "apiserver/discovery.h"
#include "apiserver/resources.h"
#include "apiserver/selectors.h"
#include "apiserver/server_test_fixture.h"
#include "apiserver/table.h"

namespace berth::apiserver {
namespace {

namespace http = boost::beast::http;
using testing::Json;
using testing::Reply;
using ServerWorkloadsTest = testing::ServerHttpTest;

constexpr const char* kDeployments = "/apis/apps/v1/namespaces/default/deployments";

std::string Deployment(const std::string& name, const std::string& replicas) {
  return R"({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":")" + name +
         R"("},"spec":{)" + (replicas.empty() ? "" : R"("replicas":)" + replicas + ",") +
         R"("selector":{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"tier",
         "operator":"In","values":["b","a"]}]},"template":{"metadata":{"labels":{"app":"web",
         "tier":"a"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}})";
}

TEST_F(ServerWorkloadsTest, ScaleReadsAndWritesTheReplicaCount) {
  ASSERT_EQ(Do(http::verb::post, kDeployments, Deployment("web", "3")).status, 201);
  const std::string scale_path = std::string(kDeployments) + "/web/scale";
  Reply scale = Do(http::verb::get, scale_path);
  ASSERT_EQ(scale.status, 200) << scale.body.dump();
  EXPECT_EQ(scale.body["kind"], "Scale");
  EXPECT_EQ(scale.body["apiVersion"], "autoscaling/v1");
  EXPECT_EQ(scale.body["metadata"]["name"], "web");
  EXPECT_EQ(scale.body["metadata"]["namespace"], "default");
  EXPECT_EQ(scale.body["spec"]["replicas"], 3);
  EXPECT_EQ(scale.body["status"]["replicas"], 0);
  EXPECT_EQ(scale.body["status"]["selector"], "app=web,tier in (a,b)");

  // `kubectl scale` sends a merge patch of the Scale.
  Reply patched = Do(http::verb::patch, scale_path, R"({"spec":{"replicas":5}})",
                     "application/merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.body.dump();
  EXPECT_EQ(patched.body["spec"]["replicas"], 5);
  Reply stored = Do(http::verb::get, std::string(kDeployments) + "/web");
  EXPECT_EQ(stored.body["spec"]["replicas"], 5);
  EXPECT_EQ(stored.body["spec"]["template"]["spec"]["containers"][0]["image"], "nginx");
  EXPECT_EQ(patched.body["metadata"]["resourceVersion"],
            stored.body["metadata"]["resourceVersion"]);

  // PUT with the Scale's resourceVersion as precondition: a stale one is a conflict.
  Json put = patched.body;
  put["spec"]["replicas"] = 2;
  Reply updated = Do(http::verb::put, scale_path, put.dump());
  ASSERT_EQ(updated.status, 200) << updated.body.dump();
  EXPECT_EQ(updated.body["spec"]["replicas"], 2);
  put["spec"]["replicas"] = 9;
  EXPECT_EQ(Do(http::verb::put, scale_path, put.dump()).status, 409);
  EXPECT_EQ(Do(http::verb::get, scale_path).body["spec"]["replicas"], 2);

  // A JSON patch works too; a negative count is rejected naming the field.
  Reply json_patched =
      Do(http::verb::patch, scale_path, R"([{"op":"replace","path":"/spec/replicas","value":0}])",
         "application/json-patch+json");
  EXPECT_EQ(json_patched.body["spec"]["replicas"], 0);
  Reply negative = Do(http::verb::patch, scale_path, R"({"spec":{"replicas":-1}})",
                      "application/merge-patch+json");
  EXPECT_EQ(negative.status, 422);
  EXPECT_NE(negative.body["message"].get<std::string>().find("spec.replicas"), std::string::npos)
      << negative.body.dump();
  EXPECT_EQ(Do(http::verb::patch, scale_path, "not json", "application/merge-patch+json").status,
            400);
  EXPECT_EQ(Do(http::verb::delete_, scale_path).status, 405);
  EXPECT_EQ(Do(http::verb::get, std::string(kDeployments) + "/none/scale").status, 404);
  // Kinds without replicas have no scale.
  EXPECT_EQ(Do(http::verb::get, std::string(kPods) + "/p/scale").status, 404);

  Restart();
  EXPECT_EQ(Do(http::verb::get, scale_path).body["spec"]["replicas"], 0);
}

TEST_F(ServerWorkloadsTest, ScaleOfAReplicationControllerWithoutReplicas) {
  ASSERT_EQ(Do(http::verb::post, "/api/v1/namespaces/default/replicationcontrollers",
               R"({"apiVersion":"v1","kind":"ReplicationController","metadata":{"name":"rc"},
                   "spec":{"selector":{"b":"2","a":"1"},"template":{"metadata":{"labels":
                   {"a":"1","b":"2"}},"spec":{"containers":[{"name":"c","image":"x"}]}}}})")
                .status,
            201);
  Reply scale = Do(http::verb::get, "/api/v1/namespaces/default/replicationcontrollers/rc/scale");
  ASSERT_EQ(scale.status, 200) << scale.body.dump();
  EXPECT_EQ(scale.body["spec"]["replicas"], 1);
  EXPECT_EQ(scale.body["status"]["selector"], "a=1,b=2");
}

TEST_F(ServerWorkloadsTest, ReviewsAnswerForTheAdmin) {
  Reply can = Do(http::verb::post, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                 R"({"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview",
                     "spec":{"resourceAttributes":{"verb":"create","resource":"pods",
                     "namespace":"default"}}})");
  ASSERT_EQ(can.status, 201) << can.body.dump();
  EXPECT_EQ(can.body["status"]["allowed"], true);
  EXPECT_EQ(can.body["spec"]["resourceAttributes"]["verb"], "create");
  Reply who = Do(http::verb::post, "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                 R"({"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"})");
  ASSERT_EQ(who.status, 201) << who.body.dump();
  EXPECT_EQ(who.body["status"]["userInfo"]["username"], "berth-admin");
  // Nothing is stored; the review kinds cannot be read or listed.
  EXPECT_EQ(Do(http::verb::get, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews").status,
            405);
  EXPECT_EQ(Do(http::verb::post, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
               R"({"kind":"SelfSubjectAccessReview"})")
                .status,
            422);
  EXPECT_EQ(
      Do(http::verb::post, "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", "[1]").status,
      400);
}

TEST_F(ServerWorkloadsTest, LogsSayWhyThereAreNone) {
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("p")).status, 201);
  Reply log = Do(http::verb::get, std::string(kPods) + "/p/log");
  EXPECT_EQ(log.status, 400);
  EXPECT_NE(log.body["message"].get<std::string>().find(
                "container \"c\" in pod \"p\" is waiting to start"),
            std::string::npos)
      << log.body.dump();
  // A started container (a simulated kubelet's) has a log, empty.
  ASSERT_EQ(Do(http::verb::patch, std::string(kPods) + "/p/status",
               R"({"status":{"containerStatuses":[{"name":"c","state":{"running":{}}}]}})",
               "application/merge-patch+json")
                .status,
            200);
  EXPECT_EQ(Do(http::verb::get, std::string(kPods) + "/p/log").status, 200);
  EXPECT_EQ(Do(http::verb::get, std::string(kPods) + "/none/log").status, 404);
  EXPECT_EQ(Do(http::verb::post, std::string(kPods) + "/p/log", "{}").status, 405);
}

TEST(DiscoveryTest, WorkloadsAreInTheAllCategoryAndScaleIsDescribed) {
  for (const char* accept :
       {"application/json",
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}) {
    auto apps = DiscoveryDocument(
        std::string_view(accept) == "application/json" ? "/apis/apps/v1" : "/apis", accept,
        "127.0.0.1", 6443);
    ASSERT_TRUE(apps.has_value()) << accept;
    const std::string text = apps->body.dump();
    EXPECT_NE(text.find(R"("categories":["all"])"), std::string::npos) << accept;
    EXPECT_NE(text.find(R"("Scale")"), std::string::npos) << accept;
    EXPECT_NE(text.find(R"("autoscaling")"), std::string::npos) << accept;
  }
  auto core = DiscoveryDocument("/api/v1", "application/json", "127.0.0.1", 6443);
  ASSERT_TRUE(core.has_value());
  bool pods_in_all = false, nodes_in_all = false;
  for (const auto& r : core->body["resources"]) {
    const bool all = r.contains("categories");
    if (r["name"] == "pods") pods_in_all = all;
    if (r["name"] == "nodes") nodes_in_all = all;
  }
  EXPECT_TRUE(pods_in_all);
  EXPECT_FALSE(nodes_in_all);
}

TEST(TableTest, WorkloadAndServiceColumns) {
  const ResourceInfo* deployments = FindResource("apps", "v1", "deployments");
  ASSERT_NE(deployments, nullptr);
  Json deploy = Json::parse(Deployment("web", "3"));
  deploy["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z";
  deploy["status"] = {{"readyReplicas", 2}, {"updatedReplicas", 3}, {"availableReplicas", 2}};
  Json t = ToTable(*deployments, {&deploy}, 1, IncludeObject::kNone, 1767225600 + 120);
  EXPECT_EQ(t["columnDefinitions"][1]["name"], "Ready");
  EXPECT_EQ(t["rows"][0]["cells"],
            (Json{"web", "2/3", 3, 2, "2m", "c", "nginx", "app=web,tier in (a,b)"}));

  const ResourceInfo* services = FindResource("", "v1", "services");
  ASSERT_NE(services, nullptr);
  Json svc = {{"metadata", {{"name", "front"}, {"creationTimestamp", "2026-01-01T00:00:00Z"}}},
              {"spec",
               {{"type", "NodePort"},
                {"clusterIP", "10.0.0.7"},
                {"selector", {{"app", "web"}}},
                {"ports",
                 {{{"port", 80}, {"nodePort", 30080}, {"protocol", "TCP"}},
                  {{"port", 53}, {"protocol", "UDP"}}}}}}};
  Json s = ToTable(*services, {&svc}, 1, IncludeObject::kNone, 1767225600 + 10);
  EXPECT_EQ(s["rows"][0]["cells"], (Json{"front", "NodePort", "10.0.0.7", "<none>",
                                         "80:30080/TCP,53/UDP", "10s", "app=web"}));
}

TEST(TableTest, ConfigAndPolicyKindsShowTheirColumns) {
  const int64_t now = 1767225600 + 60;
  auto row = [&](const char* group, const char* plural, Json obj) {
    obj["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z";
    return ToTable(*FindResource(group, "v1", plural), {&obj}, 1, IncludeObject::kNone,
                   now)["rows"][0]["cells"];
  };
  EXPECT_EQ(
      row("", "configmaps", {{"metadata", {{"name", "c"}}}, {"data", {{"a", "1"}, {"b", "2"}}}}),
      (Json{"c", 2, "60s"}));
  EXPECT_EQ(row("", "secrets",
                {{"metadata", {{"name", "s"}}}, {"type", "Opaque"}, {"data", {{"a", "MQ=="}}}}),
            (Json{"s", "Opaque", 1, "60s"}));
  EXPECT_EQ(row("scheduling.k8s.io", "priorityclasses",
                {{"metadata", {{"name", "hi"}}},
                 {"value", 1000},
                 {"globalDefault", true},
                 {"preemptionPolicy", "Never"}}),
            (Json{"hi", 1000, true, "60s", "Never"}));
  EXPECT_EQ(row("policy", "poddisruptionbudgets",
                {{"metadata", {{"name", "b"}}},
                 {"spec", {{"maxUnavailable", 1}}},
                 {"status", {{"disruptionsAllowed", 1}}}}),
            (Json{"b", "N/A", "1", 1, "60s"}));
  EXPECT_EQ(row("storage.k8s.io", "storageclasses",
                {{"metadata",
                  {{"name", "fast"},
                   {"annotations", {{"storageclass.kubernetes.io/is-default-class", "true"}}}}},
                 {"provisioner", "example.com/csi"},
                 {"volumeBindingMode", "WaitForFirstConsumer"}}),
            (Json{"fast (default)", "example.com/csi", "Delete", "WaitForFirstConsumer", "false",
                  "60s"}));
  EXPECT_EQ(row("", "persistentvolumes",
                {{"metadata", {{"name", "pv1"}}},
                 {"spec",
                  {{"capacity", {{"storage", "2Gi"}}},
                   {"accessModes", {"ReadWriteOnce", "ReadOnlyMany"}},
                   {"persistentVolumeReclaimPolicy", "Retain"},
                   {"storageClassName", "manual"},
                   {"volumeMode", "Filesystem"},
                   {"claimRef", {{"namespace", "default"}, {"name", "data"}}}}},
                 {"status", {{"phase", "Bound"}}}}),
            (Json{"pv1", "2Gi", "RWO,ROX", "Retain", "Bound", "default/data", "manual", "<unset>",
                  "", "60s", "Filesystem"}));
  EXPECT_EQ(row("", "persistentvolumeclaims",
                {{"metadata", {{"name", "data"}}},
                 {"spec", {{"storageClassName", "manual"}, {"volumeName", "pv1"}}},
                 {"status",
                  {{"phase", "Bound"},
                   {"capacity", {{"storage", "2Gi"}}},
                   {"accessModes", {"ReadWriteOnce"}}}}}),
            (Json{"data", "Bound", "pv1", "2Gi", "RWO", "manual", "<unset>", "60s", ""}));
  EXPECT_EQ(
      row("batch", "jobs",
          {{"metadata", {{"name", "pi"}}},
           {"spec",
            {{"completions", 3},
             {"selector", {{"matchLabels", {{"job-name", "pi"}}}}},
             {"template", {{"spec", {{"containers", {{{"name", "c"}, {"image", "perl"}}}}}}}}}},
           {"status", {{"succeeded", 1}}}}),
      (Json{"pi", "Running", "1/3", "", "60s", "c", "perl", "job-name=pi"}));
  EXPECT_EQ(row("networking.k8s.io", "ingresses",
                {{"metadata", {{"name", "web"}}},
                 {"spec",
                  {{"ingressClassName", "nginx"},
                   {"rules", {{{"host", "a.com"}}, Json::object()}},
                   {"tls", {{{"hosts", {"a.com"}}}}}}}}),
            (Json{"web", "nginx", "a.com,*", "", "80, 443", "60s"}));
  EXPECT_EQ(row("coordination.k8s.io", "leases",
                {{"metadata", {{"name", "l"}}}, {"spec", {{"holderIdentity", "berth-1"}}}}),
            (Json{"l", "berth-1", "60s"}));
  EXPECT_EQ(row("storage.k8s.io", "volumeattachments",
                {{"metadata", {{"name", "csi-1"}}},
                 {"spec",
                  {{"attacher", "hostpath.csi.k8s.io"},
                   {"nodeName", "n1"},
                   {"source", {{"persistentVolumeName", "pv1"}}}}},
                 {"status", {{"attached", true}}}}),
            (Json{"csi-1", "hostpath.csi.k8s.io", "pv1", "n1", true, "60s"}));
  EXPECT_EQ(row("storage.k8s.io", "volumeattachments",
                {{"metadata", {{"name", "csi-2"}}},
                 {"spec", {{"attacher", "a"}, {"nodeName", "n2"}, {"source", Json::object()}}}}),
            (Json{"csi-2", "a", "", "n2", false, "60s"}));
}

TEST(FormatSelectorTest, AsKubeApiserverPrintsSelectors) {
  EXPECT_EQ(FormatSelector(Json::object()), "");
  EXPECT_EQ(FormatSelector(Json{{"b", "2"}, {"a", "1"}}), "a=1,b=2");
  EXPECT_EQ(FormatSelector(Json::parse(R"({"matchExpressions":[
      {"key":"z","operator":"Exists"},{"key":"y","operator":"DoesNotExist"},
      {"key":"x","operator":"NotIn","values":["q","p"]}],"matchLabels":{"w":"1"}})")),
            "w=1,x notin (p,q),!y,z");
}

}  // namespace
}  // namespace berth::apiserver
