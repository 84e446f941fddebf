// SimulatedKubelets against the embedded API server, over HTTP as in `berth up`, with a fake
// clock: every step happens when the test moves the clock and runs the kubelets' due work.
#include "kubelet/simulated_kubelets.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "client/micro_time.h"
#include "kubelet/kubelet_test_util.h"

namespace berth::kubelet {
namespace {

using Json = nlohmann::json;
using std::chrono::seconds;

class SimulatedKubeletsTest : public testing::KubeletTest {
 protected:
  void CreateNode(const std::string& name, const Json& annotations = Json::object()) {
    auto made = rest_->Post("/api/v1/nodes",
                            {{"apiVersion", "v1"},
                             {"kind", "Node"},
                             {"metadata", {{"name", name}, {"annotations", annotations}}}});
    ASSERT_TRUE(made.ok()) << made.error().message;
  }
  // A node the kubelets have taken up, with its lease and registration written.
  void ReadyNode(const std::string& name) {
    const size_t before = kubelets_->stats().nodes;
    CreateNode(name);
    ASSERT_TRUE(RunUntil([&] { return kubelets_->stats().nodes == before + 1; }));
    Advance(seconds(1));
  }
  Json CreatePod(const std::string& name, const Json& spec,
                 const Json& annotations = Json::object()) {
    Json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"annotations", annotations}}},
                {"spec", spec}};
    auto made = rest_->Post("/api/v1/namespaces/default/pods", pod);
    EXPECT_TRUE(made.ok()) << made.error().message;
    return made.ok() ? *made : Json();
  }
  static Json BoundSpec(const std::string& node, const std::string& restart = "Always") {
    return {{"nodeName", node},
            {"restartPolicy", restart},
            {"containers", {{{"name", "app"}, {"image", "nginx"}}}}};
  }
  Json GetPod(const std::string& name) { return Get("/api/v1/namespaces/default/pods/" + name); }
  // The pod's status once the kubelets have seen it (it waits for its start delay).
  void SeePod(const std::string& name) {
    ASSERT_TRUE(RunUntil(
        [&] { return kubelets_->stats().pods >= 1 && GetPod(name).contains("metadata"); }));
  }
  static std::map<std::string, std::string> Conditions(const Json& pod) {
    std::map<std::string, std::string> out;
    for (const auto& c : pod["status"]["conditions"]) out[c["type"]] = c["status"];
    return out;
  }
};

TEST_F(SimulatedKubeletsTest, NodeGetsLeaseRegistrationAndPodCidr) {
  StartKubelets();
  ReadyNode("n1");
  Json lease = Get("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1");
  EXPECT_EQ(lease["spec"]["holderIdentity"], "n1");
  EXPECT_EQ(lease["spec"]["leaseDurationSeconds"], 40);
  EXPECT_EQ(lease["metadata"]["ownerReferences"][0]["kind"], "Node");
  Json node = Get("/api/v1/nodes/n1");
  EXPECT_EQ(node["spec"]["podCIDR"], "10.64.0.0/24");
  EXPECT_EQ(node["spec"]["podCIDRs"], Json::array({"10.64.0.0/24"}));
  std::map<std::string, std::string> reasons;
  for (const auto& c : node["status"]["conditions"]) reasons[c["type"]] = c["reason"];
  EXPECT_EQ(reasons["Ready"], "KubeletReady");
  EXPECT_EQ(reasons["MemoryPressure"], "KubeletHasSufficientMemory");
  EXPECT_EQ(node["status"]["nodeInfo"]["kubeletVersion"], "v1.32.0");
  EXPECT_EQ(node["status"]["capacity"]["pods"], "110");
  EXPECT_EQ(node["status"]["addresses"][0]["address"], "172.18.0.2");
}

TEST_F(SimulatedKubeletsTest, LeaseIsRenewedEveryTenSecondsOfTheClock) {
  StartKubelets();
  ReadyNode("n1");
  const std::string path = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1";
  const std::string created = Get(path)["spec"]["renewTime"];
  // Nothing is due until the clock moves.
  EXPECT_EQ(kubelets_->RunOnce(), 0u);
  EXPECT_EQ(Get(path)["spec"]["renewTime"], created);
  for (int i = 0; i < 3; ++i) {
    const uint64_t writes = kubelets_->stats().lease_writes;
    Advance(seconds(10));
    EXPECT_EQ(kubelets_->stats().lease_writes, writes + 1) << i;
    EXPECT_EQ(Get(path)["spec"]["renewTime"],
              client::FormatMicroTime(
                  std::chrono::time_point_cast<std::chrono::system_clock::duration>(clock_.Now())))
        << i;
  }
}

