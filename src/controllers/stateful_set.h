// StatefulSetController: the pods "<set>-<i>" of each StatefulSet, one per ordinal, as
// kube-controller-manager's pkg/controller/statefulset:
//   - ordinals spec.ordinals.start .. start+replicas-1; each pod gets hostname, subdomain
//     (spec.serviceName), the pod-name, pod-index and controller-revision-hash labels and a
//     claim per volumeClaimTemplate, "<template>-<set>-<i>", created before the pod;
//   - OrderedReady (the default) creates one pod at a time, lowest ordinal first, each after
//     the previous ones are Running and Ready, and removes pods beyond the replicas highest
//     ordinal first, one at a time; Parallel creates and removes them all at once;
//   - failed pods are deleted and recreated;
//   - RollingUpdate replaces, from the highest ordinal down to spec.updateStrategy.
//     rollingUpdate.partition, one pod at a time, each pod whose revision is not the
//     template's, waiting for the replacement to be Running and Ready; pods below the
//     partition are recreated from the current revision; OnDelete replaces nothing;
//   - persistentVolumeClaimRetentionPolicy: whenDeleted Delete makes the set an owner of its
//     claims (garbage collection deletes them with it); whenScaled Delete makes a removed
//     pod the owner of its claims; the default (Retain, Retain) leaves claims alone;
//   - ControllerRevisions per template; status (replicas, readyReplicas, availableReplicas,
//     currentReplicas, updatedReplicas, currentRevision, updateRevision, observedGeneration)
//     on the status subresource.
// Pod names are fixed, so the API server itself keeps two pods of one ordinal from existing,
// whatever the informer's cache shows (after a restart, say): a second create fails with
// AlreadyExists. In a namespace being deleted, where every create is refused, a sync stops at
// the first refused create, without an error to retry or log (as upstream's controllers).
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

class StatefulSetController : public Controller {
 public:
  StatefulSetController(client::RestClient* rest, SharedInformer* pods, SharedInformer* sets,
                        SharedInformer* revisions, SharedInformer* claims,
                        ControllerOptions options);
  ~StatefulSetController() override;
  void Start() override;
  void Stop() override;

  VoidResult Sync(const std::string& key);
  WorkQueue& queue() { return queue_; }

 private:
  struct State;
  void OnPod(const Object& obj);
  // Creates the ordinal's missing claims. A namespace being deleted refuses them: not an error
  // (nothing to retry), s.namespace_terminating says so.
  VoidResult EnsureClaims(State& s, int64_t ordinal);
  // Its claims, then the pod; a refusal for a terminating namespace as for EnsureClaims.
  VoidResult CreatePod(State& s, int64_t ordinal);
  VoidResult DeletePod(const Json& pod);
  VoidResult ReleaseClaimsTo(const Json& set, const Json& pod);
  // Creates, deletes and replaces pods; false when it stopped to wait.
  Result<bool> ManageReplicas(State& s);
  VoidResult RollPods(State& s);
  VoidResult WriteStatus(State& s);

  client::RestClient* rest_;
  SharedInformer* pods_;
  SharedInformer* sets_;
  SharedInformer* revisions_;
  SharedInformer* claims_;
  ControllerOptions options_;
  WorkQueue queue_;
  WorkerLoop workers_;
};

}  // namespace berth::controllers
