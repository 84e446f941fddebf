// ClusterClient: the scheduler's edge to the cluster's objects.
//
// Reads come from local caches (informers in the daemon, memory in simulation) and are cheap;
// writes are API calls. Implementations: InMemoryCluster (src/sim) for simulation and tests, the
// API client (src/client) for real clusters. All methods are thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/objects.h"
#include "berth/api/result.h"
#include "berth/framework/cluster_event.h"

namespace berth {

class ClusterClient {
 public:
  virtual ~ClusterClient() = default;

  // ---- reads (null / empty when absent)
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

  // ---- writes
  // Binds the pod to the node (pods/binding). The pod must still exist and be unbound.
  virtual VoidResult Bind(const Pod& pod, std::string_view node_name) = 0;
  // Deletes a pod (preemption victims).
  virtual VoidResult DeletePod(const Pod& pod) = 0;
  // Sets (or clears, with "") status.nominatedNodeName.
  virtual VoidResult SetNominatedNodeName(const Pod& pod, std::string_view node_name) = 0;
  // Records the PodScheduled condition (status False with reason and message on failure).
  virtual VoidResult SetPodScheduledCondition(const Pod& pod, const PodCondition& cond) = 0;
  // VolumeBinding PreBind: writes the PV's claimRef and the claim's volumeName (static binding).
  virtual VoidResult BindVolume(const PersistentVolumeClaim& pvc, std::string_view pv_name) = 0;
  // VolumeBinding PreBind: asks for dynamic provisioning on the node (selected-node annotation).
  virtual VoidResult RequestProvisioning(const PersistentVolumeClaim& pvc,
                                         std::string_view node_name) = 0;
};

}  // namespace berth

namespace berth {

// Receives changes of the cluster's objects (informer events). Called from the client's event
// thread (or, for InMemoryCluster, synchronously from the writer's thread after the change).
class ClusterEventHandler {
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
