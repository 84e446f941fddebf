// VolumeBinding: places pods where their PersistentVolumeClaims can be satisfied and binds the
// claims before the pod, as kube-scheduler's VolumeBinding plugin does.
//
//   PreFilter  Skip for pods without claims (persistentVolumeClaim or generic ephemeral
//              volumes). UnschedulableAndUnresolvable for a missing claim
//              (`persistentvolumeclaim "<name>" not found`; for an ephemeral volume "waiting for
//              ephemeral volume controller to create the persistentvolumeclaim "<name>""), a lost
//              or terminating claim, an ephemeral claim the pod does not own, and for unbound
//              claims that bind Immediately (or are pre-bound without bind-completed): "pod has
//              unbound immediate PersistentVolumeClaims". A class without volumeBindingMode is
//              an Error. No PreFilterResult (kube-scheduler ≥ 1.32 dropped the hostname-affinity
//              narrowing).
//   Filter     binder.h: FindPodVolumes; every rejection is UnschedulableAndUnresolvable.
//   Reserve    Unless all claims are bound: assumes the node's decisions in the plugin's
//              AssumeCache (PVs pre-bound to their claims, claims annotated with the selected
//              node), so later pods of the run do not take the same PV.
//   Unreserve  Drops those assumptions.
//   PreBind    Writes the decisions through ClusterWriter::BindVolume / RequestProvisioning.
//              The writes are not awaited (there is no PV controller to wait for), so
//              bindTimeoutSeconds is kept but not used.
//   PreScore / Score (the StorageCapacityScoring feature gate, on by default): a node scores
//              `shape` (VolumeBindingArgs; by default 10 at 0% utilization down to 0 at 100%)
//              of the utilization of the PVs the node's static bindings would take, requested
//              storage over PV capacity per storage class, averaged over the classes. Claims
//              that would be provisioned score only against CSIStorageCapacity, which Berth
//              does not model, so pods whose claims all need provisioning (or are bound) score
//              0 everywhere; PreScore skips them. With the gate off the plugin does not score.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "berth/framework/cluster_event.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"
#include "berth/framework/pod_signer.h"
#include "berth/framework/pre_bind_preflight.h"
#include "berth/framework/registry.h"
#include "berth/framework/remedy.h"
#include "config/feature_gates.h"
#include "config/plugin_names.h"
#include "framework/pod_signature.h"
#include "framework/shape_score.h"
#include "plugins/volumebinding/assume_cache.h"
#include "plugins/volumebinding/binder.h"

namespace berth {

// Registration of the "VolumeBinding" plugin; args: config::VolumeBindingArgs.
PluginRegistration VolumeBindingRegistration(const config::FeatureGates& gates);

namespace volumebinding {

inline constexpr std::string_view kName = config::names::kVolumeBinding;
inline constexpr std::string_view kErrReasonUnboundImmediate =
    "pod has unbound immediate PersistentVolumeClaims";

class VolumeBinding final : public PreFilterPlugin,
                            public FilterPlugin,
                            public PreScorePlugin,
                            public ScorePlugin,
                            public ReservePlugin,
                            public PreBindPlugin,
                            public PreBindPreFlight,
                            public EnqueueExtensions,
                            public FilterRemedySearch,
                            public PodSigner {
 public:
  // `shape` is VolumeBindingArgs.shape with StorageCapacityScoring on; empty: no scoring.
  VolumeBinding(Handle& handle, int64_t bind_timeout_seconds,
                std::span<const config::UtilizationShapePoint> shape = {})
      : handle_(&handle), cache_(handle.listers()), bind_timeout_seconds_(bind_timeout_seconds) {
    if (!shape.empty()) scorer_.emplace(ShapeFunction(shape));
  }

  std::string_view Name() const override { return kName; }

  // Every volume plugin reads the pod's volume sources.
  bool Signable(const Pod&) const override { return true; }
  bool SameSignature(const Pod& a, const Pod& b) const override {
    return signature::SameVolumeSources(a, b);
  }

  Status PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   PreFilterResult* result) override;
  Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  Status PreScore(CycleState& state, const PodInfo& pod,
                  std::span<const NodeInfo* const> feasible) override;
  Status Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               int64_t* score) const override;
  Status Reserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  void Unreserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  Status PreBind(CycleState& state, const PodInfo& pod, const std::string& node) override;
  // Skip when every claim of the pod is bound (nothing to write in PreBind).
  Status PreBindPreFlightCheck(CycleState& state, const PodInfo& pod,
                               const std::string& node) override;

  int64_t bind_timeout_seconds() const { return bind_timeout_seconds_; }
  const AssumeCache& assume_cache() const { return cache_; }

  std::vector<ClusterEventWithHint> EventsToRegister() const override;

  // Notes only: why each of the pod's claims is not bound (claim_notes.h). Binding a claim is
  // the volume controller's or the provisioner's work, not a change explain can check.
  RemedyProposal ProposeRemedies(const Pod& pod, std::span<const RejectedNode>,
                                 size_t) const override;

 private:
  Status CheckPodClaims(const Pod& pod) const;
  Status CollectClaims(const Pod& pod, PodVolumeClaims& out) const;
  bool ArePodVolumesBound(const Pod& pod) const;
  void Revert(const PodVolumes& volumes);

  Handle* handle_;
  AssumeCache cache_;
  int64_t bind_timeout_seconds_;
  std::optional<BrokenLinearFunction> scorer_;
};

}  // namespace volumebinding
}  // namespace berth
