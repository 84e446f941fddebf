// The pod group cycle of kube-scheduler v1.37's workload-aware scheduling (GenericWorkload,
// KEP-4671's beta): the pending members of a scheduling group are taken from the queue together
// and placed one after another against one snapshot, each placed there (and reserved) so that
// the next sees it. With GangScheduling in the profile and a `gang` policy, the group's
// placement is feasible once minCount members (those already scheduled included) have a node,
// and the cycle stops as soon as minCount can no longer be reached; then every tentative
// placement is undone, and either the placed members go to binding together or none does and
// all go back to the queue with the reason. There is no preemption for a group (DefaultPreemption
// is not run for its members), and one placement only is tried (no placement generators).
#include <fmt/format.h>

#include <algorithm>

#include "config/plugin_names.h"
#include "framework/guard.h"
#include "observe/log.h"
#include "scheduler/fit_error.h"
#include "scheduler/scheduler_internal.h"

namespace berth {
namespace {

std::string UidOf(const Pod& pod) {
  return pod.metadata.uid.empty() ? pod.Key() : pod.metadata.uid;
}

bool HasPlugin(const Framework& fw, std::string_view point, std::string_view name) {
  const std::vector<std::string> plugins = fw.ListPlugins(point);
  return std::find(plugins.begin(), plugins.end(), name) != plugins.end();
}

// How the group's placement stands after each member, as GangScheduling's PlacementFeasible
// judges it: Unschedulable when minCount cannot be reached any more (the cycle stops), Wait
// while it may still be, Success once it is.
Status PlacementFeasible(int min_count, int scheduled, int remaining) {
  if (remaining + scheduled < min_count) {
    return Status(Code::kUnschedulable,
                  fmt::format("minCount ({}) cannot be satisfied: {} scheduled, {} remaining",
                              min_count, scheduled, remaining))
        .WithPlugin(config::names::kGangScheduling);
  }
  if (scheduled < min_count) {
    return Status(Code::kWait,
                  fmt::format("minCount ({}) is not yet satisfied: {} scheduled, {} remaining",
                              min_count, scheduled, remaining))
        .WithPlugin(config::names::kGangScheduling);
  }
  return Status::Success();
}

}  // namespace

// One member's part in the group cycle.
struct Scheduler::GroupMember {
  QueuedPodInfo qpi;
  SchedulingAttempt attempt;
  CycleState state;
  bool evaluated = false;
  Status status;      // the member's own outcome (when evaluated)
  std::string host;   // where it was placed (status Success)
  PodInfoPtr placed;  // the placement put in the snapshot, until it is taken out
  bool reserved = false;
};

int Scheduler::ScheduledGroupMembers(const std::string& ns, const std::string& name) const {
  int n = 0;
  for (const auto& p : client_->ListPods()) {
    if (p->metadata.namespace_ != ns || !p->spec.scheduling_group ||
        *p->spec.scheduling_group != name)
      continue;
    if (!p->spec.node_name.empty() || cache_.IsAssumedPod(*p)) ++n;
  }
  return n;
}

void Scheduler::PlaceGroupMember(Framework& fw, GroupMember& m) {
  ScheduleResult result;
  m.evaluated = true;
  m.status = Guarded("scheduling cycle", [&] {
    return SchedulePod(fw, m.state, *m.qpi.pod_info, &result, &m.attempt);
  });
  m.attempt.algorithm_duration = clock_->Now() - m.attempt.cycle_start;
  if (!m.status.IsSuccess()) {
    if (m.status.IsRejected() && m.status.reasons().empty()) {
      // No node fits: the FitError without PostFilter (no preemption in a group cycle).
      NoteRejectingPlugins(m.qpi, m.attempt);
      m.attempt.message = FitErrorMessage(
          static_cast<int>(snapshot_.size()),
          m.attempt.pre_filter_rejection ? &*m.attempt.pre_filter_rejection : nullptr,
          m.attempt.filter_statuses, {});
      if (!record_details_) m.attempt.filter_statuses.clear();
      m.status = Status(Code::kUnschedulable, m.attempt.message);
    } else if (m.status.IsRejected()) {
      m.attempt.message = m.status.Message();
      m.qpi.unschedulable_plugins.insert(m.status.plugin());
    } else {
      m.attempt.message = m.status.Message();
    }
    return;
  }
  auto pod = std::make_shared<Pod>(m.qpi.pod());
  pod->spec.node_name = result.host;
  PodInfoPtr placed = PodInfo::Create(pod);
  if (VoidResult r = cache_.PlaceInSnapshot(&snapshot_, placed, true); !r.ok()) {
    m.status = Status::Error(r.error().message);
    m.attempt.message = r.error().message;
    return;
  }
  m.placed = placed;
  m.host = result.host;
  Status rs = Guarded("Reserve", [&] {
    return fw.RunReservePluginsReserve(m.state, *placed, result.host, nullptr);
  });
  if (!rs.IsSuccess()) {
    // Reserve failed: this member is not placed (its Unreserve runs when the group is undone).
    m.reserved = true;
    m.status = rs;
    m.attempt.message = rs.Message();
    if (rs.IsRejected()) m.qpi.unschedulable_plugins.insert(rs.plugin());
    return;
  }
  m.reserved = true;
}

void Scheduler::UnplaceGroupMembers(Framework& fw, std::vector<GroupMember>& members) {
  for (auto it = members.rbegin(); it != members.rend(); ++it) {
    if (!it->placed) continue;
    if (it->reserved) fw.RunReservePluginsUnreserve(it->state, *it->placed, it->host);
    if (VoidResult r = cache_.PlaceInSnapshot(&snapshot_, it->placed, false); !r.ok() && log_)
      log_->Error("Taking a pod group member out of the snapshot failed",
                  {observe::KV::Str("pod", it->qpi.pod().Key()),
                   observe::KV::Str("err", r.error().message)});
    it->placed.reset();
    it->reserved = false;
  }
}

void Scheduler::ScheduleGroup(QueuedPodInfo first) {
  const Pod& lead = first.pod();
  const std::string ns = lead.metadata.namespace_;
  const std::string name = *lead.spec.scheduling_group;
  std::vector<GroupMember> members;
  {
    std::vector<QueuedPodInfo> rest = queue_->PopGroupMembers(lead);
    members.reserve(rest.size() + 1);
    members.push_back(GroupMember{std::move(first)});
    for (auto& q : rest) members.push_back(GroupMember{std::move(q)});
  }
  // Members being deleted or already assumed are not scheduled again.
  std::erase_if(members, [&](GroupMember& m) {
    const Pod& p = m.qpi.pod();
    if (!p.metadata.deletion_timestamp && !cache_.IsAssumedPod(p) && ProfileFor(p)) return false;
    queue_->Done(UidOf(p));
    return true;
  });
  if (members.empty()) return;
  Framework& fw = *ProfileFor(members.front().qpi.pod());
  for (auto& m : members) {
    m.attempt = StartAttempt(fw, m.qpi);
    if (metrics_)
      m.state.SetRecordPluginMetrics(metrics_random_.Intn(100) < kPluginMetricsSamplePercent);
  }

  // What applies to the whole group before any member is tried.
  Status group = Status::Success();
  const Pod& head = members.front().qpi.pod();
  for (const auto& m : members) {
    const Pod& p = m.qpi.pod();
    if (p.spec.scheduler_name != head.spec.scheduler_name) {
      group = Status::Error(fmt::format(
          "all pods in a pod group hierarchy should have the same .spec.schedulerName set, got: "
          "\"{}\" (\"{}\") and \"{}\" (\"{}\")",
          p.spec.scheduler_name, p.metadata.name, head.spec.scheduler_name, head.metadata.name));
      break;
    }
  }
  Ptr<SchedulingPodGroup> pod_group = client_->GetSchedulingPodGroup(ns, name);
  if (group.IsSuccess() && !pod_group)
    group = Status::Error(fmt::format("podgroup.scheduling.k8s.io \"{}\" not found", name));
  if (!group.IsSuccess()) {
    SubmitGroupResult(fw, members, group);
    return;
  }

  // Without GangScheduling, or for a `basic` group, the placement is feasible as soon as one
  // member has a node.
  const bool gang =
      pod_group->gang && (HasPlugin(fw, "PreEnqueue", config::names::kGangScheduling) ||
                          HasPlugin(fw, "Permit", config::names::kGangScheduling));
  const int min_count = gang ? pod_group->min_count : 0;
  int scheduled = gang ? ScheduledGroupMembers(ns, name) : 0;
  int remaining = static_cast<int>(members.size());
  bool any_placed = false;

  RefreshSnapshot(fw);
  in_group_cycle_ = true;
  group = PlacementFeasible(min_count, scheduled, remaining);
  bool proceed = !group.IsRejected();
  for (auto& m : members) {
    if (!proceed) break;
    PlaceGroupMember(fw, m);
    if (!m.status.IsSuccess() && !m.status.IsRejected()) {
      group = Status::Error(
          fmt::format("failed to schedule other pod from a pod group: {}", m.status.Message()));
      break;
    }
    --remaining;
    if (m.status.IsSuccess()) {
      ++scheduled;
      any_placed = true;
    }
    group = PlacementFeasible(min_count, scheduled, remaining);
    proceed = !group.IsRejected();
  }
  if (group.IsWait())
    group = Status(Code::kUnschedulable, group.Message()).WithPlugin(group.plugin());
  if (group.IsSuccess() && !any_placed)
    group = Status(Code::kUnschedulable, "no pods were schedulable");
  UnplaceGroupMembers(fw, members);
  in_group_cycle_ = false;
  SubmitGroupResult(fw, members, group);
}

void Scheduler::SubmitGroupResult(Framework& fw, std::vector<GroupMember>& members,
                                  const Status& group) {
  const NominatingInfo clear{"", true};
  for (auto& m : members) {
    if (group.IsError()) {
      const Status& s = m.evaluated && m.status.IsError() ? m.status : group;
      m.attempt.outcome = SchedulingAttempt::Outcome::kError;
      m.attempt.message = s.Message();
      HandleFailure(fw, m.qpi, s, clear, m.attempt);
      continue;
    }
    if (m.evaluated && m.status.IsSuccess()) {
      if (group.IsSuccess()) {
        // The group's placement is feasible: the member goes to binding on its node.
        CommitPlacement(fw, std::move(m.qpi), std::move(m.state), std::move(m.attempt), m.host);
        continue;
      }
      // Placed, but the group is not: the member fails with the group's reason.
      m.attempt.outcome = SchedulingAttempt::Outcome::kUnschedulable;
      m.attempt.message = group.Message();
      if (!group.plugin().empty()) m.qpi.unschedulable_plugins.insert(group.plugin());
      HandleFailure(fw, m.qpi, group, clear, m.attempt);
      continue;
    }
    if (m.evaluated) {
      // The member's own failure (no node fit, or Reserve refused it).
      m.attempt.outcome = SchedulingAttempt::Outcome::kUnschedulable;
      HandleFailure(fw, m.qpi, m.status, clear, m.attempt);
      continue;
    }
    // Not tried: the cycle stopped before it.
    m.attempt.outcome = SchedulingAttempt::Outcome::kUnschedulable;
    m.attempt.message = group.Message();
    if (!group.plugin().empty()) m.qpi.unschedulable_plugins.insert(group.plugin());
    HandleFailure(fw, m.qpi, group, clear, m.attempt);
  }
}

}  // namespace berth
