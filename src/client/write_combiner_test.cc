#include "client/write_combiner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "net/http_server.h"

namespace berth::client {
namespace {

std::unique_ptr<RestClient> RestTo(const net::HttpServer& server) {
  net::HttpClientOptions o;
  o.server = "http://127.0.0.1:" + std::to_string(server.port());
  o.timeout = std::chrono::seconds(10);
  auto http = net::HttpClient::Create(o);
  EXPECT_TRUE(http.ok());
  return std::make_unique<RestClient>(std::move(http).value(), RestOptions{.qps = 0});
}

// Answers the writes it holds every 50 ms (a slow API server): 201 for a body "ok-*", 409 for
// any other. Counts the rounds in which writes arrived.
struct SlowServer {
  SlowServer() {
    auto started = net::HttpServer::Start({}, [this](net::HttpRequest& req) {
      net::HttpResponse r;
      const bool ok = req.body.rfind("ok-", 0) == 0;
      r.deferred = [this, ok](std::function<void(net::HttpResponse)> reply) {
        std::lock_guard lock(mu);
        ++received;
        rounds_with_arrivals.insert(round);
        held.push_back([reply, ok] {
          net::HttpResponse answer;
          answer.status = ok ? 201 : 409;
          answer.body = ok ? "{}" : R"({"kind":"Status","reason":"Conflict","message":"taken"})";
          reply(std::move(answer));
        });
      };
      return r;
    });
    EXPECT_TRUE(started.ok());
    server = std::move(started).value();
    answerer = std::thread([this] {
      while (!stop) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        std::vector<std::function<void()>> due;
        {
          std::lock_guard lock(mu);
          due.swap(held);
          ++round;
        }
        for (auto& answer : due) answer();
      }
    });
  }
  ~SlowServer() {
    stop = true;
    answerer.join();
  }
  std::mutex mu;
  std::vector<std::function<void()>> held;
  int round = 0, received = 0;
  std::set<int> rounds_with_arrivals;
  std::atomic<bool> stop{false};
  std::thread answerer;
  std::unique_ptr<net::HttpServer> server;
};

TEST(WriteCombinerTest, ALoneWriteGoesAloneAndLargeBatchesOpenMoreSlots) {
  SlowServer slow;
  auto rest = RestTo(*slow.server);
  WriteCombiner combiner(rest.get(), /*min_slots=*/1, /*max_slots=*/4);
  EXPECT_TRUE(combiner.Send("/bind", "ok-alone").ok());
  EXPECT_EQ(combiner.slots(), 1);
  // While the first of 30 writes is out, the others wait, and go as one batch, which opens
  // another slot.
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 30; ++i) {
    threads.emplace_back([&, i] {
      if (combiner.Send("/bind", "ok-" + std::to_string(i)).ok()) ++ok;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 30);
  EXPECT_GT(combiner.slots(), 1);
}

// 40 writes on two slots: sent one per round trip they would arrive over at least 20 of the
// server's rounds; waiting together they go in a few batches. Each caller gets its own answer.
TEST(WriteCombinerTest, WritesThatPileUpGoTogetherAndEachGetsItsOwnAnswer) {
  SlowServer slow;
  auto rest = RestTo(*slow.server);
  WriteCombiner combiner(rest.get(), /*min_slots=*/2, /*max_slots=*/2);
  std::vector<VoidResult> results(40);
  std::vector<std::thread> threads;
  for (int i = 0; i < 40; ++i) {
    threads.emplace_back([&, i] {
      const std::string body = (i % 4 == 3 ? "taken-" : "ok-") + std::to_string(i);
      results[i] = combiner.Send("/bind", body);
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 40; ++i) {
    if (i % 4 == 3) {
      ASSERT_FALSE(results[i].ok()) << i;
      EXPECT_EQ(results[i].error().code, ErrorCode::kConflict) << i;
    } else {
      EXPECT_TRUE(results[i].ok()) << i << ": " << results[i].error().message;
    }
  }
  std::lock_guard lock(slow.mu);
  EXPECT_EQ(slow.received, 40);
  EXPECT_LT(slow.rounds_with_arrivals.size(), 20u);
}

}  // namespace
}  // namespace berth::client
