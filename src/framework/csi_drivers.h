// CSIDriver objects (storage.k8s.io/v1), as far as the scheduler reads them: NodeVolumeLimits
// with the VolumeLimitScaling gate keeps pods off nodes that have not registered a driver
// whose CSIDriver sets spec.preventPodSchedulingIfMissing.
//
// Internal to Berth, not part of the plugin SDK: the cluster clients (InMemoryCluster,
// ApiClusterClient) implement CSIDriverLister beside ClusterListers, found with a
// dynamic_cast, so the SDK's ClusterListers keeps its layout. Listers without it have no
// CSIDriver objects.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "berth/framework/cluster.h"

namespace berth {

// What the scheduler reads of a CSIDriver's spec.
struct CSIDriverInfo {
  // spec.preventPodSchedulingIfMissing (absent: false).
  bool prevent_pod_scheduling_if_missing = false;
};

// The spec fields above, read from a CSIDriver document (fields of other types count as absent).
CSIDriverInfo CSIDriverInfoOf(const nlohmann::json& doc);

class CSIDriverLister {
 public:
  virtual ~CSIDriverLister() = default;
  // The CSIDriver named `name` (the driver's name), or nullopt when there is none.
  virtual std::optional<CSIDriverInfo> GetCSIDriver(std::string_view name) const = 0;
};

// `listers`' CSIDriver named `name`; nullopt when there is none or `listers` keeps none.
std::optional<CSIDriverInfo> FindCSIDriver(const ClusterListers& listers, std::string_view name);

}  // namespace berth
