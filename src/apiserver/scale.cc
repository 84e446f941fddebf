#include "apiserver/scale.h"

#include <fmt/format.h>

#include "apiserver/field_errors.h"
#include "apiserver/selectors.h"

namespace berth::apiserver {

using Json = nlohmann::json;

bool HasScale(const ResourceInfo& r) {
  return (r.group == "apps" &&
          (r.plural == "deployments" || r.plural == "replicasets" || r.plural == "statefulsets")) ||
         (r.group.empty() && r.plural == "replicationcontrollers");
}

Json ScaleOf(const Json& object) {
  Json scale_meta = Json::object();
  if (const Json* meta = FieldAt(object, "metadata"); meta != nullptr && meta->is_object()) {
    for (const char* key : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
      if (auto it = meta->find(key); it != meta->end()) scale_meta[key] = *it;
    }
  }
  const Json* replicas = FieldAt(object, "spec.replicas");
  const Json* current = FieldAt(object, "status.replicas");
  const Json* selector = FieldAt(object, "spec.selector");
  return {{"kind", "Scale"},
          {"apiVersion", "autoscaling/v1"},
          {"metadata", std::move(scale_meta)},
          {"spec", {{"replicas", replicas ? *replicas : Json(1)}}},
          {"status",
           {{"replicas", current ? *current : Json(0)},
            {"selector", selector ? FormatSelector(*selector) : std::string()}}}};
}

Result<Json> WithScale(const Json& object, const Json& scale, const std::string& name) {
  auto invalid = [&](std::string detail) {
    return InvalidObject("Scale.autoscaling", name,
                         {{FieldErrorType::kInvalid, "spec.replicas", std::move(detail)}});
  };
  if (!scale.is_object()) {
    // Not a field's fault: the message alone, without causes.
    return Error{fmt::format("Scale.autoscaling \"{}\" is invalid: expected a Scale object", name),
                 ErrorCode::kInvalid};
  }
  const Json* replicas = FieldAt(scale, "spec.replicas");
  if (replicas == nullptr || !replicas->is_number_integer()) {
    return invalid(fmt::format("{}: must be an integer", replicas ? replicas->dump() : "null"));
  }
  const int64_t n = replicas->get<int64_t>();
  if (n < 0) {
    return invalid(fmt::format("{}: must be greater than or equal to 0", n));
  }
  if (n > INT32_MAX) {
    return invalid(fmt::format("{}: must be a 32-bit integer", n));
  }
  Json next = object;
  if (!next.contains("spec") || !next["spec"].is_object()) next["spec"] = Json::object();
  next["spec"]["replicas"] = n;
  // The Scale's resourceVersion is the write's precondition (the store answers 409 when it is
  // stale); without one the write applies to whatever is stored.
  const std::string rv = FieldValue(scale, "metadata.resourceVersion");
  if (!rv.empty()) next["metadata"]["resourceVersion"] = rv;
  return next;
}

}  // namespace berth::apiserver
