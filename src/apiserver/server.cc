#include "apiserver/server.h"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <list>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>

#include "api/codec.h"
#include "apiserver/admission.h"
#include "apiserver/base64.h"
#include "apiserver/bootstrap.h"
#include "apiserver/crd_admission.h"
#include "apiserver/crd_controller.h"
#include "apiserver/crd_table.h"
#include "apiserver/default_storage_class.h"
#include "apiserver/discovery.h"
#include "apiserver/event_expiry.h"
#include "apiserver/eviction.h"
#include "apiserver/field_types.h"
#include "apiserver/field_validation.h"
#include "apiserver/gc_finalizers.h"
#include "apiserver/managed_fields.h"
#include "apiserver/namespace_deleter.h"
#include "apiserver/openapi_v2.h"
#include "apiserver/openapi_v3.h"
#include "apiserver/patch.h"
#include "apiserver/pod_deletion.h"
#include "apiserver/protobuf.h"
#include "apiserver/query_params.h"
#include "apiserver/request_metrics.h"
#include "apiserver/resource_path.h"
#include "apiserver/resources.h"
#include "apiserver/reviews.h"
#include "apiserver/scale.h"
#include "apiserver/selectors.h"
#include "apiserver/store.h"
#include "apiserver/table.h"
#include "net/http_server.h"
#include "net/tls_certs.h"
#include "observe/log.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

// Go's strconv.ParseBool (Python sends "True").
bool ParseBool(const std::optional<std::string>& v) {
  if (!v) return false;
  return *v == "1" || *v == "t" || *v == "T" || *v == "true" || *v == "TRUE" || *v == "True";
}

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

Json StatusBody(const Error& e, const std::string& kind = "", const std::string& name = "") {
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
  // kubectl rebuilds an Invalid message from details.causes: "<Kind> \"<name>\" is invalid:
  // <field>: <detail>" becomes one cause.
  if (e.code == ErrorCode::kInvalid) {
    size_t at = e.message.find(" is invalid: ");
    if (at != std::string::npos) {
      std::string rest = e.message.substr(at + 13);
      size_t colon = rest.find(": ");
      Json cause = {{"reason", "FieldValueInvalid"},
                    {"message", colon == std::string::npos ? rest : rest.substr(colon + 2)},
                    {"field", colon == std::string::npos ? "" : rest.substr(0, colon)}};
      if (cause["message"].get<std::string>().rfind("Required value", 0) == 0) {
        cause["reason"] = "FieldValueRequired";
      }
      body["details"]["causes"] = Json::array({cause});
    }
  }
  if (auto cause = NamespaceTerminatingCause(e)) body["details"]["causes"] = Json::array({*cause});
  return body;
}

HttpResponse ErrorResponse(const Error& e, const std::string& kind = "",
                           const std::string& name = "") {
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

// Written as text: every binding is answered with one.
HttpResponse SuccessStatus(int code) {
  return JsonResponse(code, fmt::format(R"({{"apiVersion":"v1","code":{},"kind":"Status",)"
                                        R"("metadata":{{}},"status":"Success"}})",
                                        code));
}

// What a DELETE's DeleteOptions body and query ask for; dryRun may come in either.
struct DeleteRequest {
  DeletePreconditions preconditions;
  bool dry_run = false;
  std::optional<int64_t> grace_period_seconds;
  // propagationPolicy (or the older orphanDependents): Orphan, Background or Foreground.
  std::optional<std::string> propagation;
};

// Pods are deleted gracefully (pod_deletion.h); every other kind at once.
GraceFn GraceFor(const ResourceInfo& r, const DeleteRequest& opts) {
  if (!r.group.empty() || r.plural != "pods") return nullptr;
  return [requested = opts.grace_period_seconds](const Json& pod) {
    return PodGraceDecision(pod, requested, NowUnixSeconds());
  };
}

VoidResult ReadDeleteOptions(const Json& opts, DeleteRequest& out) {
  if (auto dry = opts.find("dryRun"); dry != opts.end() && !dry->is_null()) {
    if (!dry->is_array()) {
      return Error{"DeleteOptions.dryRun: must be a list", ErrorCode::kBadRequest};
    }
    for (const auto& v : *dry) {
      if (v != "All") {
        return Error{fmt::format("DeleteOptions.dryRun: Unsupported value: {}: supported values: "
                                 "\"All\"",
                                 v.dump()),
                     ErrorCode::kBadRequest};
      }
      out.dry_run = true;
    }
  }
  if (auto grace = opts.find("gracePeriodSeconds"); grace != opts.end() && !grace->is_null()) {
    if (!grace->is_number_integer()) {
      return Error{"DeleteOptions.gracePeriodSeconds: must be an integer", ErrorCode::kBadRequest};
    }
    out.grace_period_seconds = grace->get<int64_t>();
  }
  if (auto ok = ReadPropagation(opts, out.propagation); !ok.ok()) return ok.error();
  if (auto pre = opts.find("preconditions"); pre != opts.end() && pre->is_object()) {
    if (auto uid = pre->find("uid"); uid != pre->end() && uid->is_string()) {
      out.preconditions.uid = uid->get<std::string>();
    }
    if (auto rv = pre->find("resourceVersion"); rv != pre->end() && rv->is_string()) {
      out.preconditions.resource_version = rv->get<std::string>();
    }
  }
  return {};
}

Result<DeleteRequest> ParseDeleteOptions(const HttpRequest& req) {
  DeleteRequest out;
  out.dry_run = req.Query("dryRun") == "All";
  if (auto grace = req.Query("gracePeriodSeconds"); grace && !grace->empty()) {
    char* end = nullptr;
    const long long v = std::strtoll(grace->c_str(), &end, 10);
    if (end == grace->c_str() || *end != '\0') {
      return Error{"gracePeriodSeconds: must be an integer", ErrorCode::kBadRequest};
    }
    out.grace_period_seconds = v;
  }
  if (auto policy = req.Query("propagationPolicy"); policy && !policy->empty()) {
    if (auto ok = ReadPropagation({{"propagationPolicy", *policy}}, out.propagation); !ok.ok()) {
      return ok.error();
    }
  }
  if (auto orphan = req.Query("orphanDependents"); orphan && !orphan->empty()) {
    if (out.propagation) return BothPropagationsError();
    out.propagation = *orphan == "true" ? "Orphan" : "Background";
  }
  if (req.body.empty()) return out;
  Json opts = Json::parse(req.body, nullptr, false);
  if (opts.is_discarded() || !opts.is_object()) {
    return Error{"the body of the request could not be decoded as DeleteOptions",
                 ErrorCode::kBadRequest};
  }
  if (auto ok = ReadDeleteOptions(opts, out); !ok.ok()) return ok.error();
  return out;
}

// The namespaces every cluster keeps (kube-apiserver's NamespaceLifecycle refuses to delete
// them).
VoidResult RefuseImmortalNamespace(const ResourceInfo& r, std::string_view name) {
  if (!r.group.empty() || r.plural != "namespaces") return {};
  if (name != "default" && name != "kube-system" && name != "kube-public") return {};
  return Error{
      fmt::format("namespaces \"{}\" is forbidden: this namespace may not be deleted", name),
      ErrorCode::kForbidden};
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

// The labelSelector and fieldSelector of a request as one predicate (null: everything).
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

// Who a write is recorded for in managedFields: the fieldManager parameter, else the product
// of the user agent (kube-apiserver's rule: "kubectl/v1.32.0 (linux/amd64)" is "kubectl").
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

// A conflict of server-side apply: kube-apiserver's Status, one cause per field.
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

// A request addressed to a resource.
struct Target {
  const ResourceInfo* resource = nullptr;
  std::string ns;    // namespaced resources
  std::string name;  // empty: collection
  std::string subresource;
};

VoidResult ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("{}: cannot read", path)};
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return {};
}

VoidResult WritePrivateFile(const std::string& path, const std::string& data) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Error{fmt::format("{}: cannot write", tmp)};
    out << data;
    if (!out.flush()) return Error{fmt::format("{}: cannot write", tmp)};
  }
  chmod(tmp.c_str(), 0600);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Error{fmt::format("{}: {}", path, ec.message())};
  return {};
}

// Deeper bodies are refused, as the document parser refuses them: the copies and encoders
// downstream recurse.
constexpr size_t kMaxBodyDepth = 512;

// Whether `body` is JSON starting with `open` ('{' or '[') after white space.
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

