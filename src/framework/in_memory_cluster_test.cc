#include "framework/in_memory_cluster.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "testing/builders.h"
#include "testing/ignoring_event_handler.h"

namespace berth {
namespace {

using testing::MakeNode;
using testing::MakePod;

// The node map's keys view the stored node's own name: an update must re-key the entry, or
// lookups would read the replaced (freed) node's name.
TEST(InMemoryClusterTest, AnUpdatedNodeIsFoundUnderItsNameAfterTheOldObjectIsGone) {
  InMemoryCluster cluster;
  cluster.AddNode(MakeNode().Name("node-with-a-name-longer-than-sso").Label("v", "1").Obj());
  cluster.AddNode(MakeNode().Name("other").Obj());
  // The first object is released here: only the cluster held it.
  cluster.AddNode(MakeNode().Name("node-with-a-name-longer-than-sso").Label("v", "2").Obj());
  auto got = cluster.GetNode("node-with-a-name-longer-than-sso");
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->metadata.labels.at("v"), "2");
  EXPECT_EQ(cluster.ListNodes().size(), 2u);
  cluster.RemoveNode("node-with-a-name-longer-than-sso");
  EXPECT_EQ(cluster.GetNode("node-with-a-name-longer-than-sso"), nullptr);
  ASSERT_EQ(cluster.ListNodes().size(), 1u);
  EXPECT_EQ(cluster.ListNodes()[0]->metadata.name, "other");
}

// A scheduling group's members: that namespace and group only, bound ones included, and a
// removed pod gone, in ListPods' order.
TEST(InMemoryClusterTest, SchedulingGroupMembersFollowAddsBindsAndRemovals) {
  InMemoryCluster cluster;
  cluster.AddNode(MakeNode().Name("n1").Obj());
  auto member = [](const std::string& ns, const std::string& name, const std::string& group) {
    auto pod = std::make_shared<Pod>(*MakePod().Namespace(ns).Name(name).Obj());
    if (!group.empty()) pod->spec.scheduling_group = group;
    return pod;
  };
  cluster.AddPod(member("default", "a2", "a"));
  cluster.AddPod(member("default", "a1", "a"));
  cluster.AddPod(member("default", "b1", "b"));
  cluster.AddPod(member("default", "solo", ""));
  cluster.AddPod(member("other", "a9", "a"));
  auto names = [&](std::string_view ns, std::string_view group) {
    std::vector<std::string> out;
    for (const auto& p : cluster.ListSchedulingGroupMembers(ns, group)) {
      out.push_back(p->metadata.name);
    }
    return out;
  };
  EXPECT_EQ(names("default", "a"), (std::vector<std::string>{"a1", "a2"}));
  EXPECT_EQ(names("other", "a"), (std::vector<std::string>{"a9"}));
  ASSERT_TRUE(cluster.Bind(*cluster.GetPod("default", "a1"), "n1").ok());
  auto bound = cluster.ListSchedulingGroupMembers("default", "a");
  ASSERT_EQ(bound.size(), 2u);
  EXPECT_EQ(bound[0]->spec.node_name, "n1");
  cluster.RemovePod("default", "a2");
  EXPECT_EQ(names("default", "a"), (std::vector<std::string>{"a1"}));
  cluster.RemovePod("default", "a1");
  EXPECT_TRUE(names("default", "a").empty());
  EXPECT_EQ(names("default", "b"), (std::vector<std::string>{"b1"}));
}

// scheduler-plugins' members: the pod-group label's value in that namespace, following a
// relabel.
TEST(InMemoryClusterTest, LabeledGroupMembersFollowRelabels) {
  InMemoryCluster cluster;
  auto labeled = [](const std::string& name, const std::string& group) {
    auto b = MakePod().Namespace("default").Name(name);
    if (!group.empty()) b.Label(kPodGroupLabel, group);
    return b.Obj();
  };
  cluster.AddPod(labeled("p1", "g"));
  cluster.AddPod(labeled("p2", "g"));
  cluster.AddPod(labeled("p3", "h"));
  EXPECT_EQ(cluster.ListLabeledGroupMembers("default", "g").size(), 2u);
  cluster.UpdatePod(labeled("p2", "h"));
  auto g = cluster.ListLabeledGroupMembers("default", "g");
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0]->metadata.name, "p1");
  EXPECT_EQ(cluster.ListLabeledGroupMembers("default", "h").size(), 2u);
  cluster.UpdatePod(labeled("p3", ""));
  EXPECT_EQ(cluster.ListLabeledGroupMembers("default", "h").size(), 1u);
  EXPECT_TRUE(cluster.ListLabeledGroupMembers("other", "g").empty());
}

