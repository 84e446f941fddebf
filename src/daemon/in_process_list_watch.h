// InProcessListWatch: the API server's store as a client::LocalListWatch, for the components
// `berth up` runs in the server's process (see client/local_list_watch.h). It serves the
// collections of built-in resources, cluster-wide or in one namespace, read as the HTTP list
// and watch would read them (the same store calls, views converted); custom resources and
// paths with a query are left to HTTP.
//
// The watchers of one change share its decode (client::SharedDecode): a pod's event is decoded
// once for the scheduler, the controllers and the kubelets, and they hold one typed object.
//
// Threads: any; List and Watch take the store's lock, and a watch's sink is called under it.
#pragma once

#include <memory>
#include <mutex>

#include "apiserver/store.h"
#include "client/local_list_watch.h"

namespace berth::daemon {

class InProcessListWatch final : public client::LocalListWatch {
 public:
  // `store` must outlive this object and every watch it started.
  explicit InProcessListWatch(apiserver::Store& store) : store_(store) {}

  bool Serves(std::string_view path) const override;
  Result<ListResult> List(std::string_view path) override;
  Result<std::unique_ptr<Registration>> Watch(std::string_view path,
                                              std::string_view resource_version,
                                              EventSink sink) override;

 private:
  // The shared decode of `doc`: the one handed to the previous watcher when it was of the same
  // version (the store calls a change's watchers one after another), else a new one.
  std::shared_ptr<const client::SharedDecode> DecodeOf(const RawObject& doc);

  apiserver::Store& store_;
  std::mutex last_mu_;
  std::shared_ptr<const client::SharedDecode> last_;  // holds its document: no address reuse
};

}  // namespace berth::daemon
