// Cases translated from kube-scheduler's dynamicresources_test.go (TestPlugin, TestClaimChange),
// each named after its upstream case, driving the plugin's points in order against an
// InMemoryCluster.
#include "plugins/dynamicresources/dynamicresources.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "api/codec.h"
#include "berth/testing/fake_handle.h"
#include "framework/in_memory_cluster.h"
#include "plugins/dynamicresources/claims.h"
#include "testing/builders.h"
#include "testing/decode_one.h"

namespace berth::dynamicresources {
namespace {

using berth::testing::FakeHandle;
using berth::testing::MakeNode;
using berth::testing::MakePod;
using ::testing::HasSubstr;

using berth::testing::DecodeOne;

const char* kClass = R"(
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: class}
)";

std::string SliceYaml(const std::string& node, int devices = 1) {
  std::string y = "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: " + node +
                  "-some-driver}\nspec:\n  driver: some-driver\n  pool: {name: " + node +
                  ", generation: 1, resourceSliceCount: 1}\n  nodeName: " + node + "\n  devices:\n";
  for (int i = 1; i <= devices; ++i) y += "  - name: instance-" + std::to_string(i) + "\n";
  return y;
}

// A claim of one device of `class`, optionally allocated on `node` and reserved for `pods`.
std::string ClaimYaml(const std::string& name, const std::string& allocated_on = "",
                      const std::vector<std::string>& reserved_uids = {},
                      const std::string& owner_uid = "") {
  std::string y =
      "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata:\n  name: " + name +
      "\n  namespace: default\n  uid: uid-" + name + "\n  resourceVersion: \"1\"\n";
  if (!owner_uid.empty())
    y += "  ownerReferences: [{apiVersion: v1, kind: Pod, name: my-pod, uid: " + owner_uid +
         ", controller: true}]\n";
  y += "spec:\n  devices:\n    requests:\n    - name: req-1\n      exactly: {deviceClassName: "
       "class}\n";
  if (!allocated_on.empty()) {
    y += "status:\n  allocation:\n    devices:\n      results:\n      - {request: req-1, driver: "
         "some-driver, pool: " +
         allocated_on +
         ", device: instance-1}\n    nodeSelector:\n"
         "      nodeSelectorTerms:\n      - matchFields:\n        - {key: metadata.name, operator: "
         "In, values: [" +
         allocated_on + "]}\n";
    if (!reserved_uids.empty()) {
      y += "  reservedFor:\n";
      for (const auto& uid : reserved_uids)
        y += "  - {resource: pods, name: p-" + uid + ", uid: " + uid + "}\n";
    }
  }
  return y;
}

class DynamicResourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* n : {"worker", "worker-2"}) {
      nodes_.push_back(std::make_shared<NodeInfo>(MakeNode().Name(n).Obj()));
    }
    handle_ = std::make_unique<FakeHandle>(Snapshot{}, &cluster_);
    plugin_ = std::make_unique<DynamicResources>(*handle_, config::DynamicResourcesArgs{},
                                                 dra::Features{});
  }
  void AddClass() { cluster_.AddDeviceClass(DecodeOne<DeviceClass>(kClass)); }
  void AddSlice(const std::string& node, int devices = 1) {
    cluster_.AddResourceSlice(DecodeOne<ResourceSlice>(SliceYaml(node, devices)));
  }
  void AddClaim(const std::string& yaml) {
    cluster_.AddResourceClaim(DecodeOne<ResourceClaim>(yaml));
  }
  static PodInfoPtr PodWithClaim(const std::string& pod = "my-pod",
                                 const std::string& claim = "my-pod-claim") {
    return MakePod().Name(pod).Claim("my-claim", claim).Info();
  }
  std::vector<const NodeInfo*> Nodes() const {
    std::vector<const NodeInfo*> out;
    for (const auto& n : nodes_) out.push_back(n.get());
    return out;
  }
  Status RunPreFilter(CycleState& state, const PodInfo& pod) {
    PreFilterResult result;
    return plugin_->PreFilter(state, pod, Nodes(), &result);
  }
  const NodeInfo& Node(int i) const { return *nodes_[i]; }

  InMemoryCluster cluster_;
  std::vector<std::shared_ptr<NodeInfo>> nodes_;
  std::unique_ptr<FakeHandle> handle_;
  std::unique_ptr<DynamicResources> plugin_;
};

