// SharedInformer: one client::Informer whose events go to every controller that registered
// handlers (kube-controller-manager's shared informer factory): the ReplicaSet and Deployment
// controllers watch pods and ReplicaSets through one list and one watch each.
//
// Threads: handlers are added before Start and called on the informer's thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "client/informer.h"

namespace berth::controllers {

// Index names of SharedInformer::AddOwnerIndexes.
inline constexpr char kControllerUidIndex[] = "controller-uid";
inline constexpr char kOrphanIndex[] = "orphans-by-namespace";

class SharedInformer {
 public:
  // `path`: the collection, e.g. "/api/v1/pods"; `kind`: the items' kind. `optional`: a kind
  // the server may not serve (a custom resource whose CRD is not applied), which then reads as
  // synced and empty until it appears (client::InformerOptions::optional).
  SharedInformer(client::RestClient* rest, std::string path, std::string kind,
                 std::function<void(const std::string&)> log, bool optional = false);
  void AddHandlers(client::InformerHandlers handlers);
  void Start() { informer_->Start(); }
  void Stop() { informer_->Stop(); }
  bool HasSynced() const { return informer_->HasSynced(); }
  std::optional<Object> Get(const std::string& key) const { return informer_->Get(key); }
  std::vector<Object> List() const { return informer_->List(); }
  // An index of the store (before Start; controllers sharing the informer share an index of
  // one name): see client::Informer::AddIndex.
  void AddIndex(const std::string& name, client::IndexFunc fn) {
    informer_->AddIndex(name, std::move(fn));
  }
  std::vector<Object> ByIndex(const std::string& name, const std::string& value) const {
    return informer_->ByIndex(name, value);
  }
  // The objects whose controller ownerReference has `uid` (kControllerUidIndex, added on
  // first use).
  std::vector<Object> ControlledBy(const std::string& uid) const;
  // The objects of namespace `ns` without a controller ownerReference (kOrphanIndex).
  std::vector<Object> Orphans(const std::string& ns) const;
  // Adds both indexes above (before Start).
  void AddOwnerIndexes();

 private:
  std::vector<client::InformerHandlers> handlers_;
  std::unique_ptr<client::Informer> informer_;
};

}  // namespace berth::controllers
