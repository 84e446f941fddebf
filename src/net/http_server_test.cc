#include "net/http_server.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <thread>

namespace berth::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

// A minimal blocking client for the tests: one connection, keep-alive.
class TestClient {
 public:
  explicit TestClient(uint16_t port) : stream_(io_) {
    stream_.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  }
  http::response<http::string_body> Do(http::verb verb, const std::string& target,
                                       const std::string& body = "") {
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.body() = body;
    req.prepare_payload();
    http::write(stream_, req);
    http::response<http::string_body> res;
    http::read(stream_, buffer_, res);
    return res;
  }

 private:
  asio::io_context io_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
};

TEST(HttpServerTest, ServesRequestsWithDecodedQueryOnKeepAliveConnection) {
  auto server = HttpServer::Start({}, [](HttpRequest& r) {
    HttpResponse resp;
    resp.content_type = "text/plain";
    resp.body = r.method + " " + r.path + " sel=" + r.Query("labelSelector").value_or("-") +
                " body=" + r.body;
    return resp;
  });
  ASSERT_TRUE(server.ok()) << server.error().message;
  TestClient client((*server)->port());
  auto a = client.Do(http::verb::get, "/api/v1/pods?labelSelector=app+in+%28web%2Cdb%29");
  EXPECT_EQ(a.result_int(), 200);
  EXPECT_EQ(a.body(), "GET /api/v1/pods sel=app in (web,db) body=");
  auto b = client.Do(http::verb::post, "/x", "hello");
  EXPECT_EQ(b.body(), "POST /x sel=- body=hello");
}

TEST(HttpServerTest, StreamsChunksWrittenFromAnotherThread) {
  std::shared_ptr<StreamSink> kept;
  std::mutex mu;
  std::condition_variable cv;
  auto server = HttpServer::Start({}, [&](HttpRequest&) {
    HttpResponse resp;
    resp.stream = [&](std::shared_ptr<StreamSink> sink) {
      std::lock_guard lock(mu);
      kept = sink;
      cv.notify_all();
    };
    return resp;
  });
  ASSERT_TRUE(server.ok());
  std::thread producer([&] {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return kept != nullptr; });
    for (int i = 0; i < 100; ++i) EXPECT_TRUE(kept->Write("line " + std::to_string(i) + "\n"));
    kept->Close();
  });
  TestClient client((*server)->port());
  auto res = client.Do(http::verb::get, "/watch");
  producer.join();
  std::string expected;
  for (int i = 0; i < 100; ++i) expected += "line " + std::to_string(i) + "\n";
  EXPECT_EQ(res.body(), expected);
  EXPECT_TRUE(kept->closed());
  EXPECT_FALSE(kept->Write("late"));
}

// Shared chunks (one watch event for many watchers) and owned ones keep their order; pauses
// let the connection go idle between bursts, so every burst needs its own wake-up.
TEST(HttpServerTest, StreamsSharedChunksInBurstsInOrder) {
  std::shared_ptr<StreamSink> kept;
  std::mutex mu;
  std::condition_variable cv;
  auto server = HttpServer::Start({}, [&](HttpRequest&) {
    HttpResponse resp;
    resp.stream = [&](std::shared_ptr<StreamSink> sink) {
      std::lock_guard lock(mu);
      kept = sink;
      cv.notify_all();
    };
    return resp;
  });
  ASSERT_TRUE(server.ok());
  std::string expected;
  for (int i = 0; i < 500; ++i) expected += "event " + std::to_string(i) + "\n";
  std::thread producer([&] {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return kept != nullptr; });
    for (int i = 0; i < 500; ++i) {
      std::string line = "event " + std::to_string(i) + "\n";
      if (i % 2 == 0) {
        EXPECT_TRUE(kept->Write(std::make_shared<const std::string>(std::move(line))));
      } else {
        EXPECT_TRUE(kept->Write(std::move(line)));
      }
      if (i % 50 == 49) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    kept->Close();
  });
  TestClient client((*server)->port());
  auto res = client.Do(http::verb::get, "/watch");
  producer.join();
  EXPECT_EQ(res.body(), expected);
}

