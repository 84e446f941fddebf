#include "net/http_client.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "net/http_server.h"
#include "net/tls_certs.h"

namespace berth::net {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

std::unique_ptr<HttpClient> ClientOf(const HttpServer& server, milliseconds timeout) {
  HttpClientOptions options;
  options.server = fmt::format("http://127.0.0.1:{}", server.port());
  options.timeout = timeout;
  auto client = HttpClient::Create(options);
  EXPECT_TRUE(client.ok());
  return std::move(client).value();
}

// Plain connections are read and written on the calling thread: bodies larger than the socket
// buffers (a write that must wait for room, an answer in many reads) arrive whole.
TEST(HttpClientTest, LargeBodiesBothWays) {
  auto server = HttpServer::Start({}, [](HttpRequest& r) {
    HttpResponse resp;
    resp.body = r.body + r.body;
    return resp;
  });
  ASSERT_TRUE(server.ok());
  auto client = ClientOf(**server, milliseconds(5000));
  std::string body;
  for (int i = 0; body.size() < (3 << 20); ++i) body += fmt::format("{},", i);
  for (int round = 0; round < 2; ++round) {
    auto res = client->Do("POST", "/echo", body);
    ASSERT_TRUE(res.ok()) << res.error().message;
    EXPECT_EQ(res->status, 200);
    ASSERT_EQ(res->body.size(), 2 * body.size());
    EXPECT_EQ(res->body, body + body);
  }
}

// Pipelined requests are answered in order, each with its own status and body.
TEST(HttpClientTest, PipelinedRequestsAreAnsweredInOrder) {
  auto server = HttpServer::Start({}, [](HttpRequest& r) {
    HttpResponse resp;
    resp.status = r.path == "/missing" ? 404 : 201;
    resp.body = r.method + " " + r.path + " " + r.body;
    return resp;
  });
  ASSERT_TRUE(server.ok());
  auto client = ClientOf(**server, milliseconds(5000));
  std::vector<std::string> bodies;
  std::vector<ClientRequest> requests;
  for (int i = 0; i < 40; ++i) bodies.push_back(std::string(100 + i * 50, 'a' + i % 26));
  for (int i = 0; i < 40; ++i) {
    requests.push_back({"POST", i == 7 ? "/missing" : "/e", bodies[i]});
  }
  for (int round = 0; round < 2; ++round) {  // the second on the pooled connection
    auto results = client->DoPipelined(requests);
    ASSERT_EQ(results.size(), requests.size());
    for (int i = 0; i < 40; ++i) {
      ASSERT_TRUE(results[i].ok()) << i << ": " << results[i].error().message;
      EXPECT_EQ(results[i]->status, i == 7 ? 404 : 201);
      EXPECT_EQ(results[i]->body, fmt::format("POST {} {}", i == 7 ? "/missing" : "/e", bodies[i]));
    }
  }
}

// A server that closes the connection after an answer has dropped the requests behind it:
// they are errors (their outcome unknown to the caller), the ones before are answers.
TEST(HttpClientTest, PipelinedRequestsBehindAClosedConnectionAreErrors) {
  namespace asio = boost::asio;
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  std::thread server([&] {
    asio::ip::tcp::socket socket(io);
    acceptor.accept(socket);
    std::string got;
    char buf[4096];
    boost::system::error_code ec;
    while (got.find("three") == std::string::npos && !ec) {
      got.append(buf, socket.read_some(asio::buffer(buf), ec));
    }
    asio::write(socket,
                asio::buffer(std::string("HTTP/1.1 201 Created\r\nContent-Length: 3\r\n\r\none"
                                         "HTTP/1.1 200 OK\r\nConnection: close\r\n"
                                         "Content-Length: 3\r\n\r\ntwo")),
                ec);
    socket.close();
  });
  HttpClientOptions options;
  options.server = fmt::format("http://127.0.0.1:{}", acceptor.local_endpoint().port());
  auto client = HttpClient::Create(options);
  ASSERT_TRUE(client.ok());
  std::vector<ClientRequest> requests = {
      {"POST", "/e", "one"}, {"POST", "/e", "two"}, {"POST", "/e", "three"}};
  auto results = (*client)->DoPipelined(requests);
  server.join();
  ASSERT_EQ(results.size(), 3u);
  ASSERT_TRUE(results[0].ok()) << results[0].error().message;
  EXPECT_EQ(results[0]->status, 201);
  EXPECT_EQ(results[0]->body, "one");
  ASSERT_TRUE(results[1].ok()) << results[1].error().message;
  EXPECT_EQ(results[1]->body, "two");
  ASSERT_FALSE(results[2].ok());
  EXPECT_EQ(results[2].error().code, ErrorCode::kUnavailable);
  EXPECT_THAT(results[2].error().message, HasSubstr("POST http://127.0.0.1:"));
}

// A kept-alive connection the server closed while it sat in the pool: the request goes on a
// fresh connection instead of failing.
TEST(HttpClientTest, PooledConnectionClosedByTheServerIsReplaced) {
  HttpServerOptions options;
  options.idle_timeout_seconds = 1;
  std::atomic<int> calls{0};
  auto server = HttpServer::Start(options, [&](HttpRequest&) {
    ++calls;
    HttpResponse resp;
    resp.body = "{}";
    return resp;
  });
  ASSERT_TRUE(server.ok());
  auto client = ClientOf(**server, milliseconds(2000));
  ASSERT_TRUE(client->Do("POST", "/filter", "{}").ok());
  std::this_thread::sleep_for(milliseconds(1500));  // the server drops the idle connection
  auto res = client->Do("POST", "/filter", "{}");
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(calls.load(), 2);
}

// The timeout holds on a reused connection too, and a timed-out request is not repeated on
// another connection; the next request gets an answer.
TEST(HttpClientTest, TimeoutOnAReusedConnectionIsNotRetried) {
  std::atomic<int> slow_calls{0};
  auto server = HttpServer::Start({}, [&](HttpRequest& r) {
    if (r.body == "slow") {
      ++slow_calls;
      std::this_thread::sleep_for(milliseconds(1000));
    }
    HttpResponse resp;
    resp.body = r.body;
    return resp;
  });
  ASSERT_TRUE(server.ok());
  auto client = ClientOf(**server, milliseconds(200));
  ASSERT_TRUE(client->Do("POST", "/x", "fast").ok());
  const auto start = std::chrono::steady_clock::now();
  auto slow = client->Do("POST", "/x", "slow");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.error().code, ErrorCode::kTimeout) << slow.error().message;
  EXPECT_THAT(slow.error().message, HasSubstr(fmt::format("127.0.0.1:{}/x", (*server)->port())));
  EXPECT_GE(took, milliseconds(190));
  EXPECT_LT(took, milliseconds(700));
  EXPECT_EQ(slow_calls.load(), 1);
  auto after = client->Do("POST", "/x", "fast");
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(after->body, "fast");
}

