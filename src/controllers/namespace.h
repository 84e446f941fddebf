// NamespaceController: kube-controller-manager's namespace controller, for an API server that
// leaves it to a controller (kube-apiserver: `kubectl delete namespace` only marks the namespace
// Terminating, and it stays so until the `kubernetes` finalizer is removed). For a Terminating
// namespace it finds the namespaced resources the server serves (discovery, preferred versions,
// those that can be deleted), deletes what is in the namespace (deletecollection, or one DELETE
// per object where that is not served), and once nothing is left removes `kubernetes` from
// spec.finalizers through the `finalize` subresource and deletes the namespace again, which
// removes it when no other finalizer holds it.
//
// Content that waits (pods in their grace period, objects with finalizers) is looked at again
// every `recheck`. Discovery is read again at most every `discovery_ttl`: resources served
// later (a CRD applied) are deleted from then on. A group whose discovery fails does not stop
// the rest from being deleted, but the namespace is not finalized until it answers. Unlike
// upstream, no status conditions are written on the namespace.
//
// `berth up` leaves this to its own server (apiserver/namespace_deleter.h), which does it
// without a controller.
//
// Threads: informer handlers enqueue names; `workers` threads sync them.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "client/rest_client.h"
#include "controllers/controller_base.h"
#include "controllers/object_util.h"
#include "controllers/shared_informer.h"

namespace berth::controllers {

// One namespaced resource the namespace controller empties, from discovery.
struct NamespacedResource {
  std::string group_version;  // "v1", "apps/v1"
  std::string plural;
  bool delete_collection = false;
  // "/api/v1/namespaces/NS/pods", "/apis/apps/v1/namespaces/NS/deployments".
  std::string CollectionPath(const std::string& ns) const;
};

// The namespaced resources in discovery documents: `list` is an APIResourceList's resources
// array (of group version `group_version`). Subresources, cluster-scoped resources and those
// without the list and delete verbs are left out.
std::vector<NamespacedResource> NamespacedResourcesOf(const std::string& group_version,
                                                      const Json& list);

struct NamespaceControllerOptions {
  Duration recheck = std::chrono::seconds(1);
  Duration discovery_ttl = std::chrono::minutes(1);
};

class NamespaceController : public Controller {
 public:
  NamespaceController(client::RestClient* rest, SharedInformer* namespaces,
                      ControllerOptions options, NamespaceControllerOptions ns_options = {});
  ~NamespaceController() override;
  void Start() override;
  void Stop() override;

  VoidResult Sync(const std::string& name);
  WorkQueue& queue() { return queue_; }

 private:
  // The resources to empty; `complete` false when a group's discovery failed.
  Result<std::vector<NamespacedResource>> Discover(bool* complete);
  // Deletes the content of `ns`; the number of objects left (waiting for grace or finalizers).
  Result<int64_t> DeleteContent(const std::string& ns,
                                const std::vector<NamespacedResource>& resources);
  // Removes the `kubernetes` finalizer, then deletes the namespace again when none is left.
  VoidResult Finalize(Json ns);

  client::RestClient* rest_;
  SharedInformer* namespaces_;
  ControllerOptions options_;
  NamespaceControllerOptions ns_options_;
  WorkQueue queue_;
  WorkerLoop workers_;
  std::mutex discovery_mu_;
  std::vector<NamespacedResource> discovered_;
  TimePoint discovered_at_{};
  bool discovery_complete_ = false;
};

}  // namespace berth::controllers
