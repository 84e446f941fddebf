// Coscheduling (QueueSort, PreFilter, PostFilter, Reserve, Permit; opt-in): scheduler-plugins'
// gang scheduling over PodGroups (scheduling.x-k8s.io/v1alpha1). Pods labelled
// `scheduling.x-k8s.io/pod-group: <name>` belong to the PodGroup of that name in their
// namespace, and bind all together or not at all:
//
//   * QueueSort: priority, then the PodGroup's creation time (the time of its last failed
//     attempt while it is recovering from one; a pod without a group: its first attempt), then
//     the pod's namespace/name, so a group's members leave the queue one after another.
//   * PreFilter: a pod whose PodGroup backs off after a failure, whose group has fewer pods
//     than minMember (counting a gated pod as missing), or whose group's minResources (and
//     minMember pods) fit in no combination of the nodes' free capacity is rejected as
//     UnschedulableAndUnresolvable (no preemption).
//   * PostFilter: when a member fits nowhere, the waiting members of its group are rejected,
//     the group backs off for `podGroupBackoffSeconds`, and sorts as if created now; unless
//     minMember are assigned already, or the unassigned share of minMember is at most
//     `podGroupRejectPercentage`.
//   * Permit: a member waits until minMember of its group are assigned (reserved or bound);
//     the last one allows them all. The wait lasts the group's scheduleTimeoutSeconds, else
//     `permitWaitingTimeSeconds`. The first member to wait moves its siblings to activeQ.
//   * Unreserve: a member that fails after Reserve (its wait timed out, a bind failed) rejects
//     its group's waiting members.
//
// A pod whose PodGroup does not exist passes PreFilter and is rejected at Permit.
//
// Args (CoschedulingArgs): permitWaitingTimeSeconds (60), podGroupBackoffSeconds (0: no
// backoff), podGroupRejectPercentage (10); negative values, and a percentage above 100, are
// rejected naming the field.
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

inline constexpr std::string_view kCoschedulingName = config::names::kCoscheduling;

struct CoschedulingArgs final : PluginArgs {
  int64_t permit_waiting_time_seconds = 60;
  int64_t pod_group_backoff_seconds = 0;
  int32_t pod_group_reject_percentage = 10;

  std::string_view Kind() const override { return "CoschedulingArgs"; }
  void Encode(nlohmann::json& out) const override;
};

Result<std::shared_ptr<const PluginArgs>> DecodeCoschedulingArgs(const nlohmann::json* raw,
                                                                 const std::string& path);

class Coscheduling final : public QueueSortPlugin,
                           public PreFilterPlugin,
                           public PostFilterPlugin,
                           public ReservePlugin,
                           public PermitPlugin,
                           public EnqueueExtensions {
 public:
  Coscheduling(Handle& handle, const CoschedulingArgs& args);
  std::string_view Name() const override { return kCoschedulingName; }

  bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override;
  Status PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   PreFilterResult* result) override;
  Status PostFilter(CycleState& state, const PodInfo& pod, const NodeStatusMap& filtered,
                    PostFilterResult* result) override;
  Status Reserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  void Unreserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  PermitDecision Permit(CycleState& state, const PodInfo& pod, const std::string& node) override;
  std::vector<ClusterEventWithHint> EventsToRegister() const override;

  // The members of `group` ("namespace/name") counted as assigned: reserved by this plugin
  // (Permit passed or waiting) or bound. Any thread.
  int AssignedCount(const std::string& group) const;

 private:
  // The pod's PodGroup and its key "namespace/name"; null when the pod names none or it does
  // not exist (the key is then set if the pod names one).
  Ptr<PodGroup> GroupOf(const Pod& pod, std::string* key) const;
  // The pods of a group (by label, in its namespace), as the listers hold them.
  std::vector<Ptr<Pod>> Members(const Pod& pod) const;
  // Why the group's minResources (with minMember pods) fit nowhere, or "" when they fit.
  std::string ResourceGap(const PodGroup& group, const std::string& key,
                          std::span<const NodeInfo* const> nodes) const;
  // Allows (or rejects, with `reject` as the message) every waiting member of `key`.
  void DecideWaiting(const std::string& key, const std::string* reject);
  // The group failed: no minResources pass is remembered, and it sorts as of now.
  void MarkFailed(const std::string& key);
  Duration WaitTime(const PodGroup& group) const;

  Handle& handle_;
  const ClusterListers& listers_;
  const Clock& clock_;
  const CoschedulingArgs args_;

  mutable std::mutex mu_;
  // Pods (names) that reached Permit, per group; dropped by Unreserve.
  std::map<std::string, std::set<std::string>, std::less<>> reserved_;
  std::map<std::string, TimePoint, std::less<>> backed_off_until_;
  std::map<std::string, TimePoint, std::less<>> resources_ok_until_;  // minResources passed
  std::map<std::string, TimePoint, std::less<>> last_failed_;
};

PluginRegistration CoschedulingRegistration();

}  // namespace berth
