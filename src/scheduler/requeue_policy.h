// RequeuePolicy: which cluster events move which unschedulable pods, from the event
// registrations and queueing hints of each profile's plugins (EnqueueExtensions), as
// kube-scheduler's queueing hints do. Also classifies pod and node updates into ActionType bits.
//
// Built once from the profiles (which must outlive it); afterwards read-only, so the queue calls
// it from the event-delivering threads without further locking. With a metrics sink, each hint
// call's duration is reported (scheduler_queueing_hint_execution_duration_seconds).
#pragma once

#include <array>
#include <string>
#include <unordered_map>
#include <vector>

#include "berth/framework/cluster_event.h"
#include "berth/framework/dra.h"
#include "framework/volume_attachments.h"
#include "queue/scheduling_queue.h"
#include "runtime/framework.h"
#include "runtime/scheduler_metrics.h"

namespace berth {

// The ActionType bits of a node update; 0 when nothing the scheduler reads changed (a
// heartbeat), which is no event at all.
uint32_t NodeUpdateActions(const Node& old_node, const Node& new_node);
// The ActionType bits of an assigned pod's update (kUpdateOther when none of the finer ones).
uint32_t AssignedPodUpdateActions(const Pod& old_pod, const Pod& new_pod);

class RequeuePolicy final : public RequeueDecider {
 public:
  explicit RequeuePolicy(const std::vector<std::unique_ptr<Framework>>& profiles,
                         SchedulerMetricsSink* metrics = nullptr, const Clock* clock = nullptr);

  EventInterest InterestOf(const QueuedPodInfo& pod) const override;
  EventInterest GatingInterestOf(const QueuedPodInfo& pod) const override;
  // The gating plugin's hints for the event, as kube-scheduler asks them of a pod its
  // PreEnqueue rejected.
  Strategy DecideGated(const QueuedPodInfo& pod, const ClusterEvent& event,
                       const EventObject& old_object, const EventObject& new_object) const override;
  Strategy Decide(const QueuedPodInfo& pod, const ClusterEvent& event,
                  const EventObject& old_object, const EventObject& new_object) const override;

  // A DRA change (berth/framework/dra.h): as Decide, from the plugins' DraEventsToRegister; a
  // rejecting plugin without registrations of its own (registered for every event) moves the
  // pod after backoff.
  Strategy DecideDra(const QueuedPodInfo& pod, const DraClusterEvent& event,
                     const DraEventObject& old_object, const DraEventObject& new_object) const;
  // False when no plugin registered DRA events and none registers every event.
  bool AnyDraInterest(const DraClusterEvent& event) const;
  // A deleted VolumeAttachment (framework/volume_attachments.h): as DecideDra, from the
  // plugins' VolumeAttachmentEnqueueExtensions hints.
  Strategy DecideVolumeAttachmentDelete(const QueuedPodInfo& pod,
                                        const VolumeAttachmentInfo& deleted) const;
  // False when no plugin has a VolumeAttachment hint and none registers every event.
  bool AnyVolumeAttachmentInterest() const;

  // False when no plugin of any profile registered for the event: the pool needs no scan.
  bool AnyInterest(const ClusterEvent& event) const;
  // Whether some plugin registered this resource by name (a wildcard registration aside).
  bool NamedInterest(const ClusterEvent& event) const {
    return (any_[static_cast<int>(event.resource)] & event.actions) != 0;
  }

 private:
  using PluginEvents = std::vector<ClusterEventWithHint>;
  struct Profile {
    // Plugin name -> its registrations. A rejecting plugin missing here (an extender, a plugin
    // of another profile) counts as registered for every event.
    std::unordered_map<std::string, const PluginEvents*> by_plugin;
    std::unordered_map<std::string, const std::vector<DraClusterEventWithHint>*> dra_by_plugin;
    std::unordered_map<std::string, const VolumeAttachmentHintFn*> volume_attachment_by_plugin;
  };
  const Profile* ProfileOf(const Pod& pod) const;

  std::unordered_map<std::string, Profile> profiles_;  // by schedulerName
  SchedulerMetricsSink* metrics_ = nullptr;            // with clock_, or neither
  const Clock* clock_ = nullptr;
  EventInterest any_{};                 // union over every plugin
  std::array<uint32_t, 3> any_dra_{};   // per DraEventResource, union over every plugin
  bool any_volume_attachment_ = false;  // some plugin has a VolumeAttachment hint
};

}  // namespace berth
