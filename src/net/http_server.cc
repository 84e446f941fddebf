#include "net/http_server.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <deque>
#include <iterator>
#include <mutex>
#include <thread>

#include "net/http_wire.h"

namespace berth::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using asio::awaitable;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

std::string PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%' && i + 2 < s.size()) {
      int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_is_space && c == '+' ? ' ' : c);
  }
  return out;
}

std::optional<std::string> HttpRequest::Query(std::string_view name) const {
  for (const auto& [k, v] : query) {
    if (k == name) return v;
  }
  return std::nullopt;
}

std::string HttpRequest::Header(std::string_view lower_name) const {
  for (auto it = headers.rbegin(); it != headers.rend(); ++it) {
    if (it->first == lower_name) return it->second;
  }
  return std::string();
}

namespace {

constexpr size_t kReadBufferBytes = 64 << 10;

// A streaming response's queue. The I/O side waits on a timer used as a wake-up signal; every
// touch of the timer happens on the connection's strand, so a wake-up is never lost.
class ChunkSink final : public StreamSink, public std::enable_shared_from_this<ChunkSink> {
 public:
  ChunkSink(std::shared_ptr<asio::io_context> io, asio::any_io_executor strand, size_t max_backlog)
      : io_(std::move(io)), strand_(strand), timer_(strand), max_backlog_(max_backlog) {}

  bool Write(std::string chunk) override {
    return Write(std::make_shared<const std::string>(std::move(chunk)));
  }

  bool Write(std::shared_ptr<const std::string> chunk) override {
    return Write(std::span<const std::shared_ptr<const std::string>>(&chunk, 1));
  }

  bool Write(std::span<const std::shared_ptr<const std::string>> parts) override {
    bool wake;
    {
      std::lock_guard lock(mu_);
      if (closed_) return false;
      for (const auto& part : parts) backlog_ += part->size();
      if (backlog_ > max_backlog_) {
        // A reader this far behind would stall its producer: drop it, as kube-apiserver does.
        closed_ = true;
        queue_.clear();
        wake = true;
      } else {
        // A wake-up is already on its way for a non-empty queue: one per batch, not per chunk.
        wake = queue_.empty();
        queue_.insert(queue_.end(), parts.begin(), parts.end());
      }
    }
    if (wake) Wake();
    return true;
  }

  void Close() override {
    {
      std::lock_guard lock(mu_);
      closed_ = true;
    }
    Wake();
  }

  bool closed() const override {
    std::lock_guard lock(mu_);
    return closed_;
  }

  // Waits for chunks; false when the stream is closed and drained.
  awaitable<bool> Take(std::deque<std::shared_ptr<const std::string>>* out) {
    for (;;) {
      {
        std::lock_guard lock(mu_);
        if (!queue_.empty()) {
          out->swap(queue_);
          backlog_ = 0;
          co_return true;
        }
        if (closed_) co_return false;
      }
      timer_.expires_at(asio::steady_timer::time_point::max());
      co_await timer_.async_wait(kTuple);
    }
  }

 private:
  void Wake() {
    asio::post(strand_, [self = shared_from_this()] { self->timer_.cancel(); });
  }