// Records the kinds of the object events it gets (CSIDrivers only: the test adds nothing else).
class ObjectEvents final : public berth::testing::IgnoringEventHandler {
 public:
  std::vector<ClusterEvent> events;
  void OnObjectEvent(const ClusterEvent& event, const EventObject&, const EventObject&) override {
    events.push_back(event);
  }
};

// CSIDrivers are kept by name, replaced by a later add, and reported as CSIDriver events (an
// add, then an update) so that plugins registered for them move their pods.
TEST(InMemoryClusterTest, CSIDriversAreKeptByNameAndReported) {
  InMemoryCluster cluster;
  ObjectEvents handler;
  cluster.SetEventHandler(&handler);
  EXPECT_FALSE(cluster.GetCSIDriver("d").has_value());
  cluster.AddCSIDriver("d", {true});
  ASSERT_TRUE(FindCSIDriver(cluster, "d").has_value());
  EXPECT_TRUE(cluster.GetCSIDriver("d")->prevent_pod_scheduling_if_missing);
  cluster.AddCSIDriver("d", {false});
  EXPECT_FALSE(cluster.GetCSIDriver("d")->prevent_pod_scheduling_if_missing);
  ASSERT_EQ(handler.events.size(), 2u);
  EXPECT_EQ(handler.events[0].resource, EventResource::kCSIDriver);
  EXPECT_EQ(handler.events[0].actions, kAdd);
  EXPECT_EQ(handler.events[1].actions, kUpdateOther);
}

// Records the VolumeAttachment deletions it is told of.
class AttachmentEvents final : public berth::testing::IgnoringEventHandler,
                               public VolumeAttachmentEventHandler {
 public:
  std::vector<std::string> deleted;
  void OnVolumeAttachmentDelete(const VolumeAttachmentInfo& va) override {
    deleted.push_back(va.name + "@" + va.node_name + ":" + va.attacher);
  }
};

// VolumeAttachments are listed by node (in name order), replaced by a later add of the same
// name, and their deletion is told to a VolumeAttachmentEventHandler, also when events are
// delayed.
TEST(InMemoryClusterTest, VolumeAttachmentsAreListedByNodeAndTheirDeletionIsReported) {
  InMemoryCluster cluster;
  AttachmentEvents handler;
  cluster.SetEventHandler(&handler);
  cluster.AddVolumeAttachment({"va-b", "d", "n1", "pv-b"});
  cluster.AddVolumeAttachment({"va-a", "d", "n1", "pv-a"});
  cluster.AddVolumeAttachment({"va-c", "d", "n2", "pv-c"});
  cluster.AddVolumeAttachment({"va-c", "d", "n1", "pv-c"});  // moved to n1
  auto on_n1 = FindVolumeAttachments(cluster, "n1");
  ASSERT_EQ(on_n1.size(), 3u);
  EXPECT_EQ(on_n1[0].name, "va-a");
  EXPECT_EQ(on_n1[0].persistent_volume_name, "pv-a");
  EXPECT_EQ(on_n1[2].name, "va-c");
  EXPECT_TRUE(cluster.VolumeAttachmentsOn("n2").empty());
  EXPECT_TRUE(handler.deleted.empty());  // adds are not reported

  cluster.DeleteVolumeAttachment("va-a");
  cluster.DeleteVolumeAttachment("no-such");
  EXPECT_EQ(handler.deleted, std::vector<std::string>{"va-a@n1:d"});
  EXPECT_EQ(cluster.VolumeAttachmentsOn("n1").size(), 2u);

  cluster.SetDelayedDelivery(true);
  cluster.DeleteVolumeAttachment("va-b");
  EXPECT_EQ(handler.deleted.size(), 1u);
  EXPECT_EQ(cluster.DeliverPendingEvents(), 1u);
  EXPECT_EQ(handler.deleted, (std::vector<std::string>{"va-a@n1:d", "va-b@n1:d"}));
}

}  // namespace
}  // namespace berth
