// API semantics operators rely on without thinking about them: dry-run and preconditions of
// deletes, the namespaces that cannot be deleted, eviction under PodDisruptionBudgets, the
// fields an update may not change, the API's defaults, strategic-merge keys that depend on the
// list, field selectors over unset booleans, and what a cluster holds from its first start.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/namespace_deleter.h"
#include "apiserver/server_test_fixture.h"

namespace berth::apiserver {
namespace {

namespace http = boost::beast::http;
using testing::Json;
using testing::Reply;
using ServerSemanticsTest = testing::ServerHttpTest;

constexpr const char* kConfigMaps = "/api/v1/namespaces/default/configmaps";

TEST_F(ServerSemanticsTest, DeleteHonoursDryRunAndPreconditionsInTheBody) {
  ASSERT_EQ(
      Do(http::verb::post, kConfigMaps, R"({"metadata":{"name":"q"},"data":{"a":"1"}})").status,
      201);
  const std::string path = std::string(kConfigMaps) + "/q";
  // `kubectl delete --dry-run=server` puts dryRun in the DeleteOptions body.
  Reply dry =
      Do(http::verb::delete_, path, R"({"propagationPolicy":"Background","dryRun":["All"]})");
  EXPECT_EQ(dry.status, 200) << dry.body.dump();
  EXPECT_EQ(Do(http::verb::get, path).status, 200);
  EXPECT_EQ(Do(http::verb::delete_, path, R"({"dryRun":["Some"]})").status, 400);
  Reply stale = Do(http::verb::delete_, path, R"({"preconditions":{"resourceVersion":"1"}})");
  EXPECT_EQ(stale.status, 409) << stale.body.dump();
  EXPECT_EQ(Do(http::verb::get, path).status, 200);
  // Deleting a collection with dryRun in the body deletes nothing either.
  EXPECT_EQ(Do(http::verb::delete_, kConfigMaps, R"({"dryRun":["All"]})").status, 200);
  EXPECT_EQ(Do(http::verb::get, path).status, 200);
  EXPECT_EQ(Do(http::verb::delete_, path, "").status, 200);
  EXPECT_EQ(Do(http::verb::get, path).status, 404);
}

TEST_F(ServerSemanticsTest, AUidInAnUpdateIsAPreconditionAndCannotBePatched) {
  Reply made = Do(http::verb::post, kConfigMaps, R"({"metadata":{"name":"u"},"data":{"a":"1"}})");
  ASSERT_EQ(made.status, 201);
  const std::string uid = made.body["metadata"]["uid"];
  const std::string path = std::string(kConfigMaps) + "/u";
  // An update naming another object's UID (one of the same name deleted meanwhile) is refused.
  Reply put = Do(http::verb::put, path, R"({"metadata":{"name":"u","uid":"other"},"data":{}})");
  EXPECT_EQ(put.status, 409) << put.body.dump();
  EXPECT_EQ(put.body["message"],
            "Operation cannot be fulfilled on configmaps \"u\": StorageError: invalid object, "
            "Code: 4, Key: /registry/configmaps/default/u, ResourceVersion: 0, "
            "AdditionalErrorMsg: Precondition failed: UID in precondition: other, UID in object "
            "meta: " +
                uid);
  // A patch setting it changes an immutable field, on the object and on a status subresource.
  Reply patch = Do(http::verb::patch, path, R"({"metadata":{"uid":"other"}})",
                   "application/merge-patch+json");
  EXPECT_EQ(patch.status, 422) << patch.body.dump();
  EXPECT_EQ(patch.body["message"],
            "ConfigMap \"u\" is invalid: metadata.uid: Invalid value: \"other\": field is "
            "immutable");
  ASSERT_EQ(Do(http::verb::post, "/api/v1/namespaces/default/pods",
               R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}})")
                .status,
            201);
  Reply status = Do(http::verb::patch, "/api/v1/namespaces/default/pods/p/status",
                    R"({"metadata":{"uid":"other"},"status":{"phase":"Failed"}})",
                    "application/strategic-merge-patch+json");
  EXPECT_EQ(status.status, 422) << status.body.dump();
  EXPECT_EQ(
      Do(http::verb::get, "/api/v1/namespaces/default/pods/p").body["status"].value("phase", ""),
      "Pending");
  // The object's own UID is accepted in both.
  EXPECT_EQ(Do(http::verb::put, path,
               R"({"metadata":{"name":"u","uid":")" + uid + R"("},"data":{"b":"2"}})")
                .status,
            200);
  EXPECT_EQ(Do(http::verb::patch, path, R"({"metadata":{"uid":")" + uid + R"("},"data":{"c":"3"}})",
               "application/merge-patch+json")
                .status,
            200);
  EXPECT_EQ(Do(http::verb::get, path).body["data"], nlohmann::json({{"b", "2"}, {"c", "3"}}));
}