  // Keeps the context alive while a producer still holds the sink after the server stopped.
  std::shared_ptr<asio::io_context> io_;
  asio::any_io_executor strand_;
  asio::steady_timer timer_;
  const size_t max_backlog_;
  mutable std::mutex mu_;
  std::deque<std::shared_ptr<const std::string>> queue_;
  size_t backlog_ = 0;
  bool closed_ = false;
};

// Where a deferred response (HttpResponse::deferred) arrives.
struct DeferredReply {
  DeferredReply(std::shared_ptr<asio::io_context> loop, asio::any_io_executor executor)
      : loop(std::move(loop)), timer(executor) {}
  // Keeps the context alive, and outlives the timer, while a late reply (after Stop) still
  // holds this.
  std::shared_ptr<asio::io_context> loop;
  asio::steady_timer timer;
  std::optional<HttpResponse> response;
};

// Takes the parsed request apart: the body is moved, not copied (extender requests carry
// kilobytes of node names).
HttpRequest ToRequest(http::request<http::string_body>&& req, std::string remote) {
  HttpRequest r;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  std::string_view target = req.target();
  size_t q = target.find('?');
  r.path = PercentDecode(target.substr(0, q), false);
  if (q != std::string_view::npos) {
    std::string_view rest = target.substr(q + 1);
    while (!rest.empty()) {
      size_t amp = rest.find('&');
      std::string_view part = rest.substr(0, amp);
      if (!part.empty()) {
        size_t eq = part.find('=');
        r.query.emplace_back(PercentDecode(part.substr(0, eq), true),
                             eq == std::string_view::npos
                                 ? std::string()
                                 : PercentDecode(part.substr(eq + 1), true));
      }
      if (amp == std::string_view::npos) break;
      rest.remove_prefix(amp + 1);
    }
  }
  r.headers.reserve(std::distance(req.begin(), req.end()));
  for (const auto& field : req) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    r.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  r.body = std::move(req.body());
  r.remote_address = std::move(remote);
  return r;
}

// Parses the next request from what `buffer` already holds, without reading: true, and the
// bytes consumed, only when it is there in full. Otherwise (none, a part, or something the
// parser rejects) nothing is consumed, and the next read takes it as usual.
bool TakeBuffered(beast::flat_buffer& buffer, http::request_parser<http::string_body>& parser) {
  if (buffer.size() == 0) return false;
  parser.eager(true);
  const auto data = buffer.data();
  const char* p = static_cast<const char*>(data.data());
  size_t used = 0;
  while (!parser.is_done()) {
    boost::system::error_code ec;
    const size_t n = parser.put(asio::buffer(p + used, data.size() - used), ec);
    used += n;
    if (ec || n == 0) return false;
  }
  buffer.consume(used);
  return true;
}

// The HTTP message of an answer (not a stream).
http::response<http::string_body> ToMessage(HttpResponse& resp, unsigned version, bool keep_alive) {
  http::response<http::string_body> res{static_cast<http::status>(resp.status), version};
  res.set(http::field::content_type, resp.content_type);
  for (const auto& [k, v] : resp.headers) res.insert(k, v);
  res.body() = std::move(resp.body);
  res.keep_alive(keep_alive);
  res.prepare_payload();
  return res;
}

}  // namespace

struct HttpServer::Impl {
  // A loop run by one thread is told so (concurrency hint 1): it then never wakes a second
  // thread to take over the reactor while it runs a handler.
  Impl(const HttpServerOptions& o, HttpHandler h)
      : options(o),
        handler(std::move(h)),
        io(o.pin_connections ? std::make_shared<asio::io_context>(1)
                             : std::make_shared<asio::io_context>()),
        acceptor(asio::make_strand(*io)) {
    loops.push_back(io);
    if (o.pin_connections) {
      for (int i = 1; i < std::max(1, o.threads); ++i)
        loops.push_back(std::make_shared<asio::io_context>(1));
    }
  }

  HttpServerOptions options;
  HttpHandler handler;
  // The acceptor's loop, which all threads run unless connections are pinned. Shared so that
  // sinks outliving the server post into a live (stopped) context.
  std::shared_ptr<asio::io_context> io;
  // Pinned: one loop per I/O thread, `io` first. Otherwise just `io`.
  std::vector<std::shared_ptr<asio::io_context>> loops;
  // Keeps a pinned loop without connections running (destroyed before the loops).
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> idle_guards;
  size_t next_loop = 0;  // the accept coroutine's round-robin position
  std::optional<ssl::context> tls;
  // On a strand of `io`: the accept loop and Stop's close never run at once on two threads.
  tcp::acceptor acceptor;
  std::vector<std::thread> threads;
  std::atomic<bool> stopped{false};
  std::mutex sinks_mu;
  std::vector<std::weak_ptr<ChunkSink>> sinks;

