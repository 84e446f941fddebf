#include "net/http_client.h"

#include <fmt/format.h>
#include <openssl/ssl.h>
#include <poll.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>
#include <mutex>
#include <optional>
#include <vector>

#include "net/http_wire.h"

namespace berth::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

constexpr int kMaxIdle = 64;  // pooled keep-alive connections

// A connection's socket for synchronous I/O on the calling thread, under TLS or not: the
// socket is non-blocking and every wait is a poll() bounded by the current deadline. A request
// then costs the system calls it needs (write, poll, read) instead of turns of an event loop
// with a deadline timer armed and disarmed around each step. A stream is cancelled from
// another thread by shutting its socket down, which ends the poll.
class DeadlineSocket {
 public:
  using lowest_layer_type = tcp::socket;
  using executor_type = tcp::socket::executor_type;

  explicit DeadlineSocket(tcp::socket socket) : socket_(std::move(socket)) {}

  void set_deadline(std::chrono::steady_clock::time_point deadline) { deadline_ = deadline; }
  tcp::socket& lowest_layer() { return socket_; }
  executor_type get_executor() { return socket_.get_executor(); }

  template <class Buffers>
  size_t write_some(const Buffers& buffers, boost::system::error_code& ec) {
    awaiting_answer_ = true;
    for (;;) {
      const size_t n = socket_.write_some(buffers, ec);
      if (ec != asio::error::would_block) return n;
      if (!Wait(POLLOUT, ec)) return 0;
    }
  }

  template <class Buffers>
  size_t read_some(const Buffers& buffers, boost::system::error_code& ec) {
    // Right after a request its answer cannot be there yet: wait before reading.
    if (awaiting_answer_) {
      awaiting_answer_ = false;
      if (!Wait(POLLIN, ec)) return 0;
    }
    for (;;) {
      const size_t n = socket_.read_some(buffers, ec);
      if (ec != asio::error::would_block) return n;
      if (!Wait(POLLIN, ec)) return 0;
    }
  }

  // The throwing forms complete the stream concepts; HttpClient calls only the ones above.
  template <class Buffers>
  size_t write_some(const Buffers& buffers) {
    boost::system::error_code ec;
    const size_t n = write_some(buffers, ec);
    if (ec) boost::throw_exception(boost::system::system_error(ec));
    return n;
  }
  template <class Buffers>
  size_t read_some(const Buffers& buffers) {
    boost::system::error_code ec;
    const size_t n = read_some(buffers, ec);
    if (ec) boost::throw_exception(boost::system::system_error(ec));
    return n;
  }

 private:
  // Until the socket is ready for `events` (or has an error, which the next call reports);
  // false with beast::error::timeout at the deadline.
  bool Wait(short events, boost::system::error_code& ec) {
    for (;;) {
      const auto left = deadline_ - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) {
        ec = beast::error::timeout;
        return false;
      }
      pollfd p{socket_.native_handle(), events, 0};
      const int r = ::poll(
          &p, 1, static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count()));
      if (r > 0) return true;
      if (r < 0 && errno != EINTR) {
        ec.assign(errno, boost::system::system_category());
        return false;
      }
    }
  }

  tcp::socket socket_;
  std::chrono::steady_clock::time_point deadline_;
  bool awaiting_answer_ = false;
};

// One keep-alive connection, used by one thread at a time; all its I/O is synchronous on that
// thread (DeadlineSocket), under TLS or not. Its I/O context only hosts the socket and runs
// for the connect.
struct Connection {
  asio::io_context io;
  std::optional<DeadlineSocket> plain;
  std::optional<ssl::stream<DeadlineSocket>> tls;
  beast::flat_buffer buffer;

  // Reads are sized by the buffer's free capacity; large answers arrive in few reads.
  Connection() { buffer.reserve(64 << 10); }

  DeadlineSocket& socket() { return tls ? tls->next_layer() : *plain; }
  void set_deadline(std::chrono::steady_clock::time_point deadline) {
    socket().set_deadline(deadline);
  }
  void Shutdown() {
    boost::system::error_code ignored;
    socket().lowest_layer().shutdown(tcp::socket::shutdown_both, ignored);
  }
};

// The parts of an answer the callers read.
ClientResponse ToClientResponse(http::response<http::string_body>&& res) {
  ClientResponse out;
  out.status = res.result_int();
  out.body = std::move(res.body());
  out.content_type = std::string(res[http::field::content_type]);
  out.retry_after = std::string(res[http::field::retry_after]);
  return out;
}

}  // namespace

struct StreamHandle::State {
  std::mutex mu;
  Connection* conn = nullptr;
  bool cancelled = false;
};

