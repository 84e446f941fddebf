// ControllerManager: the workload controllers of `berth up`, started by name with
// kube-controller-manager's --controllers semantics: a list of names, "*" for every controller
// on by default, "-name" to leave one out (e.g. "*,-replicationcontroller").
//
// Each controller is an API client like kube-controller-manager's: it reads through shared
// informers (one list and watch per kind) and writes through the REST client.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "client/rest_client.h"
#include "controllers/controller_base.h"
#include "controllers/shared_informer.h"

namespace berth::controllers {

// The controllers Berth has, by their upstream names.
const std::vector<std::string>& KnownControllers();
// The names `flag` selects (validated: an unknown name is an error naming it).
Result<std::vector<std::string>> SelectControllers(const std::vector<std::string>& flag);

struct ControllerManagerOptions {
  std::vector<std::string> controllers = {"*"};
  int workers = 5;
  const Clock* clock = nullptr;  // default: the real clock
  std::function<void(const std::string&)> log;
  Duration node_monitor_grace_period = std::chrono::seconds(40);
  int terminated_pod_gc_threshold = 12500;  // see ControllerOptions
  // The TaintTolerationComparisonOperators feature gate (see ControllerOptions).
  bool taint_toleration_comparison_operators = false;
};

// The informers of one manager, one per collection however many controllers read it.
class InformerFactory {
 public:
  InformerFactory(client::RestClient* rest, std::function<void(const std::string&)> log)
      : rest_(rest), log_(std::move(log)) {}
  // The shared informer of `path` (e.g. "/api/v1/pods") whose items are `kind`; `optional`
  // for a custom resource whose CRD may be absent (see SharedInformer).
  SharedInformer* For(const std::string& path, const std::string& kind, bool optional = false);
  const std::vector<std::unique_ptr<SharedInformer>>& all() const { return informers_; }

 private:
  client::RestClient* rest_;
  std::function<void(const std::string&)> log_;
  std::vector<std::pair<std::string, SharedInformer*>> by_path_;
  std::vector<std::unique_ptr<SharedInformer>> informers_;
};

// What a controller's factory is given.
struct ControllerContext {
  client::RestClient* rest;
  InformerFactory* informers;
  ControllerOptions options;
};

class ControllerManager {
 public:
  static Result<std::unique_ptr<ControllerManager>> Start(std::unique_ptr<client::RestClient> rest,
                                                          ControllerManagerOptions options);
  ~ControllerManager();
  void Stop();
  const std::vector<std::string>& running() const { return running_; }
  // Every informer has synced and the controllers' workers run.
  bool Started() const { return started_.load(); }

 private:
  ControllerManager() = default;
  RealClock real_clock_;
  std::unique_ptr<client::RestClient> rest_;
  std::unique_ptr<InformerFactory> informers_;
  std::vector<std::unique_ptr<Controller>> controllers_;
  std::vector<std::string> running_;
  bool stopped_ = false;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> started_{false};
  std::thread starter_;  // starts the workers once the caches have synced
};

}  // namespace berth::controllers