TEST_F(ServerSemanticsTest, TheBuiltInNamespacesCannotBeDeleted) {
  for (const char* ns : {"default", "kube-system", "kube-public"}) {
    Reply r = Do(http::verb::delete_, std::string("/api/v1/namespaces/") + ns);
    EXPECT_EQ(r.status, 403) << ns;
    EXPECT_EQ(r.body["message"], std::string("namespaces \"") + ns +
                                     "\" is forbidden: this namespace may not be deleted");
    EXPECT_EQ(Do(http::verb::get, std::string("/api/v1/namespaces/") + ns).status, 200);
  }
  ASSERT_EQ(Do(http::verb::post, "/api/v1/namespaces", R"({"metadata":{"name":"scratch"}})").status,
            201);
  EXPECT_EQ(Do(http::verb::delete_, "/api/v1/namespaces").status, 200);
  // Terminating until the namespace deleter has emptied it.
  ASSERT_TRUE(server_->namespace_deleter().WaitIdle(std::chrono::seconds(30)));
  EXPECT_EQ(Do(http::verb::get, "/api/v1/namespaces/scratch").status, 404);
  EXPECT_EQ(Do(http::verb::get, "/api/v1/namespaces/kube-system").status, 200);
  // A 404 outside any resource still carries details (kubectl reads them unchecked).
  Reply unknown = Do(http::verb::get, "/api/v1/namespaces/default/nothings");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_TRUE(unknown.body.contains("details"));
}

// ClearingNominatedNodeNameAfterBinding: the binding clears the pod's nomination.
TEST_F(ServerSemanticsTest, BindingClearsTheNominatedNodeName) {
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("nom")).status, 201);
  const std::string path = std::string(kPods) + "/nom";
  ASSERT_EQ(Do(http::verb::patch, path + "/status", R"({"status":{"nominatedNodeName":"n1"}})",
               "application/merge-patch+json")
                .status,
            200);
  EXPECT_EQ(Do(http::verb::get, path).body["status"]["nominatedNodeName"], "n1");
  ASSERT_EQ(Do(http::verb::post, path + "/binding",
               R"({"metadata":{"name":"nom"},"target":{"kind":"Node","name":"n1"}})")
                .status,
            201);
  Reply bound = Do(http::verb::get, path);
  EXPECT_EQ(bound.body["spec"]["nodeName"], "n1");
  EXPECT_FALSE(bound.body["status"].contains("nominatedNodeName")) << bound.body.dump();
}

