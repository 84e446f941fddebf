#include "plugins/volumerestrictions/volumerestrictions.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "berth/testing/fake_handle.h"
#include "framework/in_memory_cluster.h"
#include "testing/builders.h"

namespace berth::volumerestrictions {
namespace {

using berth::testing::FakeHandle;
using berth::testing::MakeNode;
using berth::testing::MakeNodeInfo;
using berth::testing::MakePod;

Volume GcePd(std::string pd, bool read_only = false) {
  Volume v;
  v.name = "gce";
  v.gce_persistent_disk = Volume::GcePd{std::move(pd), read_only};
  return v;
}

Volume AwsEbs(std::string id) {
  Volume v;
  v.name = "ebs";
  v.aws_elastic_block_store = Volume::AwsEbs{std::move(id), false};
  return v;
}

Volume Rbd(std::vector<std::string> monitors, bool read_only = false) {
  Volume v;
  v.name = "rbd";
  v.rbd = Volume::Rbd{std::move(monitors), "foo", "bar", read_only};
  return v;
}

Volume Iscsi(std::string iqn, bool read_only = false) {
  Volume v;
  v.name = "iscsi";
  v.iscsi = Volume::Iscsi{"127.0.0.1:3260", std::move(iqn), 0, read_only};
  return v;
}

Volume EmptyDir() {
  Volume v;
  v.name = "volume with no restriction";
  return v;
}

std::shared_ptr<const PersistentVolumeClaim> Claim(std::string name, std::string mode) {
  auto pvc = std::make_shared<PersistentVolumeClaim>();
  pvc->metadata.name = std::move(name);
  pvc->metadata.namespace_ = "default";
  pvc->spec.access_modes = {std::move(mode)};
  return pvc;
}

std::shared_ptr<const Pod> PodWithVolumes(std::string name, std::vector<Volume> volumes,
                                          std::string node = "") {
  auto b = MakePod().Name(std::move(name));
  for (auto& v : volumes) b.Volume(std::move(v));
  if (!node.empty()) b.Node(std::move(node));
  return b.Obj();
}

struct DiskCase {
  std::string name;
  std::vector<Volume> pod_volumes;
  std::vector<Volume> existing_volumes;  // of a pod already on the node (none: empty node)
  bool existing_pod = false;
  Code want_prefilter;
  std::optional<Code> want_filter;  // checked when PreFilter succeeds
};

void RunDiskCases(const std::vector<DiskCase>& cases) {
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    InMemoryCluster cluster;
    FakeHandle handle({}, &cluster);
    VolumeRestrictions plugin(handle);
    auto pod = PodInfo::Create(PodWithVolumes("p", tc.pod_volumes));
    std::vector<std::shared_ptr<const Pod>> on_node;
    if (tc.existing_pod) on_node.push_back(PodWithVolumes("existing", tc.existing_volumes, "n1"));
    NodeInfo node = MakeNodeInfo(MakeNode().Name("n1").Obj(), on_node);

    CycleState state;
    Status pre = plugin.PreFilter(state, *pod, {}, nullptr);
    EXPECT_EQ(pre.code(), tc.want_prefilter) << pre.Message();
    if (!pre.IsSuccess()) continue;
    Status got = plugin.Filter(state, *pod, node);
    EXPECT_EQ(got.code(), tc.want_filter.value_or(Code::kSuccess)) << got.Message();
    if (!got.IsSuccess()) {
      EXPECT_EQ(got.reasons(), std::vector<std::string>{std::string(kErrReasonDiskConflict)});
    }
  }
}

TEST(VolumeRestrictionsTest, GCEDiskConflicts) {
  RunDiskCases({
      {"nothing", {}, {}, false, Code::kSkip, {}},
      {"one state", {}, {GcePd("foo")}, true, Code::kSkip, {}},
      {"same state", {GcePd("foo")}, {GcePd("foo")}, true, Code::kSuccess, Code::kUnschedulable},
      {"different state", {GcePd("bar")}, {GcePd("foo")}, true, Code::kSuccess, {}},
      {"pod with a volume that doesn't have restrictions",
       {EmptyDir()},
       {},
       false,
       Code::kSkip,
       {}},
      {"both read-only share the disk",
       {GcePd("foo", true)},
       {GcePd("foo", true)},
       true,
       Code::kSuccess,
       {}},
      {"one read-write mount conflicts",
       {GcePd("foo", true)},
       {GcePd("foo", false)},
       true,
       Code::kSuccess,
       Code::kUnschedulable},
  });
}

TEST(VolumeRestrictionsTest, AWSDiskConflicts) {
  RunDiskCases({
      {"nothing", {}, {}, false, Code::kSkip, {}},
      {"one state", {}, {AwsEbs("foo")}, true, Code::kSkip, {}},
      {"same state", {AwsEbs("foo")}, {AwsEbs("foo")}, true, Code::kSuccess, Code::kUnschedulable},
      {"different state", {AwsEbs("bar")}, {AwsEbs("foo")}, true, Code::kSuccess, {}},
  });
}

TEST(VolumeRestrictionsTest, RBDDiskConflicts) {
  RunDiskCases({
      {"nothing", {}, {}, false, Code::kSkip, {}},
      {"one state", {}, {Rbd({"a", "b"})}, true, Code::kSkip, {}},
      {"same state",
       {Rbd({"a", "b"})},
       {Rbd({"a", "b"})},
       true,
       Code::kSuccess,
       Code::kUnschedulable},
      {"different state", {Rbd({"c", "d"})}, {Rbd({"a", "b"})}, true, Code::kSuccess, {}},
      {"one shared monitor is the same image",
       {Rbd({"b", "x"})},
       {Rbd({"a", "b"})},
       true,
       Code::kSuccess,
       Code::kUnschedulable},
      {"both read-only", {Rbd({"a"}, true)}, {Rbd({"a"}, true)}, true, Code::kSuccess, {}},
  });
}

TEST(VolumeRestrictionsTest, ISCSIDiskConflicts) {
  RunDiskCases({
      {"nothing", {}, {}, false, Code::kSkip, {}},
      {"one state", {}, {Iscsi("iqn.2016-12.server:storage.target01")}, true, Code::kSkip, {}},
      {"same state",
       {Iscsi("iqn.2016-12.server:storage.target01")},
       {Iscsi("iqn.2016-12.server:storage.target01")},
       true,
       Code::kSuccess,
       Code::kUnschedulable},
      {"different state",
       {Iscsi("iqn.2017-12.server:storage.target01")},
       {Iscsi("iqn.2016-12.server:storage.target01")},
       true,
       Code::kSuccess,
       {}},
      {"both read-only",
       {Iscsi("iqn.2016-12.server:storage.target01", true)},
       {Iscsi("iqn.2016-12.server:storage.target01", true)},
       true,
       Code::kSuccess,
       {}},
  });
}

TEST(VolumeRestrictionsTest, AccessModeConflicts) {
  auto pod_with_one_pvc =
      MakePod().Name("pod-with-one-pvc").PVC("claim-with-rwop-1").Node("node-1").Obj();
  auto pod_with_two_pvcs = MakePod()
                               .Name("pod-with-two-pvcs")
                               .PVC("claim-with-rwop-1")
                               .PVC("claim-with-rwop-2")
                               .Node("node-1")
                               .Obj();
  auto pod_with_one_conflict =
      MakePod().Name("pod-with-one-conflict").PVC("claim-with-rwop-1").Obj();
  auto pod_with_two_conflicts = MakePod()
                                    .Name("pod-with-two-conflicts")
                                    .PVC("claim-with-rwop-1")
                                    .PVC("claim-with-rwop-2")
                                    .Obj();
  auto pod_with_rwx = MakePod().Name("pod-with-rwx").PVC("claim-with-rwx").Node("node-1").Obj();
  auto rwop1 = Claim("claim-with-rwop-1", "ReadWriteOncePod");
  auto rwop2 = Claim("claim-with-rwop-2", "ReadWriteOncePod");
  auto rwx = Claim("claim-with-rwx", "ReadWriteMany");
  auto node = MakeNode().Name("node-1").Obj();

  struct Case {
    std::string name;
    std::shared_ptr<const Pod> pod;
    std::vector<std::shared_ptr<const Pod>> existing;
    std::vector<std::shared_ptr<const PersistentVolumeClaim>> pvcs;
    Status want_prefilter;
    Status want_filter;
  };
  std::vector<Case> cases = {
      {"nothing", MakePod().Name("empty").Obj(), {}, {}, Status::Skip(), {}},
      {"failed to get PVC",
       pod_with_one_pvc,
       {},
       {},
       Status::Unresolvable("persistentvolumeclaim \"claim-with-rwop-1\" not found"),
       {}},
      {"no access mode conflict",
       pod_with_one_pvc,
       {pod_with_rwx},
       {rwop1, rwx},
       Status::Skip(),
       {}},
      {"access mode conflict, unschedulable",
       pod_with_one_conflict,
       {pod_with_one_pvc, pod_with_rwx},
       {rwop1, rwx},
       Status::Success(),
       Status::Unschedulable(std::string(kErrReasonReadWriteOncePodConflict))},
      {"two conflicts, unschedulable",
       pod_with_two_conflicts,
       {pod_with_two_pvcs, pod_with_rwx},
       {rwop1, rwop2, rwx},
       Status::Success(),
       Status::Unschedulable(std::string(kErrReasonReadWriteOncePodConflict))},
  };

  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    InMemoryCluster cluster;
    for (const auto& pvc : tc.pvcs) cluster.AddPVC(pvc);
    FakeHandle handle(Snapshot::Build({node}, tc.existing), &cluster);
    VolumeRestrictions plugin(handle);
    auto pod = PodInfo::Create(tc.pod);
    CycleState state;
    Status pre = plugin.PreFilter(state, *pod, {}, nullptr);
    EXPECT_EQ(pre, tc.want_prefilter) << pre.Message();
    if (!pre.IsSuccess()) continue;
    Status got = plugin.Filter(state, *pod, *handle.snapshot().Get("node-1"));
    EXPECT_EQ(got, tc.want_filter) << got.Message();
  }
}

