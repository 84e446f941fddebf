// Cluster events and queueing hints: how a plugin tells the scheduling queue which changes of
// the cluster can make a pod it rejected schedulable again.
//
// A plugin that rejects pods (PreEnqueue, PreFilter, Filter, Reserve, Permit, PreBind) should
// also implement EnqueueExtensions. When a pod fails, the queue remembers the plugins that
// rejected it; the pod then waits in the unschedulable pool until an event one of those plugins
// registered arrives and the plugin's hint for that event says kQueue (or until the pool's
// maximum stay passes). A plugin that does not implement EnqueueExtensions is treated as
// registered for every event, so its pods move on any change.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <variant>
#include <vector>

#include "berth/api/objects.h"
#include "berth/api/result.h"
#include "berth/export.h"

namespace berth {

template <class T>
using Ptr = std::shared_ptr<const T>;

// The kind of object an event is about. kPod events are about pods other than the pending pod
// itself (usually assigned pods, whose placement, labels or deletion other pods depend on).
enum class EventResource : uint8_t {
  kPod,
  kNode,
  kPersistentVolume,
  kPersistentVolumeClaim,
  kStorageClass,
  kCSINode,
  kCSIDriver,
  kCSIStorageCapacity,
  kService,
  kNamespace,
  kReplicationController,
  kReplicaSet,
  kStatefulSet,
  kPodDisruptionBudget,
  kPriorityClass,
  kPodGroup,            // scheduling.x-k8s.io PodGroup (Coscheduling)
  kSchedulingPodGroup,  // scheduling.k8s.io PodGroup (GangScheduling)
  // A pending pod was added (only to plugins that register it by name: gangs wait for their
  // members); kPod events stay about other pods placed, changed or removed.
  kUnscheduledPod,
  kWildCard,  // in a registration: every resource; as an event: moves every pod
};
inline constexpr int kEventResourceCount = static_cast<int>(EventResource::kWildCard) + 1;

// What happened (bits; a node or pod update may carry several).
enum ActionType : uint32_t {
  kAdd = 1u << 0,
  kDelete = 1u << 1,
  kUpdateNodeAllocatable = 1u << 2,
  kUpdateNodeLabel = 1u << 3,
  kUpdateNodeTaint = 1u << 4,  // taints or spec.unschedulable
  kUpdateNodeCondition = 1u << 5,
  kUpdateNodeAnnotation = 1u << 6,
  kUpdatePodLabel = 1u << 7,
  kUpdatePodScaleDown = 1u << 8,  // an assigned pod's requests went down
  kUpdatePodToleration = 1u << 9,
  kUpdatePodSchedulingGatesEliminated = 1u << 10,
  kUpdateOther = 1u << 11,  // any other update (of a pod, or of objects without finer bits)
  kUpdate = kUpdateNodeAllocatable | kUpdateNodeLabel | kUpdateNodeTaint | kUpdateNodeCondition |
            kUpdateNodeAnnotation | kUpdatePodLabel | kUpdatePodScaleDown | kUpdatePodToleration |
            kUpdatePodSchedulingGatesEliminated | kUpdateOther,
  kAllActions = kAdd | kDelete | kUpdate,
};

struct BERTH_EXPORT ClusterEvent {
  EventResource resource = EventResource::kWildCard;
  uint32_t actions = kAllActions;

  // True if a registration for `*this` covers `event`.
  bool Covers(const ClusterEvent& event) const {
    return (resource == EventResource::kWildCard || resource == event.resource) &&
           (actions & event.actions) != 0;
  }
};

// The object an event carries: empty for the old object of an Add and the new object of a
// Delete, and for kinds Berth does not model (CSIDriver, CSIStorageCapacity).
using EventObject = std::variant<std::monostate, Ptr<Pod>, Ptr<Node>, Ptr<PersistentVolume>,
                                 Ptr<PersistentVolumeClaim>, Ptr<StorageClass>, Ptr<CSINode>,
                                 Ptr<Service>, Ptr<Namespace>, Ptr<ReplicationController>,
                                 Ptr<ReplicaSet>, Ptr<StatefulSet>, Ptr<PodDisruptionBudget>,
                                 Ptr<PriorityClass>, Ptr<PodGroup>, Ptr<SchedulingPodGroup>>;

// The object as T, or null when it is empty or of another kind.
template <class T>
const T* ObjectAs(const EventObject& object) {
  const Ptr<T>* p = std::get_if<Ptr<T>>(&object);
  return p ? p->get() : nullptr;
}

enum class QueueingHint : uint8_t {
  kQueueSkip,  // the event cannot make the pod schedulable: it stays where it is
  kQueue,      // it may: the pod moves on (to backoffQ or activeQ)
};

// Decides whether an event may make `pod` (which this plugin rejected) schedulable. Called by
// the scheduling queue, on the thread that delivers cluster events, with the queue locked: it
// must be fast, must not block, and may read only its arguments and the plugin's immutable
// configuration. An error counts as kQueue (moving a pod too often only costs an attempt).
using QueueingHintFn = std::function<Result<QueueingHint>(
    const Pod& pod, const EventObject& old_object, const EventObject& new_object)>;

struct BERTH_EXPORT ClusterEventWithHint {
  ClusterEvent event;
  QueueingHintFn hint;  // empty: every matching event is kQueue
};

// Implemented by plugins (besides their extension points) to say which events can undo their
// rejections. EventsToRegister is called once, when the profile is built, on the thread that
// builds it; the answer must not change afterwards.
class BERTH_EXPORT EnqueueExtensions {
 public:
  virtual ~EnqueueExtensions() = default;
  virtual std::vector<ClusterEventWithHint> EventsToRegister() const = 0;
};

}  // namespace berth
