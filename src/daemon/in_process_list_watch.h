// InProcessListWatch: the API server's store as a client::LocalListWatch, for the components
// `berth up` runs in the server's process (see client/local_list_watch.h). It serves the
// collections of built-in resources, cluster-wide or in one namespace, read as the HTTP list
// and watch would read them (the same store calls, views converted); custom resources and
// paths with a query are left to HTTP.
//
// Threads: any; List and Watch take the store's lock, and a watch's sink is called under it.
#pragma once

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
  apiserver::Store& store_;
};

}  // namespace berth::daemon
