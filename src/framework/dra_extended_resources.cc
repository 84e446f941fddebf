#include "framework/dra_extended_resources.h"

#include "berth/api/resources.h"

namespace berth::dra_extended {

bool IsDraExtendedResourceName(std::string_view name) {
  return IsExtendedResourceName(name) || name.starts_with(kDeviceClassPrefix);
}

Ptr<DeviceClass> ResolveDeviceClass(const std::vector<Ptr<DeviceClass>>& classes,
                                    std::string_view resource) {
  const bool implicit = resource.starts_with(kDeviceClassPrefix);
  const std::string_view implicit_name = resource.substr(implicit ? kDeviceClassPrefix.size() : 0);
  Ptr<DeviceClass> best;
  for (const Ptr<DeviceClass>& c : classes) {
    if (implicit) {
      if (c->metadata.name == implicit_name) return c;
      continue;
    }
    if (c->spec.extended_resource_name != resource) continue;
    if (!best || c->metadata.creation_timestamp > best->metadata.creation_timestamp ||
        (c->metadata.creation_timestamp == best->metadata.creation_timestamp &&
         c->metadata.name < best->metadata.name))
      best = c;
  }
  return best;
}

Ptr<DeviceClass> ResolveDeviceClass(const DraListers& listers, std::string_view resource) {
  // The implicit name is unique to its class: one lookup.
  if (resource.starts_with(kDeviceClassPrefix))
    return listers.GetDeviceClass(resource.substr(kDeviceClassPrefix.size()));
  return ResolveDeviceClass(listers.ListDeviceClasses(), resource);
}

DynamicResourcesWriter* DynamicResourcesWriterOf(ClusterWriter& writer) {
  return dynamic_cast<DynamicResourcesWriter*>(&writer);
}

}  // namespace berth::dra_extended
