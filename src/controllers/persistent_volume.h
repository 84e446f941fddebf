// PersistentVolumeController: binds claims to volumes and reclaims released volumes, as
// kube-controller-manager's persistent volume controller (pkg/controller/volume/
// persistentvolume, "persistentvolume-binder"):
//   - an unbound claim whose class binds Immediately (or that has no class) is bound to the
//     smallest matching Available volume (FindBestMatch: class, size, access modes, volume
//     mode, selector; a volume pre-bound through claimRef wins). Both sides are written as
//     upstream: pv.spec.claimRef (with the claim's uid) and the bound-by-controller annotation
//     when the controller chose the volume; pvc.spec.volumeName, bind-completed (and
//     bound-by-controller); then status.phase Bound on both, the claim's status.capacity and
//     accessModes from the volume;
//   - a WaitForFirstConsumer claim waits for the scheduler: it binds static volumes itself
//     (VolumeBinding's PreBind) or annotates volume.kubernetes.io/selected-node, after which
//     the claim is handed to its class's provisioner (the storage-provisioner annotations);
//   - a claim naming a volume (pvc.spec.volumeName) gets that volume's claimRef;
//   - an unbound claim without spec.storageClassName (absent, not "") gets the default class
//     once there is one, as upstream's retroactive default StorageClass assignment;
//   - volumes without a claim are Available; a volume whose claim is gone is Released and
//     then, by spec.persistentVolumeReclaimPolicy, kept (Retain) or deleted (Delete: by the
//     provisioner that made it, pv.kubernetes.io/provisioned-by; a static volume with Delete
//     fails, as upstream without a deleter plugin); a claim whose volume is gone is Lost.
//
// Threads: informer handlers enqueue keys ("pv:<name>", "pvc:<ns>/<name>"); `workers`
// threads sync them.
#pragma once

#include <string>
#include <vector>

#include "client/rest_client.h"
#include "controllers/controller_base.h"
#include "controllers/events.h"
#include "controllers/shared_informer.h"
#include "controllers/volume_util.h"

namespace berth::controllers {

class PersistentVolumeController : public Controller {
 public:
  PersistentVolumeController(client::RestClient* rest, SharedInformer* volumes,
                             SharedInformer* claims, SharedInformer* classes,
                             ControllerOptions options);
  ~PersistentVolumeController() override;
  void Start() override;
  void Stop() override;

  // One sync of a queue key (what a worker does; tests call it directly).
  VoidResult Sync(const std::string& key);
  WorkQueue& queue() { return queue_; }

 private:
  void OnVolume(const Object& obj);
  void OnClaim(const Object& obj, bool deleted);
  VoidResult SyncClaim(const Json& pvc);
  VoidResult SyncUnboundClaim(const Json& pvc);
  VoidResult SyncBoundClaim(const Json& pvc);
  // A claim without a class, left so because no class was the default when it was created,
  // gets the default one now (upstream's retroactive assignment). True when it was written.
  Result<bool> AssignDefaultClass(const Json& pvc);
  VoidResult SyncVolume(const Json& pv);
  VoidResult ReclaimVolume(const Json& pv);
  // Writes both sides of a binding; `by_controller`: the controller chose the volume.
  VoidResult Bind(const Json& pv, const Json& pvc, bool by_controller);
  VoidResult BindVolumeSide(const Json& pv, const Json& pvc, bool by_controller);
  VoidResult BindClaimSide(const Json& pv, const Json& pvc, bool by_controller);
  VoidResult SetVolumePhase(const Json& pv, std::string_view phase, std::string_view message);
  VoidResult SetClaimPhase(const Json& pvc, std::string_view phase, const Json* pv);
  void ClaimEvent(const Json& pvc, std::string_view reason, std::string_view message);
  std::vector<const Json*> Volumes(std::vector<Object>* keep) const;
  std::optional<Object> ClassOf(const std::string& name) const;

  client::RestClient* rest_;
  SharedInformer* volumes_;
  SharedInformer* claims_;
  SharedInformer* classes_;
  ControllerOptions options_;
  WorkQueue queue_;
  WorkerLoop workers_;
};

}  // namespace berth::controllers
