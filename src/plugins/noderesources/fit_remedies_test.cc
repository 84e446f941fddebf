#include "plugins/noderesources/fit_remedies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "berth/testing/builders.h"
#include "framework/in_memory_cluster.h"

namespace berth::noderesources {
namespace {

using ::testing::ElementsAre;
using testing::MakeNode;
using testing::MakePod;

Resource Requests(const Pod& p) { return ComputePodRequests(p).requests; }

// On a full node, the lower-priority pods come first and only as many as cover the shortfall;
// when all of them have a lower priority they are named (preemption would evict them) and the
// remedy merges with no other; a node whose pods are the pod's equals merges by amount.
TEST(FitRemediesTest, FreesTheLowestPriorityPodsFirstAndNamesPreemptionVictims) {
  InMemoryCluster cluster;
  cluster.AddNode(MakeNode().Name("n1").Capacity({{"cpu", "4"}, {"pods", "10"}}).Obj());
  cluster.AddNode(MakeNode().Name("n2").Capacity({{"cpu", "4"}, {"pods", "10"}}).Obj());
  cluster.AddPod(MakePod().Name("low").Priority(1).Req({{"cpu", "2"}}).Node("n1").Obj());
  cluster.AddPod(MakePod().Name("mid").Priority(5).Req({{"cpu", "2"}}).Node("n1").Obj());
  cluster.AddPod(MakePod().Name("peer").Priority(10).Req({{"cpu", "3"}}).Node("n2").Obj());
  auto pod = MakePod().Name("p").Priority(10).Req({{"cpu", "2"}}).Obj();
  const Status st = Status::Unschedulable("Insufficient cpu");
  const Node n1 = *cluster.GetNode("n1"), n2 = *cluster.GetNode("n2");
  const RejectedNode rejected[] = {{&n1, &st}, {&n2, &st}};
  RemedyProposal p = ProposeFitRemedies(cluster, *pod, rejected, 8, Requests);
  EXPECT_TRUE(p.notes.empty());
  ASSERT_EQ(p.remedies.size(), 2u);
  // n2 lacks 1 cpu, n1 lacks 2: the smaller shortfall first.
  EXPECT_EQ(p.remedies[0].node, "n2");
  EXPECT_THAT(p.remedies[0].removed_pods, ElementsAre("default/peer"));
  EXPECT_TRUE(p.remedies[0].victims.empty());
  EXPECT_EQ(p.remedies[0].merge_key,
            "resources free 1 cpu (evict or shrink pods there; they request 3 cpu)");
  EXPECT_EQ(p.remedies[1].node, "n1");
  EXPECT_THAT(p.remedies[1].removed_pods, ElementsAre("default/low"));
  EXPECT_THAT(p.remedies[1].victims, ElementsAre("default/low"));
  EXPECT_TRUE(p.remedies[1].merge_key.empty());
}

// A pod larger than every node: a note naming the largest node, and a node like it with room.
TEST(FitRemediesTest, APodLargerThanEveryNodeGetsANoteAndALargerNode) {
  InMemoryCluster cluster;
  cluster.AddNode(MakeNode().Name("small").Capacity({{"cpu", "2"}, {"pods", "10"}}).Obj());
  cluster.AddNode(MakeNode().Name("big").Capacity({{"cpu", "8"}, {"pods", "10"}}).Obj());
  auto pod = MakePod().Name("p").Req({{"cpu", "16"}}).Obj();
  // Asked with no rejected node (another plugin rejected them first): the note only.
  RemedyProposal none = ProposeFitRemedies(cluster, *pod, {}, 8, Requests);
  EXPECT_THAT(none.notes, ElementsAre("no node is large enough: the pod requests 16 cpu, and the "
                                      "most any node has allocatable is 8 (node big)"));
  EXPECT_TRUE(none.remedies.empty());
  const Status st = Status::Unschedulable("Insufficient cpu");
  const Node big = *cluster.GetNode("big");
  const RejectedNode rejected[] = {{&big, &st}};
  RemedyProposal p = ProposeFitRemedies(cluster, *pod, rejected, 8, Requests);
  ASSERT_EQ(p.remedies.size(), 1u);
  EXPECT_EQ(p.remedies[0].kind, "larger-node");
  ASSERT_EQ(p.remedies[0].nodes.size(), 1u);
  EXPECT_EQ(p.remedies[0].nodes[0]->metadata.name, "big-larger");
  EXPECT_EQ(Resource::FromList(p.remedies[0].nodes[0]->status.allocatable).Get("cpu"), 16000);
}

}  // namespace
}  // namespace berth::noderesources
