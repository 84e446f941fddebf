// The StorageClass `berth up` creates on a new data directory, as kind creates its `standard`
// class: default for claims that name none (the DefaultStorageClass admission), binding
// delayed until a pod uses the claim, volumes made by the berth.dev/local provisioner
// (src/controllers/volume_provisioner.h) and deleted with their claim.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "apiserver/store.h"
#include "berth/api/result.h"

namespace berth::daemon {

nlohmann::json DefaultStorageClass();
// Creates it unless a class of that name exists.
VoidResult CreateDefaultStorageClass(apiserver::Store& store);

}  // namespace berth::daemon
