#include "net/http_client.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "net/http_server.h"

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

}  // namespace
}  // namespace berth::net
