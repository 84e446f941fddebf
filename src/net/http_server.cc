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

#include "net/http_request_head.h"
#include "net/http_wire.h"

namespace berth::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using asio::awaitable;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

namespace {

constexpr size_t kReadBufferBytes = 64 << 10;
// A connection's read buffer until a request is let through.
constexpr size_t kFirstReadBytes = 4 << 10;

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

// While a response streams, a read stays posted on its connection, so that the client's EOF or
// reset ends the stream at once rather than at its next write: a watch on a quiet resource
// would otherwise hold its descriptor, and its place among the watchers, until that resource
// changed. Touched only on the connection's executor.
struct ClientWatch {
  explicit ClientWatch(asio::any_io_executor executor) : done(executor) {}
  asio::steady_timer done;  // cancelled when the read ends: a wake-up signal
  bool pending = false;
  bool stopping = false;  // the stream is over: no further read is posted
  bool gone = false;      // EOF, reset or error: the client has left
};

// Posts the read. Bytes the client sends meanwhile (a request pipelined behind the stream) are
// kept in `buffer` for after the stream, up to a buffer's worth; `stream` and `buffer` must
// outlive the read (the stream's coroutine awaits it before leaving).
template <class Stream>
void WatchClient(Stream& stream, beast::flat_buffer& buffer, std::shared_ptr<ChunkSink> sink,
                 std::shared_ptr<ClientWatch> watch) {
  if (buffer.size() >= kReadBufferBytes) return;
  watch->pending = true;
  auto executor = watch->done.get_executor();
  stream.async_read_some(
      buffer.prepare(kReadBufferBytes - buffer.size()),
      asio::bind_executor(executor,
                          [&stream, &buffer, sink = std::move(sink), watch = std::move(watch)](
                              boost::system::error_code ec, size_t n) mutable {
                            watch->pending = false;
                            buffer.commit(n);
                            if (ec && ec != asio::error::operation_aborted) {
                              watch->gone = true;
                              sink->Close();
                            }
                            if (ec || watch->stopping) {
                              watch->done.cancel();
                              return;
                            }
                            WatchClient(stream, buffer, std::move(sink), std::move(watch));
                          }));
}

// Parses the next request from what `buffer` already holds, without reading: true, and the
// bytes consumed, only when it is there in full. Otherwise (none, a part, or something the
// parser rejects) nothing is consumed, and the next read takes it as usual.
bool TakeBuffered(beast::flat_buffer& buffer, RequestParser& parser) {
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

// Open connections and streams. Shared with the connections' coroutines, whose frames may
// outlive the server (a sink held after Stop keeps their context).
struct Counts {
  std::atomic<size_t> connections{0};
  std::atomic<size_t> streams{0};
};

// Counts one connection or stream while it lives.
class Counted {
 public:
  Counted(std::shared_ptr<Counts> counts, std::atomic<size_t> Counts::*which)
      : counts_(std::move(counts)), which_(which) {
    ++(counts_.get()->*which_);
  }
  Counted(Counted&& other) noexcept : counts_(std::move(other.counts_)), which_(other.which_) {}
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;
  Counted& operator=(Counted&&) = delete;
  ~Counted() {
    if (counts_) --(counts_.get()->*which_);
  }

 private:
  std::shared_ptr<Counts> counts_;
  std::atomic<size_t> Counts::*which_;
};

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
  std::shared_ptr<Counts> counts = std::make_shared<Counts>();
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

  // How reading a request ended: `ok` when the parser holds a request let through (its head in
  // `head`); otherwise the connection ends, after `refusal` when there is one.
  struct Read {
    bool ok = false;
    std::optional<HttpResponse> refusal;
    HttpRequest head;
  };

  // Reads the next request: waits for its first byte (the keep-alive idle timeout; not for a
  // connection's first request, whose header deadline runs from its opening), its header
  // (header_timeout), judges the head, then reads the body (body_timeout).
  template <class Stream>
  awaitable<Read> ReadRequest(Stream& stream, beast::flat_buffer& buffer, RequestParser& parser,
                              const std::string& remote, bool first);
  // Reads a refused request's body when it is small, so that the client, done sending, reads
  // the refusal rather than a reset; a larger one is left unread.
  template <class Stream>
  awaitable<void> ReadRefusedBody(Stream& stream, beast::flat_buffer& buffer,
                                  RequestParser& parser);
  // Sends an answer that ends the connection.
  template <class Stream>
  awaitable<void> Refuse(Stream& stream, HttpResponse response);
  // The head's verdict: the check_head hook's refusal, or the server's own limits'.
  std::optional<HttpResponse> Judge(const RequestParser& parser, const HttpRequest& head) {
    if (options.check_head) {
      if (auto refusal = options.check_head(head)) return refusal;
    }
    return CheckLimits(parser, head, options);
  }
  // Calls the handler for the request; a deferred answer starts being awaited.
  Answer Begin(RequestParser&& parser, HttpRequest request,
               const std::shared_ptr<asio::io_context>& loop,
               const asio::any_io_executor& executor);
  // Waits for the deferred answers among `answers`.
  awaitable<void> AwaitDeferred(std::vector<Answer>& answers);
  // Writes the first `count` answers in one write; false when the write failed.
  template <class Stream>
  awaitable<bool> WriteAnswers(Stream& stream, std::vector<Answer>& answers, size_t count,
                               std::string& batch);
  // Sends a streaming answer until its sink closes or the client leaves; true when the
  // connection may serve its next request.
  template <class Stream>
  awaitable<bool> StreamAnswer(Stream& stream, beast::flat_buffer& buffer, Answer& streaming,
                               std::shared_ptr<asio::io_context> loop, std::string& batch);
  // `loop` is the context the connection runs on.
  template <class Stream>
  awaitable<void> Serve(Stream& stream, std::string remote, std::shared_ptr<asio::io_context> loop);
  awaitable<void> Session(tcp::socket socket, std::shared_ptr<asio::io_context> loop,
                          Counted counted);
  awaitable<void> Accept();
  void TrackSink(const std::shared_ptr<ChunkSink>& sink) {
    std::lock_guard lock(sinks_mu);
    std::erase_if(sinks, [](const auto& w) { return w.expired(); });
    sinks.push_back(sink);
  }
};

template <class Stream>
awaitable<HttpServer::Impl::Read> HttpServer::Impl::ReadRequest(Stream& stream,
                                                                beast::flat_buffer& buffer,
                                                                RequestParser& parser,
                                                                const std::string& remote,
                                                                bool first) {
  auto& socket = beast::get_lowest_layer(stream);
  Read read;
  auto refusal_for = [&](const boost::system::error_code& ec) -> std::optional<HttpResponse> {
    const auto data = buffer.data();
    const int status = StatusForParseError(
        ec, parser, std::string_view(static_cast<const char*>(data.data()), data.size()), options);
    if (status == 0) return std::nullopt;
    return ParseErrorResponse(status);
  };
  if (!first && buffer.size() == 0) {
    socket.expires_after(std::chrono::seconds(options.idle_timeout_seconds));
    auto [ec, n] = co_await stream.async_read_some(
        buffer.prepare(beast::read_size(buffer, kReadBufferBytes)), kTuple);
    if (ec) co_return read;  // gone, or idle too long
    buffer.commit(n);
  }
  socket.expires_after(options.header_timeout);
  auto [hec, hn] = co_await http::async_read_header(stream, buffer, parser, kTuple);
  if (hec) {
    read.refusal = refusal_for(hec);
    co_return read;
  }
  read.head = HeadOf(parser, remote);
  if (auto refusal = Judge(parser, read.head)) {
    if (refusal->status != 413 && refusal->status != 414)
      co_await ReadRefusedBody(stream, buffer, parser);
    read.refusal = std::move(refusal);
    co_return read;
  }
  parser.body_limit(options.max_body_bytes);
  if (!parser.is_done()) {
    // Reads are sized by the buffer's free capacity: a small buffer would take a large body
    // in many reads (each a completion handed between I/O threads).
    buffer.reserve(kReadBufferBytes);
    socket.expires_after(options.body_timeout);
    auto [bec, bn] = co_await http::async_read(stream, buffer, parser, kTuple);
    if (bec) {
      read.refusal = refusal_for(bec);
      co_return read;
    }
  }
  socket.expires_never();
  read.ok = true;
  co_return read;
}

template <class Stream>
awaitable<void> HttpServer::Impl::ReadRefusedBody(Stream& stream, beast::flat_buffer& buffer,
                                                  RequestParser& parser) {
  if (parser.is_done()) co_return;
  const auto length = parser.content_length();
  if (length && *length > options.refused_body_bytes) co_return;
  parser.body_limit(options.refused_body_bytes);
  beast::get_lowest_layer(stream).expires_after(options.header_timeout);
  co_await http::async_read(stream, buffer, parser, kTuple);
}

template <class Stream>
awaitable<void> HttpServer::Impl::Refuse(Stream& stream, HttpResponse response) {
  auto res = ToMessage(response, 11, false);
  // A client that does not read its answer does not hold the connection for long.
  beast::get_lowest_layer(stream).expires_after(options.header_timeout);
  co_await http::async_write(stream, res, kTuple);
}

template <class Stream>
awaitable<void> HttpServer::Impl::Serve(Stream& stream, std::string remote,
                                        std::shared_ptr<asio::io_context> loop) {
  // Small until a request is let through: a connection that never gets past the head check
  // holds a few KiB.
  beast::flat_buffer buffer;
  buffer.reserve(kFirstReadBytes);
  std::optional<RequestParser> parser;
  std::vector<Answer> answers;
  std::string batch;
  for (bool first = true;; first = false) {
    parser.emplace();
    PrepareParser(*parser, options);
    Read read = co_await ReadRequest(stream, buffer, *parser, remote, first);
    if (!read.ok) {
      if (read.refusal) co_await Refuse(stream, std::move(*read.refusal));
      co_return;
    }
    buffer.reserve(kReadBufferBytes);
    const auto executor = co_await asio::this_coro::executor;
    // The request, and those a pipelining client sent behind it that are already here in full,
    // are all handled before the first answer is awaited: their writes join one durable group,
    // and their answers go out in one write (one TLS record and system call, one wake-up of the
    // client) instead of one round trip each. A streaming answer ends the run, and so does a
    // refused request, whose answer ends the connection.
    answers.clear();
    for (HttpRequest head = std::move(read.head);;) {
      answers.push_back(Begin(std::move(*parser), std::move(head), loop, executor));
      const Answer& last = answers.back();
      if (last.response.stream || !last.keep_alive || answers.size() >= kMaxPipelined) break;
      parser.emplace();
      PrepareParser(*parser, options);
      parser->body_limit(options.max_body_bytes);
      if (!TakeBuffered(buffer, *parser)) break;
      head = HeadOf(*parser, remote);
      if (auto refusal = Judge(*parser, head)) {
        Answer& refused = answers.emplace_back();
        refused.response = std::move(*refusal);
        refused.keep_alive = false;
        break;
      }
    }
    co_await AwaitDeferred(answers);
    Answer* streaming = answers.back().response.stream ? &answers.back() : nullptr;
    const size_t whole = answers.size() - (streaming ? 1 : 0);
    if (!co_await WriteAnswers(stream, answers, whole, batch)) co_return;
    if (streaming) {
      if (!co_await StreamAnswer(stream, buffer, *streaming, loop, batch)) co_return;
    } else if (!answers.back().keep_alive) {
      co_return;
    }
  }
}

awaitable<void> HttpServer::Impl::AwaitDeferred(std::vector<Answer>& answers) {
  for (Answer& a : answers) {
    if (!a.wait) continue;
    while (!a.wait->response) {
      a.wait->timer.expires_at(asio::steady_timer::time_point::max());
      co_await a.wait->timer.async_wait(kTuple);
    }
    auto headers = std::move(a.response.headers);
    a.response = std::move(*a.wait->response);
    a.response.stream = nullptr;
    a.response.headers.insert(a.response.headers.begin(), std::make_move_iterator(headers.begin()),
                              std::make_move_iterator(headers.end()));
    a.wait.reset();
  }
}

template <class Stream>
awaitable<bool> HttpServer::Impl::WriteAnswers(Stream& stream, std::vector<Answer>& answers,
                                               size_t count, std::string& batch) {
  if (count == 1) {
    Answer& a = answers.front();
    auto res = ToMessage(a.response, a.version, a.keep_alive);
    auto [wec, wn] = co_await http::async_write(stream, res, kTuple);
    co_return !wec;
  }
  if (count == 0) co_return true;
  batch.clear();
  for (size_t i = 0; i < count; ++i) {
    Answer& a = answers[i];
    auto res = ToMessage(a.response, a.version, a.keep_alive);
    AppendSerialized(res, &batch);
  }
  auto [wec, wn] = co_await asio::async_write(stream, asio::buffer(batch), kTuple);
  if (batch.capacity() > (1 << 20)) std::string().swap(batch);
  co_return !wec;
}

template <class Stream>
awaitable<bool> HttpServer::Impl::StreamAnswer(Stream& stream, beast::flat_buffer& buffer,
                                               Answer& streaming,
                                               std::shared_ptr<asio::io_context> loop,
                                               std::string& batch) {
  HttpResponse& resp = streaming.response;
  http::response<http::empty_body> res{static_cast<http::status>(resp.status), streaming.version};
  res.set(http::field::content_type, resp.content_type);
  for (const auto& [k, v] : resp.headers) res.insert(k, v);
  res.chunked(true);
  res.keep_alive(streaming.keep_alive);
  http::response_serializer<http::empty_body> sr{res};
  auto [hec, hn] = co_await http::async_write_header(stream, sr, kTuple);
  if (hec) co_return false;
  const auto executor = co_await asio::this_coro::executor;
  Counted counted(counts, &Counts::streams);
  auto sink = std::make_shared<ChunkSink>(loop, executor, options.max_stream_backlog_bytes);
  TrackSink(sink);
  auto watch = std::make_shared<ClientWatch>(executor);
  WatchClient(stream, buffer, sink, watch);
  resp.stream(sink);
  bool written = true;
  std::deque<std::shared_ptr<const std::string>> chunks;
  for (;;) {
    if (!co_await sink->Take(&chunks)) break;
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
    // A burst's buffer is not kept for an idle stream.
    if (batch.capacity() > (1 << 20)) std::string().swap(batch);
    if (wec) {
      sink->Close();
      written = false;
      break;
    }
  }
  if (written) {
    auto [lec, ln] = co_await asio::async_write(stream, http::make_chunk_last(), kTuple);
    written = !lec;
  }
  // The read uses the stream and the buffer: it ends before they may go. (One that completed
  // before the cancel posts no other.)
  watch->stopping = true;
  if (watch->pending) beast::get_lowest_layer(stream).cancel();
  while (watch->pending) {
    watch->done.expires_at(asio::steady_timer::time_point::max());
    co_await watch->done.async_wait(kTuple);
  }
  co_return written && !watch->gone && streaming.keep_alive;
}

HttpServer::Impl::Answer HttpServer::Impl::Begin(RequestParser&& parser, HttpRequest request,
                                                 const std::shared_ptr<asio::io_context>& loop,
                                                 const asio::any_io_executor& executor) {
  Answer a;
  a.keep_alive = parser.get().keep_alive();
  a.version = parser.get().version();
  // The body is moved, not copied (extender requests carry kilobytes of node names).
  request.body = std::move(parser.get().body());
  try {
    a.response = handler(request);
  } catch (const std::exception& e) {
    a.response = StatusResponse(500, "InternalError", fmt::format("internal error: {}", e.what()));
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
                                          std::shared_ptr<asio::io_context> loop, Counted counted) {
  boost::system::error_code ignored;
  auto endpoint = socket.remote_endpoint(ignored);
  std::string remote = ignored ? std::string() : endpoint.address().to_string();
  socket.set_option(tcp::no_delay(true), ignored);
  if (tls) {
    beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *tls);
    beast::get_lowest_layer(stream).expires_after(options.header_timeout);
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
      // Out of descriptors and the like: the error would come back at once, so wait a little
      // rather than spin.
      asio::steady_timer pause(acceptor.get_executor(), std::chrono::milliseconds(50));
      co_await pause.async_wait(kTuple);
      continue;
    }
    if (counts->connections.load() >= options.max_connections) {
      // Full: closed at once, so that memory and descriptors stay bounded.
      boost::system::error_code ignored;
      socket.close(ignored);
      continue;
    }
    Counted counted(counts, &Counts::connections);
    asio::co_spawn(executor, Session(std::move(socket), std::move(loop), std::move(counted)),
                   [](std::exception_ptr) {});
  }
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { Stop(); }

size_t HttpServer::open_connections() const { return impl_->counts->connections.load(); }

size_t HttpServer::open_streams() const { return impl_->counts->streams.load(); }

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
