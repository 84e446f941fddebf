// The scheduler's edge to the cluster's objects, in two halves:
//
//   * ClusterListers: reads, served from local caches (informers in the daemon, memory in
//     simulation). Cheap and non-blocking: any extension point may call them, Filter and Score
//     concurrently from several threads.
//   * ClusterWriter: API writes. In the daemon each is a round trip to the API server (or is
//     queued for one), so only the binding cycle (PreBind, Bind: binding threads) and preemption
//     (PostFilter's victim deletions and nomination clears) call them; plugins reach them
//     through Handle::writer(). Failures are infrastructure errors with a code (NotFound,
//     Conflict, Gone, Unavailable, Timeout, ...; see result.h) for the caller to act on.
//
// ClusterClient is both, as implementations provide them: InMemoryCluster (src/framework) for
// simulation and tests, ApiClusterClient (src/client) against an API server. All methods are
// thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/objects.h"
#include "berth/api/result.h"
#include "berth/export.h"
#include "berth/framework/cluster_event.h"

namespace berth {

class BERTH_EXPORT ClusterListers {
 public:
  virtual ~ClusterListers() = default;

  // Null / empty when absent.
  virtual Ptr<Pod> GetPod(std::string_view ns, std::string_view name) const = 0;
  virtual std::vector<Ptr<Pod>> ListPods() const = 0;
  virtual Ptr<Node> GetNode(std::string_view name) const = 0;
  virtual std::vector<Ptr<Node>> ListNodes() const = 0;
  virtual Ptr<Namespace> GetNamespace(std::string_view name) const = 0;
  virtual std::vector<Ptr<Namespace>> ListNamespaces() const = 0;
  virtual std::vector<Ptr<Service>> ListServices(std::string_view ns) const = 0;
  virtual std::vector<Ptr<ReplicationController>> ListReplicationControllers(
      std::string_view ns) const = 0;
  virtual std::vector<Ptr<ReplicaSet>> ListReplicaSets(std::string_view ns) const = 0;
  virtual std::vector<Ptr<StatefulSet>> ListStatefulSets(std::string_view ns) const = 0;
  virtual Ptr<PersistentVolumeClaim> GetPVC(std::string_view ns, std::string_view name) const = 0;
  virtual Ptr<PersistentVolume> GetPV(std::string_view name) const = 0;
  virtual std::vector<Ptr<PersistentVolume>> ListPVs() const = 0;
  virtual Ptr<StorageClass> GetStorageClass(std::string_view name) const = 0;
  virtual Ptr<CSINode> GetCSINode(std::string_view node_name) const = 0;
  virtual std::vector<Ptr<PodDisruptionBudget>> ListPDBs() const = 0;
  virtual Ptr<PriorityClass> GetPriorityClass(std::string_view name) const = 0;
  // Gang objects (null / empty where the client does not serve them).
  virtual Ptr<PodGroup> GetPodGroup(std::string_view /*ns*/, std::string_view /*name*/) const {
    return nullptr;
  }
  virtual std::vector<Ptr<PodGroup>> ListPodGroups(std::string_view /*ns*/) const { return {}; }
  virtual Ptr<SchedulingPodGroup> GetSchedulingPodGroup(std::string_view /*ns*/,
                                                        std::string_view /*name*/) const {
    return nullptr;
  }
};

class BERTH_EXPORT ClusterWriter {
 public:
  virtual ~ClusterWriter() = default;

  // Binds the pod to the node (pods/binding): the Bind plugins, a binding thread. The pod must
  // still exist and be unbound: kConflict when it is bound already, kNotFound when it is gone.
  virtual VoidResult Bind(const Pod& pod, std::string_view node_name) = 0;
  // Deletes a preemption victim (after marking it with the DisruptionTarget condition where the
  // API serves it). kNotFound: it is gone already, which is as good.
  // A synchronous writer (the in-memory twin) returns the deletion's outcome. The daemon queues
  // the deletion, returns success at once and, if the deletion then fails (other than
  // kNotFound), calls `on_failure` with the error from a writer thread; it calls it before the
  // scheduler that asked is destroyed, or not at all.
  virtual VoidResult DeletePod(const Pod& pod,
                               std::function<void(const Error&)> on_failure = nullptr) = 0;
  // Sets (or clears, with "") status.nominatedNodeName. The scheduler's own nominations and
  // preemption's clears; the daemon queues them (the result only says it was queued).
  virtual VoidResult SetNominatedNodeName(const Pod& pod, std::string_view node_name) = 0;
  // Records the PodScheduled condition (status False with reason and message on failure).
  // Queued in the daemon, as SetNominatedNodeName.
  virtual VoidResult SetPodScheduledCondition(const Pod& pod, const PodCondition& cond) = 0;
  // VolumeBinding PreBind: writes the PV's claimRef and the claim's volumeName (static binding).
  virtual VoidResult BindVolume(const PersistentVolumeClaim& pvc, std::string_view pv_name) = 0;
  // VolumeBinding PreBind: asks for dynamic provisioning on the node (selected-node annotation).
  virtual VoidResult RequestProvisioning(const PersistentVolumeClaim& pvc,
                                         std::string_view node_name) = 0;
};

class ClusterClient : public ClusterListers, public ClusterWriter {};

}  // namespace berth

namespace berth {

// Receives changes of the cluster's objects (informer events). Called from the client's event
// thread (or, for InMemoryCluster, synchronously from the writer's thread after the change).
class BERTH_EXPORT ClusterEventHandler {
 public:
  virtual ~ClusterEventHandler() = default;
  virtual void OnPodAdd(const Ptr<Pod>& pod) = 0;
  virtual void OnPodUpdate(const Ptr<Pod>& old_pod, const Ptr<Pod>& new_pod) = 0;
  virtual void OnPodDelete(const Ptr<Pod>& pod) = 0;
  virtual void OnNodeAdd(const Ptr<Node>& node) = 0;
  virtual void OnNodeUpdate(const Ptr<Node>& old_node, const Ptr<Node>& new_node) = 0;
  virtual void OnNodeDelete(const Ptr<Node>& node) = 0;
  // Any other object the scheduler reads was added, updated or deleted (PV, PVC, StorageClass,
  // CSINode, Service, Namespace, ...): `event.actions` is kAdd, kUpdateOther or kDelete, and the
  // objects are as EventObject describes (old empty on add, new empty on delete).
  virtual void OnObjectEvent(const ClusterEvent& event, const EventObject& old_object,
                             const EventObject& new_object) = 0;
};

}  // namespace berth