// `resp` with the objects of custom resource `r` in it as version `r` serves them (stored
// objects may carry another version's apiVersion), once it is ready.
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

// Adds one Warning header per distinct message (kubectl prints each as "Warning: ...").
HttpResponse WithWarnings(HttpResponse r, const std::vector<std::string>& warnings) {
  for (size_t i = 0; i < warnings.size(); ++i) {
    if (std::find(warnings.begin(), warnings.begin() + i, warnings[i]) != warnings.begin() + i) {
      continue;
    }
    r.headers.emplace_back("Warning", WarningHeaderValue(warnings[i]));
  }
  return r;
}

// One open watch stream.
struct ActiveWatch {
  std::shared_ptr<net::StreamSink> sink;
  std::unique_ptr<WatchRegistration> registration;
  std::chrono::steady_clock::time_point deadline;
  bool bookmarks = false;
  std::string kind, api_version;
  std::chrono::steady_clock::time_point last_bookmark;
};

}  // namespace

struct Server::Impl {
  // First, so that it outlives every member that may still send a deferred answer.
  RequestMetrics request_metrics;
  ServerOptions options;
  std::unique_ptr<Store> store;
  std::unique_ptr<net::HttpServer> http;
  std::string token;
  std::string ca_pem;
  std::string kubeconfig_path;
  std::mutex watches_mu;
  std::list<std::shared_ptr<ActiveWatch>> watches;
  std::mutex reaper_mu;
  std::condition_variable reaper_cv;
  bool stopping = false;
  std::thread reaper;
  std::unique_ptr<NamespaceDeleter> namespace_deleter;
  std::unique_ptr<CrdController> crd_controller;  // serves what CRDs define

  HttpResponse Handle(HttpRequest& req);
  bool Authorized(const HttpRequest& req) const;
  HttpResponse HandleResource(HttpRequest& req, const Target& t);
  HttpResponse List(HttpRequest& req, const Target& t);
  HttpResponse Watch(HttpRequest& req, const Target& t);
  HttpResponse Create(HttpRequest& req, const Target& t);
  HttpResponse CreateObject(HttpRequest& req, const Target& t, Json obj);
  HttpResponse Update(HttpRequest& req, const Target& t);
  HttpResponse Scale(HttpRequest& req, const Target& t);
  HttpResponse Log(HttpRequest& req, const Target& t);
  HttpResponse Evict(HttpRequest& req, const Target& t);
  HttpResponse Patch(HttpRequest& req, const Target& t);
  HttpResponse Delete(HttpRequest& req, const Target& t);
  // The garbage collector's finalizers a DELETE's propagationPolicy asks for, set before the
  // deletion marks the object.
  VoidResult SetGcFinalizers(const ResourceInfo& r, const std::string& ns, const std::string& name,
                             const DeleteRequest& opts);
  HttpResponse DeleteCollection(HttpRequest& req, const Target& t);
  HttpResponse Bind(HttpRequest& req, const Target& t, const Json& binding);
  HttpResponse SingleObject(HttpRequest& req, const Target& t, const StoredObject& so, int status);
  HttpResponse AfterDurable(int64_t rv, HttpResponse r);
  Result<Json> DecodeBody(const HttpRequest& req, std::vector<std::string>* duplicates = nullptr);
  Result<Json> DecodeChecked(const HttpRequest& req, std::string_view group,
                             const std::string& kind, FieldValidation fv,
                             std::vector<std::string>* warnings);
  PriorityClassLookup PriorityClasses();
  void ReapLoop();
  uint16_t port() const { return http ? http->port() : 0; }
};

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

// Decodes a create or update body of group/v1 `kind` and checks its fields as `fv` asks; with
// Warn the problems become `warnings`.
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

// A snapshot of the PriorityClasses, taken before the write enters the store: admission runs
// inside Store::Mutate, under the store's lock, where reading the store again would deadlock.
PriorityClassLookup Server::Impl::PriorityClasses() {
  const ResourceInfo* pcs = FindResource("scheduling.k8s.io", "v1", "priorityclasses");
  auto all = store->List(*pcs, "", {}, 0, "");
  std::vector<std::shared_ptr<const Json>> classes;
  if (all.ok()) {
    for (const auto& so : all->items) classes.push_back(so.object);
  }
  return [classes = std::move(classes)](const std::string& name) -> std::optional<Json> {
    for (const auto& c : classes) {
      const bool match = name.empty() ? c->value("globalDefault", false)
                                      : (*c)["metadata"].value("name", "") == name;
      if (match) return *c;
    }
    return std::nullopt;
  };
}

// `r`, sent once revision `rv` is durable (a storage failure is answered instead). The I/O
// thread serves other requests meanwhile.
HttpResponse Server::Impl::AfterDurable(int64_t rv, HttpResponse r) {
  HttpResponse d;
  d.deferred = [this, rv, r = std::move(r)](std::function<void(HttpResponse)> reply) mutable {
    store->WhenDurable(rv, [r = std::move(r), reply = std::move(reply)](VoidResult ok) mutable {
      reply(ok.ok() ? std::move(r) : ErrorResponse(ok.error()));
    });
  };
  return d;
}

HttpResponse Server::Impl::SingleObject(HttpRequest& req, const Target& t, const StoredObject& so,
                                        int status) {
  if (WantsTable(req) && req.method == "GET") {
    HttpResponse r = JsonResponse(
        status,
        ToTable(*t.resource, {so.object.get()}, so.rv, IncludeFor(req), NowUnixSeconds()).dump());
    return r;
  }
  return JsonResponse(status, *so.text);
}

// A public path, or the token. Judged from the request's head, before its body is read (the
// HTTP server's check_head), and again here for callers of Handle.
bool Server::Impl::Authorized(const HttpRequest& req) const {
  const std::string given = req.Header("authorization");
  const std::string expected = "Bearer " + token;
  if (given.size() == expected.size() &&
      CRYPTO_memcmp(given.data(), expected.data(), given.size()) == 0) {
    return true;
  }
  std::string path = req.path;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  for (const ExtraRoute& route : options.extra_routes) {
    if (path == route.prefix || path.rfind(route.prefix + "/", 0) == 0) return route.is_public;
  }
  return path == "/healthz" || path == "/livez" || path == "/readyz" || path == "/version" ||
         path.rfind("/healthz/", 0) == 0 || path.rfind("/livez/", 0) == 0 ||
         path.rfind("/readyz/", 0) == 0;
}