// A backlog of pod work does not hold the node heartbeats back: each round renews the leases
// that are due first, then writes at most four batches of other work; the rest waits for the
// next rounds.
TEST_F(SimulatedKubeletsTest, LeasesAreRenewedBeforeABacklogOfPodWork) {
  SimulatedKubeletOptions options;
  options.max_batch = 2;  // rounds of at most 8 other writes
  StartKubelets(options);
  ReadyNode("n1");
  for (int i = 0; i < 60; ++i) CreatePod("p" + std::to_string(i), BoundSpec("n1"));
  ASSERT_TRUE(RunUntil([&] { return kubelets_->stats().pods == 60; }));
  // Every pod's start and the lease renewal are due at once.
  const auto before = kubelets_->stats();
  Advance(seconds(10));
  const auto after = kubelets_->stats();
  EXPECT_EQ(after.lease_writes, before.lease_writes + 1);
  const uint64_t pod_writes = after.pod_status_writes - before.pod_status_writes;
  EXPECT_GT(pod_writes, 0u);
  EXPECT_LE(pod_writes, 4u * 8u);  // four rounds of at most 8
  // Later rounds take up the rest: every pod ends Running.
  ASSERT_TRUE(RunUntil([&] {
    for (int i = 0; i < 60; ++i)
      if (GetPod("p" + std::to_string(i))["status"]["phase"] != "Running") return false;
    return true;
  }));
}

TEST_F(SimulatedKubeletsTest, BoundPodRunsWithIpConditionsAndContainerStatus) {
  StartKubelets();
  ReadyNode("n1");
  CreatePod("web", BoundSpec("n1"));
  CreatePod("host", [] {
    Json spec = BoundSpec("n1");
    spec["hostNetwork"] = true;
    return spec;
  }());
  CreatePod("unbound", {{"containers", {{{"name", "app"}, {"image", "nginx"}}}}});
  ASSERT_TRUE(RunUntil([&] { return kubelets_->stats().pods == 2; }));
  EXPECT_NE(GetPod("web")["status"].value("phase", ""), "Running");  // the start delay first
  Advance(seconds(1));

  Json pod = GetPod("web");
  EXPECT_EQ(pod["status"]["phase"], "Running");
  EXPECT_EQ(pod["status"]["podIP"], "10.64.0.2");
  EXPECT_EQ(pod["status"]["podIPs"], Json::parse(R"([{"ip":"10.64.0.2"}])"));
  EXPECT_EQ(pod["status"]["hostIP"], "172.18.0.2");
  EXPECT_EQ(pod["status"]["qosClass"], "BestEffort");
  EXPECT_TRUE(pod["status"].contains("startTime"));
  EXPECT_EQ(Conditions(pod),
            (std::map<std::string, std::string>{{"ContainersReady", "True"},
                                                {"Initialized", "True"},
                                                {"PodReadyToStartContainers", "True"},
                                                {"PodScheduled", "True"},
                                                {"Ready", "True"}}));
  const Json& c = pod["status"]["containerStatuses"][0];
  EXPECT_EQ(c["name"], "app");
  EXPECT_TRUE(c["ready"].get<bool>());
  EXPECT_TRUE(c["started"].get<bool>());
  EXPECT_EQ(c["restartCount"], 0);
  EXPECT_EQ(c["image"], "docker.io/library/nginx:latest");
  EXPECT_TRUE(c["state"]["running"].contains("startedAt"));
  EXPECT_EQ(c["imageID"].get<std::string>().rfind("docker.io/library/nginx@sha256:", 0), 0u);

  EXPECT_EQ(GetPod("host")["status"]["podIP"], "172.18.0.2");
  EXPECT_FALSE(GetPod("unbound")["status"].contains("phase") &&
               GetPod("unbound")["status"]["phase"] == "Running");
  // The node now reports the image, under the name the pod used too.
  Json images = Get("/api/v1/nodes/n1")["status"]["images"];
  ASSERT_EQ(images.size(), 1u) << images.dump();
  EXPECT_GT(images[0]["sizeBytes"].get<int64_t>(), 0);
  const auto names = images[0]["names"].get<std::vector<std::string>>();
  EXPECT_NE(std::find(names.begin(), names.end(), "nginx:latest"), names.end());
}