// kubectl drain evicts in parallel: evictions racing for a budget's disruptions spend no more
// than it allows, and the rest are told to retry (429), as kube-apiserver's atomic
// check-and-decrement of the budget does; the budget never goes negative.
TEST_F(ServerSemanticsTest, ConcurrentEvictionsSpendABudgetOnlyAsFarAsItAllows) {
  constexpr int kPodsToEvict = 8;
  for (int i = 0; i < kPodsToEvict; ++i) {
    const std::string name = "w" + std::to_string(i);
    ASSERT_EQ(
        Do(http::verb::post, kPods, R"({"metadata":{"name":")" + name + R"(","labels":{"app":"w"}},
                     "spec":{"containers":[{"name":"c","image":"x"}]}})")
            .status,
        201);
    ASSERT_EQ(
        Do(http::verb::patch, std::string(kPods) + "/" + name + "/status",
           R"({"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}})",
           "application/merge-patch+json")
            .status,
        200);
  }
  ASSERT_EQ(Do(http::verb::post, "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
               R"({"metadata":{"name":"w"},"spec":{"maxUnavailable":2,
                   "selector":{"matchLabels":{"app":"w"}}}})")
                .status,
            201);
  ASSERT_EQ(
      Do(http::verb::patch, "/apis/policy/v1/namespaces/default/poddisruptionbudgets/w/status",
         R"({"status":{"observedGeneration":1,"disruptionsAllowed":2,
                   "currentHealthy":8,"desiredHealthy":6,"expectedPods":8}})",
         "application/merge-patch+json")
          .status,
      200);
  std::vector<int> statuses(kPodsToEvict, 0);
  std::vector<std::thread> evictions;
  for (int i = 0; i < kPodsToEvict; ++i) {
    evictions.emplace_back([&, i] {
      const std::string name = "w" + std::to_string(i);
      statuses[i] = Do(http::verb::post, std::string(kPods) + "/" + name + "/eviction",
                       R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":")" +
                           name + R"("}})")
                        .status;
    });
  }
  for (auto& t : evictions) t.join();
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 201), 2);
  EXPECT_EQ(std::count(statuses.begin(), statuses.end(), 429), kPodsToEvict - 2);
  Reply budget = Do(http::verb::get, "/apis/policy/v1/namespaces/default/poddisruptionbudgets/w");
  EXPECT_EQ(budget.body["status"]["disruptionsAllowed"], 0);
  EXPECT_EQ(budget.body["status"]["disruptedPods"].size(), 2u);
}

TEST_F(ServerSemanticsTest, EvictionRespectsDisruptionBudgets) {
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("web")).status, 201);
  Reply running =
      Do(http::verb::patch, std::string(kPods) + "/web/status",
         R"({"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}})",
         "application/merge-patch+json");
  ASSERT_EQ(running.status, 200) << running.body.dump();
  // A budget no controller has processed blocks the eviction of a running pod it selects.
  ASSERT_EQ(Do(http::verb::post, "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
               R"({"metadata":{"name":"b"},"spec":{"maxUnavailable":0,
                   "selector":{"matchLabels":{"app":"web"}}}})")
                .status,
            201);
  ASSERT_EQ(Do(http::verb::patch, std::string(kPods) + "/web",
               R"({"metadata":{"labels":{"app":"web"}}})", "application/merge-patch+json")
                .status,
            200);
  const std::string evict = std::string(kPods) + "/web/eviction";
  const std::string body =
      R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"web"}})";
  Reply blocked = Do(http::verb::post, evict, body);
  EXPECT_EQ(blocked.status, 429) << blocked.body.dump();
  EXPECT_EQ(blocked.body["message"],
            "Cannot evict pod as it would violate the pod's disruption budget.");
  EXPECT_EQ(blocked.body["details"]["causes"][0]["reason"], "DisruptionBudget");
  EXPECT_EQ(blocked.body["details"]["causes"][0]["message"],
            "The disruption budget b is still being processed by the server.");
  const std::string budget_status =
      "/apis/policy/v1/namespaces/default/poddisruptionbudgets/b/status";
  ASSERT_EQ(Do(http::verb::patch, budget_status,
               R"({"status":{"observedGeneration":1,"disruptionsAllowed":0,
                   "currentHealthy":1,"desiredHealthy":1,"expectedPods":1}})",
               "application/merge-patch+json")
                .status,
            200);
  Reply none_allowed = Do(http::verb::post, evict, body);
  EXPECT_EQ(none_allowed.status, 429);
  EXPECT_EQ(none_allowed.body["details"]["causes"][0]["message"],
            "The disruption budget b needs 1 healthy pods and has 1 currently");
  EXPECT_EQ(Do(http::verb::get, std::string(kPods) + "/web").status, 200);

  ASSERT_EQ(Do(http::verb::patch, budget_status, R"({"status":{"disruptionsAllowed":1}})",
               "application/merge-patch+json")
                .status,
            200);
  Reply dry = Do(http::verb::post, evict + "?dryRun=All", body);
  EXPECT_EQ(dry.status, 201);
  EXPECT_EQ(Do(http::verb::get, std::string(kPods) + "/web").status, 200);
  Reply evicted = Do(http::verb::post, evict, body);
  EXPECT_EQ(evicted.status, 201) << evicted.body.dump();
  EXPECT_EQ(Do(http::verb::get, std::string(kPods) + "/web").status, 404);
  Reply spent = Do(http::verb::get, "/apis/policy/v1/namespaces/default/poddisruptionbudgets/b");
  EXPECT_EQ(spent.body["status"]["disruptionsAllowed"], 0);
  EXPECT_TRUE(spent.body["status"]["disruptedPods"].contains("web"));

  // An unready running pod under an AlwaysAllow budget goes without spending it.
  ASSERT_EQ(Do(http::verb::post, kPods,
               R"({"metadata":{"name":"sick","labels":{"app":"sick"}},
                   "spec":{"containers":[{"name":"c","image":"x"}]}})")
                .status,
            201);
  ASSERT_EQ(Do(http::verb::patch, std::string(kPods) + "/sick/status",
               R"({"status":{"phase":"Running"}})", "application/merge-patch+json")
                .status,
            200);
  ASSERT_EQ(Do(http::verb::post, "/apis/policy/v1/namespaces/default/poddisruptionbudgets",
               R"({"metadata":{"name":"lenient"},"spec":{"maxUnavailable":0,
                   "unhealthyPodEvictionPolicy":"AlwaysAllow",
                   "selector":{"matchLabels":{"app":"sick"}}}})")
                .status,
            201);
  EXPECT_EQ(Do(http::verb::post, std::string(kPods) + "/sick/eviction", body).status, 201);

  // A pending pod is evicted without looking at budgets.
  ASSERT_EQ(Do(http::verb::post, kPods,
               R"({"metadata":{"name":"p","labels":{"app":"web"}},
                   "spec":{"containers":[{"name":"c","image":"x"}]}})")
                .status,
            201);
  EXPECT_EQ(Do(http::verb::post, std::string(kPods) + "/p/eviction", body).status, 201);
}

