// Where the API server is and how to authenticate: kubeconfig files (KUBECONFIG with several
// files merged as kubectl merges them), in-cluster service account configuration, and the
// --master override.
#pragma once

#include <string>
#include <vector>

#include "berth/api/result.h"
#include "net/http_client.h"

namespace berth::client {

struct KubeconfigSelection {
  std::string explicit_path;  // --kubeconfig / clientConnection.kubeconfig; "" = KUBECONFIG env
  std::string context;        // "" = current-context
  std::string master;         // --master: overrides the server (alone: plain, no credentials)
};

// In-cluster paths; overridable for tests.
struct InClusterPaths {
  std::string token = "/var/run/secrets/kubernetes.io/serviceaccount/token";
  std::string ca = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt";
};

// Resolves the connection settings as client-go's clientcmd does: an explicit file, else the
// KUBECONFIG files, else in-cluster configuration, else --master alone. Errors are one line
// naming the file, context or server.
Result<net::HttpClientOptions> ResolveConnection(const KubeconfigSelection& selection,
                                                 const InClusterPaths& in_cluster = {});

}  // namespace berth::client
