// The parts of a resource API path: /api/v1/... or /apis/<group>/<version>/..., then
// [namespaces/<ns>/]<plural>[/<name>[/<subresource>]] (namespaces/<name>[/status|/finalize]
// address the namespace itself). The request handler and the request metrics read paths
// through this one parser.
#pragma once

#include <optional>
#include <string_view>

namespace berth::apiserver {

struct ResourcePath {
  std::string_view group, version;  // group empty: the core API
  std::string_view ns, plural, name, subresource;
  bool extra_segments = false;  // more segments than a resource path has: addresses nothing
};

// Null for a path outside the resource API (discovery, OpenAPI, health, the web view). The
// views point into `path`.
std::optional<ResourcePath> ParseResourcePath(std::string_view path);

}  // namespace berth::apiserver
