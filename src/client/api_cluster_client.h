// ApiClusterClient: the scheduler's ClusterClient against a real API server — reads from
// informers' local copies, writes through REST calls; and the event and status writes the
// daemon makes off the scheduling thread.
//
// Threads: reads are thread-safe and cheap. Bind, BindVolume and RequestProvisioning block on
// the API call (the scheduler makes them from its binding threads); status patches and
// preemption victims' deletions are queued on background writers and return at once (the
// writers log what fails). Event handlers are called on the informers' threads.
//
// Files: api_cluster_client.cc (start, stop, listers), _writes.cc (ClusterWriter, the queued
// status patches and events), _events.cc (event bodies and the event writer), _dra.cc and
// _extended.cc (DRA listers and writes).
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "berth/api/resource_claims.h"
#include "berth/framework/cluster.h"
#include "berth/framework/dra.h"
#include "client/async_writer.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "client/write_combiner.h"
#include "framework/async_pod_deleter.h"
#include "framework/claim_feed.h"
#include "framework/csi_drivers.h"
#include "framework/dra_extended_resources.h"
#include "framework/group_member_lister.h"
#include "framework/tainted_slices.h"
#include "framework/volume_attachments.h"

namespace berth::client {

// How bindings go to the API server (WriteCombiner): up to `connections` pipelined batches
// of at most `batch` bindings each in flight. The default suits any server, including those
// that handle a connection's requests one after another (kube-apiserver over HTTP/1.1);
// kOwnServerBindings suits Berth's own, which reads pipelined requests ahead and commits
// them together.
struct BindingPipeline {
  int connections = 64;
  size_t batch = 4;
};
inline constexpr BindingPipeline kOwnServerBindings{16, 32};
// The pipeline for the server whose `/version` answered `version_body`: kOwnServerBindings
// for Berth's own (gitVersion "v1.x.y-berth"), the default for any other or an unreadable
// answer.
BindingPipeline BindingPipelineFor(std::string_view version_body);

class ApiClusterClient final : public ClusterClient,
                               public DraListers,
                               public DraClaimFeed,
                               public DraSliceGeneration,
                               public DraWriter,
                               public dra_extended::DynamicResourcesWriter,
                               public AsyncPodDeleter,
                               public GroupMemberLister,
                               public CSIDriverLister,
                               public VolumeAttachmentLister {
 public:
  ApiClusterClient(std::unique_ptr<RestClient> rest,
                   std::function<void(const std::string&)> log = {}, BindingPipeline bindings = {});
  ~ApiClusterClient() override;

  // Starts every informer; events go to `handler` (set before Start).
  void SetEventHandler(ClusterEventHandler* handler) { handler_ = handler; }
  void Start();
  // Ends the watches: no event reaches the handler once this returns (an event being delivered
  // is waited for), while writes and the listers' caches keep working. Stop does it too.
  void StopWatching();
  void Stop();
  bool HasSynced() const;
  RestClient& rest() { return *rest_; }
  // The scheduler name written into conditions the client sets for it (DisruptionTarget).
  void set_reporting_name(std::string name) { reporting_name_ = std::move(name); }
  // Sets annotations on a pod (merge patch, queued on the ordered status writer). Skipped when
  // the pod already carries exactly these values (an annotation change is a pod update, which
  // retries an unschedulable pod; identical records must not loop).
  void AnnotatePod(const Pod& pod, const std::map<std::string, std::string>& annotations);
  // Keep pods' and nodes' whole documents (set before Start when extenders receive them).
  void set_keep_documents(bool keep) { keep_documents_ = keep; }

  // Records an event about a pod (events.k8s.io/v1, core/v1 when that is not served), queued
  // and written by background threads.
  void RecordPodEvent(const Pod& pod, std::string_view type, std::string_view reason,
                      std::string_view action, std::string message,
                      std::string_view reporting_controller);

  // ---- ClusterClient
  Ptr<Pod> GetPod(std::string_view ns, std::string_view name) const override;
  std::vector<Ptr<Pod>> ListPods() const override;
  // GroupMemberLister: from an index of the pods informer.
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
  Ptr<CSINode> GetCSINode(std::string_view node_name) const override;
  // CSIDriverLister: read from the CSIDriver informer's documents.
  std::optional<CSIDriverInfo> GetCSIDriver(std::string_view name) const override;
  // VolumeAttachmentLister: the VolumeAttachment informer's documents, indexed by node.
  std::vector<VolumeAttachmentInfo> VolumeAttachmentsOn(std::string_view node_name) const override;
  std::vector<Ptr<PodDisruptionBudget>> ListPDBs() const override;
  Ptr<PriorityClass> GetPriorityClass(std::string_view name) const override;
  Ptr<PodGroup> GetPodGroup(std::string_view ns, std::string_view name) const override;
  std::vector<Ptr<PodGroup>> ListPodGroups(std::string_view ns) const override;
  Ptr<SchedulingPodGroup> GetSchedulingPodGroup(std::string_view ns,
                                                std::string_view name) const override;

  // --- DraListers and DraWriter (api_cluster_client_dra.cc): the resource.k8s.io informers'
  // caches (empty when the server does not serve the group), and PUT of a claim's status.
  std::vector<Ptr<ResourceSlice>> ListResourceSlices() const override;
  Ptr<ResourceClaim> GetResourceClaim(std::string_view ns, std::string_view name) const override;
  std::vector<Ptr<ResourceClaim>> ListResourceClaims() const override;
  Ptr<DeviceClass> GetDeviceClass(std::string_view name) const override;
  std::vector<Ptr<DeviceClass>> ListDeviceClasses() const override;
  Result<Ptr<ResourceClaim>> UpdateResourceClaimStatus(const ResourceClaim& claim) override;
  // --- DraClaimFeed: the claim informer's changes (recorded whether or not a handler is set).
  ClaimChanges ClaimChangesSince(uint64_t cursor) const override;
  // --- DraSliceGeneration: counts the changes of the slices as listed (a DeviceTaintRule's
  // change counts when it changes a slice's taints).
  uint64_t ResourceSliceGeneration() const override { return slice_generation_.load(); }
  // --- DynamicResourcesWriter (api_cluster_client_extended.cc): POST of the claim, its
  // deletion, and a merge patch of the pod's status (all synchronous: PreBind's writes).
  Result<Ptr<ResourceClaim>> CreateResourceClaim(
      const ResourceClaim& claim, std::string_view generate_name,
      const std::vector<std::string>& finalizers) override;
  VoidResult DeleteResourceClaim(const ResourceClaim& claim) override;
  Result<Ptr<ResourceClaim>> AddResourceClaimFinalizer(const ResourceClaim& claim,
                                                       std::string_view finalizer) override;
  VoidResult SetPodExtendedResourceClaimStatus(const Pod& pod,
                                               const nlohmann::json& status) override;

  VoidResult Bind(const Pod& pod, std::string_view node_name) override;
  VoidResult DeletePod(const Pod& pod, std::function<void(const Error&)> on_failure) override;
  void DeletePodThen(const Pod& pod, std::function<void(const Error*)> done) override;
  // Waits until every queued victim deletion has run (and its on_failure, if any, returned).
  void FlushVictimDeletions() { victim_writer_.Flush(); }
  // Waits until every queued write (status patches, victim deletions) has run.
  void FlushWrites() {
    status_writer_.Flush();
    victim_writer_.Flush();
  }
  VoidResult SetNominatedNodeName(const Pod& pod, std::string_view node_name) override;
  VoidResult SetPodScheduledCondition(const Pod& pod, const PodCondition& cond) override;
  VoidResult BindVolume(const PersistentVolumeClaim& pvc, std::string_view pv_name) override;
  VoidResult RequestProvisioning(const PersistentVolumeClaim& pvc,
                                 std::string_view node_name) override;

 private:
  enum Kind {
    kPods,
    kNodes,
    kNamespaces,
    kServices,
    kReplicationControllers,
    kReplicaSets,
    kStatefulSets,
    kPVs,
    kPVCs,
    kStorageClasses,
    kCSINodes,
    kCSIDrivers,
    kVolumeAttachments,
    kPDBs,
    kPriorityClasses,
    kPodGroups,            // scheduling.x-k8s.io (a CRD: optional)
    kSchedulingPodGroups,  // scheduling.k8s.io (served only where the gate is on: optional)
    // resource.k8s.io/v1 (optional: a server without DRA answers 404)
    kDeviceClasses,
    kResourceSlices,
    kResourceClaims,
    kDeviceTaintRules,
    kKindCount
  };
  // Informer handlers that report a DRA kind's changes to a handler that is a DraEventHandler.
  // The claim informer's also keep the claim feed, the slice informer's the slice generation.
  InformerHandlers DraInformerHandlers(DraEventResource resource);
  // The slice and DeviceTaintRule informers' handlers: they keep slices_ (the slices with the
  // rules' taints), count the slice generation, and report the tainted slices' changes.
  InformerHandlers SliceInformerHandlers();
  InformerHandlers TaintRuleInformerHandlers();
  // Informer handlers that keep attachments_ and report deleted VolumeAttachments to a handler
  // that is a VolumeAttachmentEventHandler.
  InformerHandlers VolumeAttachmentInformerHandlers();
  // The store indexes the group member listers read, before Start.
  void AddIndexes();
  template <class T>
  Ptr<T> GetTyped(Kind k, const std::string& key) const;
  template <class T>
  std::vector<Ptr<T>> ListInNamespace(Kind k, std::string_view ns) const;
  std::vector<Ptr<Pod>> PodsByIndex(const char* index, std::string_view ns,
                                    std::string_view group) const;
  void EventLoop();
  // An event about a pod, waiting for a writer; its body is written when it is sent.
  struct PendingEvent {
    std::string name, namespace_, type, reason, action, controller, event_time, note;
    std::string pod_name, pod_uid, pod_resource_version;
  };
  static std::string EventsV1Body(const PendingEvent& ev);
  static std::string CoreV1EventBody(const PendingEvent& ev);
  VoidResult DeleteVictim(const Pod& pod);
  void QueueStatusPatch(const Pod& pod, std::string_view what, nlohmann::json patch,
                        std::string content_type, std::string_view subresource = "/status");

  std::unique_ptr<RestClient> rest_;
  // Bindings from the binding threads, combined into pipelined batches when they pile up.
  WriteCombiner bindings_;
  std::function<void(const std::string&)> log_;
  ClusterEventHandler* handler_ = nullptr;
  ClaimChangeLog claim_log_;                   // fed by the claim informer's handlers
  std::atomic<uint64_t> slice_generation_{0};  // counted by the slice informer's handlers
  TaintedSlices slices_;  // fed by the slice and DeviceTaintRule informers' handlers
  bool keep_documents_ = false;
  std::string reporting_name_ = "default-scheduler";
  std::vector<std::unique_ptr<Informer>> informers_;
  // The VolumeAttachment informer's objects decoded once, by spec.nodeName then name, so that
  // Filter, which reads a node's attachments for every node it checks, parses no document.
  struct Attachments {
    mutable std::mutex mu;
    std::map<std::string, std::map<std::string, VolumeAttachmentInfo>, std::less<>> by_node;
    std::map<std::string, std::string> node_of;  // name -> its key in by_node
    void Put(VolumeAttachmentInfo va);
    void Remove(const std::string& name);
  };
  Attachments attachments_;

  std::mutex events_mu_;
  std::condition_variable events_cv_;
  std::deque<PendingEvent> events_;
  // Events dropped because the queue was full, since the last time that was logged.
  size_t events_dropped_ = 0;
  std::chrono::steady_clock::time_point drops_logged_;
  bool stopping_ = false;
  // Stopping: what is still queued by then is dropped (and counted in the log), so a stop
  // with a backlog ends in seconds rather than at the rate limit's pace.
  std::chrono::steady_clock::time_point drain_until_;
  std::atomic<bool> stop_retrying_{false};  // shutting down: events are tried once more only
  std::atomic<int> events_api_{0};          // 0 unknown, 1 events.k8s.io, 2 core/v1
  // Two writers, each sending what waits in pipelined batches: one event per round trip falls
  // behind a scheduler binding thousands of pods a second.
  std::vector<std::thread> event_threads_;
  // Declared after everything their tasks use (rest_): destroyed, and drained, first.
  AsyncWriter status_writer_;
  static constexpr int kVictimWriters = 4;
  AsyncWriter victim_writer_;
};

}  // namespace berth::client
