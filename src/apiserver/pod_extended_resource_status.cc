#include "apiserver/pod_extended_resource_status.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <tuple>

#include "apiserver/resource_validation_internal.h"

namespace berth::apiserver {
namespace {

using resource_validation::DnsLabel;
using resource_validation::DnsSubdomain;
using resource_validation::FieldErrors;
using resource_validation::Idx;
using resource_validation::Items;
using resource_validation::Member;
using resource_validation::Str;

}  // namespace

FieldErrorList PodExtendedResourceClaimStatusErrors(const nlohmann::json& pod) {
  const std::string path = "status.extendedResourceClaimStatus";
  const auto& status = Member(Member(pod, "status"), "extendedResourceClaimStatus");
  if (!status.is_object()) return {};
  // Container name -> its resources.requests (init containers first, as upstream's map).
  std::map<std::string, const nlohmann::json*> containers;
  const auto& spec = Member(pod, "spec");
  for (const char* list : {"initContainers", "containers"}) {
    for (const auto& c : Items(spec, list))
      containers[Str(c, "name")] = &Member(Member(c, "resources"), "requests");
  }
  FieldErrors e;
  const std::string rm_path = path + ".requestMappings";
  const auto& mappings = Items(status, "requestMappings");
  if (mappings.empty()) e.Required(rm_path, "at least one request mapping is required");
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (size_t i = 0; i < mappings.size(); ++i) {
    const std::string at = Idx(rm_path, i);
    const std::string container = Str(mappings[i], "containerName");
    const std::string resource = Str(mappings[i], "resourceName");
    const std::string request = Str(mappings[i], "requestName");
    auto it = containers.find(container);
    if (it == containers.end()) {
      e.Invalid(at + ".containerName", container,
                "must match the name of an entry in spec.initContainers.name or "
                "spec.containers.name");
    } else if (!it->second->is_object() || !it->second->contains(resource)) {
      e.Invalid(at + ".resourceName", resource,
                "must match the extended resource name of an entry in "
                "spec.initContainers.resources.requests or spec.containers.resources.requests");
    }
    // Upstream reports a bad request name at the status's own path, not the mapping's.
    DnsLabel(e, path + ".requestName", request);
    if (!seen.emplace(container, resource, request).second) {
      e.Duplicate(at + ".containerName", container);
      e.Duplicate(at + ".resourceName", resource);
      e.Duplicate(at + ".requestName", request);
    }
  }
  const std::string claim = Str(status, "resourceClaimName");
  if (claim.empty()) {
    e.Required(path + ".resourceClaimName");
  } else {
    DnsSubdomain(e, path + ".resourceClaimName", claim);
  }
  return e.list;
}

VoidResult ValidatePodExtendedResourceClaimStatus(const ResourceInfo& r,
                                                  const nlohmann::json& pod) {
  FieldErrorList errors = PodExtendedResourceClaimStatusErrors(pod);
  if (errors.empty()) return {};
  return InvalidObject(r.kind, Str(Member(pod, "metadata"), "name"), std::move(errors));
}

}  // namespace berth::apiserver