// Pinned connections: every request of a connection is handled on the same I/O thread, the
// connections are dealt over all the threads, and streams work from their own loop too.
// A deferred answer does not hold the I/O thread: with one thread, another connection is
// served while the first waits, and the late reply (from another thread) carries the
// handler's headers and its own, on a connection that stays usable.
TEST(HttpServerTest, DeferredReplyLeavesTheThreadToOtherConnections) {
  HttpServerOptions options;
  options.threads = 1;
  options.pin_connections = true;
  std::mutex mu;
  std::condition_variable cv;
  std::function<void(HttpResponse)> pending;
  auto server = HttpServer::Start(options, [&](HttpRequest& r) {
    HttpResponse resp;
    if (r.path == "/slow") {
      resp.headers.emplace_back("X-First", "handler");
      resp.deferred = [&](std::function<void(HttpResponse)> reply) {
        std::lock_guard lock(mu);
        pending = std::move(reply);
        cv.notify_all();
      };
      return resp;
    }
    resp.body = "fast";
    return resp;
  });
  ASSERT_TRUE(server.ok()) << server.error().message;
  TestClient slow_client((*server)->port());
  http::response<http::string_body> slow;
  std::thread waiter([&] { slow = slow_client.Do(http::verb::post, "/slow", "x"); });
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(10), [&] { return pending != nullptr; }));
  }
  TestClient other((*server)->port());
  EXPECT_EQ(other.Do(http::verb::get, "/other").body(), "fast");
  std::thread([&] {
    HttpResponse late;
    late.status = 201;
    late.body = "late";
    late.headers.emplace_back("X-Second", "reply");
    std::lock_guard lock(mu);
    pending(std::move(late));
  }).join();
  waiter.join();
  EXPECT_EQ(slow.result_int(), 201);
  EXPECT_EQ(slow.body(), "late");
  EXPECT_EQ(slow["X-First"], "handler");
  EXPECT_EQ(slow["X-Second"], "reply");
  EXPECT_EQ(slow_client.Do(http::verb::get, "/again").body(), "fast");
}

// A client that pipelines (several requests in one write) gets every answer, in order, and the
// requests behind a deferred one are handled without waiting for its answer.
TEST(HttpServerTest, PipelinedRequestsAreHandledTogetherAndAnsweredInOrder) {
  HttpServerOptions options;
  options.threads = 1;
  options.pin_connections = true;
  std::mutex mu;
  std::vector<std::string> handled;
  std::vector<std::function<void(HttpResponse)>> replies;
  auto server = HttpServer::Start(options, [&](HttpRequest& r) {
    std::lock_guard lock(mu);
    handled.push_back(r.path + ":" + r.body);
    HttpResponse resp;
    if (r.path == "/write") {
      const std::string body = r.body;
      resp.deferred = [&, body](std::function<void(HttpResponse)> reply) {
        std::lock_guard lock(mu);
        // Answered only once every write of the batch is in: all were handled before any
        // answer was awaited.
        replies.push_back([reply, body](HttpResponse) {
          HttpResponse done;
          done.status = 201;
          done.body = "wrote " + body;
          reply(std::move(done));
        });
        if (replies.size() == 3) {
          for (auto& r : replies) r({});
        }
      };
      return resp;
    }
    resp.body = "read " + r.path;
    return resp;
  });
  ASSERT_TRUE(server.ok()) << server.error().message;
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  socket.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), (*server)->port()));
  std::string out;
  auto request = [&](std::string_view method, std::string_view path, std::string_view body) {
    out += fmt::format("{} {} HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\n\r\n{}", method, path,
                       body.size(), body);
  };
  request("POST", "/write", "a");
  request("POST", "/write", "b");
  request("GET", "/get", "");
  request("POST", "/write", "c");
  asio::write(socket, asio::buffer(out));
  beast::flat_buffer buffer;
  std::vector<std::string> bodies;
  for (int i = 0; i < 4; ++i) {
    http::response<http::string_body> res;
    http::read(socket, buffer, res);
    bodies.push_back(std::to_string(res.result_int()) + " " + res.body());
  }
  EXPECT_EQ(bodies, (std::vector<std::string>{"201 wrote a", "201 wrote b", "200 read /get",
                                              "201 wrote c"}));
  std::lock_guard lock(mu);
  EXPECT_EQ(handled, (std::vector<std::string>{"/write:a", "/write:b", "/get:", "/write:c"}));
}