TEST_F(ServerSemanticsTest, PodUpdatesMayChangeOnlyWhatTheApiAllows) {
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("web")).status, 201);
  const std::string path = std::string(kPods) + "/web";
  const std::string merge = "application/merge-patch+json";
  for (const char* patch : {R"({"spec":{"nodeName":"n1"}})", R"({"spec":{"schedulerName":"x"}})",
                            R"({"spec":{"containers":[{"name":"c","image":"x","resources":
                                {"requests":{"cpu":"1"}}}]}})"}) {
    Reply r = Do(http::verb::patch, path, patch, merge);
    EXPECT_EQ(r.status, 422) << patch;
    EXPECT_NE(r.body["message"].get<std::string>().find(
                  "spec: Forbidden: pod updates may not change fields other than"),
              std::string::npos);
  }
  EXPECT_EQ(Do(http::verb::patch, path, R"({"spec":{"containers":[{"name":"c","image":"y"}]}})",
               "application/strategic-merge-patch+json")
                .status,
            200);
  // Tolerations may be added. The list has no merge key, so a strategic patch replaces it; the
  // admission's two come back, as kube-apiserver's admission adds them on updates too.
  EXPECT_EQ(Do(http::verb::patch, path, R"({"spec":{"tolerations":[{"key":"k"}]}})",
               "application/strategic-merge-patch+json")
                .status,
            200);
  Reply added = Do(http::verb::patch, path,
                   R"([{"op":"add","path":"/spec/tolerations/-","value":{"key":"k",
                       "operator":"Exists"}}])",
                   "application/json-patch+json");
  EXPECT_EQ(added.status, 200) << added.body.dump();
  EXPECT_EQ(Do(http::verb::patch, path, R"({"metadata":{"labels":{"a":"b"}}})", merge).status, 200);
  // An update compares as typed objects do: defaulted fields left out, empty lists, quantities
  // in another spelling.
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("fresh")).status, 201);
  const std::string fresh = std::string(kPods) + "/fresh";
  Reply stored = Do(http::verb::get, fresh);
  Json put = stored.body;
  put["spec"].erase("tolerations");
  put["spec"].erase("schedulerName");
  put["spec"].erase("priority");
  put["spec"]["volumes"] = Json::array();
  put["metadata"]["labels"]["c"] = "d";
  Reply replaced = Do(http::verb::put, fresh, put.dump());
  EXPECT_EQ(replaced.status, 200) << replaced.body.dump();
  EXPECT_EQ(replaced.body["spec"]["priority"], stored.body["spec"]["priority"]);
  EXPECT_EQ(replaced.body["spec"]["tolerations"].size(), stored.body["spec"]["tolerations"].size());
  ASSERT_EQ(Do(http::verb::post, kPods,
               PodJson("q", "", R"(,"resources":{"requests":{"cpu":0.5,"memory":"1e3"}})"))
                .status,
            201);
  Reply q = Do(http::verb::get, std::string(kPods) + "/q");
  q.body["spec"]["containers"][0]["resources"]["requests"] = {{"cpu", "500m"}, {"memory", "1k"}};
  EXPECT_EQ(Do(http::verb::put, std::string(kPods) + "/q", q.body.dump()).status, 200);
  q.body["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "600m";
  EXPECT_EQ(Do(http::verb::put, std::string(kPods) + "/q", q.body.dump()).status, 422);
  // The binding still places the pod.
  EXPECT_EQ(Do(http::verb::post, path + "/binding",
               R"({"metadata":{"name":"web"},"target":{"kind":"Node","name":"n1"}})")
                .status,
            201);
  // A PriorityClass's value is fixed too.
  ASSERT_EQ(Do(http::verb::post, "/apis/scheduling.k8s.io/v1/priorityclasses",
               R"({"metadata":{"name":"hi"},"value":10})")
                .status,
            201);
  EXPECT_EQ(Do(http::verb::patch, "/apis/scheduling.k8s.io/v1/priorityclasses/hi",
               R"({"value":11})", merge)
                .status,
            422);
}

