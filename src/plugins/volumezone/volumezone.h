// VolumeZone: the zone and region labels of the pod's bound PersistentVolumes must match the
// node, as kube-scheduler's VolumeZone plugin requires.
//
// PreFilter resolves every persistentVolumeClaim volume of the pod to its bound PV and keeps the
// PV's topology labels (failure-domain.beta.kubernetes.io/{zone,region} and
// topology.kubernetes.io/{zone,region}; a value may list several zones joined by "__"). Claims
// that are still unbound and whose StorageClass binds WaitForFirstConsumer are skipped (the
// volume does not exist yet). Lookup failures reject the pod in PreFilter with
// UnschedulableAndUnresolvable and the lister's text, e.g. `persistentvolume "pv" not found`.
// No PV topology at all: Skip.
//
// Filter: a node carrying none of the four labels passes (single-zone clusters); otherwise each
// PV label must be present on the node (a beta PV label may be matched by the node's GA label)
// with a value from the PV's set, else UnschedulableAndUnresolvable
// "node(s) had no available volume zone".
#pragma once

#include <span>
#include <string_view>

#include "berth/framework/cluster_event.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"
#include "berth/framework/pod_signer.h"
#include "berth/framework/registry.h"
#include "berth/framework/remedy.h"
#include "config/plugin_names.h"
#include "framework/pod_signature.h"

namespace berth {

// Registration of the "VolumeZone" plugin (no args).
PluginRegistration VolumeZoneRegistration();

namespace volumezone {

inline constexpr std::string_view kName = config::names::kVolumeZone;
inline constexpr std::string_view kErrReasonConflict = "node(s) had no available volume zone";

class VolumeZone final : public PreFilterPlugin,
                         public FilterPlugin,
                         public EnqueueExtensions,
                         public FilterRemedySearch,
                         public PodSigner {
 public:
  explicit VolumeZone(Handle& handle) : handle_(&handle) {}

  std::string_view Name() const override { return kName; }

  // Every volume plugin reads the pod's volume sources.
  bool Signable(const Pod&) const override { return true; }
  bool SameSignature(const Pod& a, const Pod& b) const override {
    return signature::SameVolumeSources(a, b);
  }
  Status PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   PreFilterResult* result) override;
  Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;

  std::vector<ClusterEventWithHint> EventsToRegister() const override;

  // The zone labels of the pod's volumes on each rejected node (the first zone of a volume
  // in several): a node there would take the pod.
  RemedyProposal ProposeRemedies(const Pod& pod, std::span<const RejectedNode> rejected,
                                 size_t max_per_group) const override;

 private:
  Handle* handle_;
};

}  // namespace volumezone
}  // namespace berth
