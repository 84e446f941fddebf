// Reading a request: its query parameters (booleans, Table, selectors, the field manager) and
// its body (JSON, YAML or protobuf), with kube-apiserver's strict field checks.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "api/codec.h"
#include "apiserver/crd_admission.h"
#include "apiserver/field_types.h"
#include "apiserver/protobuf.h"
#include "apiserver/selectors.h"
#include "apiserver/server_internal.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

// The field check of a create or update body (kube-apiserver's strict decoding): drops the
// fields the kind does not declare and, unless the directive is Ignore, lists them after the
// body's duplicate fields in `problems`. Strict makes any problem the request's failure.
VoidResult CheckBodyFields(std::string_view group, const std::string& kind, FieldValidation fv,
                           Json& obj, std::vector<std::string>* problems) {
  for (auto& d : *problems) d = fmt::format("duplicate field \"{}\"", d);
  // Named as the body names itself, as the decoder does.
  std::string data_kind = StringField(obj, "kind");
  std::string version = StringField(obj, "apiVersion");
  version = version.substr(version.find('/') + 1);
  auto decode_error = [&](const std::string& why) {
    return Error{fmt::format("{} in version \"{}\" cannot be handled as a {}: {}",
                             data_kind.empty() ? kind : data_kind, version.empty() ? "v1" : version,
                             kind, why),
                 ErrorCode::kBadRequest};
  };
  if (const FieldSchema* schema = FindFieldSchema(group, kind)) {
    if (auto bad = FindFieldTypeError(*schema, obj)) return decode_error(*bad);
    DropUnknownFields(*schema, obj, fv == FieldValidation::kIgnore ? nullptr : problems);
  } else if (fv != FieldValidation::kIgnore) {
    ListUnknownCustomFields(group, kind, obj, problems);  // admission prunes them
  }
  if (fv != FieldValidation::kStrict || problems->empty()) return {};
  return decode_error("strict decoding error: " + Join(*problems, ", "));
}

}  // namespace

bool ParseBool(const std::optional<std::string>& v) {
  if (!v) return false;
  return *v == "1" || *v == "t" || *v == "T" || *v == "true" || *v == "TRUE" || *v == "True";
}

bool WantsTable(const HttpRequest& req) {
  return req.Header("accept").find("as=Table") != std::string::npos;
}

IncludeObject IncludeFor(const HttpRequest& req) {
  auto v = req.Query("includeObject");
  if (v == "Object") return IncludeObject::kObject;
  if (v == "None") return IncludeObject::kNone;
  return IncludeObject::kMetadata;
}

Result<ObjectFilter> SelectorFilter(const HttpRequest& req, const ResourceInfo& r) {
  auto labels = ParseLabelSelector(req.Query("labelSelector").value_or(""));
  if (!labels.ok()) return labels.error();
  auto fields = ParseFieldSelector(r, req.Query("fieldSelector").value_or(""));
  if (!fields.ok()) return fields.error();
  if (*labels && *fields) {
    return ObjectFilter([l = *labels, f = *fields](const Json& o) { return l(o) && f(o); });
  }
  return *labels ? *labels : *fields;
}

FieldManagerContext ManagerFor(const HttpRequest& req, const ResourceInfo& r,
                               const std::string& subresource) {
  FieldManagerContext ctx;
  if (auto m = req.Query("fieldManager"); m && !m->empty()) {
    ctx.manager = *m;
    ctx.manager_named = true;
  } else {
    std::string ua = req.Header("user-agent");
    ctx.manager = ua.substr(0, std::min<size_t>(ua.find('/'), 128));
  }
  ctx.subresource = subresource;
  ctx.api_version = r.GroupVersion();
  ctx.now = FormatTimestamp(NowUnixSeconds());
  ctx.has_status_subresource =
      std::find(r.subresources.begin(), r.subresources.end(), "status") != r.subresources.end();
  return ctx;
}

bool StartsWithJson(std::string_view body, char open) {
  size_t i = body.find_first_not_of(" \t\r\n");
  return i != std::string_view::npos && body[i] == open;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string StringField(const Json& obj, const char* name) {
  auto it = obj.find(name);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<Json> Server::Impl::DecodeBody(const HttpRequest& req,
                                      std::vector<std::string>* duplicates) {
  if (req.Header("content-type").find("protobuf") != std::string::npos) {
    // kubectl's generators and kube-scheduler's default client send protobuf, which has no
    // duplicate or unknown fields to report: what it cannot map is not decoded.
    return DecodeProtobufObject(req.body);
  }
  if (StartsWithJson(req.body, '{')) {
    Json obj;
    if (ParseJsonNotingDuplicates(req.body, kMaxBodyDepth, &obj, duplicates)) return obj;
    // Not valid JSON: the general parser below says why.
  }
  auto docs = ParseDocuments(req.body, "request body");
  if (!docs.ok() || docs->size() != 1 || !(*docs)[0].is_object()) {
    std::string why = docs.ok() ? "expected one object" : docs.error().message;
    return Error{fmt::format("the body of the request could not be decoded: {}", why),
                 ErrorCode::kBadRequest};
  }
  return std::move((*docs)[0]);
}

Result<Json> Server::Impl::DecodeChecked(const HttpRequest& req, std::string_view group,
                                         const std::string& kind, FieldValidation fv,
                                         std::vector<std::string>* warnings) {
  if (req.Header("content-type").find("protobuf") != std::string::npos) return DecodeBody(req);
  std::vector<std::string> problems;
  auto body = DecodeBody(req, fv == FieldValidation::kIgnore ? nullptr : &problems);
  if (!body.ok()) return body.error();
  if (auto ok = CheckBodyFields(group, kind, fv, *body, &problems); !ok.ok()) return ok.error();
  if (fv == FieldValidation::kWarn) *warnings = std::move(problems);
  return body;
}

}  // namespace berth::apiserver
