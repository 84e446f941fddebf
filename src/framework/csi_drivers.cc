#include "framework/csi_drivers.h"

namespace berth {

CSIDriverInfo CSIDriverInfoOf(const nlohmann::json& doc) {
  CSIDriverInfo info;
  if (!doc.is_object()) return info;
  auto spec = doc.find("spec");
  if (spec == doc.end() || !spec->is_object()) return info;
  auto prevent = spec->find("preventPodSchedulingIfMissing");
  info.prevent_pod_scheduling_if_missing =
      prevent != spec->end() && prevent->is_boolean() && prevent->get<bool>();
  return info;
}

std::optional<CSIDriverInfo> FindCSIDriver(const ClusterListers& listers, std::string_view name) {
  const auto* drivers = dynamic_cast<const CSIDriverLister*>(&listers);
  if (drivers == nullptr) return std::nullopt;
  return drivers->GetCSIDriver(name);
}

}  // namespace berth