StreamHandle::StreamHandle() : state_(std::make_shared<State>()) {}
StreamHandle::~StreamHandle() = default;

void StreamHandle::Cancel() {
  std::lock_guard lock(state_->mu);
  state_->cancelled = true;
  // The stream's thread is in poll() or about to be: a shut-down socket ends it at once. The
  // connection stays alive while registered here (Stream() unregisters it under this lock).
  if (state_->conn) state_->conn->Shutdown();
}

bool StreamHandle::cancelled() const {
  std::lock_guard lock(state_->mu);
  return state_->cancelled;
}

struct HttpClient::Impl {
  HttpClientOptions options;
  bool use_tls = false;
  std::string host, port, prefix;
  std::optional<ssl::context> tls;
  std::mutex pool_mu;
  std::vector<std::unique_ptr<Connection>> idle;

  TransportResult<std::unique_ptr<Connection>> Connect(std::chrono::milliseconds timeout) {
    auto c = std::make_unique<Connection>();
    tcp::resolver resolver(c->io);
    boost::system::error_code ec;
    auto endpoints = resolver.resolve(host, port, ec);
    if (ec) {
      return Error{fmt::format("{}: cannot resolve {}: {}", options.server, host, ec.message()),
                   ErrorCode::kUnavailable};
    }
    beast::tcp_stream connecting(c->io);
    connecting.expires_after(timeout);
    ec = asio::error::would_block;
    connecting.async_connect(endpoints,
                             [&](boost::system::error_code e, const tcp::endpoint&) { ec = e; });
    c->io.run();
    if (ec) {
      return TransportError(
          Error{fmt::format("{}: cannot connect: {}", options.server, ec.message()),
                ec == beast::error::timeout ? ErrorCode::kTimeout : ErrorCode::kUnavailable},
          /*never_sent=*/true);
    }
    tcp::socket socket = connecting.release_socket();
    socket.set_option(tcp::no_delay(true), ec);
    socket.non_blocking(true, ec);
    if (!use_tls) {
      c->plain.emplace(std::move(socket));
      return c;
    }
    c->tls.emplace(std::move(socket), *tls);
    c->set_deadline(std::chrono::steady_clock::now() + timeout);
    const std::string& name = options.server_name.empty() ? host : options.server_name;
    SSL_set_tlsext_host_name(c->tls->native_handle(), name.c_str());
    if (!options.insecure_skip_verify) {
      c->tls->set_verify_callback(ssl::host_name_verification(name));
    }
    c->tls->handshake(ssl::stream_base::client, ec);
    if (ec) {
      return Error{fmt::format("{}: TLS handshake failed: {}", options.server, ec.message()),
                   ErrorCode::kUnavailable};
    }
    return c;
  }

  TransportResult<std::unique_ptr<Connection>> Acquire(std::chrono::milliseconds timeout,
                                                       bool* reused) {
    {
      std::lock_guard lock(pool_mu);
      if (!idle.empty()) {
        auto c = std::move(idle.back());
        idle.pop_back();
        *reused = true;
        return c;
      }
    }
    *reused = false;
    return Connect(timeout);
  }

  void Release(std::unique_ptr<Connection> c) {
    std::lock_guard lock(pool_mu);
    if (idle.size() < static_cast<size_t>(kMaxIdle)) idle.push_back(std::move(c));
  }

  http::request<http::string_body> MakeRequest(std::string_view method, std::string_view target,
                                               std::string_view body, std::string_view content_type,
                                               std::string_view accept) {
    http::request<http::string_body> req;
    req.method_string(method);
    req.target(prefix + std::string(target));
    req.version(11);
    req.set(http::field::host, host);
    req.set(http::field::user_agent, options.user_agent);
    req.set(http::field::accept, accept);
    if (!options.bearer_token.empty()) {
      req.set(http::field::authorization, "Bearer " + options.bearer_token);
    }
    if (!body.empty()) {
      req.set(http::field::content_type, content_type);
      req.body() = std::string(body);
    }
    req.keep_alive(true);
    req.prepare_payload();
    return req;
  }

  template <class F>
  boost::system::error_code WithStream(Connection& c, F&& f) {
    if (c.tls) return f(*c.tls);
    return f(*c.plain);
  }
};

HttpClient::HttpClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpClient::~HttpClient() = default;

const std::string& HttpClient::server() const { return impl_->options.server; }

