// Plugin interfaces, one per extension point.
//
// A plugin derives from Plugin and from the interfaces of the points it implements; the
// framework discovers them once (dynamic_cast) when a profile is built and afterwards calls
// through typed vectors. Contracts common to all points:
//   * Called from the scheduling thread unless stated otherwise. Filter and Score (and
//     NormalizeScore's inputs) are const and are called concurrently for different nodes.
//   * Plugins never throw: every outcome is a Status. Rejections carry reasons that
//   kube-scheduler's
//     FitError histogram shows; the framework stamps the plugin name.
//   * Cross-point data goes through CycleState only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "berth/framework/clock.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/node_info.h"
#include "berth/framework/status.h"

namespace berth {

inline constexpr int64_t kMaxNodeScore = 100;
inline constexpr int64_t kMinNodeScore = 0;

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view Name() const = 0;
};

// A pod waiting in the scheduling queue.
struct QueuedPodInfo {
  PodInfoPtr pod_info;
  TimePoint timestamp{};                  // last time it was added to the queue
  TimePoint initial_attempt_timestamp{};  // first time it entered activeQ
  int attempts = 0;
  int unschedulable_count = 0;
  int consecutive_errors_count = 0;
  std::set<std::string> unschedulable_plugins;
  std::set<std::string> pending_plugins;
  std::string gating_plugin;

  const Pod& pod() const { return *pod_info->pod; }
};

class PreEnqueuePlugin : public virtual Plugin {
 public:
  // Before a pod enters activeQ. Must be cheap. Non-Success keeps the pod gated.
  virtual Status PreEnqueue(const Pod& pod) const = 0;
};

class QueueSortPlugin : public virtual Plugin {
 public:
  // Strict weak order of the active queue: true if a should be scheduled before b.
  virtual bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const = 0;
};

// Node names a PreFilter restricts the cycle to; nullopt = all nodes.
struct PreFilterResult {
  std::optional<std::set<std::string>> node_names;
  bool AllNodes() const { return !node_names.has_value(); }
  // Intersection; all-nodes is the identity.
  PreFilterResult Merge(const PreFilterResult& other) const;
};

// Incremental updates of a plugin's PreFilter state when a pod is hypothetically added to or
// removed from a node (nominated pods, preemption dry-runs). Called on a cloned CycleState.
class PreFilterExtensions {
 public:
  virtual ~PreFilterExtensions() = default;
  virtual Status AddPod(CycleState& state, const PodInfo& pod_to_schedule,
                        const PodInfoPtr& pod_to_add, const NodeInfo& node) const = 0;
  virtual Status RemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                           const PodInfoPtr& pod_to_remove, const NodeInfo& node) const = 0;
};

class PreFilterPlugin : public virtual Plugin {
 public:
  // Once per cycle. `nodes` is the snapshot's node list. May narrow the nodes through *result.
  // Skip disables this plugin's Filter (and extensions) for the cycle; a rejection makes every
  // node fail with this status.
  virtual Status PreFilter(CycleState& state, const PodInfo& pod, std::span<NodeInfo* const> nodes,
                           PreFilterResult* result) = 0;
  // Non-null if the plugin keeps PreFilter state that must follow hypothetical pod changes.
  virtual const PreFilterExtensions* Extensions() const { return nullptr; }
};

class FilterPlugin : public virtual Plugin {
 public:
  // Per node, concurrently. Success, Unschedulable, UnschedulableAndUnresolvable or Error.
  virtual Status Filter(const CycleState& state, const PodInfo& pod,
                        const NodeInfo& node) const = 0;
};

// Node name -> status of every node that was rejected (and nodes outside a PreFilterResult).
using NodeStatusMap = std::unordered_map<std::string, Status>;

struct NominatingInfo {
  std::string node_name;
  // true: set status.nominatedNodeName to node_name (Override); false: leave it (Noop).
  bool override_nomination = false;
};

struct PostFilterResult {
  std::optional<NominatingInfo> nominating;
  // Pods the plugin evicted ("namespace/name"), for explanations; informational only.
  std::vector<std::string> victims;
};

class PostFilterPlugin : public virtual Plugin {
 public:
  // Only when no node is feasible. Success with a nomination means the pod may fit later (e.g.
  // preemption); Unschedulable with a message means this plugin could not help.
  virtual Status PostFilter(CycleState& state, const PodInfo& pod,
                            const NodeStatusMap& filtered_statuses, PostFilterResult* result) = 0;
};

class PreScorePlugin : public virtual Plugin {
 public:
  // Once per cycle over the feasible nodes. Skip disables this plugin's Score for the cycle.
  virtual Status PreScore(CycleState& state, const PodInfo& pod,
                          std::span<const NodeInfo* const> feasible) = 0;
};

struct NodeScore {
  const NodeInfo* node = nullptr;
  int64_t score = 0;
};

class ScorePlugin : public virtual Plugin {
 public:
  // Per node, concurrently. Writes the raw score to *score.
  virtual Status Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                       int64_t* score) const = 0;
  virtual bool HasNormalize() const { return false; }
  // Once per cycle: maps raw scores into [0, 100].
  virtual Status NormalizeScore(const CycleState& state, const PodInfo& pod,
                                std::span<NodeScore> scores) const {
    (void)state, (void)pod, (void)scores;
    return Status::Success();
  }
};

class ReservePlugin : public virtual Plugin {
 public:
  virtual Status Reserve(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
  // Must be idempotent and tolerate a missing Reserve.
  virtual void Unreserve(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

struct PermitDecision {
  Status status;       // Success, Wait, or a rejection
  Duration timeout{};  // with Wait: how long to wait (capped at 15 minutes)
};

class PermitPlugin : public virtual Plugin {
 public:
  virtual PermitDecision Permit(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

// Binding-cycle points: called from the pod's binding thread, after Permit.
class PreBindPlugin : public virtual Plugin {
 public:
  virtual Status PreBind(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

class BindPlugin : public virtual Plugin {
 public:
  // Skip: not handled, try the next binder.
  virtual Status Bind(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

class PostBindPlugin : public virtual Plugin {
 public:
  virtual void PostBind(CycleState& state, const PodInfo& pod, const std::string& node) = 0;
};

// Scoring helper with kube-scheduler's DefaultNormalizeScore semantics: scales to [0, max_priority]
// by the maximum; reverse flips (max - s). If the maximum is 0, reverse gives max to all.
void DefaultNormalizeScore(int64_t max_priority, bool reverse, std::span<NodeScore> scores);

}  // namespace berth
