// SimulatedKubelets with DRA devices, against the embedded API server with a fake clock: the
// nodes' ResourceSlices (created, updated on a new description, deleted with the node) and
// pods that wait for their resource claims.
#include <gtest/gtest.h>

#include "kubelet/kubelet_test_util.h"
#include "kubelet/simulated_kubelets.h"

namespace berth::kubelet {
namespace {

using Json = nlohmann::json;
using std::chrono::seconds;

constexpr char kSlices[] = "/apis/resource.k8s.io/v1/resourceslices";
constexpr char kClaims[] = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims";

std::vector<DriverDevices> Devices(const std::string& text) {
  auto parsed = ParseNodeDevices(text, "test");
  EXPECT_TRUE(parsed.ok()) << parsed.error().message;
  return parsed.ok() ? *parsed : std::vector<DriverDevices>{};
}

class DeviceWorkTest : public testing::KubeletTest {
 protected:
  void StartKubelets(std::vector<DriverDevices> devices) {
    SimulatedKubeletOptions options;
    options.node_devices = std::move(devices);
    KubeletTest::StartKubelets(std::move(options));
  }
  void CreateNode(const std::string& name, const Json& labels = Json::object()) {
    auto made = rest_->Post("/api/v1/nodes", {{"apiVersion", "v1"},
                                              {"kind", "Node"},
                                              {"metadata", {{"name", name}, {"labels", labels}}}});
    ASSERT_TRUE(made.ok()) << made.error().message;
  }
  std::map<std::string, Json> Slices() {
    std::map<std::string, Json> out;
    auto list = rest_->Get(kSlices);
    if (list.ok())
      for (const Json& s : (*list)["items"]) out[s["spec"]["nodeName"]] = s;
    return out;
  }
};

constexpr char kGpus[] = R"(
driver: gpu.example.com
nodeSelector: {matchLabels: {gpu: "true"}}
devices: [{name: gpu, count: 2, capacity: {memory: 40Gi}}]
)";

TEST_F(DeviceWorkTest, SelectedNodesPublishSlicesKeptInStepWithTheDescription) {
  StartKubelets(Devices(kGpus));
  CreateNode("gpu-node", {{"gpu", "true"}});
  CreateNode("cpu-node");
  ASSERT_TRUE(RunUntil([&] { return Slices().size() == 1; }));
  Json slice = Slices().at("gpu-node");
  const Json node = Get("/api/v1/nodes/gpu-node");
  EXPECT_EQ(slice["metadata"]["name"], ResourceSliceName("gpu-node", "gpu.example.com"));
  EXPECT_EQ(slice["spec"]["driver"], "gpu.example.com");
  EXPECT_EQ(slice["spec"]["pool"],
            Json({{"name", "gpu-node"}, {"generation", 1}, {"resourceSliceCount", 1}}));
  EXPECT_EQ(slice["spec"]["devices"].size(), 2u);
  EXPECT_EQ(slice["metadata"]["ownerReferences"][0]["uid"], node["metadata"]["uid"]);
  // Quiet once written: the kubelets' own slice event writes nothing more.
  const std::string version = slice["metadata"]["resourceVersion"];
  for (int i = 0; i < 5; ++i) kubelets_->RunOnce();
  EXPECT_EQ(Slices().at("gpu-node")["metadata"]["resourceVersion"], version);

  // A restart with a changed description updates the slice in place: the pool's next
  // generation, the new devices.
  StartKubelets(
      Devices("driver: gpu.example.com\nnodeSelector: {matchLabels: {gpu: \"true\"}}\n"
              "devices: [{name: gpu, count: 4, capacity: {memory: 40Gi}}]"));
  ASSERT_TRUE(RunUntil([&] { return Slices().at("gpu-node")["spec"]["devices"].size() == 4; }));
  EXPECT_EQ(Slices().at("gpu-node")["spec"]["pool"]["generation"], 2);

  // A slice deleted by hand is written again.
  const std::string slice_name = Slices().at("gpu-node")["metadata"]["name"];
  ASSERT_TRUE(rest_->Delete(std::string(kSlices) + "/" + slice_name).ok());
  ASSERT_TRUE(RunUntil([&] {
    auto now = Slices();
    return now.count("gpu-node") && now.at("gpu-node")["metadata"]["resourceVersion"] != version;
  }));
  EXPECT_EQ(Slices().at("gpu-node")["metadata"]["name"], slice_name);

  // The node labelled for GPUs later gets them too.
  auto patched =
      rest_->Patch("/api/v1/nodes/cpu-node", {{"metadata", {{"labels", {{"gpu", "true"}}}}}},
                   "application/merge-patch+json");
  ASSERT_TRUE(patched.ok());
  ASSERT_TRUE(RunUntil([&] { return Slices().size() == 2; }));

  // Deleted with its node.
  ASSERT_TRUE(rest_->Delete("/api/v1/nodes/gpu-node").ok());
  ASSERT_TRUE(RunUntil([&] { return Slices().size() == 1 && Slices().count("cpu-node"); }));

  // A description without the driver removes its slices; a slice someone else wrote stays.
  Json foreign = {{"apiVersion", "resource.k8s.io/v1"},
                  {"kind", "ResourceSlice"},
                  {"metadata", {{"name", "by-hand"}}},
                  {"spec",
                   {{"driver", "other.example.com"},
                    {"nodeName", "cpu-node-x"},
                    {"pool", {{"name", "p"}, {"generation", 1}, {"resourceSliceCount", 1}}}}}};
  ASSERT_TRUE(rest_->Post(kSlices, foreign).ok());
  StartKubelets({});
  ASSERT_TRUE(RunUntil([&] { return Slices().size() == 1 && Slices().count("cpu-node-x"); }))
      << Json(Slices()).dump();
}

TEST_F(DeviceWorkTest, PodStartsOnlyOnceItsClaimIsAllocatedAndReservedForIt) {
  StartKubelets({});
  CreateNode("n1");
  ASSERT_TRUE(RunUntil([&] { return kubelets_->stats().nodes == 1; }));
  Json claim = {{"apiVersion", "resource.k8s.io/v1"},
                {"kind", "ResourceClaim"},
                {"metadata", {{"name", "gpu-claim"}}},
                {"spec", Json::object()}};
  ASSERT_TRUE(rest_->Post(kClaims, claim).ok());
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}}},
              {"spec",
               {{"nodeName", "n1"},
                {"containers", {{{"name", "app"}, {"image", "nginx"}}}},
                {"resourceClaims", {{{"name", "gpu"}, {"resourceClaimName", "gpu-claim"}}}}}}};
  auto made = rest_->Post("/api/v1/namespaces/default/pods", pod);
  ASSERT_TRUE(made.ok());
  const std::string uid = (*made)["metadata"]["uid"];
  ASSERT_TRUE(RunUntil([&] { return kubelets_->stats().pods == 1; }));
  clock_.Advance(seconds(1));  // past the start delay
  auto waiting = [&] {
    Json p = Get("/api/v1/namespaces/default/pods/p");
    const Json& cs = p["status"]["containerStatuses"];
    return p["status"]["phase"] == "Pending" && cs.is_array() && !cs.empty() &&
           cs[0]["state"]["waiting"]["reason"] == "ContainerCreating";
  };
  ASSERT_TRUE(RunUntil(waiting));

  // Allocated, but reserved for another pod: still waiting.
  auto set_status = [&](const Json& status) {
    Json c = Get(std::string(kClaims) + "/gpu-claim");
    c["status"] = status;
    auto r = rest_->Put(std::string(kClaims) + "/gpu-claim/status", c);
    ASSERT_TRUE(r.ok()) << r.error().message;
  };
  const Json allocation = {{"devices", {{"results", Json::array()}}}};
  set_status({{"allocation", allocation},
              {"reservedFor", {{{"resource", "pods"}, {"name", "q"}, {"uid", "other"}}}}});
  for (int i = 0; i < 10; ++i) {
    kubelets_->RunOnce();
    kubelets_->WaitForEvent(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(waiting());

  set_status({{"allocation", allocation},
              {"reservedFor", {{{"resource", "pods"}, {"name", "p"}, {"uid", uid}}}}});
  ASSERT_TRUE(RunUntil(
      [&] { return Get("/api/v1/namespaces/default/pods/p")["status"]["phase"] == "Running"; }));
}

TEST_F(DeviceWorkTest, PodWaitsUntilItsGeneratedClaimIsRecorded) {
  StartKubelets({});
  CreateNode("n1");
  ASSERT_TRUE(RunUntil([&] { return kubelets_->stats().nodes == 1; }));
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}}},
              {"spec",
               {{"nodeName", "n1"},
                {"containers", {{{"name", "app"}, {"image", "nginx"}}}},
                {"resourceClaims", {{{"name", "gpu"}, {"resourceClaimTemplateName", "t"}}}}}}};
  auto made = rest_->Post("/api/v1/namespaces/default/pods", pod);
  ASSERT_TRUE(made.ok());
  const std::string uid = (*made)["metadata"]["uid"];
  ASSERT_TRUE(RunUntil([&] { return kubelets_->stats().pods == 1; }));
  clock_.Advance(seconds(1));
  ASSERT_TRUE(RunUntil(
      [&] { return Get("/api/v1/namespaces/default/pods/p")["status"]["phase"] == "Pending"; }));
  // What the resource claim controller and the scheduler would write.
  Json claim = {{"apiVersion", "resource.k8s.io/v1"},
                {"kind", "ResourceClaim"},
                {"metadata", {{"name", "p-gpu-abcde"}}},
                {"spec", Json::object()}};
  ASSERT_TRUE(rest_->Post(kClaims, claim).ok());
  Json c = Get(std::string(kClaims) + "/p-gpu-abcde");
  c["status"] = {{"allocation", {{"devices", {{"results", Json::array()}}}}},
                 {"reservedFor", {{{"resource", "pods"}, {"name", "p"}, {"uid", uid}}}}};
  ASSERT_TRUE(rest_->Put(std::string(kClaims) + "/p-gpu-abcde/status", c).ok());
  for (int i = 0; i < 10; ++i) {
    kubelets_->RunOnce();
    kubelets_->WaitForEvent(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Get("/api/v1/namespaces/default/pods/p")["status"]["phase"], "Pending");
  auto r = rest_->Patch(
      "/api/v1/namespaces/default/pods/p/status",
      {{"status",
        {{"resourceClaimStatuses", {{{"name", "gpu"}, {"resourceClaimName", "p-gpu-abcde"}}}}}}},
      "application/merge-patch+json");
  ASSERT_TRUE(r.ok());
  clock_.Advance(seconds(1));
  ASSERT_TRUE(RunUntil(
      [&] { return Get("/api/v1/namespaces/default/pods/p")["status"]["phase"] == "Running"; }));
}

