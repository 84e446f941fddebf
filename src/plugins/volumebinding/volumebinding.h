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
// Not a score plugin (scoring needs the StorageCapacityScoring feature gate).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "berth/framework/cluster_event.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"
#include "berth/framework/pre_bind_preflight.h"
#include "berth/framework/registry.h"
#include "config/plugin_names.h"
#include "plugins/volumebinding/assume_cache.h"
#include "plugins/volumebinding/binder.h"

namespace berth {

// Registration of the "VolumeBinding" plugin; args: config::VolumeBindingArgs.
PluginRegistration VolumeBindingRegistration();

namespace volumebinding {

inline constexpr std::string_view kName = config::names::kVolumeBinding;
inline constexpr std::string_view kErrReasonUnboundImmediate =
    "pod has unbound immediate PersistentVolumeClaims";

class VolumeBinding final : public PreFilterPlugin,
                            public FilterPlugin,
                            public ReservePlugin,
                            public PreBindPlugin,
                            public PreBindPreFlight,
                            public EnqueueExtensions {
 public:
  VolumeBinding(Handle& handle, int64_t bind_timeout_seconds)
      : handle_(&handle), cache_(handle.listers()), bind_timeout_seconds_(bind_timeout_seconds) {}

  std::string_view Name() const override { return kName; }

  Status PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   PreFilterResult* result) override;
  Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  Status Reserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  void Unreserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  Status PreBind(CycleState& state, const PodInfo& pod, const std::string& node) override;
  // Skip when every claim of the pod is bound (nothing to write in PreBind).
  Status PreBindPreFlightCheck(CycleState& state, const PodInfo& pod,
                               const std::string& node) override;

  int64_t bind_timeout_seconds() const { return bind_timeout_seconds_; }
  const AssumeCache& assume_cache() const { return cache_; }

  std::vector<ClusterEventWithHint> EventsToRegister() const override;

 private:
  Status CheckPodClaims(const Pod& pod) const;
  Status CollectClaims(const Pod& pod, PodVolumeClaims& out) const;
  bool ArePodVolumesBound(const Pod& pod) const;
  void Revert(const PodVolumes& volumes);

  Handle* handle_;
  AssumeCache cache_;
  int64_t bind_timeout_seconds_;
};

}  // namespace volumebinding
}  // namespace berth