  // A request's answer, possibly still awaited (`wait`).
  struct Answer {
    HttpResponse response;
    std::shared_ptr<DeferredReply> wait;
    bool keep_alive = true;
    unsigned version = 11;
  };
  // Requests of one connection handled before their answers are written (a pipelining client).
  static constexpr size_t kMaxPipelined = 64;

  // Calls the handler for the request; a deferred answer starts being awaited.
  Answer Begin(http::request_parser<http::string_body>&& parser, const std::string& remote,
               const std::shared_ptr<asio::io_context>& loop,
               const asio::any_io_executor& executor);
  // `loop` is the context the connection runs on.
  template <class Stream>
  awaitable<void> Serve(Stream& stream, std::string remote, std::shared_ptr<asio::io_context> loop);
  awaitable<void> Session(tcp::socket socket, std::shared_ptr<asio::io_context> loop);
  awaitable<void> Accept();
  void TrackSink(const std::shared_ptr<ChunkSink>& sink) {
    std::lock_guard lock(sinks_mu);
    std::erase_if(sinks, [](const auto& w) { return w.expired(); });
    sinks.push_back(sink);
  }
};

template <class Stream>
awaitable<void> HttpServer::Impl::Serve(Stream& stream, std::string remote,
                                        std::shared_ptr<asio::io_context> loop) {
  beast::flat_buffer buffer;
  // Reads are sized by the buffer's free capacity: a small buffer would take a large body in
  // many reads (each a completion handed between I/O threads).
  buffer.reserve(kReadBufferBytes);
  std::optional<http::request_parser<http::string_body>> parser;
  std::vector<Answer> answers;
  std::string batch;
  for (;;) {
    parser.emplace();
    parser->body_limit(options.max_body_bytes);
    beast::get_lowest_layer(stream).expires_after(
        std::chrono::seconds(options.idle_timeout_seconds));
    auto [ec, n] = co_await http::async_read(stream, buffer, *parser, kTuple);
    if (ec == http::error::body_limit) {
      http::response<http::string_body> res{http::status::payload_too_large, 11};
      res.set(http::field::content_type, "application/json");
      res.body() = R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                   R"("message":"the request body is too large","reason":"RequestEntityTooLarge",)"
                   R"("code":413})";
      res.prepare_payload();
      co_await http::async_write(stream, res, kTuple);
      co_return;
    }
    if (ec) co_return;
    beast::get_lowest_layer(stream).expires_never();
    // The request, and those a pipelining client sent behind it that are already here in full,
    // are all handled before the first answer is awaited: their writes join one durable group,
    // and their answers go out in one write (one TLS record and system call, one wake-up of the
    // client) instead of one round trip each. A streaming answer ends the run.
    answers.clear();
    for (;;) {
      answers.push_back(
          Begin(std::move(*parser), remote, loop, co_await asio::this_coro::executor));
      const Answer& last = answers.back();
      if (last.response.stream || !last.keep_alive || answers.size() >= kMaxPipelined) break;
      parser.emplace();
      parser->body_limit(options.max_body_bytes);
      if (!TakeBuffered(buffer, *parser)) break;
    }
    for (Answer& a : answers) {
      if (!a.wait) continue;
      while (!a.wait->response) {
        a.wait->timer.expires_at(asio::steady_timer::time_point::max());
        co_await a.wait->timer.async_wait(kTuple);
      }
      auto headers = std::move(a.response.headers);
      a.response = std::move(*a.wait->response);
      a.response.stream = nullptr;
      a.response.headers.insert(a.response.headers.begin(),
                                std::make_move_iterator(headers.begin()),
                                std::make_move_iterator(headers.end()));
      a.wait.reset();
    }
    Answer* streaming = answers.back().response.stream ? &answers.back() : nullptr;
    const size_t whole = answers.size() - (streaming ? 1 : 0);
    if (whole == 1) {
      auto res =
          ToMessage(answers.front().response, answers.front().version, answers.front().keep_alive);
      auto [wec, wn] = co_await http::async_write(stream, res, kTuple);
      if (wec) co_return;
    } else if (whole > 1) {
      batch.clear();
      for (size_t i = 0; i < whole; ++i) {
        Answer& a = answers[i];
        auto res = ToMessage(a.response, a.version, a.keep_alive);
        AppendSerialized(res, &batch);
      }
      auto [wec, wn] = co_await asio::async_write(stream, asio::buffer(batch), kTuple);
      if (wec) co_return;
      if (batch.capacity() > (1 << 20)) std::string().swap(batch);
    }
    if (!streaming) {
      if (!answers.back().keep_alive) co_return;
      continue;
    }
    HttpResponse& resp = streaming->response;
    http::response<http::empty_body> res{static_cast<http::status>(resp.status),
                                         streaming->version};
    res.set(http::field::content_type, resp.content_type);
    for (const auto& [k, v] : resp.headers) res.insert(k, v);
    res.chunked(true);
    res.keep_alive(streaming->keep_alive);
    http::response_serializer<http::empty_body> sr{res};
    auto [hec, hn] = co_await http::async_write_header(stream, sr, kTuple);
    if (hec) co_return;
    auto sink = std::make_shared<ChunkSink>(loop, co_await asio::this_coro::executor,
                                            options.max_stream_backlog_bytes);
    TrackSink(sink);
    resp.stream(sink);
    std::deque<std::shared_ptr<const std::string>> chunks;
    while (co_await sink->Take(&chunks)) {
      // Everything queued since the last write goes out as one HTTP chunk: one TLS record
      // and one system call for a burst of events instead of one each. The chunk's framing is
      // written into the same buffer: as a separate buffer, a burst over 16 KB would send its
      // few bytes of size line as a TLS record and a system call of their own.
      size_t size = 0;
      for (const auto& c : chunks) size += c->size();
      if (size == 0) {
        chunks.clear();
        continue;
      }
      batch.clear();
      batch.reserve(size + 16);
      fmt::format_to(std::back_inserter(batch), "{:x}\r\n", size);
      for (const auto& c : chunks) batch += *c;
      batch += "\r\n";
      chunks.clear();
      auto [wec, wn] = co_await asio::async_write(stream, asio::buffer(batch), kTuple);
      if (wec) {
        sink->Close();
        co_return;
      }
      // A burst's buffer is not kept for an idle stream.
      if (batch.capacity() > (1 << 20)) std::string().swap(batch);
    }
    auto [lec, ln] = co_await asio::async_write(stream, http::make_chunk_last(), kTuple);
    if (lec || !streaming->keep_alive) co_return;
  }
}

