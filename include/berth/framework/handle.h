// Handle: the services the framework offers to the plugins of one profile.
//
// A plugin receives a Handle& at construction and may keep it; the handle outlives the plugin.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "berth/framework/clock.h"
#include "berth/framework/cluster.h"
#include "berth/framework/extender.h"
#include "berth/framework/node_info.h"
#include "berth/framework/plugin.h"

namespace berth {

// A pod held at Permit. Thread-safe.
class WaitingPod {
 public:
  virtual ~WaitingPod() = default;
  virtual const Pod& pod() const = 0;
  // Plugins that returned Wait and have not allowed yet.
  virtual std::vector<std::string> PendingPlugins() const = 0;
  // The named plugin lets the pod through; it binds once every waiting plugin allowed.
  virtual void Allow(std::string_view plugin) = 0;
  // Fails the pod's Permit with an Unschedulable status from `plugin`.
  virtual void Reject(std::string_view plugin, std::string_view message) = 0;
};

// Pods nominated to nodes (status.nominatedNodeName or a fresh preemption). Thread-safe.
class PodNominator {
 public:
  virtual ~PodNominator() = default;
  virtual std::vector<PodInfoPtr> NominatedPodsForNode(std::string_view node) const = 0;
  // False when no pod is nominated anywhere (lets the filter loop skip per-node lookups).
  virtual bool HasNominatedPods() const { return true; }
};

// Runs fn(i) for i in [0, n) on up to `parallelism` workers and waits for all.
class Parallelizer {
 public:
  virtual ~Parallelizer() = default;
  virtual void Until(int n, const std::function<void(int)>& fn) = 0;
  virtual int parallelism() const = 0;
};

class Handle {
 public:
  virtual ~Handle() = default;

  // The snapshot of the current scheduling cycle (valid from PreFilter to Permit).
  virtual const Snapshot& snapshot() const = 0;
  virtual ClusterClient& client() = 0;
  virtual const Clock& clock() const = 0;
  // The profile's seeded random source (scheduling thread only).
  virtual Random& random() = 0;
  virtual Parallelizer& parallelizer() = 0;
  virtual PodNominator& nominator() = 0;
  // The scheduler's extenders, in the order they are consulted (shared by all profiles).
  virtual std::span<Extender* const> extenders() const { return {}; }

  // Permit bookkeeping.
  virtual void IterateOverWaitingPods(const std::function<void(WaitingPod&)>& fn) = 0;
  // The waiting pod, shared: it stays valid after its binding cycle moves on (Allow or Reject
  // on it then do nothing). Null if none waits with this uid.
  virtual std::shared_ptr<WaitingPod> GetWaitingPod(std::string_view uid) = 0;
  // Rejects the waiting pod with this uid; returns false if none.
  virtual bool RejectWaitingPod(std::string_view uid) = 0;

  // Framework runners used by PostFilter plugins (preemption).
  virtual Status RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod_to_schedule,
                                             const PodInfoPtr& pod_to_add,
                                             const NodeInfo& node) = 0;
  virtual Status RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                                                const PodInfoPtr& pod_to_remove,
                                                const NodeInfo& node) = 0;
  // Filters with the nominated pods of higher or equal priority added (kube-scheduler's two-pass
  // check). `node` may be a modified copy of a snapshot node.
  virtual Status RunFilterPluginsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                                   const NodeInfo& node) = 0;
};

}  // namespace berth