Result<std::unique_ptr<HttpClient>> HttpClient::Create(const HttpClientOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  std::string_view url = options.server;
  if (url.rfind("https://", 0) == 0) {
    impl->use_tls = true;
    url.remove_prefix(8);
  } else if (url.rfind("http://", 0) == 0) {
    url.remove_prefix(7);
  } else {
    return Error{
        fmt::format("server \"{}\": the URL must start with https:// or http://", options.server),
        ErrorCode::kInvalid};
  }
  size_t slash = url.find('/');
  std::string_view hostport = url.substr(0, slash);
  if (slash != std::string_view::npos) {
    impl->prefix = std::string(url.substr(slash));
    while (!impl->prefix.empty() && impl->prefix.back() == '/') impl->prefix.pop_back();
  }
  if (!hostport.empty() && hostport.front() == '[') {
    size_t close = hostport.find(']');
    impl->host = std::string(hostport.substr(1, close - 1));
    impl->port = close + 1 < hostport.size() ? std::string(hostport.substr(close + 2)) : "";
  } else {
    size_t colon = hostport.rfind(':');
    impl->host = std::string(hostport.substr(0, colon));
    if (colon != std::string_view::npos) impl->port = std::string(hostport.substr(colon + 1));
  }
  if (impl->port.empty()) impl->port = impl->use_tls ? "443" : "80";
  if (impl->host.empty()) {
    return Error{fmt::format("server \"{}\": no host in the URL", options.server),
                 ErrorCode::kInvalid};
  }
  if (impl->use_tls) {
    impl->tls.emplace(ssl::context::tls_client);
    boost::system::error_code ec;
    if (options.insecure_skip_verify) {
      impl->tls->set_verify_mode(ssl::verify_none);
    } else {
      impl->tls->set_verify_mode(ssl::verify_peer);
      if (!options.ca_pem.empty()) {
        impl->tls->add_certificate_authority(asio::buffer(options.ca_pem), ec);
        if (ec) {
          return Error{fmt::format("server {}: the certificate authority data is not a valid "
                                   "PEM certificate",
                                   options.server),
                       ErrorCode::kInvalid};
        }
      } else {
        impl->tls->set_default_verify_paths(ec);
      }
    }
    if (!options.client_cert_pem.empty()) {
      impl->tls->use_certificate_chain(asio::buffer(options.client_cert_pem), ec);
      if (!ec) {
        impl->tls->use_private_key(asio::buffer(options.client_key_pem), ssl::context::pem, ec);
      }
      if (ec) {
        return Error{fmt::format("server {}: the client certificate or key is not valid PEM: {}",
                                 options.server, ec.message()),
                     ErrorCode::kInvalid};
      }
    }
  }
  return std::unique_ptr<HttpClient>(new HttpClient(std::move(impl)));
}

TransportResult<ClientResponse> HttpClient::Do(std::string_view method, std::string_view target,
                                               std::string_view body, std::string_view content_type,
                                               std::string_view accept,
                                               std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) timeout = impl_->options.timeout;
  auto req = impl_->MakeRequest(method, target, body, content_type, accept);
  // A pooled connection the server (or something between) closed meanwhile fails on first use:
  // the request goes on the next one, and at last on a fresh connection. Often all pooled
  // connections went at once, so each dead one is dropped in turn.
  for (int attempt = 0; attempt < kMaxIdle + 2; ++attempt) {
    bool reused = false;
    auto conn = impl_->Acquire(timeout, &reused);
    if (!conn.ok()) return conn.error();
    Connection& c = **conn;
    http::response<http::string_body> res;
    http::response_parser<http::string_body> parser;
    parser.body_limit(1ULL << 32);
    boost::system::error_code ec;
    c.set_deadline(std::chrono::steady_clock::now() + timeout);
    impl_->WithStream(c, [&](auto& stream) {
      http::write(stream, req, ec);
      if (!ec) http::read(stream, c.buffer, parser, ec);
      return ec;
    });
    if (ec) {
      if (reused && ec != beast::error::timeout) continue;
      return Error{fmt::format("{} {}{}: {}", method, impl_->options.server, target, ec.message()),
                   ec == beast::error::timeout ? ErrorCode::kTimeout : ErrorCode::kUnavailable};
    }
    res = parser.release();
    const bool keep_alive = res.keep_alive();
    ClientResponse out = ToClientResponse(std::move(res));
    if (keep_alive) impl_->Release(std::move(*conn));
    return out;
  }
  return Error{fmt::format("{} {}{}: connection closed", method, impl_->options.server, target),
               ErrorCode::kUnavailable};
}

