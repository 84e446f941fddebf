// What the pieces of the API server share, and nothing outside them includes: Server::Impl and
// the helpers more than one piece calls.
//
// The pieces: server.cc (start, credentials, stop), server_routing.cc (authorization, paths to
// handlers), server_list_watch.cc (gets, lists, watch streams and their reaper),
// server_requests.cc (query parameters and request bodies), server_responses.cc (Status
// bodies and replies), server_writes.cc (create, update), server_patch.cc, server_delete.cc
// (delete, deletecollection, DeleteOptions) and server_subresources.cc (binding, scale, log,
// eviction).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "apiserver/admission.h"
#include "apiserver/crd_controller.h"
#include "apiserver/field_validation.h"
#include "apiserver/managed_fields.h"
#include "apiserver/namespace_deleter.h"
#include "apiserver/request_metrics.h"
#include "apiserver/server.h"
#include "apiserver/store.h"
#include "apiserver/table.h"
#include "net/http_server.h"

namespace berth::apiserver {

// A request addressed to a resource.
struct Target {
  const ResourceInfo* resource = nullptr;
  std::string ns;    // namespaced resources
  std::string name;  // empty: collection
  std::string subresource;
};

// What a DELETE's DeleteOptions body and query ask for; dryRun may come in either.
struct DeleteRequest {
  DeletePreconditions preconditions;
  bool dry_run = false;
  std::optional<int64_t> grace_period_seconds;
  // propagationPolicy (or the older orphanDependents): Orphan, Background or Foreground.
  std::optional<std::string> propagation;
};

// One open watch stream.
struct ActiveWatch {
  std::shared_ptr<net::StreamSink> sink;
  std::unique_ptr<WatchRegistration> registration;
  std::chrono::steady_clock::time_point deadline;
  bool bookmarks = false;
  std::string kind, api_version;
  std::chrono::steady_clock::time_point last_bookmark;
};

// ---------------------------------------------------------------- replies (server_responses.cc)

// kube-apiserver's Status for an error; `kind` and `name` fill its details.
nlohmann::json StatusBody(const ApiError& e, const std::string& kind = "",
                          const std::string& name = "");
net::HttpResponse ErrorResponse(const ApiError& e, const std::string& kind = "",
                                const std::string& name = "");
net::HttpResponse JsonResponse(int status, const std::string& body);
// Written as text: every binding is answered with one.
net::HttpResponse SuccessStatus(int code);
// A conflict of server-side apply: kube-apiserver's Status, one cause per field.
net::HttpResponse ApplyConflictResponse(const Error& e,
                                        const std::vector<FieldConflict>& conflicts);
// `resp` with the objects of custom resource `r` in it as version `r` serves them (stored
// objects may carry another version's apiVersion), once it is ready.
net::HttpResponse AsServedVersion(const ResourceInfo& r, net::HttpResponse resp);
// Adds one Warning header per distinct message (kubectl prints each as "Warning: ...").
net::HttpResponse WithWarnings(net::HttpResponse r, const std::vector<std::string>& warnings);

// ---------------------------------------------------------------- requests (server_requests.cc)

// Go's strconv.ParseBool (Python sends "True").
bool ParseBool(const std::optional<std::string>& v);
// Whether the client asked for a Table (kubectl get).
bool WantsTable(const net::HttpRequest& req);
IncludeObject IncludeFor(const net::HttpRequest& req);
// The labelSelector and fieldSelector of a request as one predicate (null: everything).
Result<ObjectFilter> SelectorFilter(const net::HttpRequest& req, const ResourceInfo& r);
// Who a write is recorded for in managedFields: the fieldManager parameter, else the product
// of the user agent (kube-apiserver's rule: "kubectl/v1.32.0 (linux/amd64)" is "kubectl").
FieldManagerContext ManagerFor(const net::HttpRequest& req, const ResourceInfo& r,
                               const std::string& subresource);
// Deeper bodies are refused, as the document parser refuses them: the copies and encoders
// downstream recurse.
inline constexpr size_t kMaxBodyDepth = 512;
// Whether `body` is JSON starting with `open` ('{' or '[') after white space.
bool StartsWithJson(std::string_view body, char open);
std::string Join(const std::vector<std::string>& parts, std::string_view sep);
// The string at obj[name], or empty.
std::string StringField(const nlohmann::json& obj, const char* name);

// ---------------------------------------------------------------- writes (server_writes.cc)

// Keeps the stored status when the main resource is written (status has its own subresource),
// and everything but status when the status subresource is.
nlohmann::json SplitStatus(const ResourceInfo& res, const std::string& subresource,
                           const nlohmann::json& current, nlohmann::json next);
// A UID in an update's body is a precondition (409 when it is not the stored object's); one in a
// patched object is a change of an immutable field (422).
VoidResult CheckBodyUid(const ResourceInfo& res, std::string_view ns, std::string_view name,
                        const nlohmann::json& current, const nlohmann::json& body);
VoidResult CheckPatchedUid(const ResourceInfo& res, const nlohmann::json& current,
                           const nlohmann::json& patched);

// ---------------------------------------------------------------- deletions (server_delete.cc)

// Pods are deleted gracefully (pod_deletion.h); every other kind at once.
GraceFn GraceFor(const ResourceInfo& r, const DeleteRequest& opts);
// DeleteOptions (a DELETE's body, an Eviction's deleteOptions) into `out`.
VoidResult ReadDeleteOptions(const nlohmann::json& opts, DeleteRequest& out);

// ---------------------------------------------------------------- Server::Impl

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

