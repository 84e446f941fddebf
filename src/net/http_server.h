// HttpServer: HTTP/1.1 (optionally TLS) on Boost.Beast, shared by every server Berth runs: the
// embedded API server, the scheduler's health and metrics endpoints, the extender SDK.
//
// Threads: the server runs `threads` I/O threads. The handler is called on one of them, once
// per request, concurrently for different connections; it may block briefly, not for long
// (with `pin_connections`, not even that: see HttpServerOptions). A handler whose answer
// waits for something (a durable write) returns a deferred response instead of blocking. A
// streaming response (watch) hands the handler's producer a StreamSink whose Write may be called
// from any thread; chunks are queued and written in order by the connection's I/O thread (the
// chunks queued at that moment in one write). A sink whose client is gone or too slow (more than
// `max_stream_backlog_bytes` queued) reports closed, and its producer should drop it; a read
// stays posted while a stream runs, so a client that leaves is noticed at once, not at the
// next write.
//
// Limits (HttpServerOptions): requests are judged by their head before their body is read
// (check_head), header and body have deadlines of their own, connections are capped, and a
// malformed request is answered with its status (400, 413, 414, 431, 501) before the
// connection is closed.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "berth/api/result.h"

namespace berth::net {

struct TlsServerConfig {
  std::string cert_pem;  // serving certificate (chain)
  std::string key_pem;
};

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // as received: path and query
  std::string path;    // percent-decoded path without the query
  // Query parameters, percent-decoded ('+' is a space), in order.
  std::vector<std::pair<std::string, std::string>> query;
  // Header names lower-cased, in order received (a handful: a flat list is cheaper to build
  // and search than a map).
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string remote_address;

  // The first value of a query parameter, or nullopt.
  std::optional<std::string> Query(std::string_view name) const;
  // A header value by lower-case name (the last, when repeated), or "".
  std::string Header(std::string_view lower_name) const;
};

// Where a streaming response writes. Thread-safe.
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  // Queues a chunk. Returns false once the stream is closed (client gone, too slow, or Close()).
  virtual bool Write(std::string chunk) = 0;
  // The same for a chunk shared by many streams (a watch event sent to every watcher): it is
  // queued without a copy.
  virtual bool Write(std::shared_ptr<const std::string> chunk) = 0;
  // Queues the parts as one chunk (no other write comes between them), each without a copy: a
  // watch event is a shared object's text between a prefix and a suffix.
  virtual bool Write(std::span<const std::shared_ptr<const std::string>> parts) = 0;
  // Ends the response after the queued chunks.
  virtual void Close() = 0;
  virtual bool closed() const = 0;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  // One header line per pair; a name may repeat (Warning).
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // Set for a streaming (chunked) response: called once, after the headers are sent, on the
  // I/O thread; it keeps the sink and writes to it later from any thread.
  std::function<void(std::shared_ptr<StreamSink>)> stream;
  // Set for an answer that is not ready when the handler returns (a write waiting for its
  // commit): called once on the I/O thread after the handler returns, with `reply`, which must
  // be called exactly once, from any thread, with the response to send (not a stream). Its
  // headers follow this response's. The connection's next request is read after it is sent;
  // the I/O thread serves other connections meanwhile.
  std::function<void(std::function<void(HttpResponse)> reply)> deferred;
};

using HttpHandler = std::function<HttpResponse(HttpRequest&)>;

// Judges a request by its head (method, target, path, query, headers; the body is not read yet):
// nullopt lets it through to the handler; a response refuses it (a 401), and the connection is
// closed after that answer. A refused request's body is read only when it is small
// (refused_body_bytes): an unauthenticated client costs no more than its header.
using HeadCheck = std::function<std::optional<HttpResponse>(const HttpRequest& head)>;

struct HttpServerOptions {
  std::string bind_address = "127.0.0.1";
  uint16_t port = 0;  // 0: an ephemeral port
  std::optional<TlsServerConfig> tls;
  int threads = 4;
  size_t max_body_bytes = 64 << 20;  // 413 beyond
  size_t max_stream_backlog_bytes = 64 << 20;
  int idle_timeout_seconds = 120;  // keep-alive connections idle longer are closed
  // A request's header must arrive within header_timeout of its first byte (of the connection,
  // for the first request, including the TLS handshake), and its body within body_timeout of
  // the header's end: a client that sends slowly is cut off however steadily it trickles.
  std::chrono::milliseconds header_timeout{32000};
  std::chrono::milliseconds body_timeout{60000};
  size_t max_header_bytes = 32 << 10;  // request line and fields: 431 beyond (414 for the line)
  size_t max_target_bytes = 16 << 10;  // the request line's target (path and query): 414 beyond
  // Connections open at once; one more is closed as soon as it is accepted.
  size_t max_connections = 4096;
  HeadCheck check_head;
  size_t refused_body_bytes = 4 << 10;
  // Each I/O thread runs its own event loop and serves its connections (dealt round-robin) from
  // first read to last write: a request costs one thread wake-up, with no hand-off of its
  // completions between threads. The price: a handler that blocks delays the other connections
  // of its thread, so this suits servers with few busy keep-alive connections and quick
  // handlers (extenders). Off: all threads share one loop and take any connection's next step.
  bool pin_connections = false;
};

class HttpServer {
 public:
  // Binds and starts serving. Errors name the address.
  static Result<std::unique_ptr<HttpServer>> Start(const HttpServerOptions& options,
                                                   HttpHandler handler);
  ~HttpServer();
  uint16_t port() const;
  // Stops accepting, closes connections (streams end) and joins the I/O threads. Idempotent.
  void Stop();
  // Connections open now, and of them those with a streaming response under way.
  size_t open_connections() const;
  size_t open_streams() const;

 private:
  struct Impl;
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Percent-decodes `s`; with `plus_is_space`, '+' becomes ' ' (query strings).
std::string PercentDecode(std::string_view s, bool plus_is_space);

}  // namespace berth::net
