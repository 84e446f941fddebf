// A pod NodeVolumeLimits rejects waits for a change that can make room on a node: a deleted
// VolumeAttachment, a raised CSINode limit; a CSINode update that raises nothing and a new node
// leave it where it is.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "scheduler/scheduler.h"
#include "scheduler/scheduler_harness_test_util.h"
#include "testing/builders.h"

namespace berth {
namespace {

using testing::Harness;
using testing::MakePod;

constexpr char kDriver[] = "disk.csi.example.com";

// n0000 with a CSINode allowing `limit` volumes of kDriver; PVs "pv-a" and "pv-b" of that
// driver, claim "data" bound to pv-b, and pv-a attached to n0000 though no pod uses it.
void AddCluster(Harness& h, int32_t limit) {
  h.AddNodes(1);
  for (const char* name : {"pv-a", "pv-b"}) {
    auto pv = std::make_shared<PersistentVolume>();
    pv->metadata.name = name;
    pv->spec.csi_driver = kDriver;
    pv->spec.csi_volume_handle = std::string("vol-") + name;
    h.cluster_.AddPV(pv);
  }
  auto pvc = std::make_shared<PersistentVolumeClaim>();
  pvc->metadata.namespace_ = "default";
  pvc->metadata.name = "data";
  pvc->spec.volume_name = "pv-b";
  pvc->spec.storage_class_name = "";
  // Bound, so VolumeBinding has nothing to do.
  pvc->metadata.annotations["pv.kubernetes.io/bind-completed"] = "yes";
  pvc->status.phase = "Bound";
  h.cluster_.AddPVC(pvc);
  h.cluster_.AddVolumeAttachment({"va-a", kDriver, "n0000", "pv-a"});
  h.cluster_.AddCSINode([&] {
    auto csi = std::make_shared<CSINode>();
    csi->metadata.name = "n0000";
    csi->drivers.push_back({kDriver, "n0000", limit, {}});
    return csi;
  }());
}

std::shared_ptr<const Pod> PodWithClaim() {
  return MakePod().Name("app").Req({{"cpu", "100m"}}).PVC("data").Obj();
}

TEST(VolumeLimitsRequeueTest, ADeletedVolumeAttachmentMovesThePod) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  AddCluster(h, 1);
  SchedulingAttempt a = h.Schedule(PodWithClaim());
  ASSERT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable) << a.message;
  ASSERT_EQ(a.filter_statuses.count("n0000"), 1u) << a.message;
  EXPECT_EQ(a.filter_statuses.at("n0000").plugin(), "NodeVolumeLimits");
  auto unschedulable = [&] { return h.sched_->queue().counts().unschedulable; };
  ASSERT_EQ(unschedulable(), 1u);

  // Neither a new node (not registered; tainted, so the next attempt cannot use it) nor an
  // unknown attachment's deletion moves it.
  h.cluster_.AddNode(testing::MakeNode()
                         .Name("n0001")
                         .Capacity({{"cpu", "4"}, {"memory", "32Gi"}})
                         .Taint("dedicated", "x", "NoSchedule")
                         .Obj());
  h.cluster_.DeleteVolumeAttachment("no-such");
  EXPECT_EQ(unschedulable(), 1u);

  h.cluster_.DeleteVolumeAttachment("va-a");
  EXPECT_EQ(unschedulable(), 0u);
  h.clock_.Advance(std::chrono::seconds(30));
  h.sched_->queue().FlushBackoffQCompleted();
  ASSERT_TRUE(h.sched_->ScheduleOne(false));
  EXPECT_EQ(h.NodeOf("app"), "n0000");
}

TEST(VolumeLimitsRequeueTest, OnlyARaisedCSINodeLimitMovesThePod) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  AddCluster(h, 1);
  SchedulingAttempt a = h.Schedule(PodWithClaim());
  ASSERT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable) << a.message;
  auto unschedulable = [&] { return h.sched_->queue().counts().unschedulable; };
  auto csi_node = [](std::optional<int32_t> limit) {
    auto csi = std::make_shared<CSINode>();
    csi->metadata.name = "n0000";
    csi->drivers.push_back({kDriver, "n0000", limit, {}});
    csi->drivers.push_back({"other.csi.example.com", "n0000", std::nullopt, {}});
    return csi;
  };
  h.cluster_.AddCSINode(csi_node(1));  // another driver registered, no limit raised
  EXPECT_EQ(unschedulable(), 1u);
  h.cluster_.AddCSINode(csi_node(2));
  EXPECT_EQ(unschedulable(), 0u);
  h.clock_.Advance(std::chrono::seconds(30));
  h.sched_->queue().FlushBackoffQCompleted();
  ASSERT_TRUE(h.sched_->ScheduleOne(false));
  EXPECT_EQ(h.NodeOf("app"), "n0000");
}

TEST(VolumeLimitsRequeueTest, ADeletedVolumeAttachmentLeavesPodsOtherPluginsRejected) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  AddCluster(h, 8);
  SchedulingAttempt a = h.Schedule(MakePod().Name("huge").Req({{"cpu", "64"}}).PVC("data").Obj());
  ASSERT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable) << a.message;
  EXPECT_EQ(a.filter_statuses.at("n0000").plugin(), "NodeResourcesFit");
  h.cluster_.DeleteVolumeAttachment("va-a");
  EXPECT_EQ(h.sched_->queue().counts().unschedulable, 1u);
}

}  // namespace
}  // namespace berth
