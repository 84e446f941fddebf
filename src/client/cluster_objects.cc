#include "client/cluster_objects.h"

#include <fmt/format.h>

namespace berth::client {

Result<std::vector<Object>> ListClusterObjects(RestClient& rest) {
  struct Kind {
    const char* path;
    const char* api_version;
    const char* kind;
    bool required;
  };
  static constexpr Kind kKinds[] = {
      {"/api/v1/nodes", "v1", "Node", true},
      {"/api/v1/pods", "v1", "Pod", true},
      {"/api/v1/namespaces", "v1", "Namespace", false},
      {"/api/v1/services", "v1", "Service", false},
      {"/api/v1/replicationcontrollers", "v1", "ReplicationController", false},
      {"/api/v1/persistentvolumes", "v1", "PersistentVolume", false},
      {"/api/v1/persistentvolumeclaims", "v1", "PersistentVolumeClaim", false},
      {"/apis/apps/v1/replicasets", "apps/v1", "ReplicaSet", false},
      {"/apis/apps/v1/statefulsets", "apps/v1", "StatefulSet", false},
      {"/apis/storage.k8s.io/v1/storageclasses", "storage.k8s.io/v1", "StorageClass", false},
      {"/apis/storage.k8s.io/v1/csinodes", "storage.k8s.io/v1", "CSINode", false},
      {"/apis/policy/v1/poddisruptionbudgets", "policy/v1", "PodDisruptionBudget", false},
      {"/apis/scheduling.k8s.io/v1/priorityclasses", "scheduling.k8s.io/v1", "PriorityClass",
       false},
      {"/apis/scheduling.x-k8s.io/v1alpha1/podgroups", "scheduling.x-k8s.io/v1alpha1", "PodGroup",
       false},
      {"/apis/scheduling.k8s.io/v1beta1/podgroups", "scheduling.k8s.io/v1beta1", "PodGroup", false},
      // Dynamic Resource Allocation: what DynamicResources allocates from and explains.
      {"/apis/resource.k8s.io/v1/deviceclasses", "resource.k8s.io/v1", "DeviceClass", false},
      {"/apis/resource.k8s.io/v1/resourceslices", "resource.k8s.io/v1", "ResourceSlice", false},
      {"/apis/resource.k8s.io/v1/resourceclaims", "resource.k8s.io/v1", "ResourceClaim", false},
      {"/apis/resource.k8s.io/v1/resourceclaimtemplates", "resource.k8s.io/v1",
       "ResourceClaimTemplate", false},
      {"/apis/resource.k8s.io/v1/devicetaintrules", "resource.k8s.io/v1", "DeviceTaintRule", false},
  };
  std::vector<Object> out;
  for (const Kind& k : kKinds) {
    auto list = rest.Get(k.path);
    if (!list.ok()) {
      if (!k.required && list.error().code == ErrorCode::kNotFound) continue;
      return Error{fmt::format("listing {}: {}", k.path, list.error().message), list.error().code};
    }
    auto items = list->find("items");
    if (items == list->end() || !items->is_array()) continue;
    for (auto& item : *items) {
      item["apiVersion"] = k.api_version;
      item["kind"] = k.kind;
      const std::string where =
          fmt::format("{} {}", k.kind, item.value("/metadata/name"_json_pointer, "?"));
      auto obj = DecodeObject(std::move(item), where);
      if (!obj.ok()) return obj.error();
      out.push_back(std::move(obj).value());
    }
  }
  return out;
}

}  // namespace berth::client
