// PodSigner: an optional interface of a PreFilter, Filter, PreScore or Score plugin, for
// opportunistic batching (the OpportunisticBatching feature gate). A pod's signature is what
// every such plugin of its profile reads from it; two pods with the same signature get the same
// Filter verdicts and Score on every node in the same cluster state, so the scheduler may place
// the second from the ranking it computed for the first. The scheduler finds the interface with
// dynamic_cast on the plugin: a profile with one plugin at those points that does not implement
// it (or with extenders) signs no pod, and then batches none.
//
// A new interface, not a change to the point interfaces: plugins built against an SDK without
// it keep working unchanged (their profiles only never batch).
#pragma once

#include "berth/api/objects.h"
#include "berth/export.h"

namespace berth {

class BERTH_EXPORT PodSigner {
 public:
  virtual ~PodSigner() = default;
  // False when this plugin cannot sign `pod`: its verdicts or scores for the pod depend on more
  // than the pod and the node (other pods' placement, devices, a cluster-wide default), so no
  // other pod's results stand for the pod's. Scheduling thread.
  virtual bool Signable(const Pod& pod) const = 0;
  // For two pods this plugin signs: whether it reads the same from both (their signatures'
  // parts for this plugin are equal). Scheduling thread.
  virtual bool SameSignature(const Pod& a, const Pod& b) const = 0;
};

}  // namespace berth