// A value of the wrong type in a body is the client's error (400), named as kube-apiserver
// names it, not an internal one.
TEST_F(ServerSemanticsTest, ValuesOfTheWrongTypeAreBadRequests) {
  for (const char* spec :
       {R"("containers":[{"name":"c","image":5}])",
        R"("containers":[{"name":"c","image":"x"}],"tolerations":[{"key":5}])"}) {
    Reply r = Do(http::verb::post, kPods,
                 std::string(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"typed"},)") +
                     R"("spec":{)" + spec + "}}");
    EXPECT_EQ(r.status, 400) << spec << " " << r.body.dump();
    EXPECT_EQ(r.body["reason"], "BadRequest");
    const std::string message = r.body.value("message", "");
    EXPECT_EQ(message.rfind("Pod in version \"v1\" cannot be handled as a Pod: json: cannot "
                            "unmarshal number into Go struct field ",
                            0),
              0u)
        << message;
  }
  EXPECT_EQ(Do(http::verb::get, std::string(kPods) + "/typed").status, 404);
}

// Conditions of another shape are refused when written, so no list or binding meets them.
TEST_F(ServerSemanticsTest, PodWithConditionsOfAnotherShapeIsRefused) {
  Reply created =
      Do(http::verb::post, kPods,
         R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"odd"},"spec":{"containers":)"
         R"([{"name":"c","image":"x"}]},"status":{"conditions":["x",{"type":5}]}})");
  EXPECT_EQ(created.status, 400) << created.body.dump();
  EXPECT_EQ(Do(http::verb::get, std::string(kPods) + "/odd").status, 404);
}

