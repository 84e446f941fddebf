// PodGcController: kube-controller-manager's pod garbage collector ("podgc" in --controllers).
// Every 20 s it reads the shared pod and node informers and force-deletes (grace period 0):
//
// - terminated pods (phase Succeeded or Failed) beyond --terminated-pod-gc-threshold (12500 by
//   default; 0 or less turns this off), evicted ones first, then the oldest by creation time;
// - pods being deleted on a node that is not Ready and carries the
//   node.kubernetes.io/out-of-service taint (whose kubelet will never confirm the deletion);
// - pods bound to a node that no longer exists: a missing node is quarantined for 40 s (it may
//   not have reached the informer yet), then read from the API server; when it is still not
//   found its pods get the DisruptionTarget condition (reason DeletionByPodGC) and go;
// - pods being deleted that were never bound to a node.
//
// A pod not yet Succeeded or Failed is marked Failed before it is deleted: with no kubelet left
// to report, it would otherwise keep its last phase (Running) to the end.
//
// Threads: the rounds run on a Ticker of the injected Clock (a participant of a SimulatedClock);
// GcOnce runs one round for tests.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "client/rest_client.h"
#include "controllers/controller_base.h"
#include "controllers/node_lifecycle.h"
#include "controllers/shared_informer.h"

namespace berth::controllers {

inline constexpr const char* kTaintOutOfService = "node.kubernetes.io/out-of-service";
inline constexpr Duration kPodGcCheckPeriod = std::chrono::seconds(20);
// How long a node missing from the informer is given to appear before its pods are orphans.
inline constexpr Duration kPodGcQuarantine = std::chrono::seconds(40);
inline constexpr int kDefaultTerminatedPodGcThreshold = 12500;

// A phase past which a pod never runs again: neither Pending, Running nor Unknown.
bool IsPodTerminated(const Pod& pod);
// Failed with reason Evicted (the kubelet's evictions), read from the pod's document.
bool IsPodEvicted(const Pod& pod);
// The order pods are collected in: evicted first, then by creation time, then by name.
bool CollectedBefore(const Pod* a, const Pod* b);

// What one round finds in the informers' pods and nodes, before any request: pointers into
// the objects given, valid while they are.
struct PodGcPlan {
  // Terminated pods beyond the threshold, in CollectedBefore order (none when the threshold
  // is 0 or less, or not exceeded).
  std::vector<const Pod*> terminated;
  // Pods being deleted on a node that is not Ready and has the out-of-service taint, in
  // CollectedBefore order.
  std::vector<const Pod*> out_of_service;
  // The nodes pods are bound to that the node informer does not hold.
  std::vector<std::string_view> missing_nodes;
  // Pods being deleted that are bound to no node.
  std::vector<const Pod*> unscheduled;
};
// One pass over `pods` and `nodes` (informer objects): typed fields only, a document read
// only for a tainted node's Ready condition and a terminated pod's reason while sorting.
PodGcPlan PlanPodGc(std::span<const Object> pods, std::span<const Object> nodes, int threshold);

// What one round did, for tests and the log.
struct PodGcRound {
  int terminated = 0;      // over the threshold
  int out_of_service = 0;  // being deleted on an out-of-service node
  int orphaned = 0;        // bound to a node that is gone
  int unscheduled = 0;     // being deleted, never bound
  int failed = 0;          // writes refused (other than NotFound)
  int Deleted() const { return terminated + out_of_service + orphaned + unscheduled; }
};

class PodGcController : public Controller {
 public:
  PodGcController(client::RestClient* rest, SharedInformer* pods, SharedInformer* nodes,
                  ControllerOptions options);
  ~PodGcController() override;
  void Start() override;
  void Stop() override;
  PodGcRound GcOnce();

 private:
  // Deletes `pods` (see MarkFailedAndDelete), counting them in `*count`.
  void DeleteAll(const std::vector<const Pod*>& pods, const char* why,
                 const nlohmann::json* condition, int* count, PodGcRound& round);
  // Quarantines the missing nodes not yet quarantined; returns those whose quarantine is over
  // and that the API server says are gone.
  std::vector<std::string> DiscoverDeletedNodes(const std::vector<std::string_view>& missing);
  // Marks `pod` Failed (with `condition` when given) unless it has finished, then deletes it with
  // no grace period; logs `why` when given. False when a write was refused (a pod already gone
  // counts as deleted).
  bool MarkFailedAndDelete(const Pod& pod, const char* why, const nlohmann::json* condition);

  client::RestClient* rest_;
  SharedInformer* pods_;
  SharedInformer* nodes_;
  ControllerOptions options_;
  std::mutex mu_;  // one round at a time
  // Missing nodes by name, with the time their quarantine ends (the earliest seen).
  std::unordered_map<std::string, TimePoint> quarantine_;
  // The UIDs of the pods this round deleted (a pod may qualify twice: terminated and orphaned).
  std::unordered_set<std::string_view> deleted_;
  Ticker ticker_;
};

}  // namespace berth::controllers
