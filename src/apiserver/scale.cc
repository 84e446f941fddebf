#include "apiserver/scale.h"

#include <fmt/format.h>

#include "apiserver/selectors.h"

namespace berth::apiserver {

using Json = nlohmann::json;

bool HasScale(const ResourceInfo& r) {
  return (r.group == "apps" &&
          (r.plural == "deployments" || r.plural == "replicasets" || r.plural == "statefulsets")) ||
         (r.group.empty() && r.plural == "replicationcontrollers");
}

Json ScaleOf(const Json& object) {
  const Json meta = object.value("metadata", Json::object());
  const Json spec = object.value("spec", Json::object());
  const Json status = object.value("status", Json::object());
  Json scale_meta = Json::object();
  for (const char* key : {"name", "namespace", "uid", "resourceVersion", "creationTimestamp"}) {
    if (meta.is_object() && meta.contains(key)) scale_meta[key] = meta[key];
  }
  const Json replicas = spec.is_object() ? spec.value("replicas", Json(1)) : Json(1);
  const Json current =
      status.is_object() && status.contains("replicas") ? status["replicas"] : Json(0);
  return {{"kind", "Scale"},
          {"apiVersion", "autoscaling/v1"},
          {"metadata", scale_meta},
          {"spec", {{"replicas", replicas}}},
          {"status",
           {{"replicas", current},
            {"selector", FormatSelector(spec.is_object() ? spec.value("selector", Json::object())
                                                         : Json::object())}}}};
}

Result<Json> WithScale(const Json& object, const Json& scale, const std::string& name) {
  auto invalid = [&](const std::string& detail) {
    return Error{fmt::format("Scale.autoscaling \"{}\" is invalid: {}", name, detail),
                 ErrorCode::kInvalid};
  };
  if (!scale.is_object()) return invalid("expected a Scale object");
  const Json spec = scale.value("spec", Json::object());
  const Json* replicas =
      spec.is_object() && spec.contains("replicas") ? &spec["replicas"] : nullptr;
  if (replicas == nullptr || !replicas->is_number_integer()) {
    return invalid(fmt::format("spec.replicas: Invalid value: {}: must be an integer",
                               replicas ? replicas->dump() : "null"));
  }
  const int64_t n = replicas->get<int64_t>();
  if (n < 0) {
    return invalid(
        fmt::format("spec.replicas: Invalid value: {}: must be greater than or equal to 0", n));
  }
  if (n > INT32_MAX) {
    return invalid(fmt::format("spec.replicas: Invalid value: {}: must be a 32-bit integer", n));
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