std::vector<TransportResult<ClientResponse>> HttpClient::DoPipelined(
    std::span<const ClientRequest> requests, std::chrono::milliseconds timeout) {
  std::vector<TransportResult<ClientResponse>> out;
  if (requests.empty()) return out;
  if (timeout.count() <= 0) timeout = impl_->options.timeout;
  std::string wire;
  for (const ClientRequest& r : requests) {
    auto req = impl_->MakeRequest(r.method, r.target, r.body, r.content_type, "application/json");
    AppendSerialized(req, &wire);
  }
  auto failed = [&](size_t i, const boost::system::error_code& ec) {
    return Error{fmt::format("{} {}{}: {}", requests[i].method, impl_->options.server,
                             requests[i].target, ec.message()),
                 ec == beast::error::timeout ? ErrorCode::kTimeout : ErrorCode::kUnavailable};
  };
  // As Do: a dead pooled connection is dropped and the batch goes on the next one, as long as
  // nothing was answered on it.
  for (int attempt = 0; attempt < kMaxIdle + 2; ++attempt) {
    bool reused = false;
    auto conn = impl_->Acquire(timeout, &reused);
    if (!conn.ok()) {
      for (size_t i = 0; i < requests.size(); ++i) out.push_back(conn.error());
      return out;
    }
    Connection& c = **conn;
    c.set_deadline(std::chrono::steady_clock::now() + timeout);
    bool keep_alive = true;
    boost::system::error_code ec;
    impl_->WithStream(c, [&](auto& stream) {
      asio::write(stream, asio::buffer(wire), ec);
      for (size_t i = 0; !ec && i < requests.size(); ++i) {
        http::response_parser<http::string_body> parser;
        parser.body_limit(1ULL << 32);
        http::read(stream, c.buffer, parser, ec);
        if (ec) break;
        auto res = parser.release();
        keep_alive = res.keep_alive();
        out.push_back(ToClientResponse(std::move(res)));
        // A server that closes after an answer has dropped the requests behind it.
        if (!keep_alive) break;
      }
      return ec;
    });
    if (out.empty() && ec && reused && ec != beast::error::timeout) continue;
    const boost::system::error_code lost = ec ? ec : asio::error::connection_aborted;
    for (size_t i = out.size(); i < requests.size(); ++i) out.push_back(failed(i, lost));
    if (!ec && keep_alive) impl_->Release(std::move(*conn));
    return out;
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    out.push_back(failed(i, asio::error::connection_aborted));
  }
  return out;
}

Result<int> HttpClient::Stream(std::string_view target, std::string_view accept,
                               const std::function<bool(std::string_view line)>& on_line,
                               StreamHandle* handle, std::chrono::milliseconds idle_timeout) {
  auto conn = impl_->Connect(impl_->options.timeout);
  if (!conn.ok()) return conn.error();
  Connection& c = **conn;
  {
    std::lock_guard lock(handle->state_->mu);
    if (handle->state_->cancelled) return 0;
    handle->state_->conn = &c;
  }
  struct Detach {
    StreamHandle* h;
    ~Detach() {
      std::lock_guard lock(h->state_->mu);
      h->state_->conn = nullptr;
    }
  } detach{handle};
  auto req = impl_->MakeRequest("GET", target, {}, {}, accept);
  c.set_deadline(std::chrono::steady_clock::now() + impl_->options.timeout);
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  std::string pending;
  bool stop = false;
  char buf[64 * 1024];
  int status = 0;
  auto ec = impl_->WithStream(c, [&](auto& stream) -> boost::system::error_code {
    boost::system::error_code wec;
    http::write(stream, req, wec);
    if (wec) return wec;
    boost::system::error_code hec;
    http::read_header(stream, c.buffer, parser, hec);
    if (hec) return hec;
    status = parser.get().result_int();
    while (!parser.is_done() && !stop) {
      parser.get().body().data = buf;
      parser.get().body().size = sizeof(buf);
      c.set_deadline(std::chrono::steady_clock::now() + idle_timeout);
      boost::system::error_code rec;
      http::read_some(stream, c.buffer, parser, rec);
      if (rec && rec != http::error::need_buffer) return rec;
      size_t n = sizeof(buf) - parser.get().body().size;
      pending.append(buf, n);
      size_t start = 0;
      for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos; start = nl + 1) {
        if (!on_line(std::string_view(pending).substr(start, nl - start))) {
          stop = true;
          break;
        }
      }
      pending.erase(0, start);
    }
    return {};
  });
  if (!pending.empty() && !stop) on_line(pending);
  if (handle->cancelled()) return status;
  if (ec && ec != http::error::end_of_stream && ec != asio::error::eof) {
    return Error{fmt::format("watch {}{}: {}", impl_->options.server, target, ec.message()),
                 ec == beast::error::timeout ? ErrorCode::kTimeout : ErrorCode::kUnavailable};
  }
  return status;
}

std::string QueryEscape(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size() * 3);
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace berth::net
