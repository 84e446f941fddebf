#include "scheduler/cluster_events.h"

#include <gtest/gtest.h>

namespace berth {
namespace {

Node MakeNode() {
  Node n;
  n.metadata.name = "n1";
  n.metadata.labels = {{"zone", "a"}};
  n.status.allocatable = {{"cpu", *Quantity::Parse("4")}};
  return n;
}

TEST(ClusterEventsTest, ClassifiesNodeUpdates) {
  Node a = MakeNode();
  Node heartbeat = a;  // only fields the typed Node does not model changed
  EXPECT_EQ(ClassifyNodeUpdate(a, heartbeat), kNodeOtherChanged);
  Node bigger = a;
  bigger.status.allocatable["cpu"] = *Quantity::Parse("8");
  EXPECT_EQ(ClassifyNodeUpdate(a, bigger), kNodeAllocatableChanged);
  Node cordoned = a;
  cordoned.spec.unschedulable = true;
  EXPECT_EQ(ClassifyNodeUpdate(a, cordoned), kNodeTaintChanged);
  Node relabeled = a;
  relabeled.metadata.labels["disk"] = "ssd";
  relabeled.spec.taints.push_back({"k", "v", "NoSchedule"});
  EXPECT_EQ(ClassifyNodeUpdate(a, relabeled), kNodeLabelChanged | kNodeTaintChanged);
}

TEST(ClusterEventsTest, OnlyChangesThatCanHelpMovePods) {
  const std::set<std::string> fit = {"NodeResourcesFit"};
  EXPECT_TRUE(MayHelpAfterNodeUpdate(fit, kNodeAllocatableChanged));
  EXPECT_FALSE(MayHelpAfterNodeUpdate(fit, kNodeOtherChanged));
  EXPECT_FALSE(MayHelpAfterNodeUpdate({"TaintToleration"}, kNodeAllocatableChanged));
  EXPECT_TRUE(MayHelpAfterNodeUpdate({"TaintToleration"}, kNodeTaintChanged));
  EXPECT_FALSE(MayHelpAfterObjectChange(fit, "PersistentVolumeClaim"));
  EXPECT_TRUE(MayHelpAfterObjectChange({"VolumeBinding"}, "PersistentVolumeClaim"));
  // No recorded plugin (an error) or an unknown (out-of-tree) plugin: every event may help.
  EXPECT_TRUE(MayHelpAfterNodeUpdate({}, kNodeOtherChanged));
  EXPECT_TRUE(MayHelpAfterObjectChange({"MyPlugin"}, "Service"));
}

}  // namespace
}  // namespace berth
