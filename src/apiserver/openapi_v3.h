// /openapi/v3: the index and one document per group-version, as kube-apiserver serves them.
//
// Each group-version document carries the schemas of its kinds and of every type they use
// (components.schemas, with x-kubernetes-group-version-kind on the kinds): `kubectl explain`
// prints them, kubectl's client-side apply reads the strategic-merge keys from them. Its paths
// hold a PATCH operation per kind with a fieldValidation parameter, which tells kubectl that the
// server validates fields (so its strict validation is left to the server). Documents are built
// on first request and kept; called on HTTP I/O threads.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace berth::apiserver {

// The JSON text of the document at `path` (/openapi/v3, /openapi/v3/api/v1,
// /openapi/v3/apis/<group>/v1), or nullopt for any other path.
std::optional<std::string> OpenApiV3Document(std::string_view path);

}  // namespace berth::apiserver
