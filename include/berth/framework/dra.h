// Dynamic Resource Allocation (resource.k8s.io/v1) for plugins: reading ResourceClaims,
// ResourceSlices and DeviceClasses, writing a claim's status, and reacting to their changes.
//
// New in SDK 9 and only added beside SDK 8's interfaces (plugins built against SDK 8 keep
// loading): the cluster's listers and writer implement DraListers and DraWriter as well when
// the cluster serves resource.k8s.io, and a plugin reaches them with DraListersOf(listers) and
// DraWriterOf(writer). DRA changes are not ClusterEvents (EventResource and EventObject are
// part of SDK 8's layout): a plugin that wants them implements DraEnqueueExtensions, found with
// dynamic_cast like FilterRemedies, and the scheduling queue consults its hints.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>
#include <variant>
#include <vector>

#include "berth/api/result.h"
#include "berth/export.h"
#include "berth/framework/cluster.h"
#include "berth/framework/cluster_event.h"

namespace berth {

// berth/api/resource_claims.h defines them.
struct DeviceClass;
struct ResourceClaim;
struct ResourceSlice;

// Cached reads of the resource.k8s.io objects (the informers' caches in the daemon, the
// stored objects in simulation). Thread-safe; objects are immutable snapshots.
class BERTH_EXPORT DraListers {
 public:
  virtual ~DraListers() = default;
  virtual std::vector<Ptr<ResourceSlice>> ListResourceSlices() const = 0;
  virtual Ptr<ResourceClaim> GetResourceClaim(std::string_view ns, std::string_view name) const = 0;
  virtual std::vector<Ptr<ResourceClaim>> ListResourceClaims() const = 0;
  virtual Ptr<DeviceClass> GetDeviceClass(std::string_view name) const = 0;
  virtual std::vector<Ptr<DeviceClass>> ListDeviceClasses() const = 0;
};

// The API write DynamicResources' PreBind makes: a claim's status (allocation and reservedFor,
// as `claim.status` holds them) to the claim's status subresource, guarded by the claim's
// resourceVersion when it has one. Returns the claim as stored.
class BERTH_EXPORT DraWriter {
 public:
  virtual ~DraWriter() = default;
  virtual Result<Ptr<ResourceClaim>> UpdateResourceClaimStatus(const ResourceClaim& claim) = 0;
};

// The DRA side of a cluster client, or null when it has none (the cluster does not serve
// resource.k8s.io, or a ClusterListers/ClusterWriter of one's own without DRA).
BERTH_EXPORT const DraListers* DraListersOf(const ClusterListers& listers);
BERTH_EXPORT DraWriter* DraWriterOf(ClusterWriter& writer);

// ------------------------------------------------------------------ events

enum class DraEventResource : uint8_t { kResourceClaim, kResourceSlice, kDeviceClass };

// A change of a DRA object; `actions` are ActionType bits (kAdd, kUpdateOther, kDelete).
struct BERTH_EXPORT DraClusterEvent {
  DraEventResource resource = DraEventResource::kResourceClaim;
  uint32_t actions = kAllActions;

  bool Covers(const DraClusterEvent& event) const {
    return resource == event.resource && (actions & event.actions) != 0;
  }
};

// The object of a DRA event: empty for the old object of an add and the new one of a delete.
using DraEventObject =
    std::variant<std::monostate, Ptr<ResourceClaim>, Ptr<ResourceSlice>, Ptr<DeviceClass>>;

template <class T>
const T* DraObjectAs(const DraEventObject& object) {
  const Ptr<T>* p = std::get_if<Ptr<T>>(&object);
  return p ? p->get() : nullptr;
}

// As QueueingHintFn (cluster_event.h), for DRA events: fast, non-blocking, reads only its
// arguments and the plugin's immutable state; an error counts as kQueue.
using DraQueueingHintFn = std::function<Result<QueueingHint>(
    const Pod& pod, const DraEventObject& old_object, const DraEventObject& new_object)>;

struct BERTH_EXPORT DraClusterEventWithHint {
  DraClusterEvent event;
  DraQueueingHintFn hint;  // empty: every matching event is kQueue
};

// Implemented by a plugin (besides EnqueueExtensions) to have pods it rejected move on DRA
// events. Called once when the profile is built; the answer must not change afterwards. A
// plugin without it is not moved by DRA events (its other registrations still apply).
class BERTH_EXPORT DraEnqueueExtensions {
 public:
  virtual ~DraEnqueueExtensions() = default;
  virtual std::vector<DraClusterEventWithHint> DraEventsToRegister() const = 0;
};

// Receives DRA changes from a cluster client, beside ClusterEventHandler (the scheduler
// implements both; a client finds this one with dynamic_cast on its handler). Same threads as
// ClusterEventHandler's calls.
class BERTH_EXPORT DraEventHandler {
 public:
  virtual ~DraEventHandler() = default;
  virtual void OnDraEvent(const DraClusterEvent& event, const DraEventObject& old_object,
                          const DraEventObject& new_object) = 0;
};

}  // namespace berth
