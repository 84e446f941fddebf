// InMemoryCluster: the in-memory twin of the API client. Holds objects in maps, applies the
// scheduler's writes immediately and reports every change to the registered event handler, as
// informers would. Used by `berth simulate`, `berth bench` and tests. Thread-safe.
//
// Events are delivered synchronously on the writer's thread, or — with delayed delivery, to
// see informer lag in tests — queued until DeliverPendingEvents() runs them on its caller's
// thread (reads see the new state at once, like an informer's lister ahead of its handler).
// Changes from concurrent writers may then be delivered in either order, as from separate
// informers.
#pragma once

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/codec.h"
#include "berth/api/resource_claims.h"
#include "berth/framework/cluster.h"
#include "berth/framework/dra.h"
#include "framework/claim_feed.h"
#include "framework/csi_drivers.h"
#include "framework/dra_extended_resources.h"
#include "framework/group_member_lister.h"
#include "framework/storage_classes.h"
#include "framework/tainted_slices.h"
#include "framework/volume_attachments.h"

namespace berth {

class InMemoryCluster final : public ClusterClient,
                              public DraListers,
                              public DraClaimFeed,
                              public DraSliceGeneration,
                              public DraWriter,
                              public dra_extended::DynamicResourcesWriter,
                              public GroupMemberLister,
                              public CSIDriverLister,
                              public VolumeAttachmentLister,
                              public StorageClassLister {
 public:
  // --- loading (events are sent to the handler when one is set)
  // Any decoded object, by its kind (in_memory_cluster_objects.cc); a CSIDriver, a
  // VolumeAttachment or a DeviceTaintRule from its document, other unknown kinds ignored.
  void AddObject(const Object& object);
  void AddPod(Ptr<Pod> pod);
  void AddNode(Ptr<Node> node);
  void AddNamespace(Ptr<Namespace> ns);
  void AddService(Ptr<Service> s);
  void AddReplicationController(Ptr<ReplicationController> rc);
  void AddReplicaSet(Ptr<ReplicaSet> rs);
  void AddStatefulSet(Ptr<StatefulSet> ss);
  void AddPV(Ptr<PersistentVolume> pv);
  void AddPVC(Ptr<PersistentVolumeClaim> pvc);
  void AddStorageClass(Ptr<StorageClass> sc);
  void AddCSINode(Ptr<CSINode> n);
  // Adds or replaces (an update event) the CSIDriver named `name`.
  void AddCSIDriver(std::string name, CSIDriverInfo info);
  // Adds or replaces a VolumeAttachment (by name); deleting one tells a handler that is a
  // VolumeAttachmentEventHandler (no other events: no plugin reads additions or updates).
  void AddVolumeAttachment(VolumeAttachmentInfo va);
  void DeleteVolumeAttachment(std::string_view name);
  void AddPDB(Ptr<PodDisruptionBudget> pdb);
  void AddPriorityClass(Ptr<PriorityClass> pc);
  // Adds or replaces (an update event) a gang object.
  void AddPodGroup(Ptr<PodGroup> pg);
  void AddSchedulingPodGroup(Ptr<SchedulingPodGroup> pg);
  // Replaces a pod (matched by namespace/name) and reports an update.
  void UpdatePod(Ptr<Pod> pod);
  // Removes a pod without going through the scheduler's writes.
  void RemovePod(std::string_view ns, std::string_view name);
  // Removes a node (its pods stay, as they would in a cluster until garbage-collected).
  void RemoveNode(std::string_view name);
  void RemoveService(std::string_view ns, std::string_view name);
  void RemovePodGroup(std::string_view ns, std::string_view name);

  // --- resource.k8s.io (in_memory_cluster_dra.cc). Adding an existing object replaces it (an
  // update event). A pod added with claims from templates gets them as the resourceclaim
  // controller would make them, named "<pod>-<claim>" (deterministic, unlike the controller's
  // random suffix), with status.resourceClaimStatuses recorded; a template added later serves
  // the pods already waiting for it.
  void AddDeviceClass(Ptr<DeviceClass> c);
  void AddResourceSlice(Ptr<ResourceSlice> s);
  void AddResourceClaim(Ptr<ResourceClaim> c);
  void AddResourceClaimTemplate(Ptr<ResourceClaimTemplate> t);
  void RemoveResourceClaim(std::string_view ns, std::string_view name);
  void RemoveResourceSlice(std::string_view name);
  // DeviceTaintRules: the listed slices' devices carry the taints of the rules that select
  // them; a rule's change is reported as updates of the slices whose taints it changes.
  void AddDeviceTaintRule(const DeviceTaintRule& rule);
  void RemoveDeviceTaintRule(std::string_view name);
  Ptr<ResourceClaimTemplate> GetResourceClaimTemplate(std::string_view ns,
                                                      std::string_view name) const;
  int claim_status_writes() const;
  // How many times DynamicResources asked for the delete-protection finalizer.
  int claim_finalizer_writes() const;

  // --- DraListers
  std::vector<Ptr<ResourceSlice>> ListResourceSlices() const override;
  Ptr<ResourceClaim> GetResourceClaim(std::string_view ns, std::string_view name) const override;
  std::vector<Ptr<ResourceClaim>> ListResourceClaims() const override;
  Ptr<DeviceClass> GetDeviceClass(std::string_view name) const override;
  std::vector<Ptr<DeviceClass>> ListDeviceClasses() const override;
  // --- DraClaimFeed: every change of the claims above, recorded under the same lock.
  ClaimChanges ClaimChangesSince(uint64_t cursor) const override;
  // --- DraSliceGeneration: counts the slice changes above.
  uint64_t ResourceSliceGeneration() const override { return slice_generation_.load(); }
  // --- DraWriter: a Conflict when the claim's uid or a given resourceVersion is stale.
  Result<Ptr<ResourceClaim>> UpdateResourceClaimStatus(const ResourceClaim& claim) override;
  // --- DynamicResourcesWriter: the created claim is named generate_name + a counter; the pod's
  // document gets status.extendedResourceClaimStatus (an update event).
  Result<Ptr<ResourceClaim>> CreateResourceClaim(
      const ResourceClaim& claim, std::string_view generate_name,
      const std::vector<std::string>& finalizers) override;
  VoidResult DeleteResourceClaim(const ResourceClaim& claim) override;
  Result<Ptr<ResourceClaim>> AddResourceClaimFinalizer(const ResourceClaim& claim,
                                                       std::string_view finalizer) override;
  VoidResult SetPodExtendedResourceClaimStatus(const Pod& pod,
                                               const nlohmann::json& status) override;

  void SetEventHandler(ClusterEventHandler* handler);
  void SetDelayedDelivery(bool delayed);
  // Delivers the queued events in order; returns how many. Events caused by delivering them
  // (the handler writing back) are queued too and delivered in the same call.
  size_t DeliverPendingEvents();
  size_t pending_events() const;

  // Counters of the writes the scheduler made (for tests and reports).
  struct WriteCounts {
    int binds = 0, deletes = 0, nominations = 0, conditions = 0, volume_binds = 0, provisions = 0;
  };
  WriteCounts write_counts() const;

  // --- ClusterClient
  Ptr<Pod> GetPod(std::string_view ns, std::string_view name) const override;
  std::vector<Ptr<Pod>> ListPods() const override;
  // GroupMemberLister.
  std::vector<Ptr<Pod>> ListSchedulingGroupMembers(std::string_view ns,
                                                   std::string_view group) const override;
  std::vector<Ptr<Pod>> ListLabeledGroupMembers(std::string_view ns,
                                                std::string_view group) const override;
  Ptr<Node> GetNode(std::string_view name) const override;
  std::vector<Ptr<Node>> ListNodes() const override;
  Ptr<Namespace> GetNamespace(std::string_view name) const override;
  std::vector<Ptr<Namespace>> ListNamespaces() const override;
  std::vector<Ptr<Service>> ListServices(std::string_view ns) const override;
  std::vector<Ptr<ReplicationController>> ListReplicationControllers(
      std::string_view ns) const override;
  std::vector<Ptr<ReplicaSet>> ListReplicaSets(std::string_view ns) const override;
  std::vector<Ptr<StatefulSet>> ListStatefulSets(std::string_view ns) const override;
  Ptr<PersistentVolumeClaim> GetPVC(std::string_view ns, std::string_view name) const override;
  Ptr<PersistentVolume> GetPV(std::string_view name) const override;
  std::vector<Ptr<PersistentVolume>> ListPVs() const override;
  Ptr<StorageClass> GetStorageClass(std::string_view name) const override;
  std::vector<Ptr<StorageClass>> ListStorageClasses() const override;
  Ptr<CSINode> GetCSINode(std::string_view node_name) const override;
  std::optional<CSIDriverInfo> GetCSIDriver(std::string_view name) const override;
  std::vector<VolumeAttachmentInfo> VolumeAttachmentsOn(std::string_view node_name) const override;
  std::vector<Ptr<PodDisruptionBudget>> ListPDBs() const override;
  Ptr<PriorityClass> GetPriorityClass(std::string_view name) const override;
  Ptr<PodGroup> GetPodGroup(std::string_view ns, std::string_view name) const override;
  std::vector<Ptr<PodGroup>> ListPodGroups(std::string_view ns) const override;
  Ptr<SchedulingPodGroup> GetSchedulingPodGroup(std::string_view ns,
                                                std::string_view name) const override;

  VoidResult Bind(const Pod& pod, std::string_view node_name) override;
  // Deletes at once and returns the outcome; `on_failure` is never called.
  VoidResult DeletePod(const Pod& pod, std::function<void(const Error&)> on_failure) override;
  VoidResult SetNominatedNodeName(const Pod& pod, std::string_view node_name) override;
  VoidResult SetPodScheduledCondition(const Pod& pod, const PodCondition& cond) override;
  VoidResult BindVolume(const PersistentVolumeClaim& pvc, std::string_view pv_name) override;
  VoidResult RequestProvisioning(const PersistentVolumeClaim& pvc,
                                 std::string_view node_name) override;

 private:
  // A DeviceTaintRule from its document (AddObject); one that does not decode is skipped.
  void AddDeviceTaintRuleDocument(const UnknownObject& o);
  template <class T>
  using Map = std::map<std::string, Ptr<T>, std::less<>>;
  static std::string Key(std::string_view ns, std::string_view name);
  // Stores an object other than a pod or node and reports the change.
  template <class T>
  void Store(Map<T>& map, std::string key, Ptr<T> obj, EventResource resource);
  // Replaces a pod under the lock and returns the old one; events are sent after unlocking.
  Ptr<Pod> ReplacePodLocked(Ptr<Pod> pod);
  // Where the events of a change are sent: the handler, or the queue of delayed events.
  ClusterEventHandler* EventTargetLocked();
  // Reports the slices' changes to a handler that is a DraEventHandler (the caller has bumped
  // the slice generation under mu_).
  void SendSliceChanges(ClusterEventHandler* h, const std::vector<TaintedSlices::Change>& changes);
  // Applies a rule change to the slices' view under the lock (`change` runs with mu_ held) and
  // sends the slices it changed.
  void ChangeTaintRules(const std::function<std::vector<TaintedSlices::Change>()>& change);
  // Stores a DRA object and reports the change to a handler that is a DraEventHandler.
  template <class T>
  void StoreDra(Map<T>& map, std::string key, Ptr<T> obj, DraEventResource resource);
  void SendDra(ClusterEventHandler* h, const DraClusterEvent& event, DraEventObject old_object,
               DraEventObject new_object);
  // The pod with the claims of its templates made (the resourceclaim controller's work); the
  // claims to add are returned in `made`.
  Ptr<Pod> WithTemplateClaimsLocked(Ptr<Pod> pod, std::vector<Ptr<ResourceClaim>>* made);

  // Queues every call for DeliverPendingEvents.
  class EventRecorder final : public ClusterEventHandler, public VolumeAttachmentEventHandler {
   public:
    void OnPodAdd(const Ptr<Pod>& pod) override;
    void OnPodUpdate(const Ptr<Pod>& old_pod, const Ptr<Pod>& new_pod) override;
    void OnPodDelete(const Ptr<Pod>& pod) override;
    void OnNodeAdd(const Ptr<Node>& node) override;
    void OnNodeUpdate(const Ptr<Node>& old_node, const Ptr<Node>& new_node) override;
    void OnNodeDelete(const Ptr<Node>& node) override;
    void OnObjectEvent(const ClusterEvent& event, const EventObject& old_object,
                       const EventObject& new_object) override;
    void PushDra(const DraClusterEvent& event, DraEventObject old_object,
                 DraEventObject new_object);
    void OnVolumeAttachmentDelete(const VolumeAttachmentInfo& deleted) override;

    std::deque<std::function<void(ClusterEventHandler&)>> Take();
    size_t size() const;

   private:
    void Push(std::function<void(ClusterEventHandler&)> event);
    mutable std::mutex mu_;
    std::deque<std::function<void(ClusterEventHandler&)>> events_;
  };

  mutable std::mutex mu_;
  ClusterEventHandler* handler_ = nullptr;
  bool delayed_ = false;
  EventRecorder recorder_;
  Map<Pod> pods_;
  // "namespace/podGroupName" -> the keys of the pods naming it (GroupMemberLister); a pod's
  // scheduling group cannot change, so only adds and removals touch it.
  std::map<std::string, std::set<std::string>, std::less<>> group_members_;
  // "namespace/group" -> the keys of the pods labelled kPodGroupLabel=group; labels may change.
  std::map<std::string, std::set<std::string>, std::less<>> labeled_members_;
  void IndexPodLocked(const Pod* old, const Pod* pod, const std::string& key);
  // Keys view their own node's name: a cluster of 250,000 nodes keeps no second copy of each.
  std::map<std::string_view, Ptr<Node>, std::less<>> nodes_;
  Map<Namespace> namespaces_;
  Map<Service> services_;
  Map<ReplicationController> rcs_;
  Map<ReplicaSet> rss_;
  Map<StatefulSet> sss_;
  Map<PersistentVolume> pvs_;
  Map<PersistentVolumeClaim> pvcs_;
  Map<StorageClass> storage_classes_;
  Map<CSINode> csinodes_;
  std::map<std::string, CSIDriverInfo, std::less<>> csi_drivers_;
  std::map<std::string, VolumeAttachmentInfo, std::less<>> volume_attachments_;  // by name
  Map<PodDisruptionBudget> pdbs_;
  Map<PriorityClass> priority_classes_;
  Map<PodGroup> pod_groups_;
  Map<SchedulingPodGroup> scheduling_pod_groups_;
  Map<DeviceClass> device_classes_;
  TaintedSlices resource_slices_;  // as published, and with the DeviceTaintRules' taints
  Map<ResourceClaim> resource_claims_;
  Map<ResourceClaimTemplate> resource_claim_templates_;
  ClaimChangeLog claim_log_;  // follows resource_claims_ (changed under mu_ with it)
  std::atomic<uint64_t> slice_generation_{0};  // changed under mu_ with resource_slices_
  uint64_t claim_version_ = 0;
  int claim_status_writes_ = 0;
  int claim_finalizer_writes_ = 0;
  WriteCounts counts_;
};

}  // namespace berth
