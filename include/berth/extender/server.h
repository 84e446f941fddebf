// The extender SDK: an HTTP(S) server that speaks kube-scheduler's extender protocol, so a
// scheduler extender is a few typed handlers:
//
//   berth::extender::ExtenderServer server;
//   server.Filter("filter", [](const v1::ExtenderArgs& args) { ... return result; });
//   return server.ServeUntilSignal({.port = 8888});
//
// Any scheduler speaking the protocol (Berth, kube-scheduler) can call it: configure
// `urlPrefix: http://host:port` and the verbs registered here.
//
// Threads: handlers are called on the server's I/O threads, concurrently for different
// connections, so they must be thread-safe. Each connection is served by one thread (dealt
// round-robin): a handler that blocks delays the other connections of its thread. A handler that
// throws answers HTTP 500 with the exception's message; a request body that does not decode answers
// 400 naming the field. Endpoints besides the verbs: GET /healthz ("ok").
//
// Filter and prioritize handlers may be handed the very arguments (and pod) decoded for an
// earlier request with the same text: a scheduler usually sends prioritize what it sent filter.
// They are immutable; copy what a handler keeps beyond its call.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "berth/api/result.h"
#include "berth/export.h"
#include "berth/extender/v1.h"

namespace berth::extender {

struct BERTH_EXPORT ServerOptions {
  std::string bind_address = "127.0.0.1";
  uint16_t port = 0;  // 0: an ephemeral port (see ExtenderServer::port)
  // Both set: serve HTTPS with this certificate chain and key (PEM text).
  std::string tls_cert_pem;
  std::string tls_key_pem;
  int threads = 2;
};

class BERTH_EXPORT ExtenderServer {
 public:
  using FilterHandler = std::function<v1::ExtenderFilterResult(const v1::ExtenderArgs&)>;
  using PrioritizeHandler = std::function<v1::HostPriorityList(const v1::ExtenderArgs&)>;
  using BindHandler = std::function<v1::ExtenderBindingResult(const v1::ExtenderBindingArgs&)>;
  using PreemptHandler =
      std::function<v1::ExtenderPreemptionResult(const v1::ExtenderPreemptionArgs&)>;

  ExtenderServer();
  ~ExtenderServer();  // stops the server
  ExtenderServer(const ExtenderServer&) = delete;
  ExtenderServer& operator=(const ExtenderServer&) = delete;

  // Register before Start. `verb` is the last path segment the scheduler posts to (its
  // filterVerb, prioritizeVerb, bindVerb or preemptVerb).
  ExtenderServer& Filter(std::string verb, FilterHandler handler);
  ExtenderServer& Prioritize(std::string verb, PrioritizeHandler handler);
  ExtenderServer& Bind(std::string verb, BindHandler handler);
  ExtenderServer& Preempt(std::string verb, PreemptHandler handler);

  // Binds and serves in the background. Errors name the address.
  VoidResult Start(const ServerOptions& options);
  uint16_t port() const;
  // "http://127.0.0.1:PORT" (or https): the urlPrefix to configure.
  std::string url() const;
  // Stops accepting, closes connections and joins the I/O threads. Idempotent.
  void Stop();

  // For main(): starts, logs the URL to stderr, waits for SIGINT or SIGTERM, stops. Returns a
  // process exit code (1 when it could not start, with the error on stderr).
  int ServeUntilSignal(const ServerOptions& options);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The names of the nodes in `args`, whichever form the scheduler sent (names or full nodes).
BERTH_EXPORT std::vector<std::string> NodeNamesOf(const v1::ExtenderArgs& args);

// A filter result in the form the scheduler expects for `args`: names when it sent names
// (nodeCacheCapable), else the nodes of `args` whose names are in `passing`.
BERTH_EXPORT v1::ExtenderFilterResult FilterResultFor(const v1::ExtenderArgs& args,
                                                      const std::vector<std::string>& passing);

}  // namespace berth::extender
