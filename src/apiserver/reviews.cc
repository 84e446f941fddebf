#include "apiserver/reviews.h"

#include <fmt/format.h>

#include <string>

#include "apiserver/field_errors.h"

namespace berth::apiserver {

using Json = nlohmann::json;

bool IsReview(const ResourceInfo& r) {
  return (r.group == "authorization.k8s.io" &&
          (r.plural == "selfsubjectaccessreviews" || r.plural == "selfsubjectrulesreviews")) ||
         (r.group == "authentication.k8s.io" && r.plural == "selfsubjectreviews");
}

Result<Json> AnswerReview(const ResourceInfo& r, const Json& body) {
  if (!body.is_object()) {
    return Error{fmt::format("the body of the request could not be decoded as a {}", r.kind),
                 ErrorCode::kBadRequest};
  }
  const std::string kind = body.value("kind", std::string());
  if (!kind.empty() && kind != r.kind) {
    return Error{fmt::format("a {} was sent to {}", kind, r.plural), ErrorCode::kBadRequest};
  }
  Json out = body;
  out["kind"] = r.kind;
  out["apiVersion"] = r.GroupVersion();
  if (!out.contains("metadata") || !out["metadata"].is_object()) out["metadata"] = Json::object();
  out["metadata"]["creationTimestamp"] = nullptr;
  if (r.plural == "selfsubjectaccessreviews") {
    if (!out.contains("spec") || !out["spec"].is_object()) {
      return InvalidError(fmt::format("{}.{}", r.kind, r.group),
                          {{FieldErrorType::kRequired, "spec", ""}});
    }
    out["status"] = {{"allowed", true},
                     {"reason", fmt::format("{} may do everything on this server", kAdminUser)}};
  } else if (r.plural == "selfsubjectrulesreviews") {
    // What cluster-admin's rules give, as `kubectl auth can-i --list` prints them.
    out["status"] = {
        {"resourceRules", {{{"verbs", {"*"}}, {"apiGroups", {"*"}}, {"resources", {"*"}}}}},
        {"nonResourceRules", {{{"verbs", {"*"}}, {"nonResourceURLs", {"*"}}}}},
        {"incomplete", false}};
  } else {
    out["status"] = {
        {"userInfo",
         {{"username", kAdminUser}, {"groups", {"system:masters", "system:authenticated"}}}}};
  }
  return out;
}

}  // namespace berth::apiserver