TEST_F(ServerSemanticsTest, PodsGetTheApiDefaultsThatSchedulingReads) {
  Reply created = Do(http::verb::post, kPods,
                     PodJson("host", R"("hostNetwork":true,)",
                             R"(,"ports":[{"containerPort":8080}],"resources":{"limits":
                                {"cpu":"2","memory":"1Gi"},"requests":{"cpu":"1"}})"));
  ASSERT_EQ(created.status, 201) << created.body.dump();
  const Json& spec = created.body["spec"];
  const Json& c = spec["containers"][0];
  EXPECT_EQ(c["resources"]["requests"], Json::parse(R"({"cpu":"1","memory":"1Gi"})"));
  EXPECT_EQ(c["ports"][0]["hostPort"], 8080);
  EXPECT_EQ(c["ports"][0]["protocol"], "TCP");
  EXPECT_EQ(spec["serviceAccountName"], "default");
  EXPECT_EQ(spec["enableServiceLinks"], true);
  ASSERT_EQ(spec["tolerations"].size(), 2u);
  EXPECT_EQ(spec["tolerations"][0],
            Json::parse(R"({"key":"node.kubernetes.io/not-ready","operator":"Exists",
                           "effect":"NoExecute","tolerationSeconds":300})"));
  EXPECT_EQ(spec["tolerations"][1]["key"], "node.kubernetes.io/unreachable");
  EXPECT_EQ(created.body["status"]["qosClass"], "Burstable");
  // A toleration the pod has already covers its default: the pod's own is kept, the other
  // default added; one with no key and no effect tolerates everything, and gets neither.
  Reply own = Do(http::verb::post, kPods,
                 PodJson("own", R"("tolerations":[{"key":"node.kubernetes.io/not-ready",
                                   "operator":"Exists","effect":"NoExecute",
                                   "tolerationSeconds":5}],)"));
  ASSERT_EQ(own.status, 201) << own.body.dump();
  ASSERT_EQ(own.body["spec"]["tolerations"].size(), 2u);
  EXPECT_EQ(own.body["spec"]["tolerations"][0]["tolerationSeconds"], 5);
  EXPECT_EQ(own.body["spec"]["tolerations"][1]["key"], "node.kubernetes.io/unreachable");
  Reply all =
      Do(http::verb::post, kPods, PodJson("all", R"("tolerations":[{"operator":"Exists"}],)"));
  ASSERT_EQ(all.status, 201) << all.body.dump();
  EXPECT_EQ(all.body["spec"]["tolerations"], Json::parse(R"([{"operator":"Exists"}])"));
  // Quantities are stored in canonical form.
  Reply canonical =
      Do(http::verb::post, kPods, PodJson("canon", "", R"(,"resources":{"requests":{"cpu":0.5,
                           "memory":"2048Ki"}})"));
  ASSERT_EQ(canonical.status, 201) << canonical.body.dump();
  EXPECT_EQ(canonical.body["spec"]["containers"][0]["resources"]["requests"],
            Json::parse(R"({"cpu":"500m","memory":"2Mi"})"));
  // A toleration of every NoExecute taint already covers both.
  Reply tolerant =
      Do(http::verb::post, kPods,
         PodJson("t", R"("tolerations":[{"operator":"Exists","effect":"NoExecute"}],)"));
  ASSERT_EQ(tolerant.status, 201);
  EXPECT_EQ(tolerant.body["spec"]["tolerations"].size(), 1u);
  // The globalDefault class is named on the pod.
  ASSERT_EQ(Do(http::verb::post, "/apis/scheduling.k8s.io/v1/priorityclasses",
               R"({"metadata":{"name":"base"},"value":7,"globalDefault":true})")
                .status,
            201);
  Reply defaulted = Do(http::verb::post, kPods, PodJson("d"));
  EXPECT_EQ(defaulted.body["spec"]["priority"], 7);
  EXPECT_EQ(defaulted.body["spec"]["priorityClassName"], "base");
}