// Extended resources backed by DRA: the claim the scheduler names in the pod's
// status.extendedResourceClaimStatus must be allocated and reserved for the pod too.
TEST_F(DeviceWorkTest, PodWaitsForItsExtendedResourceClaim) {
  StartKubelets({});
  CreateNode("n1");
  ASSERT_TRUE(RunUntil([&] { return kubelets_->stats().nodes == 1; }));
  Json claim = {{"apiVersion", "resource.k8s.io/v1"},
                {"kind", "ResourceClaim"},
                {"metadata", {{"name", "p-extended-resources-abcde"}}},
                {"spec", Json::object()}};
  ASSERT_TRUE(rest_->Post(kClaims, claim).ok());
  const Json gpu = {{"example.com/gpu", "1"}};
  Json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}}},
              {"spec",
               {{"containers",
                 {{{"name", "app"},
                   {"image", "nginx"},
                   {"resources", {{"requests", gpu}, {"limits", gpu}}}}}}}}};
  auto made = rest_->Post("/api/v1/namespaces/default/pods", pod);
  ASSERT_TRUE(made.ok()) << made.error().message;
  const std::string uid = (*made)["metadata"]["uid"];
  // What the scheduler writes before binding the pod.
  auto r = rest_->Patch("/api/v1/namespaces/default/pods/p/status",
                        {{"status",
                          {{"extendedResourceClaimStatus",
                            {{"resourceClaimName", "p-extended-resources-abcde"},
                             {"requestMappings",
                              {{{"containerName", "app"},
                                {"resourceName", "example.com/gpu"},
                                {"requestName", "container-0-request-0"}}}}}}}}},
                        "application/merge-patch+json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto bound = rest_->Post("/api/v1/namespaces/default/pods/p/binding",
                           {{"apiVersion", "v1"},
                            {"kind", "Binding"},
                            {"metadata", {{"name", "p"}}},
                            {"target", {{"kind", "Node"}, {"name", "n1"}}}});
  ASSERT_TRUE(bound.ok()) << bound.error().message;
  ASSERT_TRUE(RunUntil([&] { return kubelets_->stats().pods == 1; }));
  clock_.Advance(seconds(1));  // past the start delay
  for (int i = 0; i < 10; ++i) {
    kubelets_->RunOnce();
    kubelets_->WaitForEvent(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(Get("/api/v1/namespaces/default/pods/p")["status"]["phase"], "Pending");

  Json c = Get(std::string(kClaims) + "/p-extended-resources-abcde");
  c["status"] = {{"allocation", {{"devices", {{"results", Json::array()}}}}},
                 {"reservedFor", {{{"resource", "pods"}, {"name", "p"}, {"uid", uid}}}}};
  ASSERT_TRUE(rest_->Put(std::string(kClaims) + "/p-extended-resources-abcde/status", c).ok());
  ASSERT_TRUE(RunUntil(
      [&] { return Get("/api/v1/namespaces/default/pods/p")["status"]["phase"] == "Running"; }));
}

}  // namespace
}  // namespace berth::kubelet