HttpResponse Server::Impl::Handle(HttpRequest& req) {
  if (!Authorized(req)) return ErrorResponse(Error{"Unauthorized", ErrorCode::kUnauthorized});
  std::string path = req.path;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  for (const ExtraRoute& route : options.extra_routes) {
    if (path != route.prefix && path.rfind(route.prefix + "/", 0) != 0) continue;
    return route.handler(req, *store);
  }
  if (path == "/healthz" || path == "/livez" || path == "/readyz" ||
      path.rfind("/healthz/", 0) == 0 || path.rfind("/livez/", 0) == 0 ||
      path.rfind("/readyz/", 0) == 0) {
    HttpResponse r;
    r.content_type = "text/plain; charset=utf-8";
    r.body = "ok";
    const std::string check = path.substr(1, path.find('/', 1) - 1);  // healthz, livez, readyz
    if (path.find('/', 1) == std::string::npos && req.Query("verbose")) {
      // kube-apiserver's verbose form: one line per check, then the verdict.
      r.body = fmt::format("[+]ping ok\n[+]log ok\n[+]storage ok\n{} check passed\n", check);
    }
    return r;
  }
  if (path == "/version") return JsonResponse(200, VersionDocument().dump());
  if (path == "/api" || path == "/apis" || path == "/api/v1" ||
      (path.rfind("/apis/", 0) == 0 && std::count(path.begin(), path.end(), '/') <= 3)) {
    auto doc = DiscoveryDocument(path, req.Header("accept"), options.bind_address, port());
    if (!doc)
      return ErrorResponse(
          Error{"the server could not find the requested resource", ErrorCode::kNotFound});
    HttpResponse r = JsonResponse(200, doc->body.dump());
    r.content_type = doc->content_type;
    return r;
  }
  if (path == "/openapi/v2") {
    OpenApiV2Reply doc = OpenApiV2Document(req.Header("accept"));
    HttpResponse r = JsonResponse(200, std::move(doc.body));
    r.content_type = std::move(doc.content_type);
    return r;
  }
  if (path.rfind("/openapi/v3", 0) == 0) {
    auto doc = OpenApiV3Document(path);
    if (!doc)
      return ErrorResponse(
          Error{"the server could not find the requested resource", ErrorCode::kNotFound});
    return JsonResponse(200, std::move(*doc));
  }
  // /api/v1/... or /apis/<group>/<version>/...
  const std::optional<ResourcePath> p = ParseResourcePath(path);
  if (!p) {
    return ErrorResponse(
        Error{"the server could not find the requested resource", ErrorCode::kNotFound});
  }
  Target t;
  t.ns = p->ns;
  t.name = p->name;
  t.subresource = p->subresource;
  t.resource = p->extra_segments ? nullptr : FindResource(p->group, p->version, p->plural);
  // A cluster-scoped resource is never under a namespace; a namespaced one is, except for a
  // list across all namespaces.
  if (t.resource && !t.ns.empty() && !t.resource->namespaced) t.resource = nullptr;
  if (t.resource && t.ns.empty() && t.resource->namespaced && !t.name.empty()) t.resource = nullptr;
  if (!t.resource) {
    return ErrorResponse(
        Error{"the server could not find the requested resource", ErrorCode::kNotFound});
  }
  if (!t.subresource.empty() &&
      std::find(t.resource->subresources.begin(), t.resource->subresources.end(), t.subresource) ==
          t.resource->subresources.end()) {
    return ErrorResponse(
        Error{"the server could not find the requested resource", ErrorCode::kNotFound});
  }
  try {
    const CustomResourceVersion* custom = CustomResourceOf(*t.resource);
    if (custom && custom->several_versions)
      return AsServedVersion(*t.resource, HandleResource(req, t));
    return HandleResource(req, t);
  } catch (const Json::type_error& e) {
    // A value of the wrong type (a number where a string belongs) that decoding let through
    // and admission met: the body is at fault, as kube-apiserver says when it decodes.
    std::string_view what = e.what();
    if (size_t end = what.find("] ");
        what.rfind("[json.exception.", 0) == 0 && end != std::string_view::npos) {
      what.remove_prefix(end + 2);
    }
    const ResourceInfo& r = *t.resource;
    return ErrorResponse(Error{fmt::format("{} in version \"{}\" cannot be handled as a {}: a "
                                           "field has the wrong type: {}",
                                           r.kind, r.version, r.kind, what),
                               ErrorCode::kBadRequest});
  }
}

HttpResponse Server::Impl::HandleResource(HttpRequest& req, const Target& t) {
  const std::string& m = req.method;
  const ResourceInfo& res = *t.resource;
  auto not_allowed = [] {
    return ErrorResponse(Error{"the server does not allow this method on the requested resource",
                               ErrorCode::kMethodNotAllowed});
  };
  if (auto ok = ValidateResourceQuery(req); !ok.ok()) return ErrorResponse(ok.error());
  if (m == "POST" || m == "PUT" || (m == "DELETE" && !req.body.empty())) {
    if (auto ok = CheckBodyMediaType(req.Header("content-type")); !ok.ok()) {
      return ErrorResponse(ok.error());
    }
  }
  if (IsReview(res)) {
    if (m != "POST" || !t.name.empty()) return not_allowed();
    auto body = DecodeBody(req);
    if (!body.ok()) return ErrorResponse(body.error());
    auto answer = AnswerReview(res, *body);
    if (!answer.ok()) return ErrorResponse(answer.error());
    return JsonResponse(201, answer->dump());
  }
  if (res.create_only) {  // bindings
    if (m != "POST" || !t.name.empty()) return not_allowed();
    auto fv = ParseFieldValidation(req.Query("fieldValidation"), "CreateOptions");
    if (!fv.ok()) return ErrorResponse(fv.error());
    std::vector<std::string> warnings;
    auto body = DecodeChecked(req, "", "Binding", *fv, &warnings);
    if (!body.ok()) return ErrorResponse(body.error());
    return WithWarnings(Bind(req, t, *body), warnings);
  }
  if (t.name.empty()) {
    if (m == "GET") return ParseBool(req.Query("watch")) ? Watch(req, t) : List(req, t);
    if (m == "POST") return Create(req, t);
    if (m == "DELETE") return DeleteCollection(req, t);
    return not_allowed();
  }
  if (t.subresource == "binding") {
    if (m != "POST") return not_allowed();
    auto fv = ParseFieldValidation(req.Query("fieldValidation"), "CreateOptions");
    if (!fv.ok()) return ErrorResponse(fv.error());
    std::vector<std::string> warnings;
    auto body = DecodeChecked(req, "", "Binding", *fv, &warnings);
    if (!body.ok()) return ErrorResponse(body.error());
    (*body)["metadata"]["name"] = t.name;
    return WithWarnings(Bind(req, t, *body), warnings);
  }
  if (t.subresource == "eviction") {
    if (m != "POST") return not_allowed();
    return Evict(req, t);
  }
  if (t.subresource == "log") {
    if (m != "GET") return not_allowed();
    return Log(req, t);
  }
  if (t.subresource == "exec" || t.subresource == "attach" || t.subresource == "portforward") {
    // Nothing runs a container here: say so instead of a bare 404 (`kubectl exec`).
    auto pod = store->Get(res, t.ns, t.name);
    if (!pod.ok()) return ErrorResponse(pod.error(), res.plural, t.name);
    return ErrorResponse(Error{fmt::format("pod \"{}\" has no running containers: berth up's "
                                           "kubelets are simulated and run no processes",
                                           t.name),
                               ErrorCode::kBadRequest});
  }
  if (t.subresource == "scale") {
    if (m != "GET" && m != "PUT" && m != "PATCH") return not_allowed();
    return Scale(req, t);
  }
  if (t.subresource == "finalize" && m != "PUT") return not_allowed();
  if (m == "GET") {
    auto got = store->Get(res, t.ns, t.name);
    if (!got.ok()) return ErrorResponse(got.error(), res.plural, t.name);
    return SingleObject(req, t, *got, 200);
  }
  if (m == "PUT") return Update(req, t);
  if (m == "PATCH") return Patch(req, t);
  if (m == "DELETE") {
    if (!t.subresource.empty()) return not_allowed();
    return Delete(req, t);
  }
  return not_allowed();
}

HttpResponse Server::Impl::List(HttpRequest& req, const Target& t) {
  auto selected = SelectorFilter(req, *t.resource);
  if (!selected.ok()) return ErrorResponse(selected.error());
  ObjectFilter filter = std::move(selected).value();
  int64_t limit = 0;
  if (auto l = req.Query("limit")) limit = std::atoll(l->c_str());
  auto list = store->List(*t.resource, t.ns, filter, limit, req.Query("continue").value_or(""));
  if (!list.ok()) return ErrorResponse(list.error());
  if (WantsTable(req)) {
    std::vector<const Json*> objs;
    for (const auto& so : list->items) objs.push_back(so.object.get());
    Json table = ToTable(*t.resource, objs, list->rv, IncludeFor(req), NowUnixSeconds());
    if (!list->continue_token.empty()) table["metadata"]["continue"] = list->continue_token;
    return JsonResponse(200, table.dump());
  }
  // Items are spliced in as stored text: no re-encoding.
  Json meta = {{"resourceVersion", std::to_string(list->rv)}};
  if (!list->continue_token.empty()) meta["continue"] = list->continue_token;
  std::string body = fmt::format(R"({{"kind":"{}List","apiVersion":"{}","metadata":{},"items":[)",
                                 t.resource->kind, t.resource->GroupVersion(), meta.dump());
  for (size_t i = 0; i < list->items.size(); ++i) {
    if (i) body += ',';
    body += *list->items[i].text;
  }
  body += "]}";
  return JsonResponse(200, body);
}

