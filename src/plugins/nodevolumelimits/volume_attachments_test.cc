// NodeVolumeLimits: volumes attached to the node through VolumeAttachments, and the queueing
// hints that decide which changes move the pods the plugin rejected.
#include "framework/volume_attachments.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "berth/testing/fake_handle.h"
#include "framework/in_memory_cluster.h"
#include "plugins/nodevolumelimits/csi_limits_fixture.h"
#include "plugins/nodevolumelimits/nodevolumelimits.h"
#include "testing/builders.h"

namespace berth::nodevolumelimits {
namespace {

using berth::testing::FakeHandle;
using berth::testing::MakeNodeInfo;
using berth::testing::MakePod;

const Status kExceeded = Status::Unschedulable(std::string(kErrReasonMaxVolumeCountExceeded));

VolumeAttachmentInfo Attachment(std::string name, std::string attacher, std::string pv,
                                std::string node = kNodeName) {
  return {std::move(name), std::move(attacher), std::move(node), std::move(pv)};
}

// Filter of `pod` on the fixture's node, running `existing`, with the CSINode registering
// ebs.csi.aws.com with `limit` and the given attachments.
Status FilterWith(std::shared_ptr<const Pod> pod, std::vector<std::shared_ptr<const Pod>> existing,
                  int32_t limit, const std::vector<VolumeAttachmentInfo>& attachments,
                  LimitSource source = LimitSource::kCSINode) {
  InMemoryCluster cluster;
  AddFixture(cluster, {kEbsDriver, kHostPathInTree});
  AddCSINode(cluster, source, limit, {kEbsDriver});
  for (const auto& va : attachments) cluster.AddVolumeAttachment(va);
  FakeHandle handle({}, &cluster);
  CSILimits plugin(handle);
  auto node = std::make_shared<Node>();
  node->metadata.name = kNodeName;
  NodeInfo info = MakeNodeInfo(node, existing);
  auto pi = PodInfo::Create(std::move(pod));
  CycleState state;
  Status pre = plugin.PreFilter(state, *pi, {}, nullptr);
  EXPECT_TRUE(pre.IsSuccess()) << pre.Message();
  return plugin.Filter(state, *pi, info);
}

const std::string kEbs0 = "csi-ebs.csi.aws.com-0";
const std::string kEbs1 = "csi-ebs.csi.aws.com-1";
const std::string kEbs2 = "csi-ebs.csi.aws.com-2";

TEST(NodeVolumeLimitsVolumeAttachmentTest, AttachmentsCountWhenNoPodExists) {
  // Two attached volumes (one of them the pod's own) and the pod's volume: 3 > 2.
  EXPECT_EQ(
      FilterWith(PodWith({kEbs0}), {}, 2,
                 {Attachment("va-0", kEbsDriver, kEbs0), Attachment("va-1", kEbsDriver, kEbs1)}),
      kExceeded);
  // The pod's own volume attached: it counts as attached and as new, 1 + 1 <= 2.
  EXPECT_TRUE(
      FilterWith(PodWith({kEbs0}), {}, 2, {Attachment("va-0", kEbsDriver, kEbs0)}).IsSuccess());
  EXPECT_EQ(FilterWith(PodWith({kEbs0}), {}, 1, {Attachment("va-0", kEbsDriver, kEbs0)}),
            kExceeded);
}

TEST(NodeVolumeLimitsVolumeAttachmentTest, AVolumeAPodUsesCountsOnce) {
  // ebs-1 is used by a pod on the node and attached: one slot, so 1 + 1 <= 2.
  EXPECT_TRUE(
      FilterWith(PodWith({kEbs0}), {PodWith({kEbs1})}, 2, {Attachment("va-1", kEbsDriver, kEbs1)})
          .IsSuccess());
  // Attached and not used by a pod: 1 (pod) + 1 (attachment) + 1 > 2.
  EXPECT_EQ(
      FilterWith(PodWith({kEbs0}), {PodWith({kEbs1})}, 2, {Attachment("va-2", kEbsDriver, kEbs2)}),
      kExceeded);
  // Two attachments of one volume are one volume.
  EXPECT_TRUE(
      FilterWith(PodWith({kEbs0}), {}, 2,
                 {Attachment("va-a", kEbsDriver, kEbs1), Attachment("va-b", kEbsDriver, kEbs1)})
          .IsSuccess());
}

TEST(NodeVolumeLimitsVolumeAttachmentTest, OnlyUsableAttachmentsOfTheNodeCount) {
  // Each would make 1 + 1 > 1 if it counted.
  const std::vector<VolumeAttachmentInfo> ignored = {
      Attachment("other-node", kEbsDriver, kEbs1, "other-node"),
      Attachment("no-attacher", "", kEbs1),
      Attachment("no-pv", kEbsDriver, ""),
      Attachment("missing-pv", kEbsDriver, "no-such-pv"),
      Attachment("not-csi", kEbsDriver, "csi-kubernetes.io/hostpath-0"),
  };
  for (const auto& va : ignored) {
    SCOPED_TRACE(va.name);
    EXPECT_TRUE(FilterWith(PodWith({kEbs0}), {}, 1, {va}).IsSuccess());
  }
  EXPECT_EQ(FilterWith(PodWith({kEbs0}), {}, 1, {Attachment("counted", kEbsDriver, kEbs1)}),
            kExceeded);
}

TEST(NodeVolumeLimitsVolumeAttachmentTest, AttachmentsCountUnderTheirAttacher) {
  // The PV is ebs.csi.aws.com's, but the attachment names another attacher: it counts there.
  EXPECT_TRUE(
      FilterWith(PodWith({kEbs0}), {}, 1, {Attachment("va", "other.csi.example.com", kEbs1)})
          .IsSuccess());
}

TEST(NodeVolumeLimitsVolumeAttachmentTest, NodesWithoutLimitsIgnoreAttachments) {
  const std::vector<VolumeAttachmentInfo> many = {Attachment("va-1", kEbsDriver, kEbs1),
                                                  Attachment("va-2", kEbsDriver, kEbs2)};
  EXPECT_TRUE(
      FilterWith(PodWith({kEbs0}), {}, 0, many, LimitSource::kCSINodeWithoutLimit).IsSuccess());
  EXPECT_TRUE(FilterWith(PodWith({kEbs0}), {}, 0, many, LimitSource::kNone).IsSuccess());
}

TEST(NodeVolumeLimitsVolumeAttachmentTest, DocumentsAreReadForWhatTheCountUses) {
  VolumeAttachmentInfo va = VolumeAttachmentInfoOf({
      {"metadata", {{"name", "csi-123"}}},
      {"spec",
       {{"attacher", "ebs.csi.aws.com"},
        {"nodeName", "n1"},
        {"source", {{"persistentVolumeName", "pv-1"}}}}},
      {"status", {{"attached", false}}},
  });
  EXPECT_EQ(va.name, "csi-123");
  EXPECT_EQ(va.attacher, "ebs.csi.aws.com");
  EXPECT_EQ(va.node_name, "n1");
  EXPECT_EQ(va.persistent_volume_name, "pv-1");
  // An inline volume's attachment names no PV; fields of other types count as absent.
  VolumeAttachmentInfo inline_va = VolumeAttachmentInfoOf(
      {{"spec", {{"attacher", 7}, {"source", {{"inlineVolumeSpec", nlohmann::json::object()}}}}}});
  EXPECT_EQ(inline_va.attacher, "");
  EXPECT_EQ(inline_va.persistent_volume_name, "");
  // Listers that keep no VolumeAttachments list none.
  FakeHandle handle;
  EXPECT_TRUE(FindVolumeAttachments(handle.listers(), "n1").empty());
}

// ---- queueing hints

QueueingHintFn HintFor(const CSILimits& plugin, EventResource resource, ActionType action) {
  for (const auto& reg : plugin.EventsToRegister())
    if (reg.event.resource == resource && (reg.event.actions & action)) return reg.hint;
  ADD_FAILURE() << "no registration";
  return {};
}

Volume Inline(bool gce) {
  Volume v;
  v.name = "disk";
  if (gce) {
    v.gce_persistent_disk = Volume::GcePd{"test", false};
  } else {
    v.aws_elastic_block_store = Volume::AwsEbs{"test", false};
  }
  return v;
}

Volume Ephemeral() {
  Volume v;
  v.name = "ephemeral";
  v.ephemeral = true;
  return v;
}

Volume ConfigMap() {
  Volume v;
  v.name = "config";
  return v;
}

TEST(NodeVolumeLimitsQueueingHintTest, RegistersTheEventsThatCanMakeRoom) {
  FakeHandle handle;
  CSILimits plugin(handle);
  auto events = plugin.EventsToRegister();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[0].event.resource, EventResource::kCSINode);
  EXPECT_EQ(events[0].event.actions, kAdd);
  EXPECT_FALSE(events[0].hint);  // any new CSINode
  EXPECT_EQ(events[1].event.resource, EventResource::kCSINode);
  EXPECT_EQ(events[1].event.actions, kUpdateOther);
  EXPECT_EQ(events[2].event.resource, EventResource::kPod);
  EXPECT_EQ(events[2].event.actions, kDelete);
  EXPECT_EQ(events[3].event.resource, EventResource::kPersistentVolumeClaim);
  EXPECT_EQ(events[3].event.actions, kAdd);
  // Nodes and PVs are not registered.
  for (const auto& e : events) {
    EXPECT_NE(e.event.resource, EventResource::kNode);
    EXPECT_NE(e.event.resource, EventResource::kPersistentVolume);
  }
  EXPECT_TRUE(plugin.VolumeAttachmentDeleteHint());
}

TEST(NodeVolumeLimitsQueueingHintTest, DeletedPodHelpsIfItHadACountedVolume) {
  FakeHandle handle;
  CSILimits plugin(handle);
  QueueingHintFn hint = HintFor(plugin, EventResource::kPod, kDelete);
  Pod pod = *MakePod().Name("p").PVC("csi-ebs.csi.aws.com-2").Obj();
  auto deleted = [](std::vector<Volume> volumes, std::string node = "n1") {
    auto b = MakePod().Name("gone").Node(std::move(node));
    for (auto& v : volumes) b.Volume(std::move(v));
    return b.Obj();
  };
  Volume claim;
  claim.name = "data";
  claim.persistent_volume_claim = Volume::Pvc{"placeholder"};
  EXPECT_EQ(*hint(pod, deleted({claim}), {}), QueueingHint::kQueue);
  EXPECT_EQ(*hint(pod, deleted({Inline(false)}), {}), QueueingHint::kQueue);
  EXPECT_EQ(*hint(pod, deleted({Inline(true)}), {}), QueueingHint::kQueue);
  EXPECT_EQ(*hint(pod, deleted({Ephemeral()}), {}), QueueingHint::kQueue);
  EXPECT_EQ(*hint(pod, deleted({}), {}), QueueingHint::kQueueSkip);
  EXPECT_EQ(*hint(pod, deleted({ConfigMap()}), {}), QueueingHint::kQueueSkip);
  // Neither on a node nor nominated to one: it held no slot.
  EXPECT_EQ(*hint(pod, deleted({claim}, ""), {}), QueueingHint::kQueueSkip);
  auto nominated = std::make_shared<Pod>(*deleted({claim}, ""));
  nominated->status.nominated_node_name = "n1";
  EXPECT_EQ(*hint(pod, nominated, {}), QueueingHint::kQueue);
  EXPECT_FALSE(hint(pod, {}, {}).ok());  // no pod: an error, which queues
}

TEST(NodeVolumeLimitsQueueingHintTest, AddedClaimHelpsThePodsUsingIt) {
  FakeHandle handle;
  CSILimits plugin(handle);
  QueueingHintFn hint = HintFor(plugin, EventResource::kPersistentVolumeClaim, kAdd);
  auto claim = [](std::string ns, std::string name) {
    auto c = std::make_shared<PersistentVolumeClaim>();
    c->metadata.namespace_ = std::move(ns);
    c->metadata.name = std::move(name);
    return c;
  };
  Pod bare = *MakePod().Name("pod1").Namespace("ns1").Obj();
  Pod with_claim = *MakePod().Name("pod1").Namespace("ns1").PVC("pvc1").Obj();
  Pod with_ephemeral = *MakePod().Name("pod1").Namespace("ns1").Volume(Ephemeral()).Obj();
  EXPECT_EQ(*hint(bare, {}, claim("ns2", "pvc1")), QueueingHint::kQueueSkip);
  EXPECT_EQ(*hint(with_claim, {}, claim("ns1", "pvc1")), QueueingHint::kQueue);
  EXPECT_EQ(*hint(with_claim, {}, claim("ns2", "pvc1")), QueueingHint::kQueueSkip);
  EXPECT_EQ(*hint(with_ephemeral, {}, claim("ns1", "pod1-ephemeral")), QueueingHint::kQueue);
  EXPECT_EQ(*hint(with_claim, {}, claim("ns1", "pvc2")), QueueingHint::kQueueSkip);
  EXPECT_EQ(*hint(bare, {}, claim("ns1", "pvc2")), QueueingHint::kQueueSkip);
}

TEST(NodeVolumeLimitsQueueingHintTest, DeletedAttachmentHelpsClaimsAndInlineDisksOfItsDriver) {
  FakeHandle handle;
  CSILimits plugin(handle);
  VolumeAttachmentHintFn hint = plugin.VolumeAttachmentDeleteHint();
  const VolumeAttachmentInfo gke_pv = Attachment("va", "test.storage.gke.io", "pv1", "fake-node");
  const VolumeAttachmentInfo ebs_inline = Attachment("va", kEbsDriver, "", "fake-node");
  Pod with_claim = *MakePod().Namespace("ns1").PVC("pvc1").Obj();
  Pod inline_ebs = *MakePod().Namespace("ns1").Volume(Inline(false)).Obj();
  Pod inline_gce = *MakePod().Namespace("ns1").Volume(Inline(true)).Obj();
  Pod inline_and_claim = *MakePod().Namespace("ns1").Volume(Inline(false)).PVC("pvc1").Obj();
  Pod bare = *MakePod().Namespace("ns1").Obj();
  Pod ephemeral = *MakePod().Namespace("ns1").Volume(Ephemeral()).Obj();
  EXPECT_EQ(hint(with_claim, gke_pv), QueueingHint::kQueue);
  EXPECT_EQ(hint(inline_ebs, ebs_inline), QueueingHint::kQueue);
  EXPECT_EQ(hint(inline_gce, ebs_inline), QueueingHint::kQueueSkip);
  EXPECT_EQ(hint(inline_and_claim, ebs_inline), QueueingHint::kQueue);
  EXPECT_EQ(hint(inline_and_claim, gke_pv), QueueingHint::kQueue);
  EXPECT_EQ(hint(bare, gke_pv), QueueingHint::kQueueSkip);
  // Generic ephemeral volumes are not looked at.
  EXPECT_EQ(hint(ephemeral, gke_pv), QueueingHint::kQueueSkip);
}

TEST(NodeVolumeLimitsQueueingHintTest, UpdatedCSINodeHelpsOnlyWhenALimitRises) {
  FakeHandle handle;
  CSILimits plugin(handle);
  QueueingHintFn hint = HintFor(plugin, EventResource::kCSINode, kUpdateOther);
  Pod pod = *MakePod().Name("test-pod").Namespace("ns1").PVC("csi-ebs.csi.aws.com-0").Obj();
  auto csi_node = [](std::vector<std::pair<std::string, std::optional<int32_t>>> drivers) {
    auto n = std::make_shared<CSINode>();
    n->metadata.name = "test-node";
    for (auto& [name, count] : drivers) {
      CSINode::Driver d;
      d.name = name;
      d.node_id = "test-node";
      d.allocatable_count = count;
      n->drivers.push_back(d);
    }
    return n;
  };
  auto decide = [&](auto before, auto after) {
    return *hint(pod, csi_node(before), csi_node(after));
  };
  using Drivers = std::vector<std::pair<std::string, std::optional<int32_t>>>;
  EXPECT_EQ(decide(Drivers{{kEbsDriver, 1}}, Drivers{{kEbsDriver, 2}}), QueueingHint::kQueue);
  EXPECT_EQ(decide(Drivers{{kEbsDriver, 2}}, Drivers{{kEbsDriver, 1}}), QueueingHint::kQueueSkip);
  EXPECT_EQ(decide(Drivers{{kEbsDriver, 1}}, Drivers{{kEbsDriver, 1}}), QueueingHint::kQueueSkip);
  // A driver registered with a count rises from none; registered without one, it does not.
  EXPECT_EQ(decide(Drivers{}, Drivers{{kEbsDriver, 1}}), QueueingHint::kQueue);
  EXPECT_EQ(decide(Drivers{}, Drivers{{kEbsDriver, std::nullopt}}), QueueingHint::kQueueSkip);
  EXPECT_EQ(decide(Drivers{{kEbsDriver, std::nullopt}}, Drivers{{kEbsDriver, 3}}),
            QueueingHint::kQueue);
  // A driver removed or losing its count frees nothing.
  EXPECT_EQ(decide(Drivers{{kEbsDriver, 1}}, Drivers{}), QueueingHint::kQueueSkip);
  EXPECT_EQ(decide(Drivers{{kEbsDriver, 1}}, Drivers{{kEbsDriver, std::nullopt}}),
            QueueingHint::kQueueSkip);
  // Any driver's rise is enough.
  EXPECT_EQ(
      decide(Drivers{{kEbsDriver, 2}, {kGceDriver, 1}}, Drivers{{kEbsDriver, 1}, {kGceDriver, 2}}),
      QueueingHint::kQueue);
  EXPECT_FALSE(hint(pod, {}, csi_node(Drivers{})).ok());
}

}  // namespace
}  // namespace berth::nodevolumelimits
