#include "cluster_source.h"

#include <fmt/format.h>

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

Result<std::unique_ptr<client::RestClient>> ConnectLive(const LiveCluster& live) {
  client::KubeconfigSelection sel{live.kubeconfig, live.context, live.master};
  auto conn = client::ResolveConnection(sel);
  if (!conn.ok()) return conn.error();
  auto http = net::HttpClient::Create(*conn);
  if (!http.ok()) return http.error();
  return std::make_unique<client::RestClient>(std::move(http).value(), client::RestOptions{});
}

Result<std::vector<Object>> ReadLiveCluster(const LiveCluster& live) {
  auto rest = ConnectLive(live);
  if (!rest.ok()) return rest.error();
  return client::ListClusterObjects(**rest);
}

Result<std::optional<std::map<std::string, std::string>>> ReadConfigMap(const LiveCluster& live,
                                                                        std::string_view ns,
                                                                        std::string_view name) {
  auto rest = ConnectLive(live);
  if (!rest.ok()) return rest.error();
  auto cm = (*rest)->Get(fmt::format("/api/v1/namespaces/{}/configmaps/{}", ns, name));
  if (!cm.ok()) {
    // Absent, or not readable by this user: either way there is nothing published to use.
    if (cm.error().code == ErrorCode::kNotFound || cm.error().code == ErrorCode::kForbidden)
      return std::optional<std::map<std::string, std::string>>();
    return cm.error();
  }
  std::map<std::string, std::string> data;
  if (auto it = cm->find("data"); it != cm->end() && it->is_object())
    for (const auto& [k, v] : it->items())
      if (v.is_string()) data[k] = v.get<std::string>();
  return std::optional<std::map<std::string, std::string>>(std::move(data));
}

}  // namespace berth::cmd
