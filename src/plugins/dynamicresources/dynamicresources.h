// DynamicResources: places pods whose spec.resourceClaims ask for devices (resource.k8s.io/v1,
// structured parameters) where those devices can be allocated, and records the allocation in
// the claims before the pod binds, as kube-scheduler's DynamicResources plugin does.
//
//   PreEnqueue  every claim of the pod exists: "pod \"ns/name\": ResourceClaim not created yet"
//               for a template's claim the controller has not made, "resourceclaims.resource.k8s.io
//               \"x\" not found", a claim being deleted, a template's claim the pod does not own.
//   PreFilter   Skip for pods without claims. "resourceclaim in use" when an allocated claim is
//               reserved for as many pods as it may be (256) and not for this one; "resource
//               claim ns/x is in the process of being allocated" while another cycle of this
//               scheduler allocates it; "request r: device class c does not exist". Builds the
//               cycle's dra::Allocator over the slices and the devices every claim in use holds
//               (the listers' claims and those assumed by this scheduler's other cycles).
//   Filter      an allocated claim's status.allocation.nodeSelector must match the node
//               ("resourceclaim not available on the node"); the unallocated claims must all
//               be allocatable there ("cannot allocate all claims"). Longer than filterTimeout:
//               "timed out trying to allocate devices".
//   PostFilter  when no node fits: deallocates one claim of the pod that is allocated but
//               reserved for no other pod and unavailable on some node ("deallocation of
//               ResourceClaim completed"), so the next attempt can place it elsewhere.
//   Reserve     the node's allocations become assumed (AssumedClaims): other cycles see the
//               devices taken. Unreserve drops them and takes the pod out of reservedFor.
//   PreBind     writes each claim's status.allocation and adds the pod to reservedFor
//               (DraWriter). A claim reserved for another pod is shared: the pod is added.
//               Devices with bindingConditions: see docs/dra.md.
//   Events      nodes added or relabelled; pods' own updates (their generated claims); DRA
//               events (DraEnqueueExtensions) for claims (isSchedulableAfterClaimChange),
//               slices and classes, added or updated.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/resource_claims.h"
#include "berth/config/plugin_args.h"
#include "berth/framework/cluster_event.h"
#include "berth/framework/diagnosis.h"
#include "berth/framework/dra.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"
#include "berth/framework/pod_signer.h"
#include "berth/framework/pre_bind_preflight.h"
#include "berth/framework/registry.h"
#include "cel/dra.h"
#include "config/feature_gates.h"
#include "config/plugin_names.h"
#include "dra/allocator.h"
#include "dra/pool_cache.h"
#include "plugins/dynamicresources/assumed_claims.h"
#include "plugins/dynamicresources/extended_resources.h"
#include "plugins/dynamicresources/in_use_devices.h"

namespace berth {

// Registration of the "DynamicResources" plugin; args: config::DynamicResourcesArgs.
PluginRegistration DynamicResourcesRegistration(const config::FeatureGates& gates);

namespace dynamicresources {

inline constexpr std::string_view kName = config::names::kDynamicResources;
// kube-scheduler's resourceapi.ResourceClaimReservedForMaxSize.
inline constexpr size_t kReservedForMaxSize = 256;

// What PreFilter found, read by the later points of the cycle. Filter runs in parallel and
// records into the mutable part under `mu`.
struct CycleData final : StateData, std::enable_shared_from_this<CycleData> {
  // The pod's claims, in spec order (entries without a claim to use are left out).
  std::vector<Ptr<ResourceClaim>> claims;
  // Per claim: the allocation's nodeSelector when the claim is allocated (and has one).
  std::vector<std::optional<NodeSelector>> available_on;
  // The claims to allocate (unallocated ones), as indices into `claims`.
  std::vector<size_t> to_allocate;
  std::vector<Ptr<ResourceClaim>> claims_to_allocate;
  std::shared_ptr<const dra::Allocator> allocator;

  mutable std::mutex mu;
  mutable std::set<size_t> unavailable_claims;  // allocated claims some node's selector refused
  mutable std::map<std::string, std::vector<AllocationResult>, std::less<>> node_allocations;
  // Set by Reserve: per claim the allocation PreBind writes.
  std::vector<std::optional<AllocationResult>> allocations;
  // The claim for the pod's extended resources backed by DRA (extended_resources.h), when the
  // pod has one; it is the last of `claims`.
  std::shared_ptr<ExtendedClaimData> extended;

