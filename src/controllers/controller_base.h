// What every controller of the controller manager shares: its options, and the loop of worker
// threads that take keys from its WorkQueue and sync them (a failed sync is retried with the
// queue's backoff and logged unless it is a conflict, a successful one forgets it), as
// upstream's processNextWorkItem.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "berth/api/result.h"
#include "berth/framework/clock.h"
#include "client/informer.h"
#include "controllers/work_queue.h"

namespace berth::controllers {

struct ControllerOptions {
  const Clock* clock = nullptr;                 // required
  int workers = 5;                              // kube-controller-manager's --concurrent-*-syncs
  std::function<void(const std::string&)> log;  // errors and notable events
  // kube-controller-manager's --node-monitor-grace-period (the node lifecycle controller).
  Duration node_monitor_grace_period = std::chrono::seconds(40);
  // The TaintTolerationComparisonOperators feature gate: Lt and Gt tolerations compare values
  // in the DaemonSet controller's node fit and the taint-eviction decisions.
  bool taint_toleration_comparison_operators = false;
  // kube-controller-manager's --terminated-pod-gc-threshold (the pod garbage collector): the
  // finished pods kept; 0 or less keeps them all.
  int terminated_pod_gc_threshold = 12500;
};

// A controller the ControllerManager runs: built with its informers before they start, started
// once every informer has synced, stopped before the informers stop.
class Controller {
 public:
  virtual ~Controller() = default;
  virtual void Start() = 0;
  virtual void Stop() = 0;
};

// Handlers that queue an owner object's key ("namespace/name") whenever it is added, updated or
// deleted; `on_delete`, when given, runs with the key first (e.g. to drop its expectations).
client::InformerHandlers EnqueueOnEvents(WorkQueue* queue,
                                         std::function<void(const std::string&)> on_delete = {});

class WorkerLoop {
 public:
  WorkerLoop(WorkQueue* queue, std::function<VoidResult(const std::string&)> sync,
             std::function<void(const std::string&)> log);
  ~WorkerLoop();
  void Start(int workers);
  // Shuts the queue down and joins the workers.
  void Stop();

 private:
  void Run();
  WorkQueue* queue_;
  std::function<VoidResult(const std::string&)> sync_;
  std::function<void(const std::string&)> log_;
  std::vector<std::thread> threads_;
};

}  // namespace berth::controllers
