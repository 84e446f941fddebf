// ResourceClaimController ("resourceclaim-controller"): the ResourceClaims of pods, as
// kube-controller-manager's resource claim controller (pkg/controller/resourceclaim) does.
//
//   * For each entry of a pod's spec.resourceClaims that names a resourceClaimTemplateName, it
//     creates a ResourceClaim from the template: generateName "<pod>-<claim name>-" (both parts
//     shortened in proportion when longer than 57 characters), the template's labels and
//     annotations plus resource.kubernetes.io/pod-claim-name: <claim name>, a controller
//     ownerReference to the pod with blockOwnerDeletion, and the template's spec. The claim's
//     name goes to the pod's status.resourceClaimStatuses (pods/status). Before creating, it
//     looks for a claim the pod already controls with that annotation (created by an earlier
//     sync whose status write failed), and remembers the claims it created until its cache
//     shows them, so a retry never creates a second claim.
//   * For a scheduled pod whose claim is allocated but not reserved for it, it adds the pod to
//     the claim's status.reservedFor (at most 256 consumers).
//   * A claim's status.reservedFor loses the pods that are gone, replaced (another uid) or done
//     (Succeeded, Failed, or deleted before being scheduled). When that empties the list and
//     the claim carries the resource.kubernetes.io/delete-protection finalizer (the
//     scheduler's mark of an allocation), its status.allocation is cleared and the finalizer
//     removed; a claim being deleted with that finalizer and no consumer loses both as well.
//   * A claim generated for a pod and reserved for no one is deleted once its pod is done or
//     replaced (the garbage collector deletes it when the pod is deleted).
//
// Keys are "pod:<namespace>/<name>" and "claim:<namespace>/<name>", as upstream's queue.
// Threads: informer handlers enqueue keys; `workers` threads sync them.
#pragma once

#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>

#include "client/rest_client.h"
#include "controllers/controller_base.h"
#include "controllers/object_util.h"
#include "controllers/shared_informer.h"

namespace berth::controllers {

inline constexpr char kResourceClaimsPath[] = "/apis/resource.k8s.io/v1/resourceclaims";
inline constexpr char kResourceClaimTemplatesPath[] =
    "/apis/resource.k8s.io/v1/resourceclaimtemplates";
inline constexpr char kPodClaimNameAnnotation[] = "resource.kubernetes.io/pod-claim-name";
inline constexpr char kClaimDeleteProtectionFinalizer[] =
    "resource.kubernetes.io/delete-protection";

// The generateName of the claim made for pod `pod` and its claim `claim`, as upstream: both
// names cut in proportion when "<pod>-<claim>-" exceeds 57 characters (the server appends 5).
std::string GeneratedClaimBaseName(const std::string& pod, const std::string& claim);

// What a pod's spec.resourceClaims entry refers to (upstream's resourceclaim.Name).
struct PodClaimRef {
  enum State { kName, kNotNeeded, kNotCreated, kUnsupported } state = kUnsupported;
  std::string name;          // kName: the ResourceClaim's name
  bool check_owner = false;  // a generated claim: it must be controlled by the pod
};
PodClaimRef ClaimRefOf(const Json& pod, const Json& pod_claim);

// Whether the pod will not run (again): Succeeded, Failed, or deleted before scheduling.
bool IsPodDone(const Json& pod);

class ResourceClaimController : public Controller {
 public:
  ResourceClaimController(client::RestClient* rest, SharedInformer* pods, SharedInformer* claims,
                          SharedInformer* templates, ControllerOptions options);
  ~ResourceClaimController() override;
  void Start() override;
  void Stop() override;

  // Syncs one queue key ("pod:ns/name" or "claim:ns/name").
  VoidResult Sync(const std::string& key);
  WorkQueue& queue() { return queue_; }

 private:
  void EnqueuePod(const Json& pod, bool deleted);
  void EnqueueClaim(const Json& claim);
  bool PodNeedsWork(const Json& pod) const;
  VoidResult SyncPod(const std::string& ns, const std::string& name);
  VoidResult SyncClaim(const std::string& ns, const std::string& name);
  // Creates (or finds) the claim of one pod claim; records new names in `created`.
  VoidResult HandleClaim(const Json& pod, const Json& pod_claim,
                         std::map<std::string, std::string>* created);
  // The claim the pod controls for `pod_claim_name` (cache or just created), if any.
  std::optional<std::string> FindPodClaim(const Json& pod, const std::string& pod_claim_name);
  VoidResult ReserveForPod(const Json& pod, const Json& claim);
  std::optional<Json> ClaimDoc(const std::string& ns, const std::string& name) const;
  void RememberDeleted(const std::string& uid);
  bool WasDeleted(const std::string& uid) const;

  client::RestClient* rest_;
  SharedInformer* pods_;
  SharedInformer* claims_;
  SharedInformer* templates_;
  ControllerOptions options_;
  WorkQueue queue_;
  WorkerLoop workers_;

  mutable std::mutex mu_;
  // Claims created but perhaps not yet in the cache: pod uid -> pod claim name -> claim name
  // (upstream's mutation cache).
  std::map<std::string, std::map<std::string, std::string>> created_;
  // The uids of pods seen deleted (the latest 500), whose reservations can go at once.
  std::deque<std::string> deleted_order_;
  std::unordered_set<std::string> deleted_;
};

}  // namespace berth::controllers
