// Storage capacity scoring (the StorageCapacityScoring gate): kube-scheduler's score cases of
// volume_binding_test.go, with the shape its tests pass and with v1.37's default shape.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "config/feature_gates.h"
#include "plugins/volumebinding/volumebinding_test_util.h"

namespace berth::volumebinding {
namespace {

// The shape kube-scheduler's volume binding tests configure: full volumes score highest.
const std::vector<config::UtilizationShapePoint> kTestShape = {{0, 0}, {100, 10}};
// VolumeBindingArgs.shape's default with the gate on: empty volumes score highest.
const std::vector<config::UtilizationShapePoint> kDefaultShape = {{0, 10}, {100, 0}};

std::vector<Ptr<PersistentVolume>> LocalPVs(const std::string& cls, const std::string& node,
                                            const std::string& capacity, int first, int count) {
  std::vector<Ptr<PersistentVolume>> out;
  for (int i = first; i < first + count; ++i) {
    out.push_back(MakePV("pv-" + node.substr(5) + "-" + std::to_string(i), cls)
                      .Capacity(capacity)
                      .NodeAffinity(kHostname, {node})
                      .Obj());
  }
  return out;
}

struct ScoreCase {
  std::string name;
  std::shared_ptr<const Pod> pod;
  std::vector<Ptr<PersistentVolumeClaim>> pvcs;
  std::vector<Ptr<PersistentVolume>> pvs;
};

ScoreCase OneClaim() {
  std::vector<Ptr<PersistentVolume>> pvs = LocalPVs("wait-sc", "node-a", "200Gi", 0, 2);
  for (auto& pv : LocalPVs("wait-sc", "node-b", "100Gi", 0, 2)) pvs.push_back(pv);
  return {"local volumes with close capacity are preferred",
          PodWithClaims("pod-a", {"pvc-a"}),
          {MakePVC("pvc-a", "wait-sc").Request("50Gi").Obj()},
          pvs};
}

ScoreCase TwoClassesOfClaims() {
  std::vector<Ptr<PersistentVolume>> pvs;
  for (auto& pv : LocalPVs("wait-sc", "node-a", "200Gi", 0, 2)) pvs.push_back(pv);
  for (auto& pv : LocalPVs("wait-hdd-sc", "node-a", "200Gi", 2, 2)) pvs.push_back(pv);
  for (auto& pv : LocalPVs("wait-sc", "node-b", "100Gi", 0, 2)) pvs.push_back(pv);
  for (auto& pv : LocalPVs("wait-hdd-sc", "node-b", "100Gi", 2, 2)) pvs.push_back(pv);
  return {"local volumes with close capacity are preferred (multiple pvcs)",
          PodWithClaims("pod-a", {"pvc-0", "pvc-1"}),
          {MakePVC("pvc-0", "wait-sc").Request("50Gi").Obj(),
           MakePVC("pvc-1", "wait-hdd-sc").Request("100Gi").Obj()},
          pvs};
}

// Scores of node-a and node-b (node-c has no volume and is filtered out).
std::vector<int64_t> Scores(const ScoreCase& tc,
                            const std::vector<config::UtilizationShapePoint>& shape) {
  std::vector<std::shared_ptr<const Node>> nodes = {NodeNamed("node-a"), NodeNamed("node-b"),
                                                    NodeNamed("node-c")};
  Env env(nodes, tc.pvcs, tc.pvs, {kImmediateSC, kWaitSC, kWaitHddSC}, shape);
  auto pod = PodInfo::Create(tc.pod);
  CycleState state;
  EXPECT_TRUE(env.plugin.PreFilter(state, *pod, {}, nullptr).IsSuccess());
  EXPECT_EQ(env.plugin.Filter(state, *pod, env.node("node-c")),
            Unresolvable({kErrReasonBindConflict}));
  std::vector<const NodeInfo*> feasible = {&env.node("node-a"), &env.node("node-b")};
  Status pre = env.plugin.PreScore(state, *pod, feasible);
  EXPECT_TRUE(pre.IsSuccess()) << pre.Message();
  std::vector<int64_t> out;
  for (const NodeInfo* node : feasible) {
    EXPECT_TRUE(env.plugin.Filter(state, *pod, *node).IsSuccess());
    int64_t score = -1;
    EXPECT_TRUE(env.plugin.Score(state, *pod, *node, &score).IsSuccess());
    out.push_back(score);
  }
  return out;
}

TEST(VolumeBindingScoreTest, UpstreamCasesWithTheTestShape) {
  // 50Gi of a 200Gi PV is 25% used, of a 100Gi PV 50%.
  EXPECT_EQ(Scores(OneClaim(), kTestShape), (std::vector<int64_t>{25, 50}));
  // Per class, then averaged: (25 + 50) / 2 rounds to 38; (50 + 100) / 2 = 75.
  EXPECT_EQ(Scores(TwoClassesOfClaims(), kTestShape), (std::vector<int64_t>{38, 75}));
}

TEST(VolumeBindingScoreTest, DefaultShapePrefersRoomierVolumes) {
  EXPECT_EQ(Scores(OneClaim(), kDefaultShape), (std::vector<int64_t>{75, 50}));
  // (75 + 50) / 2 = 62.5 rounds away from zero; (50 + 0) / 2 = 25.
  EXPECT_EQ(Scores(TwoClassesOfClaims(), kDefaultShape), (std::vector<int64_t>{63, 25}));
}

TEST(VolumeBindingScoreTest, NoScoringWithoutShapeOrStaticBindings) {
  std::vector<std::shared_ptr<const Node>> nodes = {NodeNamed("node-a"), NodeNamed("node-b")};
  const ScoreCase tc = OneClaim();
  {
    // Gate off: the plugin does not score.
    Env env(nodes, tc.pvcs, tc.pvs);
    auto pod = PodInfo::Create(tc.pod);
    CycleState state;
    ASSERT_TRUE(env.plugin.PreFilter(state, *pod, {}, nullptr).IsSuccess());
    EXPECT_TRUE(env.plugin.PreScore(state, *pod, {}).IsSkip());
  }
  {
    // A pod without claims, and one whose claims are all bound, skip scoring.
    Env env(nodes, {MakePVC("pvc-b", "wait-sc").BoundPV("pv-b").Obj()},
            {MakePV("pv-b", "wait-sc").Phase("Bound").Obj()}, {kImmediateSC, kWaitSC, kWaitHddSC},
            kDefaultShape);
    for (auto claims : {std::vector<std::string>{}, std::vector<std::string>{"pvc-b"}}) {
      auto pod = PodInfo::Create(PodWithClaims("pod", claims));
      CycleState state;
      (void)env.plugin.PreFilter(state, *pod, {}, nullptr);
      EXPECT_TRUE(env.plugin.PreScore(state, *pod, {}).IsSkip()) << claims.size();
    }
  }
}

TEST(VolumeBindingScoreTest, ClaimsToProvisionScoreZero) {
  // Without CSIStorageCapacity a provisioned claim has no capacity to compare with: upstream
  // scores such a node 0, so PreScore skips a pod whose claims all need provisioning, and a
  // node where the claim would be provisioned rather than matched scores 0.
  auto provisioner = Class("local", "WaitForFirstConsumer", "berth.dev/local");
  std::vector<std::shared_ptr<const Node>> nodes = {NodeNamed("node-a"), NodeNamed("node-b")};
  Env env(nodes, {MakePVC("pvc-a", "local").Request("50Gi").Obj()},
          {MakePV("pv-a", "local").Capacity("100Gi").NodeAffinity(kHostname, {"node-a"}).Obj()},
          {provisioner}, kDefaultShape);
  auto pod = PodInfo::Create(PodWithClaims("pod-a", {"pvc-a"}));
  CycleState state;
  ASSERT_TRUE(env.plugin.PreFilter(state, *pod, {}, nullptr).IsSuccess());
  ASSERT_TRUE(env.plugin.PreScore(state, *pod, {}).IsSuccess());
  int64_t a = -1, b = -1;
  ASSERT_TRUE(env.plugin.Score(state, *pod, env.node("node-a"), &a).IsSuccess());
  ASSERT_TRUE(env.plugin.Score(state, *pod, env.node("node-b"), &b).IsSuccess());
  EXPECT_EQ(a, 50);  // matched to pv-a: 50% used
  EXPECT_EQ(b, 0);   // provisioned
}

TEST(VolumeBindingScoreTest, RegistrationFollowsTheGate) {
  FakeHandle handle;
  PluginRegistration on = VolumeBindingRegistration(config::FeatureGates());
  auto defaults = on.decode_args(nullptr, "args");
  ASSERT_TRUE(defaults.ok());
  const auto* args = dynamic_cast<const config::VolumeBindingArgs*>(defaults->get());
  ASSERT_NE(args, nullptr);
  ASSERT_EQ(args->shape.size(), 2u);
  EXPECT_EQ(args->shape[0].utilization, 0);
  EXPECT_EQ(args->shape[0].score, 10);
  EXPECT_EQ(args->shape[1].score, 0);

  config::FeatureGates off_gates;
  std::vector<std::string> warnings;
  ASSERT_TRUE(off_gates.Set("StorageCapacityScoring=false", &warnings).ok());
  PluginRegistration off = VolumeBindingRegistration(off_gates);
  auto off_defaults = off.decode_args(nullptr, "args");
  ASSERT_TRUE(off_defaults.ok());
  EXPECT_TRUE(dynamic_cast<const config::VolumeBindingArgs*>(off_defaults->get())->shape.empty());
  // A shape without the gate is refused, as kube-scheduler refuses it.
  nlohmann::json raw = {{"shape", {{{"utilization", 0}, {"score", 1}}}}};
  EXPECT_FALSE(off.decode_args(&raw, "args").ok());
}

}  // namespace
}  // namespace berth::volumebinding
