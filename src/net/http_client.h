// HttpClient: HTTP/1.1 (optionally TLS) requests to one server on Boost.Beast, with a pool of
// keep-alive connections (no handshake per request), per-request timeouts and streamed
// responses (watches).
//
// Threads: Do() and Stream() may be called from any number of threads at once; each call uses
// its own pooled connection, and does its I/O on the calling thread (no hand-off to another
// thread, no event loop): plain or TLS, the socket is non-blocking and each wait is a poll()
// bounded by the deadline. StreamHandle::Cancel() may be called from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/typed_result.h"
#include "berth/api/result.h"

namespace berth::net {

// The error of a request, with what is known of its fate.
struct TransportError : Error {
  TransportError() = default;
  explicit TransportError(Error e, bool never_sent = false)
      : Error(std::move(e)), never_sent(never_sent) {}
  // The connection could not be made: the request never reached the server, so sending it
  // again is safe whatever it was.
  bool never_sent = false;
};
template <class T>
using TransportResult = TypedResult<T, TransportError>;

struct HttpClientOptions {
  std::string server;  // "https://host:port" or "http://host:port", optionally with a path prefix
  std::string ca_pem;  // trust these CAs; empty: the system's
  bool insecure_skip_verify = false;
  std::string server_name;  // TLS name to verify, default the URL's host
  std::string client_cert_pem, client_key_pem;
  std::string bearer_token;
  std::chrono::milliseconds timeout{30000};
  std::string user_agent = "berth";
};

struct ClientResponse {
  int status = 0;
  std::string body;
  std::string content_type;
  std::string retry_after;  // the Retry-After header, if any
};

// One request of a pipelined batch (HttpClient::DoPipelined).
struct ClientRequest {
  std::string_view method, target, body;
  std::string_view content_type = "application/json";
};

// Cancels a running Stream() from another thread.
class StreamHandle {
 public:
  StreamHandle();
  ~StreamHandle();
  void Cancel();
  bool cancelled() const;

 private:
  friend class HttpClient;
  struct State;
  std::shared_ptr<State> state_;
};

class HttpClient {
 public:
  // Errors name the server (bad URL, unreadable CA or client certificate).
  static Result<std::unique_ptr<HttpClient>> Create(const HttpClientOptions& options);
  ~HttpClient();

  // One request; `target` is the path and query after the server's prefix. Connection
  // failures and timeouts are errors (kUnavailable / kTimeout) naming the server; any HTTP
  // status is a response.
  TransportResult<ClientResponse> Do(
      std::string_view method, std::string_view target, std::string_view body = {},
      std::string_view content_type = "application/json",
      std::string_view accept = "application/json",
      std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  // Several requests sent together on one connection (HTTP/1.1 pipelining) and answered in
  // order: one write and a few reads for the lot, instead of a round trip (and a wake-up of
  // each side) per request. One result per request. When the connection fails part way, the
  // requests whose answers did not arrive are errors (kUnavailable / kTimeout): they may or may
  // not have been carried out. For writes that are safe to repeat (events with a chosen name).
  std::vector<TransportResult<ClientResponse>> DoPipelined(
      std::span<const ClientRequest> requests,
      std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  // A streaming GET: `on_line` receives every newline-terminated line of the body as it
  // arrives (return false to stop). Returns the HTTP status (a non-200 status's body is passed
  // whole to `on_line`), when the server ends the stream, the handle is cancelled, or no data
  // arrives for `idle_timeout`.
  Result<int> Stream(std::string_view target, std::string_view accept,
                     const std::function<bool(std::string_view line)>& on_line,
                     StreamHandle* handle, std::chrono::milliseconds idle_timeout);

  const std::string& server() const;

  struct Impl;

 private:
  explicit HttpClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Percent-encodes `s` for a URL query value (unreserved characters stay).
std::string QueryEscape(std::string_view s);

}  // namespace berth::net