// "empty": a pod without claims is left alone.
TEST_F(DynamicResourcesTest, Empty) {
  CycleState state;
  auto pod = MakePod().Name("my-pod").Info();
  EXPECT_TRUE(plugin_->PreEnqueue(*pod->pod).IsSuccess());
  EXPECT_TRUE(RunPreFilter(state, *pod).IsSkip());
}

// "missing-claim-reference"
TEST_F(DynamicResourcesTest, MissingClaimReference) {
  auto pod = PodWithClaim();
  Status s = plugin_->PreEnqueue(*pod->pod);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_THAT(s.Message(), HasSubstr("resourceclaim.resource.k8s.io \"my-pod-claim\" not found"));
}

// "claim-template" not created yet (the controller has not recorded it in the pod's status).
TEST_F(DynamicResourcesTest, MissingClaimTemplate) {
  auto pod = MakePod().Name("my-pod").ClaimFromTemplate("my-claim", "tmpl").Info();
  Status s = plugin_->PreEnqueue(*pod->pod);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "pod \"default/my-pod\": ResourceClaim not created yet");
}

// "wrong-claim": a template's claim owned by another pod.
TEST_F(DynamicResourcesTest, WrongClaim) {
  AddClass();
  AddClaim(ClaimYaml("my-pod-my-claim", "", {}, "other-uid"));
  auto pod = MakePod()
                 .Name("my-pod")
                 .ClaimFromTemplate("my-claim", "tmpl")
                 .ClaimStatus("my-claim", "my-pod-my-claim")
                 .Info();
  Status s = plugin_->PreEnqueue(*pod->pod);
  EXPECT_THAT(s.Message(), HasSubstr("was not created for pod default/my-pod (pod is not owner)"));
}

// "deleted-claim"
TEST_F(DynamicResourcesTest, DeletedClaim) {
  auto claim =
      std::make_shared<ResourceClaim>(*DecodeOne<ResourceClaim>(ClaimYaml("my-pod-claim")));
  claim->metadata.deletion_timestamp = 1;
  cluster_.AddResourceClaim(claim);
  Status s = plugin_->PreEnqueue(*PodWithClaim()->pod);
  EXPECT_EQ(s.Message(), "resourceclaim \"my-pod-claim\" is being deleted");
}

// "missing class"
TEST_F(DynamicResourcesTest, MissingClass) {
  AddClaim(ClaimYaml("my-pod-claim"));
  CycleState state;
  Status s = RunPreFilter(state, *PodWithClaim());
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "request req-1: device class class does not exist");
}

// "structured-no-resources": nothing to allocate from.
TEST_F(DynamicResourcesTest, StructuredNoResources) {
  AddClass();
  AddClaim(ClaimYaml("my-pod-claim"));
  CycleState state;
  auto pod = PodWithClaim();
  ASSERT_TRUE(RunPreFilter(state, *pod).IsSuccess());
  Status s = plugin_->Filter(state, *pod, Node(0));
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "cannot allocate all claims");
}

// "structured-with-resources": allocated on the node with the device, written by PreBind with
// the pod in reservedFor.
TEST_F(DynamicResourcesTest, StructuredWithResources) {
  AddClass();
  AddSlice("worker");
  AddClaim(ClaimYaml("my-pod-claim"));
  CycleState state;
  auto pod = PodWithClaim();
  ASSERT_TRUE(RunPreFilter(state, *pod).IsSuccess());
  EXPECT_TRUE(plugin_->Filter(state, *pod, Node(0)).IsSuccess());
  EXPECT_EQ(plugin_->Filter(state, *pod, Node(1)).Message(), "cannot allocate all claims");
  ASSERT_TRUE(plugin_->Reserve(state, *pod, "worker").IsSuccess());
  ASSERT_TRUE(plugin_->PreBind(state, *pod, "worker").IsSuccess());
  auto stored = cluster_.GetResourceClaim("default", "my-pod-claim");
  ASSERT_TRUE(stored->status.allocation);
  ASSERT_EQ(stored->status.allocation->results.size(), 1u);
  EXPECT_EQ(stored->status.allocation->results[0].device, "instance-1");
  EXPECT_EQ(stored->status.allocation->results[0].pool, "worker");
  ASSERT_EQ(stored->status.reserved_for.size(), 1u);
  EXPECT_EQ(stored->status.reserved_for[0].uid, "uid-my-pod");
  EXPECT_EQ(stored->status.reserved_for[0].resource, "pods");
  // The claim it allocated got the delete-protection finalizer first.
  EXPECT_EQ(cluster_.claim_finalizer_writes(), 1);
}