TEST_F(ServerSemanticsTest, StrategicMergeKeysFollowTheList) {
  // A node's taints are replaced whole: `kubectl taint ... key-` sends the remaining list.
  ASSERT_EQ(Do(http::verb::post, "/api/v1/nodes",
               R"({"metadata":{"name":"n1"},"spec":{"taints":[
                   {"key":"a","effect":"NoSchedule"},{"key":"b","effect":"NoSchedule"}]}})")
                .status,
            201);
  Reply untainted = Do(http::verb::patch, "/api/v1/nodes/n1",
                       R"({"spec":{"taints":[{"key":"b","effect":"NoSchedule"}]}})",
                       "application/strategic-merge-patch+json");
  ASSERT_EQ(untainted.status, 200);
  EXPECT_EQ(untainted.body["spec"]["taints"],
            Json::parse(R"([{"key":"b","effect":"NoSchedule"}])"));
  // A service's ports merge by port; a container's by containerPort.
  ASSERT_EQ(Do(http::verb::post, "/api/v1/namespaces/default/services",
               R"({"metadata":{"name":"web"},"spec":{"ports":[{"name":"http","port":80}]}})")
                .status,
            201);
  Reply svc = Do(http::verb::patch, "/api/v1/namespaces/default/services/web",
                 R"({"spec":{"ports":[{"name":"https","port":443}]}})",
                 "application/strategic-merge-patch+json");
  ASSERT_EQ(svc.status, 200);
  ASSERT_EQ(svc.body["spec"]["ports"].size(), 2u);
  EXPECT_EQ(svc.body["spec"]["ports"][1]["port"], 443);
  EXPECT_EQ(svc.body["spec"]["type"], "ClusterIP");
  EXPECT_EQ(svc.body["spec"]["ports"][0]["targetPort"], 80);
}

TEST_F(ServerSemanticsTest, FieldSelectorsTreatUnsetBooleansAsFalse) {
  ASSERT_EQ(Do(http::verb::post, "/api/v1/nodes", R"({"metadata":{"name":"a"}})").status, 201);
  ASSERT_EQ(Do(http::verb::post, "/api/v1/nodes",
               R"({"metadata":{"name":"b"},"spec":{"unschedulable":true}})")
                .status,
            201);
  Reply schedulable = Do(http::verb::get, "/api/v1/nodes?fieldSelector=spec.unschedulable%3Dfalse");
  ASSERT_EQ(schedulable.status, 200);
  ASSERT_EQ(schedulable.body["items"].size(), 1u);
  EXPECT_EQ(schedulable.body["items"][0]["metadata"]["name"], "a");
  ASSERT_EQ(Do(http::verb::post, "/api/v1/namespaces/default/secrets",
               R"({"metadata":{"name":"s"},"stringData":{"a":"b"}})")
                .status,
            201);
  // stringData is written into data, base64, and not kept.
  Reply stored = Do(http::verb::get, "/api/v1/namespaces/default/secrets/s");
  EXPECT_EQ(stored.body["data"], Json::parse(R"({"a":"Yg=="})"));
  EXPECT_FALSE(stored.body.contains("stringData"));
  Reply opaque =
      Do(http::verb::get, "/api/v1/namespaces/default/secrets?fieldSelector=type%3DOpaque");
  ASSERT_EQ(opaque.status, 200) << opaque.body.dump();
  EXPECT_EQ(opaque.body["items"].size(), 1u);
}

