// What a cluster holds before anyone writes to it, as kube-apiserver and its controllers create
// it: the system PriorityClasses, the cluster-admin ClusterRole and its binding, the
// `kubernetes` Service; and what every namespace gets when it is created: the `default`
// ServiceAccount and the `kube-root-ca.crt` ConfigMap (the serving CA clients in pods read).
//
// Called by the server's start and its namespace creation (an I/O thread); creates only what
// is missing, so a user's edits and deletions of these objects stand until the next start.
#pragma once

#include <string>
#include <string_view>

#include "apiserver/api_error.h"
#include "apiserver/store.h"
#include "berth/api/result.h"

namespace berth::apiserver {

// `ca_pem`: the CA clients verify the server with ("" for plain HTTP: no config map).
VoidResult BootstrapCluster(Store& store, const std::string& ca_pem);
VoidResult PopulateNamespace(Store& store, std::string_view ns, const std::string& ca_pem);

}  // namespace berth::apiserver
