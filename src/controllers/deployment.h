// DeploymentController: rolls a Deployment's pod template out through ReplicaSets, as
// kube-controller-manager's pkg/controller/deployment:
//   - the ReplicaSet of the current template is "<deployment>-<pod-template-hash>", its
//     selector and template carrying the pod-template-hash label; its revision annotation is
//     one more than the highest of the others, and the Deployment carries the same revision;
//   - RollingUpdate scales the new set up within replicas + maxSurge and the old ones down
//     while at least replicas - maxUnavailable pods are available; Recreate scales the old sets
//     to zero, waits for their pods to go, then scales the new one up;
//   - a change of spec.replicas during a rollout is spread over the sets in proportion to
//     their sizes (the desired-replicas / max-replicas annotations);
//   - ReplicaSets matching the selector without a controller are adopted, owned ones that no
//     longer match are released;
//   - status (replicas, updated, ready, available, unavailable, the Available and Progressing
//     conditions, ProgressDeadlineExceeded) goes to the status subresource, annotations to the
//     Deployment itself (the API server drops metadata written through /status);
//   - old ReplicaSets beyond spec.revisionHistoryLimit are deleted once scaled to zero.
// Every write of a ReplicaSet is a PUT carrying the resourceVersion the sync read, so a sync
// acting on a stale cache fails with a conflict and is retried instead of scaling twice; the
// counts come from the stored ReplicaSets, so a restarted controller resumes where it stopped.
//
// Threads: informer handlers enqueue keys; `workers` threads sync them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "client/rest_client.h"
#include "controllers/controller_base.h"
#include "controllers/object_util.h"
#include "controllers/shared_informer.h"

namespace berth::controllers {

class DeploymentController : public Controller {
 public:
  DeploymentController(client::RestClient* rest, SharedInformer* pods, SharedInformer* sets,
                       SharedInformer* deployments, ControllerOptions options);
  ~DeploymentController() override;
  void Start() override;
  void Stop() override;

  // One sync of the Deployment with this key (what a worker does; tests call it directly).
  VoidResult Sync(const std::string& key);
  WorkQueue& queue() { return queue_; }

 private:
  // One sync's view: the Deployment (updated as the sync writes it) and its ReplicaSets.
  struct Rollout {
    Json d;
    Json* new_rs = nullptr;       // into `sets`
    std::vector<Json> sets;       // all owned ReplicaSets
    std::vector<Json*> old_sets;  // into `sets`, all but the new one
    std::vector<Json*> All();     // old + new
    std::vector<const Json*> AllConst();
  };

  void OnSetEvent(const Json& set);
  void EnqueueOwner(const Json& obj);
  std::vector<std::string> DeploymentsMatching(const Json& set) const;

  Result<std::vector<Json>> ClaimReplicaSets(const Json& d, const CompiledSelector& selector);
  // Splits the sets into new and old, creating the new one when `create` (and it is missing);
  // brings the revision annotations up to date.
  VoidResult NewAndOld(Rollout& r, bool create);
  VoidResult CreateNewReplicaSet(Rollout& r, int64_t revision);
  VoidResult UpdateDeploymentMeta(Rollout& r);
  // PUTs `set` (spec.replicas = n and the replicas annotations) when either differs.
  Result<bool> ScaleSet(Json& set, int64_t n, const Json& d);
  Result<bool> PutSet(Json& set);

  VoidResult Scale(Rollout& r);  // proportional scaling (deployment_scale.cc)
  bool IsScalingEvent(Rollout& r) const;
  VoidResult RolloutRolling(Rollout& r);
  VoidResult RolloutRecreate(Rollout& r, const std::vector<const Json*>& pods);
  Result<bool> ReconcileOldSets(Rollout& r);
  VoidResult CleanupOldSets(Rollout& r);

  Json CalculateStatus(const Rollout& r) const;
  VoidResult SyncStatusOnly(Rollout& r);
  VoidResult SyncRolloutStatus(Rollout& r);
  VoidResult WriteStatus(Rollout& r, const Json& status);
  // The Progressing condition's paused/resumed marks (upstream's checkPausedConditions).
  VoidResult CheckPausedConditions(Rollout& r);

  std::string Timestamp() const;

  client::RestClient* rest_;
  SharedInformer* pods_;
  SharedInformer* sets_;
  SharedInformer* deployments_;
  ControllerOptions options_;
  WorkQueue queue_;
  WorkerLoop workers_;
};

// The Deployment's conditions (status.conditions) helpers, as upstream's deploymentutil.
const Json* FindCondition(const Json& status, std::string_view type);
// Sets `cond` in status.conditions, keeping lastTransitionTime when the status did not change
// and leaving the list alone when status and reason are already the same.
void SetCondition(Json& status, Json cond);
void RemoveCondition(Json& status, std::string_view type);
Json NewCondition(std::string_view type, std::string_view status, std::string_view reason,
                  std::string_view message, const std::string& now);
// The deployment has all replicas updated and available, observed at its generation.
bool DeploymentComplete(const Json& d, const Json& status);
bool DeploymentProgressing(const Json& d, const Json& status);
bool DeploymentTimedOut(const Json& d, const Json& status, UnixTime now);
bool HasProgressDeadline(const Json& d);

}  // namespace berth::controllers
