// GarbageCollector: cascading deletion by metadata.ownerReferences, as kube-controller-manager's
// pkg/controller/garbagecollector:
//   - an object none of whose owners exists any more (absent, or present with another uid:
//     confirmed by a live GET, not only the cache, and remembered) is deleted, in the foreground
//     when an owner is itself being deleted in the foreground, else in the background; owners that
//     exist next to absent ones only have the references to the absent ones removed;
//   - an owner being deleted with the `foregroundDeletion` finalizer (propagationPolicy
//     Foreground) has its dependents deleted and loses the finalizer, and so goes, once no
//     dependent with blockOwnerDeletion is left;
//   - an owner being deleted with the `orphan` finalizer (propagationPolicy Orphan) has its
//     references removed from every dependent, then loses the finalizer.
// Every kind in `resources` is watched through its informer; an index from owner uid to
// dependents finds what an owner's change concerns.
//
// Threads: informer handlers update the index and enqueue keys; `workers` threads sync them.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "client/rest_client.h"
#include "controllers/controller_base.h"
#include "controllers/object_util.h"
#include "controllers/shared_informer.h"

namespace berth::controllers {

// A kind the collector watches: what it can own or be owned by.
struct GcResource {
  std::string group;  // "" for the core group; the version is always v1
  std::string kind;
  std::string plural;
  bool namespaced = true;
  // Not served by every API server (resource.k8s.io/v1 before Kubernetes 1.34): its informer
  // reads as empty there instead of holding every controller back.
  bool optional = false;

  std::string ApiVersion() const { return group.empty() ? "v1" : group + "/v1"; }
  // The collection across namespaces (what the informer lists and watches).
  std::string CollectionPath() const;
  std::string ObjectPath(const std::string& ns, const std::string& name) const;
};

// The kinds `berth up` serves that take part in ownership.
const std::vector<GcResource>& GcResources();

class GarbageCollector : public Controller {
 public:
  // `informers[i]` lists and watches `resources[i]`.
  GarbageCollector(std::vector<GcResource> resources, std::vector<SharedInformer*> informers,
                   client::RestClient* rest, ControllerOptions options);
  ~GarbageCollector() override;
  void Start() override;
  void Stop() override;

  // One sync of the object with this key ("<resource index>|<namespace>/<name>").
  VoidResult Sync(const std::string& key);
  WorkQueue& queue() { return queue_; }
  // The queue key of an object of resources[index] (tests enqueue with it).
  static std::string KeyFor(size_t index, const Json& obj);

 private:
  enum class OwnerState { kSolid, kAbsent, kWaitingForDependents, kUnknown };
  struct Dependent {
    size_t index;
    Json doc;
  };
  void OnChange(size_t index, const Json* old_doc, const Json* doc, bool deleted);
  OwnerState StateOf(const std::string& ns, const Json& ref);
  std::vector<Dependent> DependentsOf(const std::string& uid);
  VoidResult AttemptToDelete(size_t index, const Json& doc);
  VoidResult OrphanDependents(size_t index, const Json& owner);
  VoidResult DeleteDependentsFirst(size_t index, const Json& owner, const std::string& key);
  VoidResult RemoveFinalizer(size_t index, const Json& obj, const std::string& finalizer);
  VoidResult RemoveOwnerRefs(size_t index, const Json& obj, const std::set<std::string>& uids);
  VoidResult DeleteObject(size_t index, const Json& obj, const std::string& policy);
  const GcResource* ResourceOf(const Json& ref, size_t* index) const;

  std::vector<GcResource> resources_;
  std::vector<SharedInformer*> informers_;
  client::RestClient* rest_;
  ControllerOptions options_;
  WorkQueue queue_;
  WorkerLoop workers_;
  std::mutex mu_;
  // Owner uid -> queue keys of the objects that name it in ownerReferences.
  std::map<std::string, std::set<std::string>> dependents_;
  // uid -> queue key, for every object seen.
  std::map<std::string, std::string> keys_by_uid_;
  // Owner uids the server confirmed absent (upstream's absentOwnerCache): a uid never comes
  // back, so the dependents of one gone owner (a ReplicaSet's pods) cost one GET, not one
  // each. The oldest are dropped past kAbsentOwnerCacheSize.
  static constexpr size_t kAbsentOwnerCacheSize = 500;
  std::set<std::string> absent_owners_;
  std::deque<std::string> absent_order_;
};

// The finalizers kube-apiserver sets for propagationPolicy Foreground and Orphan.
inline constexpr const char* kForegroundFinalizer = "foregroundDeletion";
inline constexpr const char* kOrphanFinalizer = "orphan";

}  // namespace berth::controllers