TEST_F(ServerSemanticsTest, AClusterStartsWithWhatKubeApiserverCreates) {
  EXPECT_EQ(Do(http::verb::get, "/apis/scheduling.k8s.io/v1/priorityclasses/system-node-critical")
                .body["value"],
            2000001000);
  EXPECT_EQ(
      Do(http::verb::get, "/apis/rbac.authorization.k8s.io/v1/clusterroles/cluster-admin").status,
      200);
  EXPECT_EQ(Do(http::verb::get, "/api/v1/namespaces/default/services/kubernetes").status, 200);
  EXPECT_EQ(Do(http::verb::get, "/api/v1/namespaces/kube-system/serviceaccounts/default").status,
            200);
  ASSERT_EQ(Do(http::verb::post, "/api/v1/namespaces", R"({"metadata":{"name":"team"}})").status,
            201);
  EXPECT_EQ(Do(http::verb::get, "/api/v1/namespaces/team/serviceaccounts/default").status, 200);
  // A deleted one stays deleted until the next start.
  ASSERT_EQ(Do(http::verb::delete_, "/api/v1/namespaces/default/services/kubernetes").status, 200);
  EXPECT_EQ(Do(http::verb::get, "/api/v1/namespaces/default/services/kubernetes").status, 404);
  Restart();
  EXPECT_EQ(Do(http::verb::get, "/api/v1/namespaces/default/services/kubernetes").status, 200);
  // `kubectl auth can-i --list`.
  Reply rules = Do(http::verb::post, "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                   R"({"kind":"SelfSubjectRulesReview","spec":{"namespace":"default"}})");
  ASSERT_EQ(rules.status, 201) << rules.body.dump();
  EXPECT_EQ(rules.body["status"]["resourceRules"][0]["verbs"][0], "*");
  // batch/v1 is stored (no controller runs the jobs).
  Reply job = Do(http::verb::post, "/apis/batch/v1/namespaces/default/jobs",
                 R"({"metadata":{"name":"j"},"spec":{"template":{"spec":{"restartPolicy":"Never",
                     "containers":[{"name":"c","image":"busybox"}]}}}})");
  EXPECT_EQ(job.status, 201) << job.body.dump();
  // Its defaults, and a selector that finds its pods only.
  EXPECT_EQ(job.body["spec"]["backoffLimit"], 6);
  EXPECT_EQ(job.body["spec"]["completions"], 1);
  EXPECT_EQ(job.body["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/job-name"], "j");
  EXPECT_EQ(job.body["spec"]["template"]["metadata"]["labels"]["job-name"], "j");
  EXPECT_EQ(job.body["spec"]["template"]["spec"]["schedulerName"], "default-scheduler");
  EXPECT_EQ(Do(http::verb::get, "/apis/batch/v1/namespaces/default/cronjobs").status, 200);
}

TEST_F(ServerSemanticsTest, FinalizersHoldADeletionBackUntilTheLastIsRemoved) {
  ASSERT_EQ(Do(http::verb::post, kConfigMaps,
               R"({"metadata":{"name":"held","finalizers":["example.com/a","example.com/b"]}})")
                .status,
            201);
  const std::string path = std::string(kConfigMaps) + "/held";
  Reply marked = Do(http::verb::delete_, path);
  ASSERT_EQ(marked.status, 200);
  EXPECT_TRUE(marked.body["metadata"].contains("deletionTimestamp"));
  Reply still = Do(http::verb::get, path);
  ASSERT_EQ(still.status, 200);
  EXPECT_EQ(still.body["metadata"]["deletionTimestamp"],
            marked.body["metadata"]["deletionTimestamp"]);
  // A second delete changes nothing; no finalizer may be added now.
  EXPECT_EQ(Do(http::verb::delete_, path).body["metadata"]["resourceVersion"],
            still.body["metadata"]["resourceVersion"]);
  EXPECT_EQ(Do(http::verb::patch, path,
               R"({"metadata":{"finalizers":["example.com/a","example.com/b","example.com/c"]}})",
               "application/merge-patch+json")
                .status,
            403);
  // Removing one keeps it; removing the last deletes it.
  EXPECT_EQ(Do(http::verb::patch, path, R"({"metadata":{"finalizers":["example.com/b"]}})",
               "application/merge-patch+json")
                .status,
            200);
  EXPECT_EQ(Do(http::verb::get, path).status, 200);
  EXPECT_EQ(Do(http::verb::patch, path, R"({"metadata":{"finalizers":null}})",
               "application/merge-patch+json")
                .status,
            200);
  EXPECT_EQ(Do(http::verb::get, path).status, 404);
}

TEST_F(ServerSemanticsTest, NoKubeletAnswersSayWhy) {
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("web")).status, 201);
  for (const char* sub : {"exec", "attach", "portforward"}) {
    Reply r = Do(http::verb::post, std::string(kPods) + "/web/" + sub + "?command=ls");
    EXPECT_EQ(r.status, 400) << sub;
    EXPECT_NE(
        r.body["message"].get<std::string>().find("kubelets are simulated and run no processes"),
        std::string::npos);
  }
  EXPECT_EQ(Do(http::verb::post, std::string(kPods) + "/nope/exec").status, 404);
}

}  // namespace
}  // namespace berth::apiserver