HttpServer::Impl::Answer HttpServer::Impl::Begin(http::request_parser<http::string_body>&& parser,
                                                 const std::string& remote,
                                                 const std::shared_ptr<asio::io_context>& loop,
                                                 const asio::any_io_executor& executor) {
  Answer a;
  a.keep_alive = parser.get().keep_alive();
  a.version = parser.get().version();
  HttpRequest request = ToRequest(parser.release(), remote);
  try {
    a.response = handler(request);
  } catch (const std::exception& e) {
    a.response = HttpResponse{};
    a.response.status = 500;
    a.response.body = fmt::format(
        R"({{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure","message":"internal error: {}","reason":"InternalError","code":500}})",
        e.what());
  }
  if (a.response.deferred && !a.response.stream) {
    // The reply is handed to this connection's executor, where it is stored and the timer
    // (a wake-up signal, as for streams) cancelled: every touch of both happens there. The
    // loop is held so that a late reply after Stop posts into a live (stopped) context.
    a.wait = std::make_shared<DeferredReply>(loop, executor);
    auto deferred = std::move(a.response.deferred);
    a.response.deferred = nullptr;
    deferred([wait = a.wait](HttpResponse r) {
      asio::post(wait->timer.get_executor(), [wait, r = std::move(r)]() mutable {
        wait->response = std::move(r);
        wait->timer.cancel();
      });
    });
  }
  return a;
}

