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

class SharedInformer {
 public:
  // `path`: the collection, e.g. "/api/v1/pods"; `kind`: the items' kind.
  SharedInformer(client::RestClient* rest, std::string path, std::string kind,
                 std::function<void(const std::string&)> log);
  void AddHandlers(client::InformerHandlers handlers);
  void Start() { informer_->Start(); }
  void Stop() { informer_->Stop(); }
  bool HasSynced() const { return informer_->HasSynced(); }
  std::optional<Object> Get(const std::string& key) const { return informer_->Get(key); }
  std::vector<Object> List() const { return informer_->List(); }

 private:
  std::vector<client::InformerHandlers> handlers_;
  std::unique_ptr<client::Informer> informer_;
};

}  // namespace berth::controllers