// Parallel cycles: a device assumed at Reserve is not handed out again before PreBind.
TEST_F(DynamicResourcesTest, AssumedAllocationIsNotAllocatedTwice) {
  AddClass();
  AddSlice("worker");
  AddClaim(ClaimYaml("claim-a"));
  AddClaim(ClaimYaml("claim-b"));
  CycleState first, second;
  auto a = PodWithClaim("pod-a", "claim-a");
  auto b = PodWithClaim("pod-b", "claim-b");
  ASSERT_TRUE(RunPreFilter(first, *a).IsSuccess());
  ASSERT_TRUE(plugin_->Filter(first, *a, Node(0)).IsSuccess());
  ASSERT_TRUE(plugin_->Reserve(first, *a, "worker").IsSuccess());
  ASSERT_TRUE(RunPreFilter(second, *b).IsSuccess());
  EXPECT_EQ(plugin_->Filter(second, *b, Node(0)).Message(), "cannot allocate all claims");
  // Unreserve gives the device back.
  plugin_->Unreserve(first, *a, "worker");
  CycleState third;
  ASSERT_TRUE(RunPreFilter(third, *b).IsSuccess());
  EXPECT_TRUE(plugin_->Filter(third, *b, Node(0)).IsSuccess());
}

// "claim-reference" allocated and reserved for another pod: a shared claim is usable on its
// node, and PreBind adds the second pod to reservedFor.
TEST_F(DynamicResourcesTest, SharedClaimReservedForAnotherPod) {
  AddClass();
  AddSlice("worker");
  AddClaim(ClaimYaml("shared", "worker", {"uid-first"}));
  CycleState state;
  auto pod = PodWithClaim("my-pod", "shared");
  ASSERT_TRUE(RunPreFilter(state, *pod).IsSuccess());
  EXPECT_TRUE(plugin_->Filter(state, *pod, Node(0)).IsSuccess());
  EXPECT_EQ(plugin_->Filter(state, *pod, Node(1)).Message(),
            "resourceclaim not available on the node");
  ASSERT_TRUE(plugin_->Reserve(state, *pod, "worker").IsSuccess());
  ASSERT_TRUE(plugin_->PreBind(state, *pod, "worker").IsSuccess());
  auto stored = cluster_.GetResourceClaim("default", "shared");
  ASSERT_EQ(stored->status.reserved_for.size(), 2u);
  EXPECT_EQ(stored->status.reserved_for[1].uid, "uid-my-pod");
  // Allocated before: only reserved, no finalizer written.
  EXPECT_EQ(cluster_.claim_finalizer_writes(), 0);
}

// "in use": reservedFor is full and does not list the pod.
TEST_F(DynamicResourcesTest, ClaimReservedForTooManyPods) {
  AddClass();
  std::vector<std::string> uids;
  for (size_t i = 0; i < kReservedForMaxSize; ++i) uids.push_back("u" + std::to_string(i));
  AddClaim(ClaimYaml("shared", "worker", uids));
  CycleState state;
  Status s = RunPreFilter(state, *PodWithClaim("my-pod", "shared"));
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "resourceclaim in use");
}

// "wrong-topology" then "deallocate": the claim is allocated on a node the pod cannot use;
// PostFilter deallocates it since no other pod holds it.
TEST_F(DynamicResourcesTest, WrongTopologyDeallocatesInPostFilter) {
  AddClass();
  AddClaim(ClaimYaml("my-pod-claim", "worker-3"));
  CycleState state;
  auto pod = PodWithClaim();
  ASSERT_TRUE(RunPreFilter(state, *pod).IsSuccess());
  EXPECT_EQ(plugin_->Filter(state, *pod, Node(0)).Message(),
            "resourceclaim not available on the node");
  PostFilterResult result;
  Status s = plugin_->PostFilter(state, *pod, {}, &result);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "deallocation of ResourceClaim completed");
  EXPECT_FALSE(cluster_.GetResourceClaim("default", "my-pod-claim")->status.allocation);
}