awaitable<void> HttpServer::Impl::Session(tcp::socket socket,
                                          std::shared_ptr<asio::io_context> loop) {
  boost::system::error_code ignored;
  auto endpoint = socket.remote_endpoint(ignored);
  std::string remote = ignored ? std::string() : endpoint.address().to_string();
  socket.set_option(tcp::no_delay(true), ignored);
  if (tls) {
    beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *tls);
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(30));
    auto [ec] = co_await stream.async_handshake(ssl::stream_base::server, kTuple);
    if (ec) co_return;
    co_await Serve(stream, remote, loop);
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(2));
    co_await stream.async_shutdown(kTuple);
  } else {
    beast::tcp_stream stream(std::move(socket));
    co_await Serve(stream, remote, loop);
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }
}

awaitable<void> HttpServer::Impl::Accept() {
  for (;;) {
    // A pinned connection's loop has one thread, which serializes its steps; on the shared
    // loop a strand does.
    std::shared_ptr<asio::io_context> loop = io;
    asio::any_io_executor executor;
    if (options.pin_connections) {
      loop = loops[next_loop++ % loops.size()];
      executor = loop->get_executor();
    } else {
      executor = asio::make_strand(*io);
    }
    auto [ec, socket] = co_await acceptor.async_accept(executor, kTuple);
    if (ec) {
      if (ec == asio::error::operation_aborted || stopped) co_return;
      continue;
    }
    asio::co_spawn(executor, Session(std::move(socket), std::move(loop)),
                   [](std::exception_ptr) {});
  }
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

uint16_t HttpServer::port() const {
  boost::system::error_code ec;
  return impl_->acceptor.local_endpoint(ec).port();
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& options,
                                                      HttpHandler handler) {
  auto impl = std::make_unique<Impl>(options, std::move(handler));
  const std::string where = fmt::format("{}:{}", options.bind_address, options.port);
  if (options.tls) {
    impl->tls.emplace(ssl::context::tls_server);
    impl->tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                           ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                           ssl::context::no_tlsv1_1);
    boost::system::error_code ec;
    impl->tls->use_certificate_chain(asio::buffer(options.tls->cert_pem), ec);
    if (!ec) impl->tls->use_private_key(asio::buffer(options.tls->key_pem), ssl::context::pem, ec);
    if (ec) {
      return Error{
          fmt::format("serving on {}: bad TLS certificate or key: {}", where, ec.message()),
          ErrorCode::kInvalid};
    }
  }
  boost::system::error_code ec;
  auto address = asio::ip::make_address(options.bind_address, ec);
  if (ec) {
    return Error{
        fmt::format("serving on {}: invalid bind address \"{}\"", where, options.bind_address),
        ErrorCode::kInvalid};
  }
  tcp::endpoint endpoint(address, options.port);
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec) impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Error{fmt::format("serving on {}: {}", where, ec.message()), ErrorCode::kUnavailable};
  }
  asio::co_spawn(impl->acceptor.get_executor(), impl->Accept(), asio::detached);
  if (options.pin_connections) {
    for (const auto& loop : impl->loops) {
      impl->idle_guards.push_back(asio::make_work_guard(*loop));
      impl->threads.emplace_back([loop] { loop->run(); });
    }
  } else {
    for (int i = 0; i < std::max(1, options.threads); ++i) {
      impl->threads.emplace_back([io = impl->io] { io->run(); });
    }
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

void HttpServer::Stop() {
  if (!impl_ || impl_->stopped.exchange(true)) return;
  asio::post(impl_->acceptor.get_executor(), [impl = impl_.get()] {
    boost::system::error_code ignored;
    impl->acceptor.close(ignored);
  });
  {
    std::lock_guard lock(impl_->sinks_mu);
    for (auto& w : impl_->sinks) {
      if (auto s = w.lock()) s->Close();
    }
  }
  // Give streams a moment to send their last chunk, then stop the loop.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (const auto& loop : impl_->loops) loop->stop();
  for (auto& t : impl_->threads) {
    if (t.joinable()) t.join();
  }
}

}  // namespace berth::net
