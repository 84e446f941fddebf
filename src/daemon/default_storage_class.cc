#include "daemon/default_storage_class.h"

#include <nlohmann/json.hpp>

#include "apiserver/resources.h"

namespace berth::daemon {

nlohmann::json DefaultStorageClass() {
  return {{"apiVersion", "storage.k8s.io/v1"},
          {"kind", "StorageClass"},
          {"metadata",
           {{"name", "standard"},
            {"annotations", {{"storageclass.kubernetes.io/is-default-class", "true"}}}}},
          {"provisioner", "berth.dev/local"},
          {"reclaimPolicy", "Delete"},
          {"volumeBindingMode", "WaitForFirstConsumer"}};
}

VoidResult CreateDefaultStorageClass(apiserver::Store& store) {
  const auto* classes = apiserver::FindResource("storage.k8s.io", "v1", "storageclasses");
  auto created = store.Create(*classes, "", DefaultStorageClass(), false);
  if (!created.ok() && created.error().code != ErrorCode::kAlreadyExists) return created.error();
  return {};
}

Result<bool> EnsureDefaultStorageClass(client::RestClient& rest) {
  auto classes = rest.Get("/apis/storage.k8s.io/v1/storageclasses");
  if (!classes.ok()) return classes.error();
  const nlohmann::json items = classes->value("items", nlohmann::json::array());
  for (const auto& sc : items) {
    if (!sc.is_object()) continue;
    const auto annotations = sc.value("metadata", nlohmann::json::object())
                                 .value("annotations", nlohmann::json::object());
    // As the admission reads it (and its beta spelling, still honoured by 1.23).
    for (const char* key : {"storageclass.kubernetes.io/is-default-class",
                            "storageclass.beta.kubernetes.io/is-default-class"}) {
      if (annotations.value(key, "") == "true") return false;
    }
  }
  auto created = rest.Post("/apis/storage.k8s.io/v1/storageclasses", DefaultStorageClass());
  if (created.ok()) return true;
  if (created.error().code == ErrorCode::kAlreadyExists) return false;
  return created.error();
}

}  // namespace berth::daemon
