// The DefaultStorageClass admission plugin of kube-apiserver: a PersistentVolumeClaim created
// without spec.storageClassName (absent, not "") and without the beta class annotation gets
// the default StorageClass, the one annotated storageclass.kubernetes.io/is-default-class
// "true" (or the beta annotation); of several, the newest (then the first by name). With no
// default class the claim is left as it is.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "apiserver/store.h"

namespace berth::apiserver {

// `pvc`: the claim being created. Reads the stored classes.
void AdmitDefaultStorageClass(Store& store, nlohmann::json& pvc);

// The two halves, for a create admitted under the store's lock (server-side apply): the
// default class's name ("" when none), read before; the claim defaulted with it.
std::string DefaultStorageClassName(Store& store);
void SetDefaultStorageClass(nlohmann::json& pvc, const std::string& default_class);

}  // namespace berth::apiserver