// A claim reserved for another pod is not deallocated.
TEST_F(DynamicResourcesTest, PostFilterKeepsClaimInUse) {
  AddClass();
  AddClaim(ClaimYaml("my-pod-claim", "worker-3", {"uid-other"}));
  CycleState state;
  auto pod = PodWithClaim();
  ASSERT_TRUE(RunPreFilter(state, *pod).IsSuccess());
  (void)plugin_->Filter(state, *pod, Node(0));
  PostFilterResult result;
  EXPECT_EQ(plugin_->PostFilter(state, *pod, {}, &result).Message(), "still not schedulable");
  EXPECT_TRUE(cluster_.GetResourceClaim("default", "my-pod-claim")->status.allocation);
}

// A claim whose allocation another cycle has in flight makes the pod wait.
TEST_F(DynamicResourcesTest, ClaimInTheProcessOfBeingAllocated) {
  AddClass();
  AddSlice("worker");
  AddClaim(ClaimYaml("shared"));
  CycleState first, second;
  auto a = PodWithClaim("pod-a", "shared");
  ASSERT_TRUE(RunPreFilter(first, *a).IsSuccess());
  ASSERT_TRUE(plugin_->Filter(first, *a, Node(0)).IsSuccess());
  ASSERT_TRUE(plugin_->Reserve(first, *a, "worker").IsSuccess());
  Status s = RunPreFilter(second, *PodWithClaim("pod-b", "shared"));
  EXPECT_EQ(s.Message(), "resource claim default/shared is in the process of being allocated");
}

// The claims the simulated controller makes from templates, named deterministically.
TEST_F(DynamicResourcesTest, InMemoryClusterMakesTemplateClaims) {
  AddClass();
  AddSlice("worker");
  cluster_.AddResourceClaimTemplate(DecodeOne<ResourceClaimTemplate>(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: tmpl, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: req-1
        exactly: {deviceClassName: class}
)"));
  cluster_.AddPod(MakePod().Name("my-pod").ClaimFromTemplate("gpu", "tmpl").Obj());
  auto pod = cluster_.GetPod("default", "my-pod");
  auto claim = cluster_.GetResourceClaim("default", "my-pod-gpu");
  ASSERT_NE(claim, nullptr);
  EXPECT_TRUE(IsForPod(*pod, *claim).ok());
  EXPECT_TRUE(plugin_->PreEnqueue(*pod).IsSuccess());
  CycleState state;
  auto info = PodInfo::Create(pod);
  ASSERT_TRUE(RunPreFilter(state, *info).IsSuccess());
  EXPECT_TRUE(plugin_->Filter(state, *info, Node(0)).IsSuccess());
}

// TestClaimChange
TEST_F(DynamicResourcesTest, ClaimChangeSkipUnrelatedClaim) {
  AddClaim(ClaimYaml("my-pod-claim"));
  auto other = DecodeOne<ResourceClaim>(ClaimYaml("other"));
  EXPECT_EQ(plugin_->AfterClaimChange(*PodWithClaim()->pod, nullptr, *other),
            QueueingHint::kQueueSkip);
}

TEST_F(DynamicResourcesTest, ClaimChangeQueueOnAdd) {
  auto claim = DecodeOne<ResourceClaim>(ClaimYaml("my-pod-claim"));
  cluster_.AddResourceClaim(claim);
  EXPECT_EQ(plugin_->AfterClaimChange(*PodWithClaim()->pod, nullptr, *claim), QueueingHint::kQueue);
}

TEST_F(DynamicResourcesTest, ClaimChangeSkipAddingFinalizer) {
  auto claim = DecodeOne<ResourceClaim>(ClaimYaml("my-pod-claim"));
  cluster_.AddResourceClaim(claim);
  auto changed = std::make_shared<ResourceClaim>(*claim);
  changed->metadata.resource_version = "2";
  EXPECT_EQ(plugin_->AfterClaimChange(*PodWithClaim()->pod, claim.get(), *changed),
            QueueingHint::kQueueSkip);
}

TEST_F(DynamicResourcesTest, ClaimChangeQueueOnStatusChange) {
  auto claim = DecodeOne<ResourceClaim>(ClaimYaml("my-pod-claim"));
  auto allocated = DecodeOne<ResourceClaim>(ClaimYaml("my-pod-claim", "worker"));
  cluster_.AddResourceClaim(allocated);
  EXPECT_EQ(plugin_->AfterClaimChange(*PodWithClaim()->pod, claim.get(), *allocated),
            QueueingHint::kQueue);
}

TEST_F(DynamicResourcesTest, ClaimChangeStructuredClaimDeallocate) {
  // Another pod's claim gave its devices back: this pod may fit now.
  AddClaim(ClaimYaml("my-pod-claim"));
  auto allocated = DecodeOne<ResourceClaim>(ClaimYaml("other", "worker"));
  auto freed = DecodeOne<ResourceClaim>(ClaimYaml("other"));
  EXPECT_EQ(plugin_->AfterClaimChange(*PodWithClaim()->pod, allocated.get(), *freed),
            QueueingHint::kQueue);
}

TEST_F(DynamicResourcesTest, RegistersDraEvents) {
  auto events = plugin_->DraEventsToRegister();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].event.resource, DraEventResource::kResourceClaim);
  EXPECT_TRUE(static_cast<bool>(events[0].hint));
  EXPECT_EQ(events[1].event.resource, DraEventResource::kResourceClaim);
  EXPECT_EQ(events[1].event.actions, kDelete);
  EXPECT_EQ(events[2].event.resource, DraEventResource::kDeviceClass);
  EXPECT_EQ(events[3].event.resource, DraEventResource::kResourceSlice);
  // A claim deleted while allocated frees its devices; an unallocated one frees nothing.
  const auto& deleted = events[1].hint;
  auto pod = PodWithClaim();
  auto allocated = std::make_shared<const ResourceClaim>(
      *DecodeOne<ResourceClaim>(ClaimYaml("other", "worker", {"uid-x"})));
  auto unallocated =
      std::make_shared<const ResourceClaim>(*DecodeOne<ResourceClaim>(ClaimYaml("other")));
  EXPECT_EQ(deleted(*pod->pod, DraEventObject(allocated), DraEventObject()).value(),
            QueueingHint::kQueue);
  EXPECT_EQ(deleted(*pod->pod, DraEventObject(unallocated), DraEventObject()).value(),
            QueueingHint::kQueueSkip);
}