// A server that accepts and never answers: the timeout ends the request.
TEST(HttpClientTest, SilentServerTimesOut) {
  auto server = HttpServer::Start({}, [](HttpRequest&) {
    std::this_thread::sleep_for(milliseconds(800));
    return HttpResponse{};
  });
  ASSERT_TRUE(server.ok());
  auto client = ClientOf(**server, milliseconds(100));
  const auto start = std::chrono::steady_clock::now();
  auto res = client->Do("GET", "/");
  ASSERT_FALSE(res.ok());
  EXPECT_EQ(res.error().code, ErrorCode::kTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(600));
}

// TLS connections are read and written synchronously on the calling thread as plain ones are
// (no event loop turns): large bodies both ways, the deadline, and reuse after a timeout.
struct TlsServer {
  std::unique_ptr<HttpServer> server;
  std::string ca_pem;
};

TlsServer StartTls(HttpHandler handler) {
  auto cert = GenerateSelfSigned("berth-test", {"127.0.0.1"});
  EXPECT_TRUE(cert.ok());
  HttpServerOptions options;
  options.tls = TlsServerConfig{cert->cert_pem, cert->key_pem};
  auto server = HttpServer::Start(options, std::move(handler));
  EXPECT_TRUE(server.ok());
  return {std::move(server).value(), cert->cert_pem};
}

