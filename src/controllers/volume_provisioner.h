// VolumeProvisioner ("volume-provisioner"): the dynamic provisioner of `berth up`, as kind's
// local-path-provisioner driven by sig-storage's external-provisioner library. For a claim of
// a StorageClass whose provisioner is berth.dev/local, once the persistent volume controller
// handed it over (volume.kubernetes.io/storage-provisioner names berth.dev/local) and, for a
// WaitForFirstConsumer class, the scheduler chose a node (volume.kubernetes.io/selected-node),
// it creates the volume "pvc-<claim uid>":
//   - capacity: the claim's request; access modes, volume mode and class: the claim's;
//     reclaim policy and mount options: the class's (Delete when unset);
//   - claimRef: the claim (with its uid), which the controller then completes into a binding;
//   - pv.kubernetes.io/provisioned-by: berth.dev/local;
//   - a hostPath source under /var/lib/berth/volumes (nothing is written there: the kubelets
//     are simulated);
//   - node affinity: the selected node's kubernetes.io/hostname; with allowedTopologies on
//     the class, the node's values of the keys the class names instead (e.g. its zone); the
//     node's topology.kubernetes.io/zone and region labels are copied onto the volume, which
//     the VolumeZone plugin reads. An Immediate claim has no node: its volume has no affinity.
// A claim with spec.selector is not provisioned (ProvisioningFailed), as upstream.
// A volume it provisioned that is Released with reclaim policy Delete is deleted.
//
// Threads: informer handlers enqueue keys ("pvc:<ns>/<name>", "pv:<name>"); `workers`
// threads sync them.
#pragma once

#include <string>

#include "client/rest_client.h"
#include "controllers/controller_base.h"
#include "controllers/shared_informer.h"
#include "controllers/volume_util.h"

namespace berth::controllers {

class VolumeProvisioner : public Controller {
 public:
  VolumeProvisioner(client::RestClient* rest, SharedInformer* volumes, SharedInformer* claims,
                    SharedInformer* classes, SharedInformer* nodes, ControllerOptions options);
  ~VolumeProvisioner() override;
  void Start() override;
  void Stop() override;

  VoidResult Sync(const std::string& key);
  WorkQueue& queue() { return queue_; }

 private:
  VoidResult SyncClaim(const Json& pvc);
  VoidResult SyncVolume(const Json& pv);

  client::RestClient* rest_;
  SharedInformer* volumes_;
  SharedInformer* claims_;
  SharedInformer* classes_;
  SharedInformer* nodes_;
  ControllerOptions options_;
  WorkQueue queue_;
  WorkerLoop workers_;
};

// The volume provisioned for `pvc` of class `sc` on `node` (null: no node, an Immediate class).
// Exposed for tests.
Result<Json> ProvisionedVolume(const Json& pvc, const Json& sc, const Json* node);

}  // namespace berth::controllers
