// HttpServer against clients that misbehave: unauthenticated ones with large bodies, slow ones,
// too many, gone ones, and malformed requests. The client here is a plain blocking socket with
// a receive timeout: a server that fails to answer or to close makes a read time out, and the
// test fail, instead of hanging.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "net/http_request_head.h"
#include "net/http_server.h"
#include "net/tls_certs.h"

namespace berth::net {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Long enough for any machine to answer; only a server that never does waits this long.
constexpr auto kPatience = seconds(10);

class RawClient {
 public:
  explicit RawClient(uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{.tv_sec = kPatience.count(), .tv_usec = 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawClient() { Close(); }
  bool connected() const { return connected_; }

  // False once the server has closed the connection.
  bool Send(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(n);
    }
    return true;
  }

  // Everything the server sends until it closes the connection; `closed` false when it did not
  // close within kPatience.
  std::string ReadToEnd(bool* closed) {
    std::string out;
    char buf[4096];
    for (;;) {
      const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
      if (n > 0) {
        out.append(buf, n);
        continue;
      }
      *closed = n == 0 || errno == ECONNRESET;
      return out;
    }
  }

  // One answer: its status line's code and its body (Content-Length framed).
  std::pair<int, std::string> ReadAnswer() {
    while (pending_.find("\r\n\r\n") == std::string::npos && Fill()) {
    }
    const size_t end = pending_.find("\r\n\r\n");
    if (end == std::string::npos) return {0, ""};
    const std::string head = pending_.substr(0, end + 4);
    size_t length = 0;
    if (size_t at = head.find("Content-Length: "); at != std::string::npos)
      length = std::stoul(head.substr(at + 16));
    while (pending_.size() < end + 4 + length && Fill()) {
    }
    std::string body = pending_.substr(end + 4, length);
    pending_.erase(0, end + 4 + length);
    return {StatusOf(head), body};
  }

  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  static int StatusOf(std::string_view answer) {
    if (answer.size() < 12 || answer.substr(0, 9) != "HTTP/1.1 ") return 0;
    return std::stoi(std::string(answer.substr(9, 3)));
  }

 private:
  bool Fill() {
    char buf[4096];
    const ssize_t n = recv(fd_, buf, sizeof(buf), 0);
    if (n <= 0) return false;
    pending_.append(buf, n);
    return true;
  }

  int fd_ = -1;
  bool connected_ = false;
  std::string pending_;
};

// Polls `done` until it holds or kPatience passes: for what the server does on its own threads
// with no signal to the test (releasing a connection).
bool Eventually(const std::function<bool()>& done) {
  const auto deadline = std::chrono::steady_clock::now() + kPatience;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(2));
  }
  return true;
}

HttpResponse Echo(HttpRequest& r) {
  HttpResponse resp;
  resp.content_type = "text/plain";
  resp.body = r.method + " " + r.path + " " + r.body;
  return resp;
}

// Lets through /healthz and requests with the token, as the API server does.
std::optional<HttpResponse> RequireToken(const HttpRequest& head) {
  if (head.path == "/healthz" || head.Header("authorization") == "Bearer secret")
    return std::nullopt;
  return StatusResponse(401, "Unauthorized", "Unauthorized");
}

std::string Post(std::string_view target, std::string_view auth, size_t length,
                 std::string_view body = "") {
  return fmt::format("POST {} HTTP/1.1\r\nHost: x\r\n{}Content-Length: {}\r\n\r\n{}", target,
                     auth.empty() ? "" : fmt::format("Authorization: {}\r\n", auth), length, body);
}