TEST_F(SimulatedKubeletsTest, RunTimeAnnotationFinishesNeverAndOnFailurePods) {
  StartKubelets();
  ReadyNode("n1");
  CreatePod("ok", BoundSpec("n1", "Never"), {{"berth.dev/run-seconds", "5"}});
  CreatePod("bad", BoundSpec("n1", "Never"),
            {{"berth.dev/run-seconds", "5"}, {"berth.dev/exit-code", "3"}});
  CreatePod("retry", BoundSpec("n1", "OnFailure"),
            {{"berth.dev/run-seconds", "5"}, {"berth.dev/exit-code", "1"}});
  ASSERT_TRUE(RunUntil([&] { return kubelets_->stats().pods == 3; }));
  Advance(seconds(1));
  EXPECT_EQ(GetPod("ok")["status"]["phase"], "Running");
  Advance(seconds(4));
  EXPECT_EQ(GetPod("ok")["status"]["phase"], "Running");  // started a second in
  Advance(seconds(1));

  Json ok = GetPod("ok");
  EXPECT_EQ(ok["status"]["phase"], "Succeeded");
  const Json& done = ok["status"]["containerStatuses"][0];
  EXPECT_EQ(done["state"]["terminated"]["exitCode"], 0);
  EXPECT_EQ(done["state"]["terminated"]["reason"], "Completed");
  EXPECT_TRUE(done["state"]["terminated"].contains("finishedAt"));
  EXPECT_FALSE(done["ready"].get<bool>());
  EXPECT_EQ(Conditions(ok)["Ready"], "False");

  Json bad = GetPod("bad");
  EXPECT_EQ(bad["status"]["phase"], "Failed");
  EXPECT_EQ(bad["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"], 3);
  EXPECT_EQ(bad["status"]["containerStatuses"][0]["state"]["terminated"]["reason"], "Error");

  // OnFailure after a failure: the container starts again in the same pod.
  Json retry = GetPod("retry");
  EXPECT_EQ(retry["status"]["phase"], "Running");
  EXPECT_EQ(retry["status"]["containerStatuses"][0]["restartCount"], 1);
  EXPECT_EQ(retry["status"]["containerStatuses"][0]["lastState"]["terminated"]["exitCode"], 1);
}

TEST_F(SimulatedKubeletsTest, OnFailureRestartsRunTheirFullTimeEvenBelowASecond) {
  StartKubelets();
  ReadyNode("n1");
  CreatePod("quick", BoundSpec("n1", "OnFailure"),
            {{"berth.dev/run-seconds", "0.5"}, {"berth.dev/exit-code", "1"}});
  ASSERT_TRUE(RunUntil([&] { return kubelets_->stats().pods == 1; }));
  Advance(seconds(1));
  ASSERT_EQ(GetPod("quick")["status"]["phase"], "Running");
  auto restarts = [&] {
    return GetPod("quick")["status"]["containerStatuses"][0]["restartCount"].get<int>();
  };
  EXPECT_EQ(restarts(), 0);
  Advance(std::chrono::milliseconds(700));  // the first run (half a second) has ended
  EXPECT_EQ(restarts(), 1);
  Advance(std::chrono::milliseconds(100));
  Advance(std::chrono::milliseconds(100));
  EXPECT_EQ(restarts(), 1);  // the second run has 0.3 s to go
  Advance(std::chrono::milliseconds(400));
  EXPECT_EQ(restarts(), 2);
}

