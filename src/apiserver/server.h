// The embedded API server of `berth up`: a kubectl-compatible Kubernetes API over HTTPS, backed
// by the persistent Store.
//
// On first start in a data directory it generates a CA, a serving certificate and an admin
// bearer token (files mode 0600) and writes `kubeconfig` beside them; later starts reuse them
// and resume the stored state. Requests need the token, except /healthz, /livez, /readyz and
// /version (public, as kube-apiserver's default RBAC makes them). Callers may mount extra
// routes outside the Kubernetes API (ServerOptions::extra_routes); the server knows nothing of
// what they serve.
//
// Threads: HTTP I/O threads call the handlers (each connection stays on one); a write's reply
// waits for the store's commit thread without holding its I/O thread; a reaper thread ends watches
// that timed out or whose clients went away, sends bookmarks and deletes expired events.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "apiserver/api_error.h"
#include "apiserver/validation.h"
#include "berth/api/result.h"
#include "net/http_server.h"

namespace berth::apiserver {

class NamespaceDeleter;
class Store;

// A handler mounted beside the Kubernetes API. `prefix` ("/ui") matches that path and every
// path under it ("/ui/...", trailing slashes ignored). Called on an HTTP I/O thread, like the
// API's own handlers, so it may block only briefly.
struct ExtraRoute {
  std::string prefix;
  bool is_public = false;  // served without the bearer token
  std::function<net::HttpResponse(net::HttpRequest&, Store&)> handler;
};

struct ServerOptions {
  std::string data_dir;  // required
  std::string bind_address = "127.0.0.1";
  uint16_t port = 6443;     // 0: ephemeral
  bool plain_http = false;  // tests and `kubectl proxy`-like setups only
  // I/O threads, each serving its share of the connections (0: one per core, at least two).
  // Writes do not hold them while their group commits (the reply is sent when durable), so
  // more threads than cores only add thread switches.
  int threads = 0;
  size_t watch_window = 200000;  // changes kept for watches to resume from
  // Events are deleted this long after their last write (kube-apiserver's --event-ttl,
  // event_expiry.h); checked every minute, or every TTL when shorter. 0: kept.
  std::chrono::seconds event_ttl{3600};
  // Checked before the API's routes, in order: the first matching prefix wins, so a
  // token-protected "/x/api" must come before a public "/x".
  std::vector<ExtraRoute> extra_routes;
  // Gated validation (--feature-gates): TaintTolerationComparisonOperators.
  ValidationOptions validation;
  // GenericWorkload: serve scheduling.k8s.io/v1beta1 Workload and PodGroup (workload_api.h).
  bool workload_api = false;
  // Set: generated names and UIDs from this seed (StoreOptions::seed).
  std::optional<uint64_t> seed;
};

class Server {
 public:
  static Result<std::unique_ptr<Server>> Start(const ServerOptions& options);
  ~Server();
  uint16_t port() const;
  // "https://127.0.0.1:PORT"
  std::string url() const;
  std::string kubeconfig_path() const;
  std::string token() const;
  Store& store();
  // The server's metrics (request_metrics.h) in the Prometheus text format.
  std::string Metrics();
  // Watch streams open now (a simulated cluster waits for its informers' to be registered).
  size_t ActiveWatches();
  // Removes the content of Terminating namespaces, then the namespaces (namespace_deleter.h).
  NamespaceDeleter& namespace_deleter();
  void Stop();

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth::apiserver
