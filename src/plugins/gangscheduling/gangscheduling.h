// GangScheduling (PreEnqueue, Reserve, Permit; opt-in): all-or-nothing scheduling of the pods
// of a Workload API PodGroup (scheduling.k8s.io) whose spec.schedulingPolicy is `gang`, as
// kube-scheduler's plugin of that name. Pods name their group in
// spec.schedulingGroup.podGroupName (same namespace).
//
//   * PreEnqueue: a member stays out of the active queue until its PodGroup exists and at
//     least gang.minCount pods name it; a PodGroup or member arriving lets it in.
//   * Permit: a member waits (5 minutes at most) until minCount of its group are scheduled
//     (reserved by this profile or bound); the member that completes the count allows the
//     waiting ones. The first waits move the group's pending members to the active queue.
//   * Unreserve: a member that fails after Reserve no longer counts as scheduled.
//
// Pods without a scheduling group, and groups with the `basic` policy, are not affected.
// With GenericWorkload the scheduler places a group's members in one pod group cycle and applies
// this plugin's minCount there (src/scheduler/pod_group_cycle.cc, kube-scheduler's
// PlacementFeasible); Permit then only joins members placed together. Without it, members are
// scheduled one cycle each behind the Permit barrier (docs/configuration.md).
#pragma once

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "berth/framework/cluster_event.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"
#include "berth/framework/registry.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kGangSchedulingName = config::names::kGangScheduling;

class GangScheduling final : public PreEnqueuePlugin,
                             public ReservePlugin,
                             public PermitPlugin,
                             public EnqueueExtensions {
 public:
  // How long a member waits at Permit for its gang.
  static constexpr Duration kPermitTimeout = std::chrono::minutes(5);

  explicit GangScheduling(Handle& handle);
  std::string_view Name() const override { return kGangSchedulingName; }

  Status PreEnqueue(const Pod& pod) const override;
  Status Reserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  void Unreserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  PermitDecision Permit(CycleState& state, const PodInfo& pod, const std::string& node) override;
  std::vector<ClusterEventWithHint> EventsToRegister() const override;

  // Members of the group ("namespace/name") reserved by this plugin or bound. Any thread.
  int ScheduledCount(const std::string& key) const;

 private:
  std::vector<Ptr<Pod>> Members(const std::string& ns, const std::string& group) const;

  Handle& handle_;
  const ClusterListers& listers_;
  mutable std::mutex mu_;
  std::map<std::string, std::set<std::string>, std::less<>> reserved_;  // group -> pod names
};

PluginRegistration GangSchedulingRegistration();

}  // namespace berth