// FilterDiagnosis: the node's only device is held by another claim, which is named.
TEST_F(DynamicResourcesTest, DiagnosisNamesTheClaimHoldingTheDevice) {
  AddClass();
  AddSlice("worker");
  AddClaim(ClaimYaml("other", "worker", {"uid-x"}));
  AddClaim(ClaimYaml("my-pod-claim"));
  CycleState state;
  auto pod = PodWithClaim();
  ASSERT_TRUE(RunPreFilter(state, *pod).IsSuccess());
  Status rejection = plugin_->Filter(state, *pod, Node(0));
  ASSERT_THAT(rejection.Message(), HasSubstr("cannot allocate all claims"));
  EXPECT_THAT(plugin_->Diagnose(*pod->pod, *Node(0).node(), rejection),
              ::testing::ElementsAre(
                  "claim default/my-pod-claim, request req-1: wants 1 device, 0 free; allocated: "
                  "some-driver/worker/instance-1 (claim default/other)"));
}

// FilterDiagnosis: the class's selector accepts no device of the node.
TEST_F(DynamicResourcesTest, DiagnosisNamesTheClassNoDeviceMatches) {
  cluster_.AddDeviceClass(DecodeOne<DeviceClass>(R"(
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: class}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com"'}
)"));
  AddSlice("worker", 2);
  AddClaim(ClaimYaml("my-pod-claim"));
  CycleState state;
  auto pod = PodWithClaim();
  ASSERT_TRUE(RunPreFilter(state, *pod).IsSuccess());
  Status rejection = plugin_->Filter(state, *pod, Node(0));
  ASSERT_THAT(rejection.Message(), HasSubstr("cannot allocate all claims"));
  EXPECT_THAT(plugin_->Diagnose(*pod->pod, *Node(0).node(), rejection),
              ::testing::ElementsAre("claim default/my-pod-claim, request req-1: no device of the "
                                     "node matches DeviceClass class (2 devices considered)"));
}

}  // namespace
}  // namespace berth::dynamicresources