  // ---- routing (server_routing.cc)

  net::HttpResponse Handle(net::HttpRequest& req);
  // A public path, or the token.
  bool Authorized(const net::HttpRequest& req) const;
  // The paths outside the resources (health checks, version, discovery, OpenAPI), or nullopt.
  std::optional<net::HttpResponse> ServeNonResource(const net::HttpRequest& req,
                                                    const std::string& path);
  // The request's method and subresource, to the step that serves it.
  net::HttpResponse HandleResource(net::HttpRequest& req, const Target& t);

  // ---- reads and watches (server_list_watch.cc)

  net::HttpResponse SingleObject(net::HttpRequest& req, const Target& t, const StoredObject& so,
                                 int status);
  net::HttpResponse List(net::HttpRequest& req, const Target& t);
  net::HttpResponse Watch(net::HttpRequest& req, const Target& t);
  // The reaper thread: ends watches that timed out or whose clients went away, sends
  // bookmarks and deletes expired events.
  void ReapLoop();

  // ---- request bodies (server_requests.cc)

  Result<nlohmann::json> DecodeBody(const net::HttpRequest& req,
                                    std::vector<std::string>* duplicates = nullptr);
  // Decodes a create or update body of group/v1 `kind` and checks its fields as `fv` asks; with
  // Warn the problems become `warnings`.
  Result<nlohmann::json> DecodeChecked(const net::HttpRequest& req, std::string_view group,
                                       const std::string& kind, FieldValidation fv,
                                       std::vector<std::string>* warnings);

  // ---- writes (server_writes.cc)

  net::HttpResponse Create(net::HttpRequest& req, const Target& t);
  net::HttpResponse CreateObject(net::HttpRequest& req, const Target& t, nlohmann::json obj);
  net::HttpResponse Update(net::HttpRequest& req, const Target& t);
  // PATCH of every type: JSON patch, merge patch, strategic merge patch, server-side apply
  // (server_patch.cc).
  net::HttpResponse Patch(net::HttpRequest& req, const Target& t);
  // A snapshot of the PriorityClasses, taken before the write enters the store: admission runs
  // inside Store::Mutate, under the store's lock, where reading the store again would deadlock.
  PriorityClassLookup PriorityClasses();
  // The classes for a write of `res`: only pods and priority classes consult them, so other
  // writes (a node Lease's renewal, 10,000 a second at 100,000 nodes) skip listing them.
  PriorityClassLookup PriorityClassesFor(const ResourceInfo& res);
  // `r`, sent once revision `rv` is durable (a storage failure is answered instead). The I/O
  // thread serves other requests meanwhile.
  net::HttpResponse AfterDurable(int64_t rv, net::HttpResponse r);

  // ---- deletions (server_delete.cc)

  net::HttpResponse Delete(net::HttpRequest& req, const Target& t);
  // The garbage collector's finalizers a DELETE's propagationPolicy asks for, set before the
  // deletion marks the object.
  VoidResult SetGcFinalizers(const ResourceInfo& r, const std::string& ns, const std::string& name,
                             const DeleteRequest& opts);
  net::HttpResponse DeleteCollection(net::HttpRequest& req, const Target& t);

  // ---- subresources (server_subresources.cc)

  net::HttpResponse Bind(net::HttpRequest& req, const Target& t, const nlohmann::json& binding);
  net::HttpResponse Scale(net::HttpRequest& req, const Target& t);
  net::HttpResponse Log(net::HttpRequest& req, const Target& t);
  net::HttpResponse Evict(net::HttpRequest& req, const Target& t);

  uint16_t port() const { return http ? http->port() : 0; }
};

}  // namespace berth::apiserver
