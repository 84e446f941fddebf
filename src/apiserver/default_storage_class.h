// The DefaultStorageClass admission plugin of kube-apiserver: a PersistentVolumeClaim created
// without spec.storageClassName (absent, not "") and without the beta class annotation gets
// the default StorageClass, the one annotated storageclass.kubernetes.io/is-default-class
// "true" (or the beta annotation); of several, the newest (then the first by name). With no
// default class the claim is left as it is.
#pragma once

#include <nlohmann/json.hpp>

#include "apiserver/store.h"

namespace berth::apiserver {

// `pvc`: the claim being created. Reads the stored classes.
void AdmitDefaultStorageClass(Store& store, nlohmann::json& pvc);

}  // namespace berth::apiserver