HttpResponse Server::Impl::Watch(HttpRequest& req, const Target& t) {
  auto selected = SelectorFilter(req, *t.resource);
  if (!selected.ok()) return ErrorResponse(selected.error());
  ObjectFilter filter = std::move(selected).value();
  std::optional<int64_t> from_rv;
  std::string rv = req.Query("resourceVersion").value_or("");
  const bool initial_events = ParseBool(req.Query("sendInitialEvents"));
  if (!rv.empty() && rv != "0" && !initial_events) {
    char* end = nullptr;
    from_rv = std::strtoll(rv.c_str(), &end, 10);
    if (!end || *end) {
      return ErrorResponse(
          Error{fmt::format("invalid resourceVersion \"{}\"", rv), ErrorCode::kBadRequest});
    }
  }
  auto w = std::make_shared<ActiveWatch>();
  w->bookmarks = ParseBool(req.Query("allowWatchBookmarks"));
  w->kind = t.resource->kind;
  w->api_version = t.resource->GroupVersion();
  auto timeout = ParseInt64Param(req.Query("timeoutSeconds").value_or(""));
  if (!timeout.ok()) return ErrorResponse(timeout.error());
  w->deadline = WatchDeadline(std::chrono::steady_clock::now(), timeout->value_or(0));
  w->last_bookmark = std::chrono::steady_clock::now();
  const bool table = WantsTable(req);
  const IncludeObject include = IncludeFor(req);
  HttpResponse resp;
  const ResourceInfo* res = t.resource;
  std::string ns = t.ns;
  resp.stream = [this, w, res, ns, from_rv, filter, table, include,
                 initial_events](std::shared_ptr<net::StreamSink> sink) {
    w->sink = sink;
    auto first = std::make_shared<bool>(true);
    const CustomResourceVersion* custom = CustomResourceOf(*res);
    const bool rewrite = custom && custom->several_versions;
    WatchCallback cb = [sink, table, include, res, first, rewrite](const WatchEvent& ev) {
      if (!table && rewrite) {
        auto parts = WatchEventLineParts(ev);
        return sink->Write(*parts[0] + WithServedVersion(*res, *parts[1]) + *parts[2]);
      }
      if (!table) return sink->Write(WatchEventLineParts(ev));
      Json obj =
          ToTable(*res, {ev.object.object.get()}, ev.object.rv, include, NowUnixSeconds(), *first);
      *first = false;
      const char* type = ev.type == WatchEventType::kAdded      ? "ADDED"
                         : ev.type == WatchEventType::kModified ? "MODIFIED"
                                                                : "DELETED";
      return sink->Write(Json{{"type", type}, {"object", std::move(obj)}}.dump() + "\n");
    };
    int64_t start_rv = 0;
    auto reg = store->Watch(*res, ns, from_rv, filter, cb, &start_rv);
    if (!reg.ok()) {
      // As kube-apiserver: 200, then an ERROR event with the Status, then the end.
      sink->Write(Json{{"type", "ERROR"}, {"object", StatusBody(reg.error())}}.dump() + "\n");
      sink->Close();
      return;
    }
    w->registration = std::move(reg).value();
    if (initial_events) {
      Json bookmark = {{"type", "BOOKMARK"},
                       {"object",
                        {{"kind", w->kind},
                         {"apiVersion", w->api_version},
                         {"metadata",
                          {{"resourceVersion", std::to_string(start_rv)},
                           {"annotations", {{"k8s.io/initial-events-end", "true"}}}}}}}};
      sink->Write(bookmark.dump() + "\n");
    }
    std::lock_guard lock(watches_mu);
    watches.push_back(w);
  };
  return resp;
}

HttpResponse Server::Impl::Create(HttpRequest& req, const Target& t) {
  auto fv = ParseFieldValidation(req.Query("fieldValidation"), "CreateOptions");
  if (!fv.ok()) return ErrorResponse(fv.error());
  const ResourceInfo& res = *t.resource;
  std::vector<std::string> warnings;
  auto body = DecodeChecked(req, res.group, res.kind, *fv, &warnings);
  if (!body.ok()) return ErrorResponse(body.error());
  return WithWarnings(CreateObject(req, t, std::move(body).value()), warnings);
}

HttpResponse Server::Impl::CreateObject(HttpRequest& req, const Target& t, Json obj) {
  const ResourceInfo& res = *t.resource;
  if (obj.contains("kind") && obj["kind"] != res.kind) {
    return ErrorResponse(
        Error{fmt::format("the API version in the data ({}) does not match the "
                          "expected API version ({}) for kind {}",
                          obj.value("apiVersion", ""), res.GroupVersion(), obj.value("kind", "")),
              ErrorCode::kBadRequest});
  }
  Json& meta = obj["metadata"];
  if (!meta.is_object()) meta = Json::object();
  if (res.namespaced && meta.contains("namespace") && meta["namespace"] != t.ns &&
      meta["namespace"] != "") {
    return ErrorResponse(
        Error{"the namespace of the provided object does not match the namespace "
              "sent on the request",
              ErrorCode::kBadRequest});
  }
  if (meta.contains("resourceVersion") && meta["resourceVersion"] != "") {
    return ErrorResponse(Error{"resourceVersion should not be set on objects to be created",
                               ErrorCode::kBadRequest});
  }
  meta.erase("resourceVersion");
  // Only pods and priority classes consult the classes: other creates skip listing them.
  const bool reads_classes = (res.group.empty() && res.plural == "pods") ||
                             (res.group == "scheduling.k8s.io" && res.plural == "priorityclasses");
  if (auto ok = Admit(res, obj, true, reads_classes ? PriorityClasses() : PriorityClassLookup());
      !ok.ok()) {
    return ErrorResponse(ok.error(), res.kind, meta.value("name", ""));
  }
  if (res.group.empty() && res.plural == "persistentvolumeclaims") {
    AdmitDefaultStorageClass(*store, obj);
  }
  RecordUpdateManagedFields(nullptr, obj, ManagerFor(req, res, ""));
  const bool dry_run = req.Query("dryRun") == "All";
  // `meta` lives in `obj`, which Create takes.
  const std::string name = meta.value("name", "");
  auto created = store->Create(res, t.ns, std::move(obj), dry_run, Durability::kLater);
  if (!created.ok()) return ErrorResponse(created.error(), res.plural, name);
  if (dry_run) return JsonResponse(201, *created->text);
  if (res.group.empty() && res.plural == "namespaces") {
    // Only the store fails here, and then the namespace's own write is not durable either.
    if (auto ok = PopulateNamespace(*store, name, ca_pem); !ok.ok()) {
      return ErrorResponse(ok.error());
    }
  }
  return AfterDurable(created->rv, JsonResponse(201, *created->text));
}

// Keeps the stored status when the main resource is written (status has its own subresource),
// and everything but status when the status subresource is.
static Json SplitStatus(const ResourceInfo& res, const std::string& subresource,
                        const Json& current, Json next) {
  bool has_status_sub = std::find(res.subresources.begin(), res.subresources.end(), "status") !=
                        res.subresources.end();
  if (subresource == "status") {
    Json out = current;
    if (next.contains("status")) {
      out["status"] = next["status"];
    } else {
      out.erase("status");
    }
    if (next.contains("metadata") && next["metadata"].contains("resourceVersion")) {
      out["metadata"]["resourceVersion"] = next["metadata"]["resourceVersion"];
    }
    return out;
  }
  if (has_status_sub) {
    if (current.contains("status")) {
      next["status"] = current["status"];
    } else {
      next.erase("status");
    }
  }
  if (res.group.empty() && res.plural == "namespaces") {
    return PrepareNamespaceUpdate(subresource, current, std::move(next));
  }
  return next;
}

HttpResponse Server::Impl::Update(HttpRequest& req, const Target& t) {
  auto fv = ParseFieldValidation(req.Query("fieldValidation"), "UpdateOptions");
  if (!fv.ok()) return ErrorResponse(fv.error());
  const ResourceInfo& res = *t.resource;
  std::vector<std::string> warnings;
  auto body = DecodeChecked(req, res.group, res.kind, *fv, &warnings);
  if (!body.ok()) return ErrorResponse(body.error());
  Json obj = std::move(*body);
  const std::string sub = t.subresource;
  auto pcs = PriorityClasses();
  const FieldManagerContext managers = ManagerFor(req, res, sub);
  auto result = store->Mutate(
      res, t.ns, t.name,
      [&](const Json* current) -> Result<Json> {
        Json next = SplitStatus(res, sub, *current, obj);
        if (auto ok = Admit(res, next, false, pcs); !ok.ok()) return ok.error();
        if (auto ok = ValidateUpdate(res, *current, next); !ok.ok()) return ok.error();
        RecordUpdateManagedFields(current, next, managers);
        return next;
      },
      false, req.Query("dryRun") == "All", nullptr, Durability::kLater);
  if (!result.ok())
    return WithWarnings(ErrorResponse(result.error(), res.plural, t.name), warnings);
  return WithWarnings(AfterDurable(result->rv, JsonResponse(200, *result->text)), warnings);
}

