// The OpenAPI v3 documents of the custom resources CRDs define, as kube-apiserver publishes
// them under /openapi/v3/apis/<group>/<version>: each served version's schema as a component
// named by its reversed group ("io.x-k8s.scheduling.v1alpha1.PodGroup") with its
// group-version-kind, metadata referring to ObjectMeta, and a PATCH operation that takes JSON,
// merge and apply patches (no strategic merge: kubectl's client-side apply then sends a merge
// patch), so `kubectl explain` describes custom resources.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace berth::apiserver {

// {"apis/<group>/<version>", its serverRelativeURL with a hash of its content} for each
// group version that only custom resources serve.
std::vector<std::pair<std::string, std::string>> CustomOpenApiV3Index();

// The document of /openapi/v3/apis/<group>/<version> (`gv` is "apis/<group>/<version>"), or
// null when no custom resource is served there.
std::optional<std::string> CustomOpenApiV3Document(std::string_view gv);

}  // namespace berth::apiserver
