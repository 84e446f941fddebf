// DaemonSetController: one pod of each DaemonSet on every node that should run it, as
// kube-controller-manager's pkg/controller/daemon:
//   - a node should run the pod when spec.nodeName, the nodeSelector and the required node
//     affinity match it and its NoSchedule/NoExecute taints are tolerated (with the daemon
//     tolerations, see daemon_set_util.h); a pod on a node with an untolerated NoExecute taint,
//     or that no longer matches, is deleted;
//   - pods are created with generateName "<ds>-" and placed by the scheduler, pinned to their
//     node by a required `matchFields metadata.name In [node]` affinity; unscheduled pods of
//     a node that is gone are deleted, and so are scheduled ones (there is no pod GC);
//   - failed pods are deleted (and recreated on the next sync); extra pods on a node go, the
//     oldest stays;
//   - RollingUpdate (maxUnavailable, maxSurge over desiredNumberScheduled) replaces pods whose
//     controller-revision-hash is not the template's; OnDelete only creates the new template's
//     pods where old ones were deleted;
//   - a ControllerRevision per template (kubectl rollout history), and the status
//     (desired/current/updated/misscheduled counts, ready, available, unavailable,
//     observedGeneration) on the status subresource.
// Creations go in slow-start batches of at most kBurstReplicas per sync, pipelined, behind
// expectations (as the ReplicaSet controller).
//
// Threads: informer handlers enqueue keys; `workers` threads sync them.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "client/rest_client.h"
#include "controllers/controller_base.h"
#include "controllers/expectations.h"
#include "controllers/object_util.h"
#include "controllers/shared_informer.h"

namespace berth::controllers {

class DaemonSetController : public Controller {
 public:
  DaemonSetController(client::RestClient* rest, SharedInformer* pods, SharedInformer* nodes,
                      SharedInformer* daemon_sets, SharedInformer* revisions,
                      ControllerOptions options);
  ~DaemonSetController() override;
  void Start() override;
  void Stop() override;

  VoidResult Sync(const std::string& key);
  WorkQueue& queue() { return queue_; }
  Expectations& expectations() { return expectations_; }

  static constexpr int kBurstReplicas = 500;

 private:
  using NodePods = std::map<std::string, std::vector<const Json*>>;
  struct Plan {
    std::vector<std::string> create_on;  // node names
    std::vector<const Json*> remove;
  };
  enum class PodEvent { kAdd, kUpdate, kDelete };
  void OnPodEvent(const Object& obj, PodEvent event);
  void EnqueueAll();
  std::shared_ptr<const Json> OwnerOf(const Json& pod) const;
  Result<Plan> Manage(const Json& ds, const Pod& daemon_pod, const NodePods& by_node,
                      const std::string& hash);
  Result<Plan> RollingUpdate(const Json& ds, const Pod& daemon_pod, const NodePods& by_node,
                             const std::string& hash);
  VoidResult SyncNodes(const Json& ds, const std::string& key, const Plan& plan,
                       const std::string& hash);
  VoidResult WriteStatus(const Json& ds, const Pod& daemon_pod, const NodePods& by_node,
                         const std::string& hash);

  client::RestClient* rest_;
  SharedInformer* pods_;
  SharedInformer* nodes_;
  SharedInformer* sets_;
  SharedInformer* revisions_;
  ControllerOptions options_;
  WorkQueue queue_;
  Expectations expectations_;
  WorkerLoop workers_;
};

}  // namespace berth::controllers
