#include "plugins/nodevolumelimits/nodevolumelimits.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "berth/testing/fake_handle.h"
#include "framework/csi_drivers.h"
#include "framework/in_memory_cluster.h"
#include "plugins/nodevolumelimits/csi_limits_fixture.h"
#include "testing/builders.h"

namespace berth::nodevolumelimits {
namespace {

using berth::testing::FakeHandle;
using berth::testing::MakeNodeInfo;
using berth::testing::MakePod;

Volume EphemeralVolume(std::string name) {
  Volume v;
  v.name = std::move(name);
  v.ephemeral = true;
  return v;
}

Volume InlineEbs(std::string id) {
  Volume v;
  v.name = "inline";
  v.aws_elastic_block_store = Volume::AwsEbs{std::move(id), false};
  return v;
}

Volume ConfigMapLike() {
  Volume v;
  v.name = "config";
  return v;
}

std::shared_ptr<const Pod> EphemeralPod(std::string uid, std::vector<std::string> volumes) {
  auto b = MakePod().Name("abc").Namespace("test").UID(std::move(uid)).Node(kNodeName);
  for (auto& v : volumes) b.Volume(EphemeralVolume(v));
  return b.Obj();
}

Ptr<PersistentVolumeClaim> EphemeralClaim(const Pod& pod, const std::string& volume, bool owned) {
  auto pvc = std::make_shared<PersistentVolumeClaim>();
  pvc->metadata.namespace_ = pod.metadata.namespace_;
  pvc->metadata.name = pod.metadata.name + "-" + volume;
  pvc->spec.storage_class_name = "csi-sc";
  if (owned)
    pvc->metadata.owner_references.push_back(
        {"v1", "Pod", pod.metadata.name, pod.metadata.uid, true});
  return pvc;
}

// Long by design: kube-scheduler's CSI limits cases, one row each.
TEST(CSILimitsTest, Table) {
  auto running = PodWith({"csi-ebs.csi.aws.com-3"});
  auto pending_volume = PodWith({"csi-4"});
  auto unbound_pvc_pod2 = PodWith({"csi-4"});
  auto missing_pv = PodWith({"csi-6"});
  auto no_sc_pvc = PodWith({"csi-5"});
  auto gce_two = PodWith({"csi-pd.csi.storage.gke.io-1", "csi-pd.csi.storage.gke.io-2"});
  auto in_tree_one = PodWith({"csi-kubernetes.io/aws-ebs-0"});
  auto in_tree_two = PodWith({"csi-kubernetes.io/aws-ebs-1", "csi-kubernetes.io/aws-ebs-2"});
  auto ebs_one = PodWith({"csi-ebs.csi.aws.com-0"});
  auto ebs_two = PodWith({"csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2"});
  auto non_migratable = PodWith({"csi-kubernetes.io/hostpath-0"});
  auto inline_ebs = MakePod().Name("inline").Volume(InlineEbs("aws-inline1")).Obj();
  auto inline_same_id =
      MakePod().Name("inline-same").Volume(InlineEbs("csi-ebs.csi.aws.com-1")).Obj();
  auto only_config = MakePod().Name("config").Volume(ConfigMapLike()).Obj();
  auto pvc_with_config =
      MakePod().Name("pvc-config").Volume(ConfigMapLike()).PVC("csi-ebs.csi.aws.com-0").Obj();
  auto ephemeral = EphemeralPod("12345", {"xyz"});
  auto ephemeral_two = EphemeralPod("12345II", {"x", "y"});
  auto ephemeral_with_config = [&] {
    auto b = MakePod().Name("abc").Namespace("test").UID("12345");
    b.Volume(ConfigMapLike()).Volume(EphemeralVolume("xyz"));
    return b.Obj();
  }();
  auto inline_with_config = MakePod()
                                .Name("inline-config")
                                .Volume(ConfigMapLike())
                                .Volume(InlineEbs("aws-inline1"))
                                .Obj();

  const Status kExceeded = Status::Unschedulable(std::string(kErrReasonMaxVolumeCountExceeded));
  const std::vector<std::string> kEbs = {kEbsDriver};
  const std::vector<std::string> kEbsGce = {kEbsDriver, kGceDriver};
  const std::vector<std::string> kMigrated = {kEbsInTree, kEbsDriver};

  struct Case {
    std::string name;
    std::shared_ptr<const Pod> pod;
    std::vector<std::shared_ptr<const Pod>> existing;
    std::vector<Ptr<PersistentVolumeClaim>> extra_claims;
    int32_t max_vols;
    std::vector<std::string> drivers;
    LimitSource source;
    Status want_filter;
    Status want_prefilter;
  };
  std::vector<Case> cases = {
      {"fits when node volume limit >= new pods CSI volume",
       ebs_one,
       {running, ebs_two},
       {},
       4,
       kEbs,
       LimitSource::kCSINode,
       {},
       {}},
      {"doesn't when node volume limit <= pods CSI volume",
       ebs_one,
       {running, ebs_two},
       {},
       2,
       kEbs,
       LimitSource::kCSINode,
       kExceeded,
       {}},
      {"should when driver does not support volume limits",
       ebs_one,
       {running, ebs_two},
       {},
       2,
       kEbs,
       LimitSource::kCSINodeWithoutLimit,
       {},
       {}},
      {"count pending PVCs towards volume limit <= pods CSI volume",
       ebs_one,
       {pending_volume, ebs_two},
       {},
       2,
       kEbs,
       LimitSource::kCSINode,
       kExceeded,
       {}},
      {"count multiple pending pvcs towards volume limit >= pods CSI volume",
       ebs_one,
       {pending_volume, unbound_pvc_pod2, ebs_two},
       {},
       4,
       kEbs,
       LimitSource::kCSINode,
       {},
       {}},
      {"two same pending PVCs count as one",
       ebs_one,
       {pending_volume, unbound_pvc_pod2, ebs_two},
       {},
       3,
       kEbs,
       LimitSource::kCSINode,
       kExceeded,
       {}},
      {"should count PVCs with invalid PV name but valid SC",
       ebs_one,
       {missing_pv, ebs_two},
       {},
       2,
       kEbs,
       LimitSource::kCSINode,
       kExceeded,
       {}},
      {"don't count pvcs with missing SC towards volume limit",
       ebs_one,
       {running, no_sc_pvc},
       {},
       2,
       kEbs,
       LimitSource::kCSINode,
       {},
       {}},
      {"count pvcs with the same type towards volume limit",
       ebs_one,
       {gce_two, ebs_two},
       {},
       2,
       kEbsGce,
       LimitSource::kCSINode,
       kExceeded,
       {}},
      {"don't count pvcs with different type towards volume limit",
       gce_two,
       {ebs_two, running},
       {},
       2,
       kEbsGce,
       LimitSource::kCSINode,
       {},
       {}},
      {"should count in-tree volumes if migration is enabled",
       in_tree_one,
       {in_tree_two},
       {},
       2,
       kMigrated,
       LimitSource::kCSINode,
       kExceeded,
       {}},
      {"nil csi node", inline_ebs, {in_tree_two}, {}, 0, kMigrated, LimitSource::kNone, {}, {}},
      {"should count unbound in-tree volumes if migration is enabled",
       pending_volume,
       {in_tree_two},
       {},
       2,
       kMigrated,
       LimitSource::kCSINode,
       kExceeded,
       {}},
      {"should not limit pod if volume used does not report limits",
       in_tree_one,
       {in_tree_two},
       {},
       2,
       kMigrated,
       LimitSource::kCSINodeWithoutLimit,
       {},
       {}},
      {"should not count non-migratable in-tree volumes",
       non_migratable,
       {ebs_two},
       {},
       2,
       {kHostPathInTree, kEbsDriver},
       LimitSource::kCSINode,
       {},
       {}},
      {"should count in-tree inline volumes if migration is enabled",
       inline_ebs,
       {in_tree_two},
       {},
       2,
       kMigrated,
       LimitSource::kCSINode,
       kExceeded,
       {}},
      {"should count in-tree and csi volumes if migration is enabled (scheduling in-tree)",
       in_tree_one,
       {ebs_two},
       {},
       2,
       kMigrated,
       LimitSource::kCSINode,
       kExceeded,
       {}},
      {"should count in-tree, inline and csi volumes (scheduling inline)",
       inline_ebs,
       {ebs_two, in_tree_one},
       {},
       3,
       kMigrated,
       LimitSource::kCSINode,
       kExceeded,
       {}},
      {"an inline volume with an attached CSI handle is not counted twice",
       inline_same_id,
       {ebs_two, in_tree_one},
       {},
       3,
       kMigrated,
       LimitSource::kCSINode,
       {},
       {}},
      {"should count in-tree and csi volumes if migration is enabled (scheduling csi)",
       ebs_one,
       {in_tree_two},
       {},
       2,
       kMigrated,
       LimitSource::kCSINode,
       kExceeded,
       {}},
      {"ephemeral volume missing",
       ephemeral,
       {},
       {},
       0,
       kEbs,
       LimitSource::kCSINodeWithoutLimit,
       Status::Unresolvable(
           "looking up PVC test/abc-xyz: persistentvolumeclaim \"abc-xyz\" not found"),
       {}},
      {"ephemeral volume not owned",
       ephemeral,
       {},
       {EphemeralClaim(*ephemeral, "xyz", false)},
       0,
       kEbs,
       LimitSource::kCSINodeWithoutLimit,
       Status::Error("PVC test/abc-xyz was not created for pod test/abc (pod is not owner)"),
       {}},
      {"ephemeral volume unbound",
       ephemeral,
       {},
       {EphemeralClaim(*ephemeral, "xyz", true)},
       0,
       kEbs,
       LimitSource::kCSINodeWithoutLimit,
       {},
       {}},
      {"ephemeral doesn't when node volume limit <= pods CSI volume",
       ephemeral,
       {running, ebs_two},
       {EphemeralClaim(*ephemeral, "xyz", true)},
       2,
       kEbs,
       LimitSource::kCSINode,
       kExceeded,
       {}},
      {"ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
       ebs_one,
       {running, ephemeral_two},
       {EphemeralClaim(*ephemeral_two, "x", true), EphemeralClaim(*ephemeral_two, "y", true)},
       2,
       kEbs,
       LimitSource::kCSINode,
       kExceeded,
       {}},
      {"persistent doesn't when node volume limit <= ephemeral + persistent volumes",
       ebs_one,
       {running, ephemeral, ebs_two},
       {EphemeralClaim(*ephemeral, "xyz", true)},
       3,
       kEbs,
       LimitSource::kCSINode,
       kExceeded,
       {}},
      {"persistent okay when node volume limit > ephemeral + persistent volumes",
       ebs_one,
       {running, ephemeral, ebs_two},
       {EphemeralClaim(*ephemeral, "xyz", true)},
       5,
       kEbs,
       LimitSource::kCSINode,
       {},
       {}},
      {"skip Filter when the pod only uses secrets and configmaps",
       only_config,
       {},
       {},
       2,
       kEbs,
       LimitSource::kCSINode,
       {},
       Status::Skip()},
      {"don't skip Filter when the pod has pvcs",
       pvc_with_config,
       {},
       {},
       2,
       kEbs,
       LimitSource::kCSINode,
       {},
       {}},
      {"don't skip Filter when the pod has ephemeral volumes",
       ephemeral_with_config,
       {},
       {},
       0,
       kEbs,
       LimitSource::kCSINodeWithoutLimit,
       Status::Unresolvable(
           "looking up PVC test/abc-xyz: persistentvolumeclaim \"abc-xyz\" not found"),
       {}},
      {"don't skip Filter when the pod has inline migratable volumes",
       inline_with_config,
       {in_tree_two},
       {},
       2,
       kMigrated,
       LimitSource::kCSINode,
       kExceeded,
       {}},
  };

  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    InMemoryCluster cluster;
    AddFixture(cluster, tc.drivers);
    for (const auto& pvc : tc.extra_claims) cluster.AddPVC(pvc);
    AddCSINode(cluster, tc.source, tc.max_vols, tc.drivers);
    FakeHandle handle({}, &cluster);
    CSILimits plugin(handle);
    auto node = std::make_shared<Node>();
    node->metadata.name = kNodeName;
    NodeInfo info = MakeNodeInfo(node, tc.existing);
    auto pod = PodInfo::Create(tc.pod);

    CycleState state;
    Status pre = plugin.PreFilter(state, *pod, {}, nullptr);
    EXPECT_EQ(pre, tc.want_prefilter) << pre.Message();
    if (pre.IsSkip()) continue;
    Status got = plugin.Filter(state, *pod, info);
    EXPECT_EQ(got, tc.want_filter) << got.Message();
  }
}

// Limits come from the CSINode only: a node's status.allocatable
// "attachable-volumes-csi-<driver>" is not a limit.
TEST(CSILimitsTest, NodeAllocatableIsNotALimit) {
  InMemoryCluster cluster;
  AddFixture(cluster, {kEbsDriver});
  FakeHandle handle({}, &cluster);
  CSILimits plugin(handle);
  auto node = std::make_shared<Node>();
  node->metadata.name = kNodeName;
  node->status.allocatable["attachable-volumes-csi-ebs.csi.aws.com"] = berth::testing::Q("2");
  NodeInfo info = MakeNodeInfo(node, {PodWith({"csi-ebs.csi.aws.com-1", "csi-ebs.csi.aws.com-2"})});

  CycleState state;
  auto pod = PodInfo::Create(PodWith({"csi-ebs.csi.aws.com-0"}));
  ASSERT_TRUE(plugin.PreFilter(state, *pod, {}, nullptr).IsSuccess());
  EXPECT_TRUE(plugin.Filter(state, *pod, info).IsSuccess());

  // With the same count in the CSINode, the third volume is one too many.
  AddCSINode(cluster, LimitSource::kCSINode, 2, {kEbsDriver});
  CycleState again;
  ASSERT_TRUE(plugin.PreFilter(again, *pod, {}, nullptr).IsSuccess());
  EXPECT_EQ(plugin.Filter(again, *pod, info).code(), Code::kUnschedulable);
}

TEST(CSILimitsTest, Registration) {
  PluginRegistration reg = NodeVolumeLimitsRegistration(config::FeatureGates());
  EXPECT_EQ(reg.name, "NodeVolumeLimits");
  EXPECT_FALSE(reg.decode_args);
  FakeHandle handle;
  auto plugin = reg.factory(nullptr, handle);
  ASSERT_TRUE(plugin.ok());
  EXPECT_EQ((*plugin)->Name(), "NodeVolumeLimits");
}

// ---- VolumeLimitScaling (upstream TestVolumeLimitScalingGate, and more)

enum class Driver { kNoObject, kObject, kPreventIfMissing };

struct ScalingCase {
  bool gate;
  LimitSource source;
  int32_t limit;
  Driver driver;
};

Status FilterWithScaling(const ScalingCase& c, std::shared_ptr<const Pod> pod = nullptr) {
  InMemoryCluster cluster;
  AddFixture(cluster, {kEbsDriver});
  AddCSINode(cluster, c.source, c.limit, {kEbsDriver});
  if (c.driver != Driver::kNoObject)
    cluster.AddCSIDriver(kEbsDriver, {c.driver == Driver::kPreventIfMissing});
  FakeHandle handle({}, &cluster);
  config::FeatureGates gates;
  std::vector<std::string> warnings;
  EXPECT_TRUE(
      gates.Set(c.gate ? "VolumeLimitScaling=true" : "VolumeLimitScaling=false", &warnings).ok());
  auto made = NodeVolumeLimitsRegistration(gates).factory(nullptr, handle);
  EXPECT_TRUE(made.ok());
  auto& plugin = dynamic_cast<CSILimits&>(**made);
  auto node = std::make_shared<Node>();
  node->metadata.name = kNodeName;
  NodeInfo info = MakeNodeInfo(node, {});
  auto pi = PodInfo::Create(pod ? pod : PodWith({"csi-ebs.csi.aws.com-0"}));
  CycleState state;
  Status pre = plugin.PreFilter(state, *pi, {}, nullptr);
  EXPECT_TRUE(pre.IsSuccess()) << pre.Message();
  return plugin.Filter(state, *pi, info);
}

const Status kNotInstalled =
    Status::Unschedulable("ebs.csi.aws.com CSI driver is not installed on the node");

TEST(CSILimitsScalingTest, AllowsWhenCSIDriverExistsWithoutPreventPodSchedulingIfMissing) {
  EXPECT_TRUE(FilterWithScaling({true, LimitSource::kNoDriver, 0, Driver::kObject}).IsSuccess());
}

TEST(CSILimitsScalingTest, FailsWhenDriverNotInstalledAndPreventPodSchedulingIfMissing) {
  EXPECT_EQ(FilterWithScaling({true, LimitSource::kNoDriver, 0, Driver::kPreventIfMissing}),
            kNotInstalled);
}

TEST(CSILimitsScalingTest, GateDisabledSkipsTheDriverPresenceCheck) {
  EXPECT_TRUE(
      FilterWithScaling({false, LimitSource::kNoDriver, 0, Driver::kPreventIfMissing}).IsSuccess());
  EXPECT_TRUE(
      FilterWithScaling({false, LimitSource::kNone, 0, Driver::kPreventIfMissing}).IsSuccess());
}

TEST(CSILimitsScalingTest, DriverInstalledWithinLimit) {
  EXPECT_TRUE(
      FilterWithScaling({true, LimitSource::kCSINode, 2, Driver::kPreventIfMissing}).IsSuccess());
  // Registered without a limit: installed, nothing to count.
  EXPECT_TRUE(
      FilterWithScaling({true, LimitSource::kCSINodeWithoutLimit, 0, Driver::kPreventIfMissing})
          .IsSuccess());
}

TEST(CSILimitsScalingTest, AllowsWhenCSIDriverObjectMissing) {
  EXPECT_TRUE(FilterWithScaling({true, LimitSource::kNoDriver, 0, Driver::kNoObject}).IsSuccess());
}

TEST(CSILimitsScalingTest, NodeWithoutCSINodeHasNoDriver) {
  EXPECT_EQ(FilterWithScaling({true, LimitSource::kNone, 0, Driver::kPreventIfMissing}),
            kNotInstalled);
}

TEST(CSILimitsScalingTest, UnboundClaimIsCheckedUnderItsClassProvisioner) {
  // csi-4 is unbound; csi-sc provisions with ebs.csi.aws.com.
  EXPECT_EQ(FilterWithScaling({true, LimitSource::kNoDriver, 0, Driver::kPreventIfMissing},
                              PodWith({"csi-4"})),
            kNotInstalled);
}

TEST(CSILimitsScalingTest, PodsWithoutCountableVolumesAreNotChecked) {
  // A claim without class and volume counts under no driver: nothing to check.
  EXPECT_TRUE(FilterWithScaling({true, LimitSource::kNoDriver, 0, Driver::kPreventIfMissing},
                                PodWith({"csi-5"}))
                  .IsSuccess());
}

TEST(CSILimitsScalingTest, ReadsTheFieldFromCSIDriverDocuments) {
  EXPECT_TRUE(CSIDriverInfoOf({{"spec", {{"preventPodSchedulingIfMissing", true}}}})
                  .prevent_pod_scheduling_if_missing);
  EXPECT_FALSE(CSIDriverInfoOf({{"spec", {{"preventPodSchedulingIfMissing", false}}}})
                   .prevent_pod_scheduling_if_missing);
  EXPECT_FALSE(
      CSIDriverInfoOf({{"spec", {{"attachRequired", true}}}}).prevent_pod_scheduling_if_missing);
  EXPECT_FALSE(CSIDriverInfoOf({{"spec", {{"preventPodSchedulingIfMissing", "true"}}}})
                   .prevent_pod_scheduling_if_missing);
  // Listers that keep no CSIDriver objects find none.
  FakeHandle handle;
  EXPECT_FALSE(FindCSIDriver(handle.listers(), kEbsDriver).has_value());
}

}  // namespace
}  // namespace berth::nodevolumelimits