HttpResponse Server::Impl::Scale(HttpRequest& req, const Target& t) {
  const ResourceInfo& res = *t.resource;
  // A custom resource's Scale comes from the paths its CRD names (crd_table.h).
  const CustomResourceVersion* custom = CustomResourceOf(res);
  auto scale_of = [custom](const Json& o) {
    return custom ? CustomScaleOf(*custom, o) : ScaleOf(o);
  };
  if (req.method == "GET") {
    auto got = store->Get(res, t.ns, t.name);
    if (!got.ok()) return ErrorResponse(got.error(), res.plural, t.name);
    return JsonResponse(200, scale_of(*got->object).dump());
  }
  // PUT sends a whole Scale; PATCH a patch of the current one (the form `kubectl scale` uses).
  std::optional<PatchType> type;
  if (req.method == "PATCH") {
    auto patch_type = PatchTypeFor(req.Header("content-type"));
    if (!patch_type.ok()) return ErrorResponse(patch_type.error());
    if (*patch_type == PatchType::kApplyPatch) {
      return ErrorResponse(Error{"server-side apply is not supported on the scale subresource",
                                 ErrorCode::kUnsupportedMediaType});
    }
    type = *patch_type;
  }
  Json body = Json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !(body.is_object() || (type && body.is_array()))) {
    return ErrorResponse(
        Error{"the body of the request could not be decoded as a Scale", ErrorCode::kBadRequest});
  }
  auto pcs = PriorityClasses();
  const FieldManagerContext managers = ManagerFor(req, res, t.subresource);
  auto result = store->Mutate(
      res, t.ns, t.name,
      [&](const Json* current) -> Result<Json> {
        Json scale = body;
        if (type) {
          auto patched = ApplyPatch(scale_of(*current), body, *type);
          if (!patched.ok()) return patched.error();
          scale = std::move(patched).value();
        }
        auto next = custom ? WithCustomScale(*custom, *current, scale, t.name)
                           : WithScale(*current, scale, t.name);
        if (!next.ok()) return next.error();
        if (auto ok = Admit(res, *next, false, pcs); !ok.ok()) return ok.error();
        RecordUpdateManagedFields(current, *next, managers);
        return next;
      },
      false, req.Query("dryRun") == "All", nullptr, Durability::kLater);
  if (!result.ok()) return ErrorResponse(result.error(), res.plural, t.name);
  return AfterDurable(result->rv, JsonResponse(200, scale_of(*result->object).dump()));
}

// No container here writes a log (simulated kubelets run none): a container that has started
// has an empty one; one that has not is answered as kube-apiserver answers for it.
HttpResponse Server::Impl::Log(HttpRequest& req, const Target& t) {
  auto got = store->Get(*t.resource, t.ns, t.name);
  if (!got.ok()) return ErrorResponse(got.error(), t.resource->plural, t.name);
  std::string container = req.Query("container").value_or("");
  if (const Json* list = FieldAt(*got->object, "spec.containers");
      container.empty() && list != nullptr && list->is_array() && !list->empty()) {
    container = FieldValue((*list)[0], "name");
  }
  if (const Json* statuses = FieldAt(*got->object, "status.containerStatuses");
      statuses != nullptr && statuses->is_array()) {
    for (const Json& s : *statuses) {
      if (!s.is_object() || s.value("name", "") != container) continue;
      const Json& state = s.contains("state") ? s["state"] : Json();
      if (state.is_object() && (state.contains("running") || state.contains("terminated"))) {
        HttpResponse empty;
        empty.content_type = "text/plain";
        return empty;
      }
    }
  }
  return ErrorResponse(Error{fmt::format("container \"{}\" in pod \"{}\" is waiting to start: "
                                         "no kubelet has started it",
                                         container, t.name),
                             ErrorCode::kBadRequest});
}

