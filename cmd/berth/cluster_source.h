// Where `berth explain` and `berth capacity` read a cluster from: manifests (-f FILE|DIR|-) or a
// live API server (--kubeconfig, --context, --master, else $KUBECONFIG). Main thread only.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/codec.h"
#include "berth/api/result.h"
#include "client/rest_client.h"

namespace berth::cmd {

// Every object of the given files and directories (`recursive`: like kubectl's -R), in order.
Result<std::vector<Object>> ReadManifests(const std::vector<std::string>& files, bool recursive,
                                          const DecodeOptions& options = {});

struct LiveCluster {
  std::string kubeconfig;  // "" = $KUBECONFIG, then in-cluster configuration
  std::string context;
  std::string master;
};
// A REST client for the API server `live` names.
Result<std::unique_ptr<client::RestClient>> ConnectLive(const LiveCluster& live);
// The objects the scheduler reads, listed from the API server.
Result<std::vector<Object>> ReadLiveCluster(const LiveCluster& live);
// The data of one ConfigMap; nullopt when there is no such ConfigMap.
Result<std::optional<std::map<std::string, std::string>>> ReadConfigMap(const LiveCluster& live,
                                                                        std::string_view ns,
                                                                        std::string_view name);

}  // namespace berth::cmd
