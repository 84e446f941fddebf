// The volume decisions of VolumeBinding, as kube-scheduler's volume binder makes them.
//
// PodVolumeClaims is built once per cycle (PreFilter) from the pod's claims and the current PVs;
// FindPodVolumes then decides, for one node and without touching the cluster, whether every
// claim can be satisfied there:
//   * bound claims: the bound PV's node affinity must match the node
//     ("node(s) had volume node affinity conflict"); a claim whose PV does not exist gives
//     "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)".
//   * unbound WaitForFirstConsumer claims: a claim already given a node for provisioning
//     (volume.kubernetes.io/selected-node) fits that node only. The others, smallest request
//     first, each take the smallest free PV of their class that is large enough and matches the
//     claim's selector, volume mode, access modes and the node (PVs pre-bound to the claim win
//     outright); claims left over must be provisionable on the node: the class needs a
//     provisioner other than kubernetes.io/no-provisioner and allowedTopologies matching the
//     node's labels. Otherwise "node(s) didn't find available persistent volumes to bind".
// CSIStorageCapacity objects are not modelled, so "node(s) did not have enough free storage"
// never arises; in-tree PVs are not translated to CSI.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "berth/api/quantity.h"
#include "berth/api/selectors.h"
#include "berth/framework/cluster.h"
#include "berth/framework/status.h"

namespace berth::volumebinding {

inline constexpr std::string_view kErrReasonBindConflict =
    "node(s) didn't find available persistent volumes to bind";
inline constexpr std::string_view kErrReasonNodeConflict =
    "node(s) had volume node affinity conflict";
inline constexpr std::string_view kErrReasonNotEnoughSpace =
    "node(s) did not have enough free storage";
inline constexpr std::string_view kErrReasonPVNotExist =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";

inline constexpr std::string_view kAnnSelectedNode = "volume.kubernetes.io/selected-node";
inline constexpr std::string_view kAnnBindCompleted = "pv.kubernetes.io/bind-completed";
inline constexpr std::string_view kAnnBoundByController = "pv.kubernetes.io/bound-by-controller";
inline constexpr std::string_view kNotSupportedProvisioner = "kubernetes.io/no-provisioner";

struct BoundClaim {
  Ptr<PersistentVolumeClaim> pvc;
  Ptr<PersistentVolume> pv;  // null: the PV does not exist
};

// An unbound claim that looks for a static PV.
struct ClaimToMatch {
  Ptr<PersistentVolumeClaim> pvc;
  Quantity request;                          // spec.resources.requests.storage
  size_t class_index;                        // into PodVolumeClaims::classes
  std::optional<CompiledSelector> selector;  // spec.selector, when given
  std::string selector_error;                // non-empty: the selector is invalid
};

// A storage class used by the pod's unbound claims.
struct ClassInfo {
  std::string name;
  Ptr<StorageClass> storage_class;         // null: not found
  std::vector<Ptr<PersistentVolume>> pvs;  // PVs of the class (assumed versions included)
};

struct PodVolumeClaims {
  std::vector<BoundClaim> bound;
  // Unbound delayed-binding claims that carry the selected-node annotation (pod order).
  std::vector<Ptr<PersistentVolumeClaim>> selected;
  // selected[i]'s annotation value and class index.
  std::vector<std::string> selected_node;
  std::vector<size_t> selected_class;
  // The other unbound delayed-binding claims, ordered by increasing request (stable).
  std::vector<ClaimToMatch> to_match;
  std::vector<ClassInfo> classes;
};

struct StaticBinding {
  Ptr<PersistentVolumeClaim> pvc;
  Ptr<PersistentVolume> pv;
};

// What a node needs done for the pod's claims.
struct PodVolumes {
  std::vector<StaticBinding> static_bindings;
  std::vector<Ptr<PersistentVolumeClaim>> dynamic_provisions;
};

// Decides the pod's claims on `node`. Returns Success, UnschedulableAndUnresolvable with the
// reasons above (in that order), or Error. `out`, when given, receives the decisions.
Status FindPodVolumes(const PodVolumeClaims& claims, const Node& node, PodVolumes* out);

// True if the PV's required node affinity (if any) matches the node's labels. Like the storage
// helpers, the node is seen through its labels only (a matchFields term sees an empty name).
bool CheckNodeAffinity(const PersistentVolume& pv, const Node& node);

// A claim is bound when it names its volume and carries pv.kubernetes.io/bind-completed.
bool IsClaimFullyBound(const PersistentVolumeClaim& pvc);

// True if pv.spec.claimRef names the claim (and its uid, when the ref has one).
bool IsVolumeBoundToClaim(const PersistentVolume& pv, const PersistentVolumeClaim& pvc);

// A copy of `pv` bound to `pvc`, or null when `pv` already is (nothing to write).
Ptr<PersistentVolume> BindVolumeToClaim(const PersistentVolume& pv,
                                        const PersistentVolumeClaim& pvc);

}  // namespace berth::volumebinding