TEST(HttpServerLimitsTest, RefusedHeadIsAnsweredWithoutReadingALargeBody) {
  HttpServerOptions options;
  options.check_head = RequireToken;
  options.body_timeout = seconds(3600);  // waiting for the body would outlast the client
  std::atomic<int> handled{0};
  auto server = HttpServer::Start(options, [&](HttpRequest& r) {
    ++handled;
    return Echo(r);
  });
  ASSERT_TRUE(server.ok());
  const uint16_t port = (*server)->port();

  // 50 MB announced, none sent: the answer comes at once, and the connection ends.
  RawClient big(port);
  ASSERT_TRUE(big.Send(Post("/api/v1/pods", "", 50 << 20)));
  bool closed = false;
  const std::string answer = big.ReadToEnd(&closed);
  EXPECT_EQ(RawClient::StatusOf(answer), 401) << answer;
  EXPECT_NE(answer.find("Connection: close"), std::string::npos) << answer;
  EXPECT_TRUE(closed);

  // A wrong token with a small body: the body is read, then the same answer and close.
  RawClient wrong(port);
  ASSERT_TRUE(wrong.Send(Post("/api/v1/pods", "Bearer nope", 5, "hello")));
  EXPECT_EQ(RawClient::StatusOf(wrong.ReadToEnd(&closed)), 401);
  EXPECT_TRUE(closed);
  EXPECT_EQ(handled.load(), 0);

  // With the token, or on a public path, the request goes through on a kept-alive connection.
  RawClient good(port);
  ASSERT_TRUE(good.Send(Post("/api/v1/pods", "Bearer secret", 5, "hello")));
  EXPECT_EQ(good.ReadAnswer(), std::make_pair(200, std::string("POST /api/v1/pods hello")));
  ASSERT_TRUE(good.Send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(good.ReadAnswer(), std::make_pair(200, std::string("GET /healthz ")));
  EXPECT_EQ(handled.load(), 2);
  EXPECT_TRUE(Eventually([&] { return (*server)->open_connections() == 1; }));
}

// A request pipelined behind a good one is judged by its own head.
TEST(HttpServerLimitsTest, PipelinedRequestWithoutTokenIsRefused) {
  HttpServerOptions options;
  options.check_head = RequireToken;
  std::atomic<int> handled{0};
  auto server = HttpServer::Start(options, [&](HttpRequest& r) {
    ++handled;
    return Echo(r);
  });
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  ASSERT_TRUE(client.Send(Post("/a", "Bearer secret", 1, "x") + Post("/b", "", 1, "y") +
                          Post("/c", "Bearer secret", 1, "z")));
  EXPECT_EQ(client.ReadAnswer(), std::make_pair(200, std::string("POST /a x")));
  EXPECT_EQ(client.ReadAnswer().first, 401);
  bool closed = false;
  EXPECT_EQ(client.ReadToEnd(&closed), "");
  EXPECT_TRUE(closed);
  EXPECT_EQ(handled.load(), 1);
}

TEST(HttpServerLimitsTest, ConnectionsOverTheCapAreClosedAtOnce) {
  HttpServerOptions options;
  options.max_connections = 2;
  auto server = HttpServer::Start(options, Echo);
  ASSERT_TRUE(server.ok());
  const uint16_t port = (*server)->port();
  const std::string get = "GET /x HTTP/1.1\r\nHost: x\r\n\r\n";
  auto a = std::make_unique<RawClient>(port);
  RawClient b(port);
  // Answered: both are accepted and counted.
  ASSERT_TRUE(a->Send(get) && b.Send(get));
  EXPECT_EQ(a->ReadAnswer().first, 200);
  EXPECT_EQ(b.ReadAnswer().first, 200);
  EXPECT_EQ((*server)->open_connections(), 2u);

  RawClient c(port);
  c.Send(get);
  bool closed = false;
  EXPECT_EQ(c.ReadToEnd(&closed), "");
  EXPECT_TRUE(closed);

  // A place freed is taken again.
  a.reset();
  ASSERT_TRUE(Eventually([&] { return (*server)->open_connections() == 1; }));
  RawClient d(port);
  ASSERT_TRUE(d.Send(get));
  EXPECT_EQ(d.ReadAnswer().first, 200);
}

// A header trickling in a byte at a time never completes within the deadline: the connection
// is cut however steadily the bytes come.
TEST(HttpServerLimitsTest, HeaderDeadlineCutsOffADribblingClient) {
  HttpServerOptions options;
  options.header_timeout = milliseconds(200);
  options.idle_timeout_seconds = 3600;
  auto server = HttpServer::Start(options, Echo);
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  std::atomic<bool> stop{false};
  std::atomic<int> sent{0};
  const std::string header = "GET /x HTTP/1.1\r\nHost: x\r\nX-Slow: " + std::string(1000, 'a');
  std::thread dribbler([&] {
    for (char c : header) {
      if (stop || !client.Send(std::string_view(&c, 1))) return;
      ++sent;
      std::this_thread::sleep_for(milliseconds(5));  // 1000 bytes take at least 5 s
    }
  });
  bool closed = false;
  EXPECT_EQ(client.ReadToEnd(&closed), "");
  EXPECT_TRUE(closed);
  stop = true;
  dribbler.join();
  EXPECT_LT(sent.load(), static_cast<int>(header.size()));
}

TEST(HttpServerLimitsTest, BodyDeadlineCutsOffASlowBody) {
  HttpServerOptions options;
  options.header_timeout = seconds(3600);
  options.body_timeout = milliseconds(200);
  std::atomic<int> handled{0};
  auto server = HttpServer::Start(options, [&](HttpRequest& r) {
    ++handled;
    return Echo(r);
  });
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  ASSERT_TRUE(client.Send(Post("/x", "", 100, "only ten b")));
  bool closed = false;
  EXPECT_EQ(client.ReadToEnd(&closed), "");
  EXPECT_TRUE(closed);
  EXPECT_EQ(handled.load(), 0);
}

// The deadlines are each their own: a kept-alive connection may sit idle longer than a header
// may take, and a body may take longer than a header.
TEST(HttpServerLimitsTest, IdleAndBodyTimesAreNotBoundByTheHeaderDeadline) {
  HttpServerOptions options;
  options.header_timeout = milliseconds(100);
  options.body_timeout = seconds(3600);
  options.idle_timeout_seconds = 3600;
  auto server = HttpServer::Start(options, Echo);
  ASSERT_TRUE(server.ok());
  RawClient client((*server)->port());
  ASSERT_TRUE(client.Send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_EQ(client.ReadAnswer().first, 200);
  std::this_thread::sleep_for(milliseconds(300));
  ASSERT_TRUE(client.Send(Post("/b", "", 4, "ab")));
  std::this_thread::sleep_for(milliseconds(300));
  ASSERT_TRUE(client.Send("cd"));
  EXPECT_EQ(client.ReadAnswer(), std::make_pair(200, std::string("POST /b abcd")));
}

struct MalformedCase {
  std::string name;
  std::string request;
  int status;
};

TEST(HttpServerLimitsTest, MalformedRequestsGetAStatusAndTheConnectionCloses) {
  HttpServerOptions options;
  options.max_header_bytes = 2048;
  options.max_target_bytes = 1024;
  options.max_body_bytes = 1000;
  std::atomic<int> handled{0};
  auto server = HttpServer::Start(options, [&](HttpRequest& r) {
    ++handled;
    return Echo(r);
  });
  ASSERT_TRUE(server.ok());
  const std::string h = "POST /x HTTP/1.1\r\nHost: x\r\n";
  const std::vector<MalformedCase> cases = {
      {"bad content length", h + "Content-Length: abc\r\n\r\n", 400},
      {"negative content length", h + "Content-Length: -1\r\n\r\n", 400},
      {"conflicting content lengths", h + "Content-Length: 5\r\nContent-Length: 6\r\n\r\nhello",
       400},
      {"conflicting list", h + "Content-Length: 5, 6\r\n\r\nhello", 400},
      {"length then chunked",
       h + "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 400},
      {"chunked then length",
       h + "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n", 400},
      {"chunked not last", h + "Transfer-Encoding: chunked, gzip\r\n\r\n", 400},
      {"not chunked", h + "Transfer-Encoding: gzip\r\n\r\n", 400},
      {"another coding", h + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501},
      {"bad chunk size", h + "Transfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n", 400},
      {"chunk size overflow",
       h + "Transfer-Encoding: chunked\r\n\r\nfffffffffffffffffffff\r\nhello\r\n0\r\n\r\n", 400},
      {"bad method", "G(T /x HTTP/1.1\r\nHost: x\r\n\r\n", 400},
      {"bad version", "GET /x HTTP/9\r\nHost: x\r\n\r\n", 400},
      {"bad field name", "GET /x HTTP/1.1\r\nHo st: x\r\n\r\n", 400},
      {"bare LF", "GET /x HTTP/1.1\nHost: x\n\n", 400},
      {"header block too large",
       "GET /x HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(3000, 'a') + "\r\n\r\n", 431},
      {"field without end", "GET /x HTTP/1.1\r\nX-Big: " + std::string(3000, 'a'), 431},
      {"many fields",
       [] {
         std::string r = "GET /x HTTP/1.1\r\n";
         for (int i = 0; i < 200; ++i) r += fmt::format("X-F{}: v\r\n", i);
         return r + "\r\n";
       }(),
       431},
      {"target too long", "GET /" + std::string(1500, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n", 414},
      {"request line over the header limit",
       "GET /" + std::string(5000, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n", 414},
      {"body too large", h + "Content-Length: 1001\r\n\r\n", 413},
      {"chunked body too large",
       h + "Transfer-Encoding: chunked\r\n\r\n3e9\r\n" + std::string(1001, 'a') + "\r\n0\r\n\r\n",
       413},
  };
  for (const MalformedCase& c : cases) {
    RawClient client((*server)->port());
    client.Send(c.request);
    bool closed = false;
    const std::string answer = client.ReadToEnd(&closed);
    EXPECT_EQ(RawClient::StatusOf(answer), c.status) << c.name << ": " << answer;
    EXPECT_TRUE(closed) << c.name;
  }
  EXPECT_EQ(handled.load(), 0);
  // The same limits leave a good request alone.
  RawClient good((*server)->port());
  ASSERT_TRUE(good.Send(h + "Content-Length: 1000\r\n\r\n" + std::string(1000, 'b')));
  EXPECT_EQ(good.ReadAnswer().first, 200);
}

// Streams that are never written to: without a read posted on their connections, the server
// would notice their clients left only at a write that never comes.
class GoneClientTest : public ::testing::TestWithParam<bool> {};

TEST_P(GoneClientTest, StreamsOfGoneClientsAreReleasedWithoutAWrite) {
  const bool use_tls = GetParam();
  HttpServerOptions options;
  options.threads = 2;
  std::optional<PemPair> cert;
  if (use_tls) {
    auto generated = GenerateSelfSigned("berth-test", {"127.0.0.1"});
    ASSERT_TRUE(generated.ok());
    cert = *generated;
    options.tls = TlsServerConfig{cert->cert_pem, cert->key_pem};
  }
  std::mutex mu;
  std::vector<std::shared_ptr<StreamSink>> sinks;
  auto server = HttpServer::Start(options, [&](HttpRequest&) {
    HttpResponse resp;
    resp.stream = [&](std::shared_ptr<StreamSink> sink) {
      std::lock_guard lock(mu);
      sinks.push_back(sink);
    };
    return resp;
  });
  ASSERT_TRUE(server.ok());
  namespace asio = boost::asio;
  namespace beast = boost::beast;
  namespace http = beast::http;
  asio::io_context io;
  asio::ssl::context ctx(asio::ssl::context::tls_client);
  const int n = use_tls ? 20 : 200;
  const std::string get = "GET /api/v1/pods?watch=1 HTTP/1.1\r\nHost: x\r\n\r\n";
  {
    std::vector<std::unique_ptr<RawClient>> plain;
    std::vector<std::unique_ptr<beast::ssl_stream<beast::tcp_stream>>> secure;
    for (int i = 0; i < n; ++i) {
      if (use_tls) {
        auto& s =
            secure.emplace_back(std::make_unique<beast::ssl_stream<beast::tcp_stream>>(io, ctx));
        beast::get_lowest_layer(*s).connect(
            asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), (*server)->port()));
        s->handshake(asio::ssl::stream_base::client);
        asio::write(*s, asio::buffer(get));
      } else {
        ASSERT_TRUE(plain.emplace_back(std::make_unique<RawClient>((*server)->port()))->Send(get));
      }
    }
    ASSERT_TRUE(Eventually([&] { return (*server)->open_streams() == static_cast<size_t>(n); }));
    EXPECT_EQ((*server)->open_connections(), static_cast<size_t>(n));
  }  // every client closes its socket; nothing is written to the streams
  EXPECT_TRUE(Eventually([&] { return (*server)->open_connections() == 0; }))
      << (*server)->open_connections() << " connections still open";
  EXPECT_EQ((*server)->open_streams(), 0u);
  std::lock_guard lock(mu);
  ASSERT_EQ(sinks.size(), static_cast<size_t>(n));
  for (const auto& sink : sinks) EXPECT_TRUE(sink->closed());
}

// A stream that ends on the server's side leaves its kept-alive connection usable: the read
// posted for the client's leaving is withdrawn without losing the stream's place.
TEST_P(GoneClientTest, ConnectionServesTheNextRequestAfterAStreamEnds) {
  const bool use_tls = GetParam();
  HttpServerOptions options;
  std::optional<PemPair> cert;
  if (use_tls) {
    auto generated = GenerateSelfSigned("berth-test", {"127.0.0.1"});
    ASSERT_TRUE(generated.ok());
    cert = *generated;
    options.tls = TlsServerConfig{cert->cert_pem, cert->key_pem};
  }
  auto server = HttpServer::Start(options, [](HttpRequest& r) {
    if (r.path != "/watch") return Echo(r);
    HttpResponse resp;
    resp.stream = [](std::shared_ptr<StreamSink> sink) {
      sink->Write("tick\n");
      sink->Close();
    };
    return resp;
  });
  ASSERT_TRUE(server.ok());
  namespace asio = boost::asio;
  namespace beast = boost::beast;
  namespace http = beast::http;
  asio::io_context io;
  asio::ssl::context ctx(asio::ssl::context::tls_client);
  beast::ssl_stream<beast::tcp_stream> secure(io, ctx);
  beast::tcp_stream plain(io);
  const asio::ip::tcp::endpoint at(asio::ip::make_address("127.0.0.1"), (*server)->port());
  beast::flat_buffer buffer;
  auto exchange = [&](const std::string& target) {
    http::request<http::empty_body> req{http::verb::get, target, 11};
    req.set(http::field::host, "x");
    http::response<http::string_body> res;
    if (use_tls) {
      http::write(secure, req);
      http::read(secure, buffer, res);
    } else {
      http::write(plain, req);
      http::read(plain, buffer, res);
    }
    return res.body();
  };
  if (use_tls) {
    beast::get_lowest_layer(secure).connect(at);
    secure.handshake(asio::ssl::stream_base::client);
  } else {
    plain.connect(at);
  }
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(exchange("/watch"), "tick\n");
    EXPECT_EQ(exchange("/x"), "GET /x ");
  }
  EXPECT_EQ((*server)->open_connections(), 1u);
}

INSTANTIATE_TEST_SUITE_P(PlainAndTls, GoneClientTest, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "Tls" : "Plain"; });

}  // namespace
}  // namespace berth::net