HttpResponse Server::Impl::Patch(HttpRequest& req, const Target& t) {
  auto type = PatchTypeFor(req.Header("content-type"));
  if (!type.ok()) return ErrorResponse(type.error());
  const ResourceInfo& res = *t.resource;
  const bool apply = *type == PatchType::kApplyPatch;
  if (apply && req.Query("fieldManager").value_or("").empty()) {
    return ErrorResponse(
        Error{"PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required "
              "value: is required for apply patch",
              ErrorCode::kInvalid});
  }
  auto fv = ParseFieldValidation(req.Query("fieldValidation"), "PatchOptions");
  if (!fv.ok()) return ErrorResponse(fv.error());
  const bool check = *fv != FieldValidation::kIgnore;
  // Duplicate keys of the patch itself.
  std::vector<std::string> duplicates;
  Json patch;
  if (!(StartsWithJson(req.body, '{') || StartsWithJson(req.body, '[')) ||
      !ParseJsonNotingDuplicates(req.body, kMaxBodyDepth, &patch, check ? &duplicates : nullptr)) {
    auto docs = ParseDocuments(req.body, "patch");
    if (!docs.ok() || docs->size() != 1) {
      return ErrorResponse(
          Error{fmt::format("the body of the request could not be decoded: {}",
                            docs.ok() ? "expected one document" : docs.error().message),
                ErrorCode::kBadRequest});
    }
    patch = std::move((*docs)[0]);
  }
  const FieldSchema* schema = FindFieldSchema(res.group, res.kind);
  // What the patch itself breaks, as kube-apiserver words it per patch type.
  std::vector<std::string> patch_problems;
  if (apply) {
    // Server-side apply types the applied configuration: a field the kind does not declare
    // fails the request whatever the directive.
    std::vector<std::string> unknown;
    if (schema) {
      unknown = FindUnknownFields(*schema, patch, FieldPathStyle::kApply);
    } else {
      for (const auto& path : UnknownCustomFieldPaths(res.group, res.kind, patch)) {
        unknown.push_back("." + path);  // a custom resource's, by its schema
      }
    }
    if (!unknown.empty()) {
      for (auto& u : unknown) u += ": field not declared in schema";
      const Json meta = patch.value("metadata", Json::object());
      std::string api_version = StringField(patch, "apiVersion");
      if (api_version.find('/') == std::string::npos) api_version = "/" + api_version;
      return ErrorResponse(Error{
          fmt::format("failed to create typed patch object ({}/{}; {}, Kind={}): {}",
                      meta.is_object() ? StringField(meta, "namespace") : "",
                      meta.is_object() ? StringField(meta, "name") : "", api_version,
                      StringField(patch, "kind"),
                      unknown.size() == 1 ? unknown[0] : "errors:\n  " + Join(unknown, "\n  ")),
          ErrorCode::kBadRequest});
    }
    // The YAML decoder's words for a repeated key.
    for (const auto& d : duplicates) {
      std::string key =
          d.substr(d.find_last_of('.') == std::string::npos ? 0 : d.find_last_of('.') + 1);
      patch_problems.push_back(fmt::format("key {} already set in map", Json(key).dump()));
    }
    if (*fv == FieldValidation::kStrict && !patch_problems.empty()) {
      return ErrorResponse(
          Error{fmt::format("error strict decoding YAML: error converting YAML to JSON: yaml: "
                            "unmarshal errors:\n  {}",
                            Join(patch_problems, "\n  ")),
                ErrorCode::kBadRequest});
    }
  } else if (*type == PatchType::kJsonPatch) {
    for (const auto& d : duplicates) {
      patch_problems.push_back(fmt::format("json patch duplicate field \"{}\"", d));
    }
    if (check && patch.is_array()) {
      for (size_t i = 0; i < patch.size(); ++i) {
        if (!patch[i].is_object()) continue;
        for (const auto& [k, v] : patch[i].items()) {
          if (k != "op" && k != "path" && k != "from" && k != "value") {
            patch_problems.push_back(fmt::format("json patch unknown field \"[{}].{}\"", i, k));
          }
        }
      }
    }
  } else {
    for (const auto& d : duplicates) {
      patch_problems.push_back(fmt::format("duplicate field \"{}\"", d));
    }
  }
  std::vector<std::string> warnings;
  const std::string sub = t.subresource;
  auto pcs = PriorityClasses();
  // Read before the store's lock, as the priority classes: an apply creating a claim gets
  // the default StorageClass.
  const bool is_claim = apply && res.group.empty() && res.plural == "persistentvolumeclaims";
  const std::string default_class = is_claim ? DefaultStorageClassName(*store) : std::string();
  if (apply && res.group.empty() && res.kind == "Pod") {
    // An apply that creates admits the pod inside Mutate, under the store's lock, where the
    // lookup (it lists priority classes) cannot run: the class the patch names is found now.
    const Json* spec = patch.contains("spec") ? &patch["spec"] : nullptr;
    std::string class_name =
        spec && spec->is_object() ? StringField(*spec, "priorityClassName") : "";
    std::optional<Json> found = pcs(class_name);
    pcs = [class_name, found](const std::string& n) -> std::optional<Json> {
      return n == class_name ? found : std::nullopt;
    };
  }
  bool created = false;
  const FieldManagerContext managers = ManagerFor(req, res, sub);
  const bool force = ParseBool(req.Query("force"));
  std::vector<FieldConflict> conflicts;
  auto result = store->Mutate(
      res, t.ns, t.name,
      [&](const Json* current) -> Result<Json> {
        conflicts.clear();
        if (!current) {
          // Server-side apply creates.
          warnings.clear();
          if (*fv == FieldValidation::kWarn) warnings = patch_problems;
          Json obj = patch;
          obj["metadata"]["name"] = t.name;
          if (auto ok = ApplyManagedFields(nullptr, patch, obj, managers, force, &conflicts);
              !ok.ok()) {
            return ok.error();
          }
          if (auto ok = Admit(res, obj, true, pcs); !ok.ok()) return ok.error();
          if (is_claim) SetDefaultStorageClass(obj, default_class);
          return obj;
        }
        auto patched = ApplyPatch(*current, patch, *type);
        if (!patched.ok()) return patched.error();
        warnings.clear();
        if (schema && !apply) {
          // The patched object is decoded as the kind: what the kind does not declare is
          // dropped, reported, or (Strict) fails the patch.
          if (auto bad = FindFieldTypeError(*schema, *patched)) {
            // A value of the wrong type fails the decode first, in kube-apiserver's words.
            const Json& shown = *type == PatchType::kStrategicMergePatch ? patch : *patched;
            return Error{fmt::format(" \"\" is invalid: patch: Invalid value: {}: {}",
                                     Json(shown.dump()).dump(), *bad),
                         ErrorCode::kInvalid};
          }
          std::vector<std::string> problems = patch_problems;
          if (*fv == FieldValidation::kStrict) {
            auto unknown = FindUnknownFields(*schema, *patched, FieldPathStyle::kDecoder);
            problems.insert(problems.end(), unknown.begin(), unknown.end());
            if (!problems.empty()) {
              // kube-apiserver shows the patched object (the patch, for strategic merge).
              const Json& shown = *type == PatchType::kStrategicMergePatch ? patch : *patched;
              return Error{fmt::format(" \"\" is invalid: patch: Invalid value: {}: strict "
                                       "decoding error: {}",
                                       Json(shown.dump()).dump(), Join(problems, ", ")),
                           ErrorCode::kInvalid};
            }
          }
          DropUnknownFields(*schema, *patched, check ? &problems : nullptr);
          if (*fv == FieldValidation::kWarn) warnings = std::move(problems);
        } else if (schema) {
          // Applied configurations were checked above; fields stored before the check existed
          // go quietly.
          DropUnknownFields(*schema, *patched, nullptr);
          if (*fv == FieldValidation::kWarn) warnings = patch_problems;
        } else if (!apply && check) {
          // A custom resource's undeclared fields, which its admission prunes.
          std::vector<std::string> unknown;
          ListUnknownCustomFields(res.group, res.kind, *patched, &unknown);
          if (*fv == FieldValidation::kStrict && !unknown.empty()) {
            return Error{fmt::format(" \"\" is invalid: patch: Invalid value: {}: strict "
                                     "decoding error: {}",
                                     Json(patched->dump()).dump(), Join(unknown, ", ")),
                         ErrorCode::kInvalid};
          }
          if (*fv == FieldValidation::kWarn) warnings = std::move(unknown);
        }
        Json next = SplitStatus(res, sub, *current, std::move(patched).value());
        if (apply) {
          if (auto ok = ApplyManagedFields(current, patch, next, managers, force, &conflicts);
              !ok.ok()) {
            return ok.error();
          }
        }
        if (auto ok = Admit(res, next, false, pcs); !ok.ok()) return ok.error();
        if (auto ok = ValidateUpdate(res, *current, next); !ok.ok()) return ok.error();
        if (!apply) RecordUpdateManagedFields(current, next, managers);
        return next;
      },
      apply, req.Query("dryRun") == "All", &created, Durability::kLater);
  if (!result.ok() && !conflicts.empty()) {
    return WithWarnings(ApplyConflictResponse(result.error(), conflicts), warnings);
  }
  if (!result.ok())
    return WithWarnings(ErrorResponse(result.error(), res.plural, t.name), warnings);
  return WithWarnings(AfterDurable(result->rv, JsonResponse(created ? 201 : 200, *result->text)),
                      warnings);
}

HttpResponse Server::Impl::Delete(HttpRequest& req, const Target& t) {
  auto opts = ParseDeleteOptions(req);
  if (!opts.ok()) return ErrorResponse(opts.error());
  if (auto refused = RefuseImmortalNamespace(*t.resource, t.name); !refused.ok()) {
    return ErrorResponse(refused.error());
  }
  // The garbage collector does not watch custom resources: no finalizer of its would go.
  if (opts->propagation && !opts->dry_run && !CustomResourceOf(*t.resource)) {
    auto set = SetGcFinalizers(*t.resource, t.ns, t.name, *opts);
    if (!set.ok()) return ErrorResponse(set.error(), t.resource->plural, t.name);
  }
  auto gone = store->Delete(*t.resource, t.ns, t.name, opts->preconditions, opts->dry_run,
                            Durability::kLater, GraceFor(*t.resource, *opts));
  if (!gone.ok()) return ErrorResponse(gone.error(), t.resource->plural, t.name);
  return AfterDurable(gone->rv, JsonResponse(200, *gone->text));
}

VoidResult Server::Impl::SetGcFinalizers(const ResourceInfo& r, const std::string& ns,
                                         const std::string& name, const DeleteRequest& opts) {
  auto current = store->Get(r, ns, name);
  if (!current.ok()) return {};  // the deletion answers NotFound
  const Json& meta = (*current->object)["metadata"];
  if (opts.preconditions.uid && meta.value("uid", "") != *opts.preconditions.uid) return {};
  Json finalizers = meta.contains("finalizers") ? meta["finalizers"] : Json::array();
  // A foreground or orphaning deletion that has started is not turned into the other, as
  // kube-apiserver's deletionFinalizersForGarbageCollection.
  const bool marked = meta.contains("deletionTimestamp");
  Json next = WithGcFinalizers(finalizers, *opts.propagation, marked);
  if (next == finalizers) return {};
  auto changed = store->Mutate(
      r, ns, name,
      [&](const Json* cur) -> Result<Json> {
        Json obj = *cur;
        Json& f = obj["metadata"]["finalizers"];
        if (!f.is_array()) f = Json::array();
        f = WithGcFinalizers(f, *opts.propagation, marked);
        if (f.empty()) obj["metadata"].erase("finalizers");
        return obj;
      },
      false, false, nullptr, Durability::kLater);
  if (!changed.ok() && changed.error().code != ErrorCode::kNotFound) return changed.error();
  return {};
}

