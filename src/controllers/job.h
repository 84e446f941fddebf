// JobController: runs each Job's pods to completion, as kube-controller-manager's
// pkg/controller/job:
//   - pods from spec.template with a controller ownerReference, named "<job>-" (NonIndexed) or
//     "<job>-<index>-" (Indexed: the batch.kubernetes.io/job-completion-index annotation and
//     label, hostname "<job>-<index>", the JOB_COMPLETION_INDEX variable);
//   - at most min(parallelism, completions - succeeded) active pods (parallelism alone for a
//     Job without completions, until one pod succeeds); creations in slow-start batches of at
//     most 500 a sync with expectations, as the ReplicaSet controller;
//   - failed pods are replaced after upstream's back-off (10 s doubled per failure since the
//     last success, at most 6 minutes); more than backoffLimit failures (or, for
//     restartPolicy OnFailure, as many container restarts) fail the Job with
//     BackoffLimitExceeded, a run longer than activeDeadlineSeconds with DeadlineExceeded;
//   - suspend deletes the active pods (condition Suspended), resuming restarts the clock;
//   - status (active, ready, succeeded, failed, terminating, startTime, completionTime,
//     completedIndexes) goes to the status subresource; the interim conditions
//     SuccessCriteriaMet / FailureTarget come first, then Complete / Failed once no pod of the
//     Job is terminating.
// Berth keeps finished pods (there is no terminated-pod garbage collection), so counts are read
// from the Job's pods and never go down; pods carry no batch.kubernetes.io/job-tracking
// finalizer (docs/up.md).
//
// Threads: informer handlers enqueue keys; `workers` threads sync them.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "client/rest_client.h"
#include "controllers/controller_base.h"
#include "controllers/expectations.h"
#include "controllers/object_util.h"
#include "controllers/shared_informer.h"

namespace berth::controllers {

class JobController : public Controller {
 public:
  JobController(client::RestClient* rest, SharedInformer* pods, SharedInformer* jobs,
                ControllerOptions options);
  ~JobController() override;
  void Start() override;
  void Stop() override;

  // One sync of the Job with this key (what a worker does; tests call it directly).
  VoidResult Sync(const std::string& key);
  WorkQueue& queue() { return queue_; }
  Expectations& expectations() { return expectations_; }

  static constexpr int kMaxPodCreateDeletePerSync = 500;

 private:
  struct State;
  void OnPodEvent(const Object& obj, bool added, bool deleted);
  std::shared_ptr<const Json> ResolveJob(const Json& pod) const;
  State Collect(const Json& job, const std::string& key) const;
  void DecideFailure(State& s);
  VoidResult ManageJob(State& s);
  int CreatePods(State& s, int count, std::vector<int> indexes, Error* first_error);
  int DeletePods(const State& s, const std::vector<const Json*>& victims, bool expect,
                 Error* first_error);
  void UpdateSuspended(State& s) const;
  VoidResult WriteStatus(State& s);

  client::RestClient* rest_;
  SharedInformer* pods_;
  SharedInformer* jobs_;
  ControllerOptions options_;
  WorkQueue queue_;
  Expectations expectations_;
  WorkerLoop workers_;
};

// The pod the Job creates for completion index `index` (-1 for a NonIndexed Job).
Json JobPodFromTemplate(const Json& job, int index);

}  // namespace berth::controllers
