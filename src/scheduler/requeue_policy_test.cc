#include "scheduler/requeue_policy.h"

#include <gtest/gtest.h>

#include "berth/testing/builders.h"
#include "framework/volume_claims.h"

namespace berth {
namespace {

using testing::MakeNode;
using testing::MakePod;

TEST(RequeuePolicyTest, NodeUpdatesAreClassifiedByWhatChanged) {
  auto base = MakeNode().Name("n").Label("zone", "a").Capacity({{"cpu", "4"}}).Obj();
  EXPECT_EQ(NodeUpdateActions(*base, *base), 0u);  // a heartbeat is no event
  EXPECT_EQ(NodeUpdateActions(
                *base, *MakeNode().Name("n").Label("zone", "a").Capacity({{"cpu", "8"}}).Obj()),
            kUpdateNodeAllocatable);
  Node cordoned = *base;
  cordoned.spec.unschedulable = true;
  EXPECT_EQ(NodeUpdateActions(*base, cordoned), kUpdateNodeTaint);
  Node relabelled = *base;
  relabelled.metadata.labels["zone"] = "b";
  relabelled.spec.taints.push_back({"k", "v", "NoSchedule"});
  EXPECT_EQ(NodeUpdateActions(*base, relabelled), kUpdateNodeLabel | kUpdateNodeTaint);
  Node annotated = *base;
  annotated.metadata.annotations["a"] = "b";
  EXPECT_EQ(NodeUpdateActions(*base, annotated), kUpdateNodeAnnotation);
}

TEST(RequeuePolicyTest, AssignedPodUpdatesAreClassifiedByWhatChanged) {
  auto pod = MakePod().Name("p").Node("n").Label("app", "a").Req({{"cpu", "2"}}).Obj();
  EXPECT_EQ(AssignedPodUpdateActions(*pod, *pod), kUpdateOther);
  auto relabelled = MakePod().Name("p").Node("n").Label("app", "b").Req({{"cpu", "2"}}).Obj();
  EXPECT_EQ(AssignedPodUpdateActions(*pod, *relabelled), kUpdatePodLabel);
  auto smaller = MakePod().Name("p").Node("n").Label("app", "a").Req({{"cpu", "1"}}).Obj();
  EXPECT_EQ(AssignedPodUpdateActions(*pod, *smaller), kUpdatePodScaleDown);
  EXPECT_EQ(AssignedPodUpdateActions(*smaller, *pod), kUpdateOther);  // growing frees nothing
}

TEST(RequeuePolicyTest, ClusterEventCoverage) {
  const ClusterEvent node_add{EventResource::kNode, kAdd};
  EXPECT_TRUE((ClusterEvent{EventResource::kNode, kAdd | kUpdateNodeLabel}).Covers(node_add));
  EXPECT_FALSE((ClusterEvent{EventResource::kNode, kUpdateNodeLabel}).Covers(node_add));
  EXPECT_FALSE((ClusterEvent{EventResource::kPod, kAdd}).Covers(node_add));
  EXPECT_TRUE((ClusterEvent{EventResource::kWildCard, kAllActions}).Covers(node_add));
}

TEST(RequeuePolicyTest, VolumeHintsLookAtTheClaimAndTheDeletedPod) {
  Pod pod = *MakePod().Name("p").Obj();
  pod.spec.volumes.resize(2);
  pod.spec.volumes[0].name = "data";
  pod.spec.volumes[0].persistent_volume_claim = Volume::Pvc{"data-claim"};
  pod.spec.volumes[1].name = "scratch";
  pod.spec.volumes[1].ephemeral = true;
  auto claim = [](const std::string& name, const std::string& ns) {
    auto c = std::make_shared<PersistentVolumeClaim>();
    c->metadata.name = name;
    c->metadata.namespace_ = ns;
    return c;
  };
  auto uses = QueueIfPodUsesClaim();
  EXPECT_EQ(*uses(pod, {}, claim("data-claim", "default")), QueueingHint::kQueue);
  EXPECT_EQ(*uses(pod, {}, claim("p-scratch", "default")), QueueingHint::kQueue);
  EXPECT_EQ(*uses(pod, {}, claim("data-claim", "other")), QueueingHint::kQueueSkip);
  EXPECT_EQ(*uses(pod, {}, claim("unrelated", "default")), QueueingHint::kQueueSkip);
  EXPECT_FALSE(uses(pod, {}, {}).ok());  // no claim: an error, which queues

  auto held = QueueIfDeletedPodHeldVolumes();
  auto with_claim = std::make_shared<Pod>(pod);
  EXPECT_EQ(*held(pod, with_claim, {}), QueueingHint::kQueueSkip);  // never assigned
  with_claim->spec.node_name = "n";
  EXPECT_EQ(*held(pod, with_claim, {}), QueueingHint::kQueue);
  EXPECT_EQ(*held(pod, MakePod().Name("bare").Node("n").Obj(), {}), QueueingHint::kQueueSkip);
}

}  // namespace
}  // namespace berth