HttpResponse Server::Impl::Evict(HttpRequest& req, const Target& t) {
  DeleteRequest opts;
  opts.dry_run = req.Query("dryRun") == "All";
  if (!req.body.empty()) {
    Json eviction = Json::parse(req.body, nullptr, false);
    if (eviction.is_discarded() || !eviction.is_object()) {
      return ErrorResponse(Error{"the body of the request could not be decoded as an Eviction",
                                 ErrorCode::kBadRequest});
    }
    if (auto d = eviction.find("deleteOptions"); d != eviction.end() && d->is_object()) {
      if (auto ok = ReadDeleteOptions(*d, opts); !ok.ok()) return ErrorResponse(ok.error());
    }
  }
  const ResourceInfo& pods = *t.resource;
  const ResourceInfo* pdbs = FindResource("policy", "v1", "poddisruptionbudgets");
  const bool caller_rv = opts.preconditions.resource_version.has_value();
  // A pod that changes between the check and the deletion is checked again (a few times), as
  // kube-apiserver retries conflicts.
  for (int attempt = 0;; ++attempt) {
    auto pod = store->Get(pods, t.ns, t.name);
    if (!pod.ok()) return ErrorResponse(pod.error(), pods.plural, t.name);
    auto listed = store->List(*pdbs, t.ns, nullptr, 0, "");
    if (!listed.ok()) return ErrorResponse(listed.error());
    std::vector<const Json*> budgets;
    for (const auto& so : listed->items) budgets.push_back(so.object.get());
    EvictionDecision decision = DecideEviction(*pod->object, budgets);
    if (decision.refusal) {
      Json body = StatusBody(*decision.refusal);
      if (!decision.cause.empty()) {
        body["details"]["causes"] =
            Json::array({{{"reason", "DisruptionBudget"}, {"message", decision.cause}}});
      }
      if (decision.refusal->code == ErrorCode::kTooManyRequests) {
        body["details"]["retryAfterSeconds"] = 10;
      }
      return JsonResponse(body["code"].get<int>(), body.dump());
    }
    if (decision.budget && !opts.dry_run) {
      const std::string now = FormatTimestamp(NowUnixSeconds());
      auto spent = store->Mutate(
          *pdbs, t.ns, *decision.budget,
          [&](const Json* current) -> Result<Json> {
            return SpendDisruption(*current, t.name, now);
          },
          false, false, nullptr, Durability::kLater);
      if (!spent.ok()) return ErrorResponse(spent.error(), pdbs->plural, *decision.budget);
    }
    // The pod must still be the one the budgets were checked against.
    DeletePreconditions preconditions = opts.preconditions;
    const std::string phase = FieldValue(*pod->object, "status.phase");
    if (!caller_rv && phase != "Succeeded" && phase != "Failed") {
      preconditions.resource_version = FieldValue(*pod->object, "metadata.resourceVersion");
    }
    auto gone = store->Delete(pods, t.ns, t.name, preconditions, opts.dry_run, Durability::kLater,
                              GraceFor(pods, opts));
    if (gone.ok()) return AfterDurable(gone->rv, SuccessStatus(201));
    if (gone.error().code != ErrorCode::kConflict || caller_rv) {
      return ErrorResponse(gone.error(), pods.plural, t.name);
    }
    if (decision.budget || attempt >= 4) {
      // The budget was spent on a pod that changed meanwhile: the client retries the eviction.
      Json body =
          StatusBody(Error{"Cannot evict pod as it would violate the pod's disruption "
                           "budget.",
                           ErrorCode::kTooManyRequests});
      body["details"]["retryAfterSeconds"] = 10;
      return JsonResponse(429, body.dump());
    }
  }
}

HttpResponse Server::Impl::DeleteCollection(HttpRequest& req, const Target& t) {
  auto opts = ParseDeleteOptions(req);
  if (!opts.ok()) return ErrorResponse(opts.error());
  auto selected = SelectorFilter(req, *t.resource);
  if (!selected.ok()) return ErrorResponse(selected.error());
  auto list = store->List(*t.resource, t.ns, *selected, 0, "");
  if (!list.ok()) return ErrorResponse(list.error());
  std::string body = fmt::format(R"({{"kind":"{}List","apiVersion":"{}","metadata":{{}},"items":[)",
                                 t.resource->kind, t.resource->GroupVersion());
  bool first = true;
  // Revisions become durable in order, so the reply waits for the last deletion's commit only
  // (one group commit for the lot, not one per object).
  int64_t last_rv = 0;
  for (const auto& so : list->items) {
    const Json& meta = (*so.object)["metadata"];
    if (!RefuseImmortalNamespace(*t.resource, meta.value("name", "")).ok()) continue;
    auto gone = store->Delete(*t.resource, meta.value("namespace", ""), meta.value("name", ""), {},
                              opts->dry_run, Durability::kLater, GraceFor(*t.resource, *opts));
    if (!gone.ok()) continue;
    last_rv = std::max(last_rv, gone->rv);
    if (!first) body += ',';
    first = false;
    body += *gone->text;
  }
  body += "]}";
  if (last_rv == 0) return JsonResponse(200, body);
  return AfterDurable(last_rv, JsonResponse(200, body));
}

HttpResponse Server::Impl::Bind(HttpRequest& req, const Target& t, const Json& binding) {
  const ResourceInfo* pods = FindResource("", "v1", "pods");
  std::string name = binding.contains("metadata") ? binding["metadata"].value("name", "") : "";
  std::string node = binding.contains("target") ? binding["target"].value("name", "") : "";
  std::string uid = binding.contains("metadata") ? binding["metadata"].value("uid", "") : "";
  if (name.empty() || node.empty()) {
    return ErrorResponse(Error{fmt::format("Binding.core \"{}\" is invalid: target.name: Required "
                                           "value",
                                           name),
                               ErrorCode::kInvalid});
  }
  const std::string now = FormatTimestamp(NowUnixSeconds());
  // In place: a pod's document (its managedFields included) is not copied to set two fields.
  auto result = store->Change(
      *pods, t.ns, name,
      [&](Json& pod) -> Result<bool> {
        const Json& meta = std::as_const(pod)["metadata"];
        if (!uid.empty() && meta.value("uid", "") != uid) {
          return Error{fmt::format("Operation cannot be fulfilled on pods/binding \"{}\": the UID "
                                   "in the precondition ({}) does not match the UID in record ({})."
                                   " The object might have been deleted and then recreated",
                                   name, uid, meta.value("uid", "")),
                       ErrorCode::kConflict};
        }
        const Json& spec = std::as_const(pod)["spec"];
        if (spec.contains("nodeName") && !spec["nodeName"].get<std::string>().empty()) {
          return Error{fmt::format("Operation cannot be fulfilled on pods/binding \"{}\": pod {} "
                                   "is already assigned to node \"{}\"",
                                   name, name, spec["nodeName"].get<std::string>()),
                       ErrorCode::kConflict};
        }
        if (meta.contains("deletionTimestamp")) {
          return Error{fmt::format("Operation cannot be fulfilled on pods/binding \"{}\": pod {} "
                                   "is being deleted, cannot be assigned to a host",
                                   name, name),
                       ErrorCode::kConflict};
        }
        // Every check before the first change: the pod is changed where it is stored. A status
        // or conditions of another shape (what an older write may have stored) is replaced.
        Json& status = pod["status"];
        if (!status.is_object()) status = Json::object();
        pod["spec"]["nodeName"] = node;
        Json& conds = status["conditions"];
        if (!conds.is_array()) conds = Json::array();
        // Copied from one built once: an initializer list is assembled again on every call.
        static const Json kScheduled = {{"type", "PodScheduled"},
                                        {"status", "True"},
                                        {"lastProbeTime", nullptr},
                                        {"lastTransitionTime", ""}};
        Json cond = kScheduled;
        cond["lastTransitionTime"] = now;
        bool replaced = false;
        for (auto& c : conds) {
          const Json& existing = c;
          if (existing.is_object() && existing.contains("type") &&
              existing["type"] == "PodScheduled") {
            c = cond;
            replaced = true;
          }
        }
        if (!replaced) conds.push_back(cond);
        return true;  // the spec changed: nodeName
      },
      req.Query("dryRun") == "All", Durability::kLater);
  if (!result.ok()) {
    if (result.error().code == ErrorCode::kNotFound) {
      return ErrorResponse(result.error(), "pods", name);
    }
    return ErrorResponse(result.error(), "pods/binding", name);
  }
  return AfterDurable(result->rv, SuccessStatus(201));
}