std::unique_ptr<HttpClient> TlsClientOf(const TlsServer& tls, milliseconds timeout,
                                        const std::string& ca_pem) {
  HttpClientOptions options;
  options.server = fmt::format("https://127.0.0.1:{}", tls.server->port());
  options.ca_pem = ca_pem;
  options.timeout = timeout;
  auto client = HttpClient::Create(options);
  EXPECT_TRUE(client.ok());
  return std::move(client).value();
}

TEST(HttpClientTest, TlsLargeBodiesDeadlinesAndReuse) {
  auto tls = StartTls([](HttpRequest& r) {
    if (r.body == "slow") std::this_thread::sleep_for(milliseconds(800));
    HttpResponse resp;
    resp.body = r.body + r.body;
    return resp;
  });
  auto client = TlsClientOf(tls, milliseconds(300), tls.ca_pem);
  std::string body;
  for (int i = 0; body.size() < (3 << 20); ++i) body += fmt::format("{},", i);
  for (int round = 0; round < 2; ++round) {
    auto res = client->Do("POST", "/echo", body, "application/json", "application/json",
                          milliseconds(5000));
    ASSERT_TRUE(res.ok()) << res.error().message;
    ASSERT_EQ(res->body.size(), 2 * body.size());
    EXPECT_EQ(res->body, body + body);
  }
  const auto start = std::chrono::steady_clock::now();
  auto slow = client->Do("POST", "/echo", "slow");
  ASSERT_FALSE(slow.ok());
  EXPECT_EQ(slow.error().code, ErrorCode::kTimeout) << slow.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, milliseconds(700));
  auto after = client->Do("POST", "/echo", "ab");
  ASSERT_TRUE(after.ok()) << after.error().message;
  EXPECT_EQ(after->body, "abab");
}

TEST(HttpClientTest, TlsHandshakeWithTheWrongCaNamesTheServer) {
  auto tls = StartTls([](HttpRequest&) { return HttpResponse{}; });
  auto other = GenerateSelfSigned("someone-else", {"127.0.0.1"});
  ASSERT_TRUE(other.ok());
  auto client = TlsClientOf(tls, milliseconds(2000), other->cert_pem);
  auto res = client->Do("GET", "/");
  ASSERT_FALSE(res.ok());
  EXPECT_THAT(res.error().message, HasSubstr("TLS handshake failed"));
  EXPECT_THAT(res.error().message, HasSubstr(fmt::format("127.0.0.1:{}", tls.server->port())));
}

// A watch over TLS delivers its lines as they come, and Cancel() from another thread ends it
// at once although the server keeps the stream open.
TEST(HttpClientTest, TlsStreamDeliversLinesAndIsCancelledFromAnotherThread) {
  std::shared_ptr<StreamSink> kept;
  std::mutex mu;
  auto tls = StartTls([&](HttpRequest&) {
    HttpResponse resp;
    resp.stream = [&](std::shared_ptr<StreamSink> sink) {
      for (int i = 0; i < 3; ++i) sink->Write(fmt::format("line {}\n", i));
      std::lock_guard lock(mu);
      kept = sink;  // left open
    };
    return resp;
  });
  auto client = TlsClientOf(tls, milliseconds(2000), tls.ca_pem);
  StreamHandle handle;
  std::vector<std::string> lines;
  std::atomic<bool> got_three{false};
  std::thread watcher([&] {
    auto status = client->Stream(
        "/watch", "application/json",
        [&](std::string_view line) {
          lines.emplace_back(line);
          if (lines.size() == 3) got_three = true;
          return true;
        },
        &handle, milliseconds(30000));
    EXPECT_TRUE(status.ok());
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!got_three && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(5));
  ASSERT_TRUE(got_three.load());
  const auto cancelled_at = std::chrono::steady_clock::now();
  handle.Cancel();
  watcher.join();
  EXPECT_LT(std::chrono::steady_clock::now() - cancelled_at, milliseconds(1000));
  EXPECT_EQ(lines, (std::vector<std::string>{"line 0", "line 1", "line 2"}));
  EXPECT_TRUE(handle.cancelled());
}

}  // namespace
}  // namespace berth::net
