// DynamicResources' event registrations and queueing hints.
#include "plugins/dynamicresources/claims.h"
#include "plugins/dynamicresources/dynamicresources.h"

namespace berth::dynamicresources {

std::vector<ClusterEventWithHint> DynamicResources::EventsToRegister() const {
  // A device's node selector may depend on node labels; a new node may bring devices. (With
  // queueing hints, kube-scheduler no longer registers UpdateNodeTaint here.)
  std::vector<ClusterEventWithHint> events;
  events.push_back({ClusterEvent{EventResource::kNode, kAdd | kUpdateNodeLabel}, {}});
  return events;
}

std::vector<DraClusterEventWithHint> DynamicResources::DraEventsToRegister() const {
  std::vector<DraClusterEventWithHint> events;
  // Allocation is tracked in claims: their creation and changes may make pods schedulable.
  events.push_back({DraClusterEvent{DraEventResource::kResourceClaim, kAdd | kUpdateOther},
                    [this](const Pod& pod, const DraEventObject& old_object,
                           const DraEventObject& new_object) -> Result<QueueingHint> {
                      const ResourceClaim* modified = DraObjectAs<ResourceClaim>(new_object);
                      if (!modified)
                        return Error{"unexpected object in isSchedulableAfterClaimChange"};
                      return AfterClaimChange(pod, DraObjectAs<ResourceClaim>(old_object),
                                              *modified);
                    }});
  // A claim deleted while allocated frees its devices. (kube-scheduler sees that as an update:
  // it protects the claims it allocates with a finalizer, so the resource claim controller
  // deallocates before the claim goes; Berth does not add that finalizer.)
  events.push_back({DraClusterEvent{DraEventResource::kResourceClaim, kDelete},
                    [](const Pod&, const DraEventObject& old_object,
                       const DraEventObject&) -> Result<QueueingHint> {
                      const ResourceClaim* deleted = DraObjectAs<ResourceClaim>(old_object);
                      return deleted && deleted->status.allocation ? QueueingHint::kQueue
                                                                   : QueueingHint::kQueueSkip;
                    }});
  // A pod may wait for a class to be created or changed.
  events.push_back({DraClusterEvent{DraEventResource::kDeviceClass, kAdd | kUpdateOther}, {}});
  // New or changed slices may bring devices.
  events.push_back({DraClusterEvent{DraEventResource::kResourceSlice, kAdd | kUpdateOther}, {}});
  return events;
}

QueueingHint DynamicResources::AfterClaimChange(const Pod& pod, const ResourceClaim* original,
                                                const ResourceClaim& modified) const {
  bool uses_claim = false;
  {
    // The pod's claims as the listers have them now; failing means still not schedulable.
    for (const PodResourceClaim& entry : PodResourceClaimsOf(pod)) {
      Result<ClaimName> name = ClaimNameOf(pod, entry);
      if (!name.ok()) return QueueingHint::kQueueSkip;
      if (!name->name) continue;
      if (*name->name == modified.metadata.name &&
          pod.metadata.namespace_ == modified.metadata.namespace_)
        uses_claim = true;
    }
    if (Result<std::vector<Ptr<ResourceClaim>>> claims = PodClaims(pod); !claims.ok())
      return QueueingHint::kQueueSkip;
  }
  // A deallocated claim frees devices for other pods.
  if (original && original->status.allocation && !modified.status.allocation)
    return QueueingHint::kQueue;
  if (!uses_claim) return QueueingHint::kQueueSkip;
  if (!original) return QueueingHint::kQueue;  // the pod's claim was created
  // Only a change of the status matters (a driver adding a finalizer does not).
  const auto& a = original->status;
  const auto& b = modified.status;
  const bool same_allocation =
      a.allocation.has_value() == b.allocation.has_value() &&
      (!a.allocation ||
       (a.allocation->results.size() == b.allocation->results.size() &&
        std::equal(a.allocation->results.begin(), a.allocation->results.end(),
                   b.allocation->results.begin(), [](const auto& x, const auto& y) {
                     return x.driver == y.driver && x.pool == y.pool && x.device == y.device &&
                            x.request == y.request;
                   })));
  if (same_allocation && a.reserved_for == b.reserved_for && a.devices.size() == b.devices.size())
    return QueueingHint::kQueueSkip;
  return QueueingHint::kQueue;
}

QueueingHint DynamicResources::AfterPodChange(const Pod& pod, const Pod& modified) const {
  if (pod.metadata.uid != modified.metadata.uid) return QueueingHint::kQueueSkip;
  if (!PodClaims(modified).ok()) return QueueingHint::kQueueSkip;
  return QueueingHint::kQueue;
}

}  // namespace berth::dynamicresources