TEST_F(SimulatedKubeletsTest, DeletedPodTerminatesThenTheKubeletDeletesIt) {
  StartKubelets();
  ReadyNode("n1");
  CreatePod("web", BoundSpec("n1"));
  ASSERT_TRUE(RunUntil([&] { return kubelets_->stats().pods == 1; }));
  Advance(seconds(1));
  ASSERT_EQ(GetPod("web")["status"]["phase"], "Running");

  ASSERT_TRUE(rest_->Delete("/api/v1/namespaces/default/pods/web").ok());
  Json terminating = GetPod("web");
  ASSERT_TRUE(terminating["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(terminating["metadata"]["deletionGracePeriodSeconds"], 30);
  // Seen; the grace period (30 s, capped at a second) runs from then on the kubelets' clock.
  ASSERT_TRUE(RunUntil([&] { return kubelets_->stats().terminating == 1; }));
  Advance(std::chrono::milliseconds(500));
  EXPECT_TRUE(GetPod("web").contains("metadata"));
  EXPECT_EQ(kubelets_->stats().pod_deletions, 0u);
  Advance(std::chrono::milliseconds(500));
  EXPECT_EQ(kubelets_->stats().pod_deletions, 1u);
  EXPECT_FALSE(GetPod("web").contains("metadata"));
  EXPECT_TRUE(RunUntil([&] { return kubelets_->stats().pods == 0; }));
}

TEST_F(SimulatedKubeletsTest, OnlyAnnotatedNodesWhenAskedSo) {
  SimulatedKubeletOptions options;
  options.all_nodes = false;
  StartKubelets(options);
  CreateNode("real");
  CreateNode("fake", {{"berth.dev/simulated-kubelet", "true"}});
  ASSERT_TRUE(RunUntil([&] { return kubelets_->stats().nodes == 1; }));
  Advance(seconds(1));
  EXPECT_TRUE(
      Get("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/fake").contains("spec"));
  EXPECT_FALSE(
      Get("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/real").contains("spec"));
}

TEST_F(SimulatedKubeletsTest, StoppedNodeRenewsNothingAndItsPodsWaitUntilStarted) {
  StartKubelets();
  ReadyNode("n1");
  const std::string lease_path =
      "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/n1";
  auto annotate = [&](const Json& value) {
    auto r = rest_->Patch("/api/v1/nodes/n1",
                          {{"metadata", {{"annotations", {{kStoppedAnnotation, value}}}}}},
                          "application/merge-patch+json");
    ASSERT_TRUE(r.ok()) << r.error().message;
  };
  annotate("true");
  ASSERT_TRUE(RunUntil([&] { return kubelets_->stats().stopped_nodes == 1; }));
  const std::string renewed = Get(lease_path)["spec"]["renewTime"];
  const uint64_t leases = kubelets_->stats().lease_writes;
  const uint64_t statuses = kubelets_->stats().node_status_writes;
  CreatePod("p", BoundSpec("n1"));
  SeePod("p");
  for (int i = 0; i < 6; ++i) Advance(seconds(10));
  EXPECT_EQ(kubelets_->stats().lease_writes, leases);
  EXPECT_EQ(kubelets_->stats().node_status_writes, statuses);
  EXPECT_EQ(Get(lease_path)["spec"]["renewTime"], renewed);
  EXPECT_NE(GetPod("p")["status"]["phase"], "Running");

  annotate(nullptr);
  ASSERT_TRUE(RunUntil([&] { return kubelets_->stats().stopped_nodes == 0; }));
  Advance(seconds(2));
  EXPECT_GT(kubelets_->stats().lease_writes, leases);
  EXPECT_NE(Get(lease_path)["spec"]["renewTime"], renewed);
  Json node = Get("/api/v1/nodes/n1");
  for (const auto& c : node["status"]["conditions"]) {
    if (c["type"] == "Ready") EXPECT_EQ(c["status"], "True");
  }
  EXPECT_EQ(GetPod("p")["status"]["phase"], "Running");
}

// In-place resize: a resize the node has room for is reported as actuated; one larger than
// the node is Infeasible; one that needs room another pod holds is Deferred until it goes.
TEST_F(SimulatedKubeletsTest, ResizesAreActuatedWhenTheNodeHasRoom) {
  StartKubelets();
  ReadyNode("n1");  // 8 cpus
  auto spec = [](const char* cpu) {
    return Json{
        {"nodeName", "n1"},
        {"containers",
         {{{"name", "app"}, {"image", "nginx"}, {"resources", {{"requests", {{"cpu", cpu}}}}}}}}};
  };
  CreatePod("a", spec("2"));
  CreatePod("b", spec("5"));
  ASSERT_TRUE(RunUntil([&] {
    Advance(seconds(1));
    return GetPod("a")["status"]["phase"] == "Running" &&
           GetPod("b")["status"]["phase"] == "Running";
  }));
  Json running = GetPod("a")["status"]["containerStatuses"][0];
  EXPECT_EQ(running["allocatedResources"], Json::parse(R"({"cpu":"2"})"));
  EXPECT_EQ(running["resources"], Json::parse(R"({"requests":{"cpu":"2"}})"));

  auto resize = [&](const char* pod, const char* cpu) {
    auto r = rest_->Send(
        "PATCH", std::string("/api/v1/namespaces/default/pods/") + pod + "/resize",
        Json{
            {"spec",
             {{"containers", {{{"name", "app"}, {"resources", {{"requests", {{"cpu", cpu}}}}}}}}}}},
        "application/strategic-merge-patch+json");
    ASSERT_TRUE(r.ok()) << r.error().message;
  };
  auto pending = [&](const char* pod) -> std::string {
    const Json got = GetPod(pod);
    for (const auto& c : got["status"]["conditions"])
      if (c["type"] == "PodResizePending")
        return c["reason"].get<std::string>() + ": " + c["message"].get<std::string>();
    return "";
  };
  resize("a", "3");  // 3 + 5 of 8: fits
  ASSERT_TRUE(RunUntil([&] {
    return GetPod("a")["status"]["containerStatuses"][0]["allocatedResources"]["cpu"] == "3";
  }));
  resize("a", "9");
  ASSERT_TRUE(RunUntil([&] { return !pending("a").empty(); }));
  EXPECT_EQ(pending("a"),
            "Infeasible: Node didn't have enough capacity: cpu, requested: 9000, capacity: 8000");
  resize("a", "4");  // 4 + 5 of 8: waits for b
  ASSERT_TRUE(RunUntil([&] { return pending("a").rfind("Deferred", 0) == 0; }));
  EXPECT_EQ(pending("a"),
            "Deferred: Node didn't have enough resource: cpu, requested: 4000, used: 5000, "
            "capacity: 8000");
  EXPECT_EQ(GetPod("a")["status"]["containerStatuses"][0]["allocatedResources"]["cpu"], "3");
  ASSERT_TRUE(rest_->Delete("/api/v1/namespaces/default/pods/b", {{"gracePeriodSeconds", 0}}).ok());
  ASSERT_TRUE(RunUntil([&] {
    return GetPod("a")["status"]["containerStatuses"][0]["allocatedResources"]["cpu"] == "4";
  }));
  EXPECT_EQ(pending("a"), "");
}

}  // namespace
}  // namespace berth::kubelet

