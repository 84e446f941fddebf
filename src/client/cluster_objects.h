// A one-shot read of the objects the scheduler models (nodes, pods, volumes, budgets, ...)
// from an API server, decoded as manifests would be: for commands that reason about a live
// cluster offline (`berth capacity --kubeconfig`). Kinds the server does not serve are skipped.
#pragma once

#include <vector>

#include "api/codec.h"
#include "berth/api/result.h"
#include "client/rest_client.h"

namespace berth::client {

Result<std::vector<Object>> ListClusterObjects(RestClient& rest);

}  // namespace berth::client