// Preemption dry-runs remove the claim's user; the conflict disappears only while it is gone.
TEST(VolumeRestrictionsTest, AddAndRemovePodFollowTheClaimUser) {
  auto user = MakePod().Name("user").PVC("rwop").Node("node-1").Obj();
  auto other = MakePod().Name("other").PVC("other-claim").Node("node-1").Obj();
  auto incoming = MakePod().Name("incoming").PVC("rwop").Obj();
  auto node = MakeNode().Name("node-1").Obj();
  InMemoryCluster cluster;
  cluster.AddPVC(Claim("rwop", "ReadWriteOncePod"));
  cluster.AddPVC(Claim("other-claim", "ReadWriteOnce"));
  FakeHandle handle(Snapshot::Build({node}, {user, other}), &cluster);
  VolumeRestrictions plugin(handle);
  auto pod = PodInfo::Create(incoming);
  const NodeInfo& ni = *handle.snapshot().Get("node-1");

  CycleState state;
  ASSERT_TRUE(plugin.PreFilter(state, *pod, {}, nullptr).IsSuccess());
  ASSERT_EQ(plugin.Filter(state, *pod, ni).code(), Code::kUnschedulable);

  CycleState sim = state.Clone();
  ASSERT_TRUE(plugin.RemovePod(sim, *pod, PodInfo::Create(other), ni).IsSuccess());
  EXPECT_EQ(plugin.Filter(sim, *pod, ni).code(), Code::kUnschedulable);
  ASSERT_TRUE(plugin.RemovePod(sim, *pod, PodInfo::Create(user), ni).IsSuccess());
  EXPECT_TRUE(plugin.Filter(sim, *pod, ni).IsSuccess());
  // The original state is untouched by the simulation.
  EXPECT_EQ(plugin.Filter(state, *pod, ni).code(), Code::kUnschedulable);

  ASSERT_TRUE(plugin.AddPod(sim, *pod, PodInfo::Create(user), ni).IsSuccess());
  EXPECT_EQ(plugin.Filter(sim, *pod, ni).code(), Code::kUnschedulable);
}

TEST(VolumeRestrictionsTest, Registration) {
  PluginRegistration reg = VolumeRestrictionsRegistration();
  EXPECT_EQ(reg.name, "VolumeRestrictions");
  EXPECT_FALSE(reg.decode_args);
  FakeHandle handle;
  auto plugin = reg.factory(nullptr, handle);
  ASSERT_TRUE(plugin.ok());
  EXPECT_EQ((*plugin)->Name(), "VolumeRestrictions");
  EXPECT_NE(dynamic_cast<FilterPlugin*>(plugin->get()), nullptr);
}

}  // namespace
}  // namespace berth::volumerestrictions