namespace berth::kubelet {
namespace {

using Json = nlohmann::json;

class DeclaredFeaturesTest : public testing::KubeletTest {
 protected:
  Json Features(const std::string& node) {
    Json n = Get("/api/v1/nodes/" + node);
    return n["status"].contains("declaredFeatures") ? n["status"]["declaredFeatures"] : Json();
  }
};

TEST_F(DeclaredFeaturesTest, NodesDeclareTheKubeletDefaultsOrTheirAnnotation) {
  StartKubelets();
  auto create = [&](const std::string& name, const Json& annotations) {
    auto made = rest_->Post("/api/v1/nodes",
                            {{"apiVersion", "v1"},
                             {"kind", "Node"},
                             {"metadata", {{"name", name}, {"annotations", annotations}}}});
    ASSERT_TRUE(made.ok()) << made.error().message;
  };
  create("n1", Json::object());
  create("n2", {{kDeclaredFeaturesAnnotation,
                 "UserNamespacesHostNetworkSupport, RestartAllContainersOnContainerExits"}});
  ASSERT_TRUE(RunUntil([&] { return !Features("n1").is_null() && !Features("n2").is_null(); }));
  EXPECT_EQ(Features("n1"),
            Json({"GuaranteedQoSPodCPUResize", "InPlacePodLevelResourcesVerticalScaling"}));
  // Sorted, as the API server requires.
  EXPECT_EQ(Features("n2"),
            Json({"RestartAllContainersOnContainerExits", "UserNamespacesHostNetworkSupport"}));
  // A changed annotation is declared at once; an empty one removes the list.
  auto r = rest_->Patch("/api/v1/nodes/n1",
                        {{"metadata", {{"annotations", {{kDeclaredFeaturesAnnotation, ""}}}}}},
                        "application/merge-patch+json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(RunUntil([&] { return Features("n1").is_null(); }));
  // Settled: the node's own update (the list gone) schedules no further status write.
  const uint64_t writes = kubelets_->stats().node_status_writes;
  for (int i = 0; i < 4; ++i) {
    kubelets_->RunOnce();
    kubelets_->WaitForEvent(std::chrono::milliseconds(25));
  }
  EXPECT_EQ(kubelets_->stats().node_status_writes, writes);
}

}  // namespace
}  // namespace berth::kubelet
