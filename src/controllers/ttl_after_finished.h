// TtlAfterFinishedController: deletes a finished Job ttlSecondsAfterFinished seconds after its
// Complete or Failed condition became True, with background propagation (its pods then go by
// garbage collection), as kube-controller-manager's ttl-after-finished controller. Before
// deleting it reads the Job again from the API server: a ttl changed meanwhile is honoured.
//
// Threads: informer handlers enqueue keys; `workers` threads sync them.
#pragma once

#include <string>

#include "client/rest_client.h"
#include "controllers/controller_base.h"
#include "controllers/object_util.h"
#include "controllers/shared_informer.h"

namespace berth::controllers {

class TtlAfterFinishedController : public Controller {
 public:
  TtlAfterFinishedController(client::RestClient* rest, SharedInformer* jobs,
                             ControllerOptions options);
  ~TtlAfterFinishedController() override;
  void Start() override;
  void Stop() override;

  VoidResult Sync(const std::string& key);
  WorkQueue& queue() { return queue_; }

 private:
  // How long until `job` expires (<= 0: now); nullopt when it never does.
  std::optional<Duration> Remaining(const Json& job) const;

  client::RestClient* rest_;
  SharedInformer* jobs_;
  ControllerOptions options_;
  WorkQueue queue_;
  WorkerLoop workers_;
};

}  // namespace berth::controllers
