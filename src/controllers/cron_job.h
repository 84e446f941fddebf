// CronJobController: creates a CronJob's Jobs on its schedule, as kube-controller-manager's
// pkg/controller/cronjob (ControllerV2):
//   - the schedule (CronSchedule) is read in spec.timeZone, else in the controller's zone;
//   - at each scheduled time a Job "<cronjob>-<scheduled time in minutes since the epoch>" is
//     made from spec.jobTemplate with a controller ownerReference and the
//     batch.kubernetes.io/cronjob-scheduled-timestamp annotation; the name makes a second
//     creation for the same time fail, so a restart never runs a time twice;
//   - only the most recent missed time runs, and not when it is older than
//     startingDeadlineSeconds; concurrencyPolicy Forbid skips a time while a Job runs, Replace
//     deletes the running Jobs first; suspend stops new runs;
//   - status.active lists the running Jobs, lastScheduleTime and lastSuccessfulTime follow
//     them; finished Jobs beyond successfulJobsHistoryLimit / failedJobsHistoryLimit are
//     deleted oldest first (background propagation);
//   - the CronJob is queued again 100 ms after its next scheduled time.
//
// Threads: informer handlers enqueue keys; `workers` threads sync them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "client/rest_client.h"
#include "controllers/controller_base.h"
#include "controllers/cron_schedule.h"
#include "controllers/object_util.h"
#include "controllers/shared_informer.h"

namespace berth::controllers {

// The scheduled time a CronJob should run now and how its schedule stands
// (upstream's mostRecentScheduleTime).
struct ScheduleCheck {
  int64_t earliest = 0;                // last schedule time, else creation (Unix seconds)
  std::optional<int64_t> most_recent;  // the latest scheduled time not after now
  bool missed = false;                 // more than one time passed since `earliest`
  bool many_missed = false;            // more than 100
  std::optional<Error> error;
};
ScheduleCheck MostRecentScheduleTime(const Json& cronjob, TimePoint now,
                                     const CronSchedule& schedule, bool with_starting_deadline);
// How long until the CronJob should be synced again (its next time, plus 100 ms).
Duration NextScheduleDelay(const Json& cronjob, TimePoint now, const CronSchedule& schedule);
// "<name>-<minutes since the epoch>".
std::string CronJobJobName(const Json& cronjob, int64_t scheduled);
// The Job made for `scheduled`.
Json JobFromCronJob(const Json& cronjob, int64_t scheduled, const TimeZone& annotation_zone);

class CronJobController : public Controller {
 public:
  CronJobController(client::RestClient* rest, SharedInformer* jobs, SharedInformer* cronjobs,
                    ControllerOptions options);
  ~CronJobController() override;
  void Start() override;
  void Stop() override;

  VoidResult Sync(const std::string& key);
  WorkQueue& queue() { return queue_; }

 private:
  struct State;
  void OnJobEvent(const Object& obj);
  VoidResult Reconcile(State& s);
  VoidResult Schedule(State& s);
  void CleanupFinishedJobs(State& s);
  bool DeleteJob(State& s, const std::string& name, const std::string& uid);

  client::RestClient* rest_;
  SharedInformer* jobs_;
  SharedInformer* cronjobs_;
  ControllerOptions options_;
  WorkQueue queue_;
  WorkerLoop workers_;
};

}  // namespace berth::controllers
