#include "plugins/volumezone/volumezone.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "berth/testing/fake_handle.h"
#include "framework/in_memory_cluster.h"
#include "testing/builders.h"

namespace berth::volumezone {
namespace {

using berth::testing::FakeHandle;
using berth::testing::MakeNodeInfo;
using berth::testing::MakePod;

constexpr const char* kBetaZone = "failure-domain.beta.kubernetes.io/zone";
constexpr const char* kBetaRegion = "failure-domain.beta.kubernetes.io/region";
constexpr const char* kZone = "topology.kubernetes.io/zone";
constexpr const char* kRegion = "topology.kubernetes.io/region";

Ptr<PersistentVolume> PV(std::string name, Labels labels) {
  auto pv = std::make_shared<PersistentVolume>();
  pv->metadata.name = std::move(name);
  pv->metadata.labels = std::move(labels);
  return pv;
}

Ptr<PersistentVolumeClaim> BoundClaim(std::string name, std::string pv) {
  auto pvc = std::make_shared<PersistentVolumeClaim>();
  pvc->metadata.name = std::move(name);
  pvc->metadata.namespace_ = "default";
  pvc->spec.volume_name = std::move(pv);
  return pvc;
}

Ptr<PersistentVolumeClaim> UnboundClaim(std::string name, std::optional<std::string> sc) {
  auto pvc = std::make_shared<PersistentVolumeClaim>();
  pvc->metadata.name = std::move(name);
  pvc->metadata.namespace_ = "default";
  pvc->spec.storage_class_name = std::move(sc);
  return pvc;
}

Ptr<StorageClass> Class(std::string name, std::optional<std::string> mode) {
  auto sc = std::make_shared<StorageClass>();
  sc->metadata.name = std::move(name);
  sc->volume_binding_mode = std::move(mode);
  return sc;
}

std::shared_ptr<const Node> NodeWithLabels(Labels labels) {
  auto node = std::make_shared<Node>();
  node->metadata.name = "host1";
  node->metadata.labels = std::move(labels);
  return node;
}

struct Case {
  std::string name;
  std::string claim;  // empty: the pod has no volume
  Labels node_labels;
  Status want_prefilter;
  Status want_filter;
};

// Runs PreFilter and then Filter (even after a PreFilter rejection, as the unit tests of
// kube-scheduler do: Filter then resolves the volumes itself and must agree).
void RunCases(InMemoryCluster& cluster, const std::vector<Case>& cases) {
  FakeHandle handle({}, &cluster);
  VolumeZone plugin(handle);
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto builder = MakePod().Name("pod_1");
    if (!tc.claim.empty()) builder.PVC(tc.claim);
    auto pod = builder.Info();
    NodeInfo node = MakeNodeInfo(NodeWithLabels(tc.node_labels));
    CycleState state;
    Status pre = plugin.PreFilter(state, *pod, {}, nullptr);
    EXPECT_EQ(pre, tc.want_prefilter) << pre.Message();
    Status got = plugin.Filter(state, *pod, node);
    EXPECT_EQ(got, tc.want_filter) << got.Message();
  }
}

const Status kConflict = Status::Unresolvable(std::string(kErrReasonConflict));

TEST(VolumeZoneTest, SingleZone) {
  InMemoryCluster cluster;
  cluster.AddPV(PV("Vol_1", {{kBetaZone, "us-west1-a"}}));
  cluster.AddPV(PV("Vol_2", {{kBetaRegion, "us-west1"}, {"uselessLabel", "none"}}));
  cluster.AddPV(PV("Vol_3", {{kBetaRegion, "us-west1"}}));
  cluster.AddPV(PV("Vol_Stable_1", {{kZone, "us-west1-a"}}));
  cluster.AddPV(PV("Vol_Stable_2", {{kRegion, "us-west1"}, {"uselessLabel", "none"}}));
  cluster.AddPV(PV("Vol_Stable_3", {{kZone, "us-west1-a"}, {kRegion, "us-west1-a"}}));
  for (auto [claim, pv] :
       std::vector<std::pair<std::string, std::string>>{{"PVC_1", "Vol_1"},
                                                        {"PVC_2", "Vol_2"},
                                                        {"PVC_3", "Vol_3"},
                                                        {"PVC_4", "Vol_not_exist"},
                                                        {"PVC_Stable_1", "Vol_Stable_1"},
                                                        {"PVC_Stable_2", "Vol_Stable_2"},
                                                        {"PVC_Stable_3", "Vol_Stable_3"}})
    cluster.AddPVC(BoundClaim(claim, pv));

  RunCases(cluster, {
                        {"pod without volume", "", {{kBetaZone, "us-west1-a"}}, Status::Skip(), {}},
                        {"node without labels", "PVC_1", {}, {}, {}},
                        {"beta zone label matched",
                         "PVC_1",
                         {{kBetaZone, "us-west1-a"}, {"uselessLabel", "none"}},
                         {},
                         {}},
                        {"beta region label matched",
                         "PVC_2",
                         {{kBetaRegion, "us-west1"}, {"uselessLabel", "none"}},
                         {},
                         {}},
                        {"beta region label doesn't match",
                         "PVC_2",
                         {{kBetaRegion, "no_us-west1"}, {"uselessLabel", "none"}},
                         {},
                         kConflict},
                        {"beta zone label doesn't match",
                         "PVC_1",
                         {{kBetaZone, "no_us-west1-a"}, {"uselessLabel", "none"}},
                         {},
                         kConflict},
                        {"zone label matched",
                         "PVC_Stable_1",
                         {{kZone, "us-west1-a"}, {"uselessLabel", "none"}},
                         {},
                         {}},
                        {"region label matched",
                         "PVC_Stable_2",
                         {{kRegion, "us-west1"}, {"uselessLabel", "none"}},
                         {},
                         {}},
                        {"region label doesn't match",
                         "PVC_Stable_2",
                         {{kRegion, "no_us-west1"}, {"uselessLabel", "none"}},
                         {},
                         kConflict},
                        {"zone label doesn't match",
                         "PVC_Stable_1",
                         {{kZone, "no_us-west1-a"}, {"uselessLabel", "none"}},
                         {},
                         kConflict},
                        {"pv with zone and region, node with only zone",
                         "PVC_Stable_3",
                         {{kZone, "us-west1-a"}},
                         {},
                         kConflict},
                        {"pv with zone,node with beta zone",
                         "PVC_Stable_1",
                         {{kBetaZone, "us-west1-a"}},
                         {},
                         kConflict},
                        {"pv with beta label,node with ga label, matched",
                         "PVC_1",
                         {{kZone, "us-west1-a"}},
                         {},
                         {}},
                        {"pv with beta label,node with ga label, don't match",
                         "PVC_1",
                         {{kZone, "us-west1-b"}},
                         {},
                         kConflict},
                    });
}

TEST(VolumeZoneTest, MultiZone) {
  InMemoryCluster cluster;
  cluster.AddPV(PV("Vol_1", {{kBetaZone, "us-west1-a"}}));
  cluster.AddPV(PV("Vol_2", {{kBetaZone, "us-west1-b"}, {"uselessLabel", "none"}}));
  cluster.AddPV(PV("Vol_3", {{kBetaZone, "us-west1-c__us-west1-a"}}));
  cluster.AddPV(PV("Vol_Stable_1", {{kZone, "us-west1-a"}}));
  cluster.AddPV(PV("Vol_Stable_2", {{kZone, "us-west1-c__us-west1-a"}}));
  cluster.AddPVC(BoundClaim("PVC_1", "Vol_1"));
  cluster.AddPVC(BoundClaim("PVC_2", "Vol_2"));
  cluster.AddPVC(BoundClaim("PVC_3", "Vol_3"));
  cluster.AddPVC(BoundClaim("PVC_Stable_1", "Vol_Stable_1"));
  cluster.AddPVC(BoundClaim("PVC_Stable_2", "Vol_Stable_2"));

  RunCases(cluster, {
                        {"node without labels", "PVC_3", {}, {}, {}},
                        {"beta zone label matched",
                         "PVC_3",
                         {{kBetaZone, "us-west1-a"}, {"uselessLabel", "none"}},
                         {},
                         {}},
                        {"beta zone label doesn't match",
                         "PVC_1",
                         {{kBetaZone, "us-west1-b"}, {"uselessLabel", "none"}},
                         {},
                         kConflict},
                        {"zone label matched",
                         "PVC_Stable_2",
                         {{kZone, "us-west1-a"}, {"uselessLabel", "none"}},
                         {},
                         {}},
                        {"zone label doesn't match",
                         "PVC_Stable_1",
                         {{kZone, "us-west1-b"}, {"uselessLabel", "none"}},
                         {},
                         kConflict},
                    });
}

TEST(VolumeZoneTest, WithBinding) {
  InMemoryCluster cluster;
  cluster.AddStorageClass(Class("Class_Immediate", std::nullopt));
  cluster.AddStorageClass(Class("Class_Wait", "WaitForFirstConsumer"));
  cluster.AddStorageClass(Class("Class_Imm", "Immediate"));
  cluster.AddPV(PV("Vol_1", {{kBetaZone, "us-west1-a"}}));
  cluster.AddPVC(BoundClaim("PVC_1", "Vol_1"));
  cluster.AddPVC(BoundClaim("PVC_4", "Vol_not_exist"));
  cluster.AddPVC(UnboundClaim("PVC_NoSC", "Class_0"));
  cluster.AddPVC(UnboundClaim("PVC_EmptySC", std::nullopt));
  cluster.AddPVC(UnboundClaim("PVC_WaitSC", "Class_Wait"));
  cluster.AddPVC(UnboundClaim("PVC_ImmediateSC", "Class_Immediate"));
  cluster.AddPVC(UnboundClaim("PVC_Imm", "Class_Imm"));
  Labels node = {{kBetaZone, "us-west1-a"}, {"uselessLabel", "none"}};

  auto both = [](std::string msg) { return Status::Unresolvable(std::move(msg)); };
  RunCases(cluster,
           {
               {"label zone failure domain matched", "PVC_1", node, {}, {}},
               {"unbound volume empty storage class", "PVC_EmptySC", node,
                both("PersistentVolumeClaim had no pv name and storageClass name"),
                both("PersistentVolumeClaim had no pv name and storageClass name")},
               {"unbound volume no storage class", "PVC_NoSC", node,
                both("storageclass.storage.k8s.io \"Class_0\" not found"),
                both("storageclass.storage.k8s.io \"Class_0\" not found")},
               {"unbound volume immediate binding mode unset", "PVC_ImmediateSC", node,
                both("VolumeBindingMode not set for StorageClass \"Class_Immediate\""),
                both("VolumeBindingMode not set for StorageClass \"Class_Immediate\"")},
               {"unbound volume immediate binding mode", "PVC_Imm", node,
                both("PersistentVolume had no name"), both("PersistentVolume had no name")},
               {"unbound volume wait binding mode", "PVC_WaitSC", node, Status::Skip(), {}},
               {"claim not found", "PVC_missing", node,
                both("persistentvolumeclaim \"PVC_missing\" not found"),
                both("persistentvolumeclaim \"PVC_missing\" not found")},
               {"pv not found", "PVC_4", node, both("persistentvolume \"Vol_not_exist\" not found"),
                both("persistentvolume \"Vol_not_exist\" not found")},
           });
}

TEST(VolumeZoneTest, InvalidMultiZoneLabelIsIgnored) {
  InMemoryCluster cluster;
  cluster.AddPV(PV("Vol_bad", {{kZone, "us-west1-a____"}, {kRegion, "us-west1"}}));
  cluster.AddPVC(BoundClaim("PVC_bad", "Vol_bad"));
  RunCases(cluster, {
                        {"zone label ignored, region checked",
                         "PVC_bad",
                         {{kZone, "elsewhere"}, {kRegion, "us-west1"}},
                         {},
                         {}},
                        {"region still rejects",
                         "PVC_bad",
                         {{kZone, "us-west1-a"}, {kRegion, "x"}},
                         {},
                         kConflict},
                    });
}

TEST(VolumeZoneTest, Registration) {
  PluginRegistration reg = VolumeZoneRegistration();
  EXPECT_EQ(reg.name, "VolumeZone");
  EXPECT_FALSE(reg.decode_args);
  FakeHandle handle;
  auto plugin = reg.factory(nullptr, handle);
  ASSERT_TRUE(plugin.ok());
  EXPECT_EQ((*plugin)->Name(), "VolumeZone");
}

}  // namespace
}  // namespace berth::volumezone
