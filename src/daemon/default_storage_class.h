// The StorageClass `berth up` creates on a new data directory, as kind creates its `standard`
// class: default for claims that name none (the DefaultStorageClass admission), binding
// delayed until a pod uses the claim, volumes made by the berth.dev/local provisioner
// (src/controllers/volume_provisioner.h) and deleted with their claim.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "apiserver/store.h"
#include "berth/api/result.h"
#include "client/rest_client.h"

namespace berth::daemon {

nlohmann::json DefaultStorageClass();
// Creates it unless a class of that name exists.
VoidResult CreateDefaultStorageClass(apiserver::Store& store);

// The same for `berth cluster`, through any API server: kube-apiserver has no StorageClass of
// its own, so claims that name none (a StatefulSet's volumeClaimTemplates) would wait for ever.
// Creates it unless a class is already the default (two defaults make kube-apiserver's
// DefaultStorageClass admission refuse such claims) or one of that name exists. Says whether
// it created it.
Result<bool> EnsureDefaultStorageClass(client::RestClient& rest);

}  // namespace berth::daemon
