#include "cluster_source.h"

#include "api/read_file.h"
#include "client/cluster_objects.h"
#include "client/kubeconfig.h"
#include "client/rest_client.h"

namespace berth::cmd {

Result<std::vector<Object>> ReadManifests(const std::vector<std::string>& files, bool recursive,
                                          const DecodeOptions& options) {
  std::vector<Object> objects;
  for (const auto& arg : files) {
    auto paths = ExpandManifestPaths(arg, recursive);
    if (!paths.ok()) return paths.error();
    for (const auto& f : *paths) {
      auto objs = DecodeFile(f, options);
      if (!objs.ok()) return objs.error();
      for (auto& o : *objs) objects.push_back(std::move(o));
    }
  }
  return objects;
}

Result<std::vector<Object>> ReadLiveCluster(const LiveCluster& live) {
  client::KubeconfigSelection sel{live.kubeconfig, live.context, live.master};
  auto conn = client::ResolveConnection(sel);
  if (!conn.ok()) return conn.error();
  auto http = net::HttpClient::Create(*conn);
  if (!http.ok()) return http.error();
  client::RestClient rest(std::move(http).value(), client::RestOptions{});
  return client::ListClusterObjects(rest);
}

}  // namespace berth::cmd
