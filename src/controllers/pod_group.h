// PodGroupController ("podgroup"): writes the status of scheduler-plugins' PodGroups
// (scheduling.x-k8s.io/v1alpha1) from their member pods, as scheduler-plugins' controller
// (pkg/controllers/podgroup_controller.go) does:
//
//   * ""        -> Pending;
//   * Pending   -> Scheduling once at least minMember pods carry the group's label
//                  (status.occupiedBy: "<namespace>/<owner name>" of the first pod's owner
//                  references, sorted, joined by ",");
//   * otherwise status.running/succeeded/failed are counted from the pods' phases and the
//     phase is Pending (fewer than minMember pods), Scheduling (running + succeeded below
//     minMember), Running (at least minMember), Failed (a pod failed and failed + running +
//     succeeded reach minMember) or Finished (succeeded reach minMember); Finished and
//     Failed are final.
//   * A Pending or Scheduling group with no running pod whose status.scheduleStartTime is more
//     than 48 hours after its creation is left alone (a Warning event "Timeout").
//
// Members are the pods labelled `scheduling.x-k8s.io/pod-group: <name>` in the PodGroup's own
// namespace (upstream counts the label's pods in every namespace). Writes are merge patches of
// the /status subresource, made conditional on the resourceVersion read, so a stale cache
// never writes an older phase over a newer one.
//
// The PodGroup CustomResourceDefinition may be absent: its informer then reads as synced and
// empty, asks again every few seconds without a log line, and the controller starts working
// once the CRD is applied.
//
// Threads: informer handlers enqueue keys; `workers` threads sync them.
#pragma once

#include <string>
#include <vector>

#include "client/rest_client.h"
#include "controllers/controller_base.h"
#include "controllers/object_util.h"
#include "controllers/shared_informer.h"

namespace berth::controllers {

inline constexpr char kPodGroupsPath[] = "/apis/scheduling.x-k8s.io/v1alpha1/podgroups";
inline constexpr char kPodGroupLabel[] = "scheduling.x-k8s.io/pod-group";

// The status upstream's reconcile computes for `group` (a PodGroup document) given its member
// pods' documents, ordered by name (occupiedBy comes from the first). Returns the group's
// status unchanged when it is final or past the 48-hour limit (see PodGroupTimedOut).
Json NextPodGroupStatus(const Json& group, const std::vector<const Json*>& pods);
// Whether `group` is Pending or Scheduling with no running pod and a scheduleStartTime more
// than 48 hours after its creation (upstream then stops reconciling it).
bool PodGroupTimedOut(const Json& group);

class PodGroupController : public Controller {
 public:
  PodGroupController(client::RestClient* rest, SharedInformer* pods, SharedInformer* groups,
                     ControllerOptions options);
  ~PodGroupController() override;
  void Start() override;
  void Stop() override;

  VoidResult Sync(const std::string& key);
  WorkQueue& queue() { return queue_; }

 private:
  // Queues the group a pod names through its label, if any.
  void EnqueueGroupOf(const Object& pod);

  client::RestClient* rest_;
  SharedInformer* pods_;
  SharedInformer* groups_;
  ControllerOptions options_;
  WorkQueue queue_;
  WorkerLoop workers_;
};

}  // namespace berth::controllers
