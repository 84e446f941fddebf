// meta.k8s.io/v1 Table output for `kubectl get`: the columns kube-apiserver prints for pods,
// nodes, namespaces, events, services and the workload kinds (deployments, replicasets,
// statefulsets, daemonsets, replicationcontrollers), NAME/AGE for everything else.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apiserver/resources.h"

namespace berth::apiserver {

enum class IncludeObject { kMetadata, kObject, kNone };

// A Table of `objects` at list revision `rv`; `now` (Unix seconds) computes AGE.
nlohmann::json ToTable(const ResourceInfo& r, const std::vector<const nlohmann::json*>& objects,
                       int64_t rv, IncludeObject include, int64_t now, bool with_columns = true);

// kubectl's short age format ("45s", "3m20s", "5h", "12d").
std::string HumanDuration(int64_t seconds);

}  // namespace berth::apiserver
