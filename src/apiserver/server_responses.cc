// The API server's replies: kube-apiserver's Status for errors, JSON bodies, Warning headers,
// and custom resources' objects in the version the request named.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "apiserver/crd_registry.h"
#include "apiserver/field_errors.h"
#include "apiserver/field_validation.h"
#include "apiserver/namespace_deleter.h"
#include "apiserver/server_internal.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

struct StatusInfo {
  int code;
  const char* reason;
};

StatusInfo StatusFor(ErrorCode c) {
  switch (c) {
    case ErrorCode::kInvalid:
      return {422, "Invalid"};
    case ErrorCode::kBadRequest:
      return {400, "BadRequest"};
    case ErrorCode::kUnauthorized:
      return {401, "Unauthorized"};
    case ErrorCode::kForbidden:
      return {403, "Forbidden"};
    case ErrorCode::kNotFound:
      return {404, "NotFound"};
    case ErrorCode::kMethodNotAllowed:
      return {405, "MethodNotAllowed"};
    case ErrorCode::kAlreadyExists:
      return {409, "AlreadyExists"};
    case ErrorCode::kConflict:
      return {409, "Conflict"};
    case ErrorCode::kGone:
      return {410, "Expired"};
    case ErrorCode::kUnsupportedMediaType:
      return {415, "UnsupportedMediaType"};
    case ErrorCode::kTooManyRequests:
      return {429, "TooManyRequests"};
    case ErrorCode::kUnavailable:
      return {503, "ServiceUnavailable"};
    case ErrorCode::kTimeout:
      return {504, "Timeout"};
    case ErrorCode::kUnknown:
      break;
  }
  return {500, "InternalError"};
}

}  // namespace

Json StatusBody(const ApiError& e, const std::string& kind, const std::string& name) {
  StatusInfo s = StatusFor(e.code);
  Json body = {{"kind", "Status"},    {"apiVersion", "v1"},   {"metadata", Json::object()},
               {"status", "Failure"}, {"message", e.message}, {"reason", s.reason},
               {"code", s.code}};
  if (!kind.empty() || !name.empty()) {
    Json details = Json::object();
    if (!name.empty()) details["name"] = name;
    if (!kind.empty()) details["kind"] = kind;
    body["details"] = details;
  } else if (e.code == ErrorCode::kNotFound) {
    // kubectl reads details without checking that they are there (kubectl debug).
    body["details"] = Json::object();
  }
  // kubectl rebuilds an Invalid message from details.causes: one cause per field error the
  // 422 was made of (field_errors.h).
  if (e.field_errors && e.code == ErrorCode::kInvalid) {
    Json causes = Json::array();
    for (const FieldError& fe : *e.field_errors) {
      causes.push_back(
          {{"reason", FieldErrorReason(fe.type)}, {"message", fe.Body()}, {"field", fe.field}});
    }
    body["details"]["causes"] = std::move(causes);
  }
  if (auto cause = NamespaceTerminatingCause(e)) body["details"]["causes"] = Json::array({*cause});
  return body;
}

HttpResponse ErrorResponse(const ApiError& e, const std::string& kind, const std::string& name) {
  HttpResponse r;
  Json body = StatusBody(e, kind, name);
  r.status = body["code"];
  r.body = body.dump();
  return r;
}

HttpResponse JsonResponse(int status, const std::string& body) {
  HttpResponse r;
  r.status = status;
  r.body = body;
  return r;
}

HttpResponse SuccessStatus(int code) {
  return JsonResponse(code, fmt::format(R"({{"apiVersion":"v1","code":{},"kind":"Status",)"
                                        R"("metadata":{{}},"status":"Success"}})",
                                        code));
}

HttpResponse ApplyConflictResponse(const Error& e, const std::vector<FieldConflict>& conflicts) {
  Json body = StatusBody(e);
  Json causes = Json::array();
  for (const auto& c : conflicts) {
    causes.push_back({{"type", "FieldManagerConflict"},
                      {"message", "conflict with " + c.manager},
                      {"field", c.field}});
  }
  body["details"] = {{"causes", std::move(causes)}};
  HttpResponse r;
  r.status = 409;
  r.body = body.dump();
  return r;
}

HttpResponse AsServedVersion(const ResourceInfo& r, HttpResponse resp) {
  if (resp.deferred) {
    resp.deferred =
        [&r, inner = std::move(resp.deferred)](std::function<void(HttpResponse)> reply) mutable {
          inner([&r, reply = std::move(reply)](HttpResponse ready) {
            reply(AsServedVersion(r, std::move(ready)));
          });
        };
    return resp;
  }
  if (!resp.stream && resp.content_type.find("json") != std::string::npos) {
    resp.body = WithServedVersion(r, resp.body);
  }
  return resp;
}

HttpResponse WithWarnings(HttpResponse r, const std::vector<std::string>& warnings) {
  for (size_t i = 0; i < warnings.size(); ++i) {
    if (std::find(warnings.begin(), warnings.begin() + i, warnings[i]) != warnings.begin() + i) {
      continue;
    }
    r.headers.emplace_back("Warning", WarningHeaderValue(warnings[i]));
  }
  return r;
}

}  // namespace berth::apiserver