  std::shared_ptr<StateData> Clone() const override;
};

// One object for every translation unit: CycleState tells keys apart by address.
inline constexpr StateKey<CycleData> kStateKey{"DynamicResources"};

class DynamicResources final : public PreEnqueuePlugin,
                               public PreFilterPlugin,
                               public FilterPlugin,
                               public PostFilterPlugin,
                               public ReservePlugin,
                               public PreBindPlugin,
                               public PreBindPreFlight,
                               public EnqueueExtensions,
                               public DraEnqueueExtensions,
                               public FilterDiagnosis,
                               public PodSigner {
 public:
  DynamicResources(Handle& handle, const config::DynamicResourcesArgs& args,
                   dra::Features features);

  // Opportunistic batching: a pod with resource claims is never signed (whether its claims
  // confine it to one node is not simple to tell); others read nothing this plugin compares.
  bool Signable(const Pod& pod) const override { return PodResourceClaimsOf(pod).empty(); }
  bool SameSignature(const Pod&, const Pod&) const override { return true; }

  std::string_view Name() const override { return kName; }

  Status PreEnqueue(const Pod& pod) const override;
  Status PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   PreFilterResult* result) override;
  Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  Status PostFilter(CycleState& state, const PodInfo& pod, const NodeStatusMap& filtered,
                    PostFilterResult* result) override;
  Status Reserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  void Unreserve(CycleState& state, const PodInfo& pod, const std::string& node) override;
  Status PreBind(CycleState& state, const PodInfo& pod, const std::string& node) override;
  // Skip for a pod without claims, or whose claims are all reserved for it already.
  Status PreBindPreFlightCheck(CycleState& state, const PodInfo& pod,
                               const std::string& node) override;

  std::vector<ClusterEventWithHint> EventsToRegister() const override;
  std::vector<DraClusterEventWithHint> DraEventsToRegister() const override;

  // Queueing hints (kube-scheduler's isSchedulableAfterClaimChange / PodChange), public for tests.
  QueueingHint AfterClaimChange(const Pod& pod, const ResourceClaim* old_claim,
                                const ResourceClaim& new_claim) const;
  QueueingHint AfterPodChange(const Pod& pod, const Pod& modified) const;

  const AssumedClaims& assumed() const { return assumed_; }
  // The DRAExtendedResource feature gate (on by default).
  void set_extended_resources(bool on) { extended_resources_ = on; }

  // FilterDiagnosis, for "cannot allocate all claims": per claim and request, the selector no
  // device of the node satisfies, or the claims holding the matching devices, from
  // dra::Allocator::Diagnose over the listers' objects (diagnosis.cc).
  std::vector<std::string> Diagnose(const Pod& pod, const Node& node,
                                    const Status& rejection) const override;

 private:
  // The pod's claims in spec order; an error (the message PreEnqueue/PreFilter report) when one
  // is missing, being deleted or not the pod's own.
  Result<std::vector<Ptr<ResourceClaim>>> PodClaims(const Pod& pod) const;
  const DraListers* listers() const;
  // The claims holding devices (listers' claims with this scheduler's assumptions over them).
  std::vector<Ptr<ResourceClaim>> ClaimsInUse() const;
  // The cycle's allocator over the devices every claim in use holds (in_use_).
  std::shared_ptr<const dra::Allocator> MakeAllocator() const;

  // Extended resources backed by DRA (extended_plugin.cc): PreFilter appends the pod's claim to
  // `claims`; Filter computes the node's variant (false: the node fits without DRA);
  // PreBind creates and writes it; Unreserve and PostFilter delete a created one.
  void PreFilterExtended(const Pod& pod, CycleData& data,
                         std::vector<Ptr<ResourceClaim>>& claims) const;
  Status FilterExtended(const CycleData& data, const Pod& pod, const NodeInfo& node,
                        NodeExtendedClaim* out) const;
  void RecordExtended(const CycleData& data, const std::string& node,
                      NodeExtendedClaim node_claim) const;
  Status PreBindExtended(CycleData& data, const Pod& pod, const std::string& node);
  // Adds the delete-protection finalizer to a claim PreBind is about to allocate (binding.cc);
  // returns the claim as stored.
  Result<Ptr<ResourceClaim>> MarkDeleteProtected(const ResourceClaim& claim);
  // Writes one claim of the pod in PreBind: `allocation` (when this cycle allocated it, with the
  // finalizer first) and the pod in reservedFor; a conflict is retried on the latest claim.
  Result<Ptr<ResourceClaim>> BindClaim(const Pod& pod, Ptr<ResourceClaim> claim,
                                       const std::optional<AllocationResult>& allocation,
                                       DraWriter& writer);
  void UnreserveExtended(CycleData& data);
  std::optional<Status> PostFilterExtended(const CycleData& data);
  // Diagnose's lines for the extended resource claim on `node` (its node variant goes to
  // `to_allocate`, its request mappings to `mappings`); non-empty: the whole diagnosis.
  std::vector<std::string> DiagnoseExtended(const Pod& pod, const Node& node,
                                            std::vector<Ptr<ResourceClaim>>& to_allocate,
                                            std::vector<ContainerRequestMapping>* mappings) const;

  Handle* handle_;
  bool extended_resources_ = true;
  config::DynamicResourcesArgs args_;
  dra::Features features_;
  mutable cel::dra::SelectorCache cel_cache_;
  // Kept across cycles: the slices indexed with each node's pools (rebuilt when a slice
  // changes), and the devices the claims in use hold (updated by the claims that changed).
  mutable dra::PoolCache pool_cache_;
  AssumedClaims assumed_;
  mutable InUseDevices in_use_{assumed_};
  // The pods' extended resource claims by owner, from the claim feed (PreFilter).
  mutable ExtendedClaimIndex extended_claims_;
  // Filter's rejection of a node where the claims do not fit, built once: in a full cluster
  // most nodes get it (a copy costs a reference count; see Status).
  const Status cannot_allocate_ =
      Status::Unresolvable("cannot allocate all claims").WithPlugin(kName);
};

}  // namespace dynamicresources
}  // namespace berth
