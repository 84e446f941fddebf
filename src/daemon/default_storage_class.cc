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

}  // namespace berth::daemon
