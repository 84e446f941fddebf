// DisruptionController: the status of each PodDisruptionBudget, as kube-controller-manager's
// pkg/controller/disruption: expectedPods (the scale of the pods' controllers: ReplicaSet,
// ReplicationController, Deployment through its ReplicaSet, StatefulSet; the number of pods
// for an integer minAvailable), currentHealthy (ready pods not being deleted nor recently
// evicted), desiredHealthy (from minAvailable or maxUnavailable, percentages rounded up),
// disruptionsAllowed, disruptedPods (entries the eviction subresource wrote, dropped once the
// pod is seen deleted or after two minutes), observedGeneration and the DisruptionAllowed
// condition (SufficientPods, InsufficientPods, SyncFailed). The eviction subresource of the
// API server spends disruptionsAllowed.
//
// Threads: informer handlers enqueue budget keys; `workers` threads sync them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "client/rest_client.h"
#include "controllers/controller_base.h"
#include "controllers/object_util.h"
#include "controllers/shared_informer.h"

namespace berth::controllers {

// How long an eviction's entry in status.disruptedPods stays without the pod being deleted.
inline constexpr int64_t kDisruptedPodTimeoutSeconds = 120;

// The facts a budget's status is computed from.
struct BudgetInput {
  std::vector<const Json*> pods;  // pods the selector matches, in the budget's namespace
  int64_t expected_from_controllers = 0;
  std::string controllers_error;  // not empty: the scale could not be found
};

// The budget's new status at `now` (also used by tests). `budget` is the stored object.
Json ComputeBudgetStatus(const Json& budget, const BudgetInput& in, UnixTime now,
                         int64_t* requeue_after_seconds);

struct DisruptionInformers {
  SharedInformer* pdbs;
  SharedInformer* pods;
  SharedInformer* replicasets;
  SharedInformer* replicationcontrollers;
  SharedInformer* deployments;
  SharedInformer* statefulsets;
};

class DisruptionController : public Controller {
 public:
  DisruptionController(client::RestClient* rest, DisruptionInformers informers,
                       ControllerOptions options);
  ~DisruptionController() override;
  void Start() override;
  void Stop() override;
  VoidResult Sync(const std::string& key);
  WorkQueue& queue() { return queue_; }

 private:
  void EnqueueNamespace(const std::string& ns);
  void EnqueueForPod(const Json& pod);
  // The total scale of the controllers of `pods`; an error names a pod with none.
  int64_t ExpectedScale(const std::vector<const Json*>& pods, std::string* error) const;

  client::RestClient* rest_;
  DisruptionInformers inf_;
  ControllerOptions options_;
  WorkQueue queue_;
  WorkerLoop workers_;
};

}  // namespace berth::controllers