// A request that is only partly there when the ones before it are answered is read as usual.
TEST(HttpServerTest, APartialPipelinedRequestIsReadAfterTheAnswersBeforeIt) {
  auto server = HttpServer::Start({}, [](HttpRequest& r) {
    HttpResponse resp;
    resp.body = r.path + " " + r.body;
    return resp;
  });
  ASSERT_TRUE(server.ok()) << server.error().message;
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  socket.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), (*server)->port()));
  asio::write(socket, asio::buffer(std::string("POST /one HTTP/1.1\r\nHost: x\r\nContent-Length: 1"
                                               "\r\n\r\n1POST /two HTTP/1.1\r\nHost: x\r\n"
                                               "Content-Length: 5\r\n\r\n12")));
  beast::flat_buffer buffer;
  http::response<http::string_body> first;
  http::read(socket, buffer, first);
  EXPECT_EQ(first.body(), "/one 1");
  asio::write(socket, asio::buffer(std::string("345")));
  http::response<http::string_body> second;
  http::read(socket, buffer, second);
  EXPECT_EQ(second.body(), "/two 12345");
}

TEST(HttpServerTest, PinnedConnectionsStayOnOneThreadEach) {
  HttpServerOptions options;
  options.threads = 2;
  options.pin_connections = true;
  std::mutex mu;
  std::map<std::string, std::set<std::thread::id>> threads_by_client;
  auto server = HttpServer::Start(options, [&](HttpRequest& r) {
    HttpResponse resp;
    if (r.path == "/watch") {
      resp.stream = [](std::shared_ptr<StreamSink> sink) {
        std::thread([sink] {
          for (int i = 0; i < 3; ++i) sink->Write("tick\n");
          sink->Close();
        }).detach();
      };
      return resp;
    }
    std::lock_guard lock(mu);
    threads_by_client[r.body].insert(std::this_thread::get_id());
    resp.body = r.body;
    return resp;
  });
  ASSERT_TRUE(server.ok()) << server.error().message;
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&, c] {
      TestClient client((*server)->port());
      for (int i = 0; i < 20; ++i) {
        auto res = client.Do(http::verb::post, "/verb", "client" + std::to_string(c));
        EXPECT_EQ(res.body(), "client" + std::to_string(c));
      }
      EXPECT_EQ(client.Do(http::verb::get, "/watch").body(), "tick\ntick\ntick\n");
    });
  }
  for (auto& t : clients) t.join();
  std::set<std::thread::id> all;
  ASSERT_EQ(threads_by_client.size(), 4u);
  for (const auto& [client, ids] : threads_by_client) {
    EXPECT_EQ(ids.size(), 1u) << client;
    all.insert(ids.begin(), ids.end());
  }
  EXPECT_EQ(all.size(), 2u);
}

TEST(HttpServerTest, StopEndsOpenStreams) {
  std::mutex mu;
  std::shared_ptr<StreamSink> kept;  // set on the server's thread
  auto server = HttpServer::Start({}, [&](HttpRequest&) {
    HttpResponse resp;
    resp.stream = [&](std::shared_ptr<StreamSink> sink) {
      std::lock_guard lock(mu);
      kept = sink;
    };
    return resp;
  });
  ASSERT_TRUE(server.ok());
  std::thread t([&] {
    TestClient client((*server)->port());
    try {
      client.Do(http::verb::get, "/watch");
    } catch (...) {
    }
  });
  auto stream = [&] {
    std::lock_guard lock(mu);
    return kept;
  };
  while (!stream()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  (*server)->Stop();
  t.join();
  EXPECT_TRUE(stream()->closed());
}

TEST(HttpServerTest, BindErrorNamesTheAddress) {
  auto bad =
      HttpServer::Start({.bind_address = "not-an-ip"}, [](HttpRequest&) { return HttpResponse{}; });
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("not-an-ip"), std::string::npos);
}

TEST(HttpServerTest, PercentDecoding) {
  EXPECT_EQ(PercentDecode("a%2Cb+c", true), "a,b c");
  EXPECT_EQ(PercentDecode("a+b%", false), "a+b%");
}

}  // namespace
}  // namespace berth::net
