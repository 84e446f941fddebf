#include "apiserver/default_storage_class.h"

#include <string>

#include "apiserver/resources.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

bool IsDefaultClass(const Json& sc) {
  auto meta = sc.find("metadata");
  if (meta == sc.end() || !meta->is_object()) return false;
  auto annotations = meta->find("annotations");
  if (annotations == meta->end() || !annotations->is_object()) return false;
  for (const char* key : {"storageclass.kubernetes.io/is-default-class",
                          "storageclass.beta.kubernetes.io/is-default-class"}) {
    auto v = annotations->find(key);
    if (v != annotations->end() && *v == "true") return true;
  }
  return false;
}

}  // namespace

std::string DefaultStorageClassName(Store& store) {
  const ResourceInfo* classes = FindResource("storage.k8s.io", "v1", "storageclasses");
  auto all = store.List(*classes, "", {}, 0, "");
  if (!all.ok()) return "";
  const Json* chosen = nullptr;
  // RFC 3339 timestamps in UTC order as strings.
  auto created = [](const Json& sc) { return sc["metadata"].value("creationTimestamp", ""); };
  auto name = [](const Json& sc) { return sc["metadata"].value("name", ""); };
  for (const auto& item : all->items) {
    const Json& sc = *item.object;
    if (!IsDefaultClass(sc)) continue;
    if (!chosen || created(sc) > created(*chosen) ||
        (created(sc) == created(*chosen) && name(sc) < name(*chosen))) {
      chosen = &sc;
    }
  }
  return chosen ? name(*chosen) : "";
}

void SetDefaultStorageClass(Json& pvc, const std::string& default_class) {
  if (default_class.empty()) return;
  Json& spec = pvc["spec"];
  if (!spec.is_object()) spec = Json::object();
  if (spec.contains("storageClassName")) return;  // "" asks for no class
  const Json& meta = pvc["metadata"];
  if (meta.is_object() && meta.contains("annotations") && meta["annotations"].is_object() &&
      meta["annotations"].contains("volume.beta.kubernetes.io/storage-class")) {
    return;
  }
  spec["storageClassName"] = default_class;
}

void AdmitDefaultStorageClass(Store& store, Json& pvc) {
  SetDefaultStorageClass(pvc, DefaultStorageClassName(store));
}

}  // namespace berth::apiserver
