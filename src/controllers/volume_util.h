// What the persistent volume controller and the volume provisioner share: the annotations and
// phases of core/v1 volumes and claims, and the matching of a claim to a volume as
// kube-controller-manager's pkg/controller/volume/persistentvolume/index.go does it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "controllers/object_util.h"

namespace berth::controllers {

inline constexpr std::string_view kAnnBindCompleted = "pv.kubernetes.io/bind-completed";
inline constexpr std::string_view kAnnBoundByController = "pv.kubernetes.io/bound-by-controller";
inline constexpr std::string_view kAnnSelectedNode = "volume.kubernetes.io/selected-node";
inline constexpr std::string_view kAnnStorageProvisioner =
    "volume.kubernetes.io/storage-provisioner";
inline constexpr std::string_view kAnnBetaStorageProvisioner =
    "volume.beta.kubernetes.io/storage-provisioner";
inline constexpr std::string_view kAnnProvisionedBy = "pv.kubernetes.io/provisioned-by";
inline constexpr std::string_view kAnnBetaStorageClass = "volume.beta.kubernetes.io/storage-class";
inline constexpr std::string_view kAnnDefaultClass = "storageclass.kubernetes.io/is-default-class";
inline constexpr std::string_view kNoProvisioner = "kubernetes.io/no-provisioner";
// The provisioner `berth up` runs (src/controllers/volume_provisioner.h).
inline constexpr std::string_view kBerthProvisioner = "berth.dev/local";

// A claim's class: spec.storageClassName, else the beta annotation, else "".
std::string ClaimClass(const Json& pvc);
// A volume's class: spec.storageClassName, else the beta annotation, else "".
std::string VolumeClass(const Json& pv);
// spec.resources.requests.storage of a claim (0 when absent or invalid).
Quantity ClaimRequest(const Json& pvc);
// spec.capacity.storage of a volume (0 when absent or invalid).
Quantity VolumeCapacity(const Json& pv);
std::string AnnotationOf(const Json& obj, std::string_view key);
bool HasAnnotation(const Json& obj, std::string_view key);

// True when the volume's claimRef names this claim (and its uid, when the ref has one).
bool IsVolumeBoundToClaim(const Json& pv, const Json& pvc);
// The default class of `classes` (annotated is-default-class "true", or the beta annotation):
// the newest, then the first by name; "" when none.
std::string DefaultClassName(const std::vector<Json>& classes);
// True when the class delays binding until a pod is scheduled (WaitForFirstConsumer).
bool IsDelayedBinding(const Json* storage_class);

// The smallest volume that fits the claim, as findMatchingVolume with no node: a volume
// pre-bound to the claim (claimRef naming it) wins outright; otherwise, unless binding is
// delayed (then the scheduler picks static volumes), an Available volume with no claimRef,
// not being deleted, of the claim's class, volume mode and access modes (a superset), large
// enough and matching the claim's selector. Null when none.
const Json* FindBestMatch(const Json& pvc, const std::vector<const Json*>& volumes,
                          bool delay_binding);

}  // namespace berth::controllers
