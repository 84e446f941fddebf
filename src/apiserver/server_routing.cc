// Routing: who may call (the bearer token, public paths), the paths outside the resources
// (health checks, version, discovery, OpenAPI), and a resource request to the handler of its
// method and subresource.
#include <fmt/format.h>
#include <openssl/crypto.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "apiserver/crd_registry.h"
#include "apiserver/discovery.h"
#include "apiserver/field_validation.h"
#include "apiserver/openapi_v2.h"
#include "apiserver/openapi_v3.h"
#include "apiserver/query_params.h"
#include "apiserver/resource_path.h"
#include "apiserver/reviews.h"
#include "apiserver/server_internal.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

// The resource a path under /api or /apis addresses, if the server serves it there.
std::optional<Target> ResolveTarget(const std::string& path) {
  // /api/v1/... or /apis/<group>/<version>/...
  const std::optional<ResourcePath> p = ParseResourcePath(path);
  if (!p) return std::nullopt;
  Target t;
  t.ns = p->ns;
  t.name = p->name;
  t.subresource = p->subresource;
  t.resource = p->extra_segments ? nullptr : FindResource(p->group, p->version, p->plural);
  // A cluster-scoped resource is never under a namespace; a namespaced one is, except for a
  // list across all namespaces.
  if (t.resource && !t.ns.empty() && !t.resource->namespaced) t.resource = nullptr;
  if (t.resource && t.ns.empty() && t.resource->namespaced && !t.name.empty()) t.resource = nullptr;
  if (!t.resource) return std::nullopt;
  if (!t.subresource.empty() &&
      std::find(t.resource->subresources.begin(), t.resource->subresources.end(), t.subresource) ==
          t.resource->subresources.end()) {
    return std::nullopt;
  }
  return t;
}

}  // namespace

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
  if (auto served = ServeNonResource(req, path)) return std::move(*served);
  const std::optional<Target> target = ResolveTarget(path);
  if (!target) {
    return ErrorResponse(
        Error{"the server could not find the requested resource", ErrorCode::kNotFound});
  }
  const Target& t = *target;
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

std::optional<HttpResponse> Server::Impl::ServeNonResource(const HttpRequest& req,
                                                           const std::string& path) {
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
  return std::nullopt;
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

}  // namespace berth::apiserver
