// ReplicaSetController: keeps spec.replicas pods of each ReplicaSet (or ReplicationController:
// the same code, as upstream's ReplicationManager) running, as kube-controller-manager's
// pkg/controller/replicaset:
//   - pods are made from spec.template, named by the API server from generateName
//     "<name>-", with a controller ownerReference to the set;
//   - pods whose labels match and that have no controller are adopted, owned pods that no
//     longer match are released (ControllerRefManager);
//   - creations go in slow-start batches (1, 2, 4, ...; a failure stops the rest) of at most
//     500 per sync, each batch pipelined on one connection; expectations keep a set from being
//     managed again before its own creations and deletions are seen;
//   - surplus pods are deleted in DeleteBefore's order;
//   - status (replicas, fullyLabeledReplicas, readyReplicas, availableReplicas,
//     observedGeneration, the ReplicaFailure condition) is written to the status subresource
//     when it changed;
//   - a sync counts the set's pods from a PodCensus, and walks them only when some must be
//     adopted, released or deleted (a set of 100,000 pods is synced after every batch of
//     their events).
//
// Threads: informer handlers enqueue keys; `workers` threads sync them.
#pragma once

#include <memory>
#include <string>

#include "client/rest_client.h"
#include "controllers/controller_base.h"
#include "controllers/expectations.h"
#include "controllers/object_util.h"
#include "controllers/pod_census.h"
#include "controllers/shared_informer.h"

namespace berth::controllers {

struct ReplicaSetKind {
  std::string kind;           // ReplicaSet | ReplicationController
  std::string api_version;    // apps/v1 | v1
  std::string plural;         // replicasets | replicationcontrollers
  bool set_selector = false;  // spec.selector is a map of labels (ReplicationController)

  static ReplicaSetKind ReplicaSets();
  static ReplicaSetKind ReplicationControllers();
  std::string CollectionPath(const std::string& ns) const;
  std::string ObjectPath(const std::string& ns, const std::string& name) const;
};

class ReplicaSetController : public Controller {
 public:
  ReplicaSetController(ReplicaSetKind kind, client::RestClient* rest, SharedInformer* pods,
                       SharedInformer* sets, ControllerOptions options);
  ~ReplicaSetController() override;
  void Start() override;
  void Stop() override;

  // One sync of the set with this key (what a worker does; tests call it directly).
  VoidResult Sync(const std::string& key);
  WorkQueue& queue() { return queue_; }
  Expectations& expectations() { return expectations_; }

  // Most creations or deletions of one sync (upstream's burstReplicas).
  static constexpr int kBurstReplicas = 500;

 private:
  // What a set's status counts of the pods it owns.
  struct Counts {
    int64_t replicas = 0, fully_labeled = 0, ready = 0, available = 0;
  };
  // What one sync reads of its set.
  struct SyncInput {
    std::string uid, ns;
    CompiledSelector selector, template_selector;
    int64_t replicas = 0, min_ready = 0;
    bool deleting = false;
  };
  void OnPodAdd(const Object& obj);
  void OnPodUpdate(const Object& old_obj, const Object& new_obj);
  void OnPodDelete(const Object& obj);
  void EnqueueMatchingSets(const Json& pod);
  // The set `ref` names in `ns` when its uid matches; null otherwise.
  std::shared_ptr<const Json> ResolveRef(const std::string& ns, const Json* ref) const;
  // The counts from the census, when they are all the sync needs: null when some pod must be
  // adopted or released.
  std::optional<Counts> CountFromCensus(const SyncInput& in) const;
  Counts CountClaimed(const SyncInput& in, const std::vector<const Pod*>& claimed) const;
  // The active pods the set owns and the namespace's active orphans, in key order (the set's
  // first); `keep` holds them alive.
  std::vector<const Pod*> ActivePods(const SyncInput& in, std::vector<Object>* keep) const;
  Result<std::vector<const Pod*>> ClaimPods(const Json& set, const CompiledSelector& selector,
                                            const std::vector<const Pod*>& candidates);
  VoidResult PatchOwnerRefs(const Pod& pod, Json refs);
  VoidResult CreateReplicas(const Json& set, const std::string& key, int64_t missing);
  VoidResult DeleteReplicas(const std::string& key, const std::vector<const Json*>& pods,
                            const std::vector<const Json*>& related, int64_t surplus);
  int CreatePods(const Json& set, const std::string& key, int count, Error* first_error);
  Result<Json> WriteStatus(const Json& set, const Counts& counts,
                           const std::optional<Error>& manage_error, int diff);
  // The pods of every set under the same controller; `keep` holds them alive.
  std::vector<const Json*> RelatedPods(const Json& set, std::vector<Object>* keep) const;

  ReplicaSetKind kind_;
  client::RestClient* rest_;
  SharedInformer* pods_;
  SharedInformer* sets_;
  ControllerOptions options_;
  PodCensus census_;
  WorkQueue queue_;
  Expectations expectations_;
  WorkerLoop workers_;
};

// The pod a set creates: its template's metadata and spec, generateName "<set name>-", the
// controller reference.
Json PodFromTemplate(const ReplicaSetKind& kind, const Json& set);

}  // namespace berth::controllers
