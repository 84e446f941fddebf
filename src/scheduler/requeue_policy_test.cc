#include "scheduler/requeue_policy.h"

#include <gtest/gtest.h>

#include "berth/testing/builders.h"

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

}  // namespace
}  // namespace berth