void Server::Impl::ReapLoop() {
  const auto ttl = options.event_ttl;
  const auto sweep_every = std::min<std::chrono::steady_clock::duration>(
      std::chrono::minutes(1), std::max<std::chrono::seconds>(ttl, std::chrono::seconds(1)));
  auto next_sweep = std::chrono::steady_clock::now() + sweep_every;
  std::unique_lock lock(reaper_mu);
  while (!stopping) {
    reaper_cv.wait_for(lock, std::chrono::milliseconds(500));
    auto now = std::chrono::steady_clock::now();
    if (ttl.count() > 0 && now >= next_sweep && !stopping) {
      next_sweep = now + sweep_every;
      lock.unlock();
      ExpireEvents(*store, NowUnixSeconds() - ttl.count());
      lock.lock();
    }
    std::vector<std::shared_ptr<ActiveWatch>> finished;
    {
      std::lock_guard wl(watches_mu);
      for (auto it = watches.begin(); it != watches.end();) {
        auto& w = *it;
        if (!w->sink->closed() && now >= w->deadline) w->sink->Close();
        if (w->sink->closed() || stopping) {
          finished.push_back(w);
          it = watches.erase(it);
          continue;
        }
        if (w->bookmarks && now - w->last_bookmark > std::chrono::seconds(10)) {
          w->last_bookmark = now;
          Json bm = {{"type", "BOOKMARK"},
                     {"object",
                      {{"kind", w->kind},
                       {"apiVersion", w->api_version},
                       {"metadata", {{"resourceVersion", std::to_string(store->revision())}}}}}};
          w->sink->Write(bm.dump() + "\n");
        }
        ++it;
      }
    }
    // Unregistering takes the store's lock: outside the watch list's lock.
    lock.unlock();
    for (auto& w : finished) {
      w->sink->Close();
      w->registration.reset();
    }
    finished.clear();
    lock.lock();
  }
}

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() { Stop(); }

uint16_t Server::port() const { return impl_->http ? impl_->http->port() : 0; }
std::string Server::url() const {
  return fmt::format(
      "{}://{}:{}", impl_->options.plain_http ? "http" : "https",
      impl_->options.bind_address == "0.0.0.0" ? "127.0.0.1" : impl_->options.bind_address, port());
}
std::string Server::kubeconfig_path() const { return impl_->kubeconfig_path; }
std::string Server::token() const { return impl_->token; }
Store& Server::store() { return *impl_->store; }
std::string Server::Metrics() { return impl_->request_metrics.Expose(*impl_->store); }
NamespaceDeleter& Server::namespace_deleter() { return *impl_->namespace_deleter; }

void Server::Stop() {
  if (!impl_) return;
  {
    std::lock_guard lock(impl_->reaper_mu);
    if (impl_->stopping) return;
    impl_->stopping = true;
  }
  impl_->reaper_cv.notify_all();
  if (impl_->reaper.joinable()) impl_->reaper.join();
  if (impl_->namespace_deleter) impl_->namespace_deleter->Stop();
  if (impl_->crd_controller) impl_->crd_controller->Stop();
  {
    std::lock_guard wl(impl_->watches_mu);
    for (auto& w : impl_->watches) {
      w->sink->Close();
      w->registration.reset();
    }
    impl_->watches.clear();
  }
  if (impl_->http) impl_->http->Stop();
}

Result<std::unique_ptr<Server>> Server::Start(const ServerOptions& options) {
  namespace fs = std::filesystem;
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  std::error_code ec;
  fs::create_directories(options.data_dir, ec);
  if (ec)
    return Error{
        fmt::format("{}: cannot create the data directory: {}", options.data_dir, ec.message())};
  chmod(options.data_dir.c_str(), 0700);
  const std::string dir = options.data_dir;
  auto store = Store::Open({.path = dir + "/state.db", .event_window = options.watch_window});
  if (!store.ok()) return store.error();
  impl->store = std::move(store).value();

  // Credentials: generated once, kept in the data directory.
  if (auto r = ReadFile(dir + "/token", &impl->token); !r.ok() || impl->token.empty()) {
    unsigned char raw[24];
    RAND_bytes(raw, sizeof(raw));
    std::string hex;
    for (unsigned char c : raw) hex += fmt::format("{:02x}", c);
    impl->token = hex;
    if (auto w = WritePrivateFile(dir + "/token", impl->token); !w.ok()) return w.error();
  }
  while (!impl->token.empty() && (impl->token.back() == '\n' || impl->token.back() == ' ')) {
    impl->token.pop_back();
  }
  net::HttpServerOptions http_opts;
  http_opts.bind_address = options.bind_address;
  http_opts.port = options.port;
  http_opts.threads = options.threads > 0
                          ? options.threads
                          : static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  // Writes answer once durable without holding their I/O thread (AfterDurable), so a
  // connection can stay on one thread from read to write: no hand-off between threads per
  // request, and each wake-up serves every connection of the thread that is ready.
  http_opts.pin_connections = true;
  // An unauthenticated request is answered from its head: its body is not read.
  const Impl* judge = impl.get();
  http_opts.check_head = [judge](const HttpRequest& head) -> std::optional<HttpResponse> {
    if (judge->Authorized(head)) return std::nullopt;
    return ErrorResponse(Error{"Unauthorized", ErrorCode::kUnauthorized});
  };
  if (!options.plain_http) {
    net::PemPair ca, serving;
    if (!ReadFile(dir + "/ca.crt", &ca.cert_pem).ok() ||
        !ReadFile(dir + "/ca.key", &ca.key_pem).ok()) {
      auto gen = net::GenerateCa("berth-ca");
      if (!gen.ok()) return gen.error();
      ca = *gen;
      if (auto w = WritePrivateFile(dir + "/ca.key", ca.key_pem); !w.ok()) return w.error();
      if (auto w = WritePrivateFile(dir + "/ca.crt", ca.cert_pem); !w.ok()) return w.error();
    }
    if (!ReadFile(dir + "/server.crt", &serving.cert_pem).ok() ||
        !ReadFile(dir + "/server.key", &serving.key_pem).ok()) {
      std::vector<std::string> hosts = {"127.0.0.1", "localhost", "::1"};
      if (options.bind_address != "127.0.0.1" && options.bind_address != "0.0.0.0") {
        hosts.push_back(options.bind_address);
      }
      auto gen = net::GenerateServingCert(ca, "berth-apiserver", hosts);
      if (!gen.ok()) return gen.error();
      serving = *gen;
      if (auto w = WritePrivateFile(dir + "/server.key", serving.key_pem); !w.ok())
        return w.error();
      if (auto w = WritePrivateFile(dir + "/server.crt", serving.cert_pem); !w.ok()) {
        return w.error();
      }
    }
    impl->ca_pem = ca.cert_pem;
    http_opts.tls = net::TlsServerConfig{serving.cert_pem, serving.key_pem};
  }
  if (auto ok = BootstrapCluster(*impl->store, impl->ca_pem); !ok.ok()) {
    return Error{fmt::format("{}: cannot create the cluster's built-in objects: {}", dir,
                             ok.error().message)};
  }
  // Finishes the namespace deletions a previous run left, and those asked for from now on.
  NamespaceDeleterOptions deleter_options;
  deleter_options.log = [](const std::string& what) {
    static observe::Logger logger;
    logger.Error("Namespace deletion failed; retrying", {observe::KV::Str("err", what)});
  };
  impl->namespace_deleter = std::make_unique<NamespaceDeleter>(*impl->store, deleter_options);
  if (auto ok = impl->namespace_deleter->Start(); !ok.ok()) return ok.error();
  impl->crd_controller = std::make_unique<CrdController>(*impl->store);
  if (auto ok = impl->crd_controller->Start(); !ok.ok()) return ok.error();
  Impl* raw = impl.get();
  auto http = net::HttpServer::Start(http_opts, [raw](HttpRequest& req) {
    return raw->request_metrics.Serve(req, [raw](HttpRequest& r) { return raw->Handle(r); });
  });
  if (!http.ok()) return http.error();
  impl->http = std::move(http).value();
  impl->reaper = std::thread([raw] { raw->ReapLoop(); });
  auto server = std::unique_ptr<Server>(new Server(std::move(impl)));

  // kubeconfig for kubectl and the scheduler.
  Json cluster = {{"server", server->url()}};
  if (!options.plain_http) cluster["certificate-authority-data"] = Base64(server->impl_->ca_pem);
  Json kubeconfig = {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"clusters", {{{"name", "berth"}, {"cluster", cluster}}}},
      {"users", {{{"name", kAdminUser}, {"user", {{"token", server->impl_->token}}}}}},
      {"contexts",
       {{{"name", "berth"},
         {"context", {{"cluster", "berth"}, {"user", kAdminUser}, {"namespace", "default"}}}}}},
      {"current-context", "berth"},
      {"preferences", Json::object()}};
  server->impl_->kubeconfig_path = dir + "/kubeconfig";
  if (auto w = WritePrivateFile(server->impl_->kubeconfig_path, kubeconfig.dump(2) + "\n");
      !w.ok()) {
    return w.error();
  }
  return server;
}

}  // namespace berth::apiserver
