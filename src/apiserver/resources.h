// The resources the embedded API server serves: one static table used for routing, discovery,
// OpenAPI and storage keys.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace berth::apiserver {

struct ResourceInfo {
  std::string group;    // "" for core
  std::string version;  // "v1"
  std::string plural;   // "pods"
  std::string singular;
  std::string kind;  // "Pod"
  bool namespaced = true;
  std::vector<std::string> short_names;
  std::vector<std::string> subresources;  // "status", "scale", "binding", "eviction", "log"
  bool create_only = false;               // bindings: POST only
  std::vector<std::string> categories;    // custom resources' ("all" is implied for some)

  std::string GroupVersion() const { return group.empty() ? version : group + "/" + version; }
  // Storage prefix, unique per resource ("pods", "deployments.apps").
  std::string StorageName() const { return group.empty() ? plural : plural + "." + group; }
};

const std::vector<ResourceInfo>& ServedResources();
const ResourceInfo* FindResource(std::string_view group, std::string_view version,
                                 std::string_view plural);
const ResourceInfo* FindResourceByKind(std::string_view group, std::string_view kind);

}  // namespace berth::apiserver
