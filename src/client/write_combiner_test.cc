#include "client/write_combiner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
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

// Holds every write's answer until the test releases them: 201 for a body "ok-*", 409 for any
// other. Counts the release rounds in which writes arrived. Nothing here depends on how fast the
// machine is: the tests release only once every unanswered write is either held here or
// waiting in the combiner.
struct HeldServer {
  HeldServer() {
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
        changed.notify_all();
      };
      return r;
    });
    EXPECT_TRUE(started.ok());
    server = std::move(started).value();
  }

  // Answers every held write once `settled` (called under the lock) holds; false once `done`
  // holds instead.
  bool ReleaseWhen(const std::function<bool()>& settled, const std::function<bool()>& done) {
    std::vector<std::function<void()>> due;
    {
      std::unique_lock lock(mu);
      while (!(settled() && !held.empty()) && !done())
        changed.wait_for(lock, std::chrono::milliseconds(1));
      if (held.empty()) return false;
      due.swap(held);
      answered += static_cast<int>(due.size());
      ++round;
    }
    for (auto& answer : due) answer();
    return true;
  }

  std::mutex mu;
  std::condition_variable changed;
  std::vector<std::function<void()>> held;
  int round = 0, received = 0, answered = 0;
  std::set<int> rounds_with_arrivals;
  std::unique_ptr<net::HttpServer> server;
};

// Writes sent from threads of their own, each counted when answered (and when a success).
struct Senders {
  explicit Senders(WriteCombiner& c) : combiner(c) {}
  void Send(std::string body) {
    threads.emplace_back([this, body] {
      if (combiner.Send("/bind", body).ok()) ++ok;
      ++finished;
    });
  }
  void Join() {
    for (auto& t : threads)
      if (t.joinable()) t.join();
  }
  WriteCombiner& combiner;
  std::atomic<int> ok{0}, finished{0};
  std::vector<std::thread> threads;
};

TEST(WriteCombinerTest, ALoneWriteGoesAloneAndLargeBatchesOpenMoreSlots) {
  HeldServer held;
  auto rest = RestTo(*held.server);
  WriteCombiner combiner(rest.get(), /*min_slots=*/1, /*max_slots=*/4);
  Senders senders(combiner);
  auto send = [&](std::string body) { senders.Send(std::move(body)); };
  std::atomic<int>& ok = senders.ok;
  std::atomic<int>& finished = senders.finished;
  auto all_finished = [&](int n) { return [&, n] { return finished.load() == n; }; };
  // A lone write goes alone and leaves the one slot as it was.
  send("ok-alone");
  ASSERT_TRUE(held.ReleaseWhen([&] { return held.received == 1; }, all_finished(1)));
  senders.threads.back().join();
  EXPECT_EQ(combiner.slots(), 1);
  // While "ok-first" is out, 30 writes wait; the slot it frees takes them as one batch, which
  // opens another slot.
  send("ok-first");
  for (int i = 0; i < 30; ++i) send("ok-" + std::to_string(i));
  // "ok-first" is answered only once the 30 wait behind it.
  ASSERT_TRUE(held.ReleaseWhen([&] { return held.received == 2 && combiner.waiting() == 30; },
                               all_finished(32)));
  ASSERT_TRUE(held.ReleaseWhen([&] { return held.received == 32; }, all_finished(32)));
  senders.Join();
  EXPECT_EQ(ok.load(), 32);
  EXPECT_GT(combiner.slots(), 1);
}

// With small batches, writes that pile up go at most `max_batch` together: the rest wait for a
// slot, and full batches open more slots (for a server that answers a connection's requests one
// after another).
TEST(WriteCombinerTest, SmallBatchesLeaveTheRestWaitingAndOpenSlots) {
  HeldServer held;
  auto rest = RestTo(*held.server);
  WriteCombiner combiner(rest.get(), /*min_slots=*/1, /*max_slots=*/3, /*max_batch=*/4);
  Senders senders(combiner);
  auto send = [&](std::string body) { senders.Send(std::move(body)); };
  std::atomic<int>& ok = senders.ok;
  std::atomic<int>& finished = senders.finished;
  send("ok-first");
  for (int i = 0; i < 30; ++i) send("ok-" + std::to_string(i));
  ASSERT_TRUE(held.ReleaseWhen([&] { return held.received == 1 && combiner.waiting() == 30; },
                               [&] { return finished.load() == 31; }));
  // Once nothing is on its way: what the server holds went in batches of at most 4 over the
  // slots open, and the rest still waits.
  auto settled = [&] {
    return static_cast<size_t>(held.received - held.answered) + combiner.waiting() ==
           static_cast<size_t>(31 - held.answered);
  };
  ASSERT_TRUE(held.ReleaseWhen(
      [&] {
        if (!settled()) return false;
        EXPECT_LE(held.received - held.answered, 4 * combiner.slots());
        EXPECT_GT(combiner.waiting(), 0u);
        return true;
      },
      [&] { return finished.load() == 31; }));
  while (held.ReleaseWhen(settled, [&] { return finished.load() == 31; })) {
  }
  senders.Join();
  EXPECT_EQ(ok.load(), 31);
  EXPECT_GT(combiner.slots(), 1);
}

// 40 writes on two slots: sent one per round trip they would arrive over 20 rounds at least;
// waiting together they go in a few batches. Each caller gets its own answer.
TEST(WriteCombinerTest, WritesThatPileUpGoTogetherAndEachGetsItsOwnAnswer) {
  HeldServer held;
  auto rest = RestTo(*held.server);
  WriteCombiner combiner(rest.get(), /*min_slots=*/2, /*max_slots=*/2);
  std::vector<VoidResult> results(40);
  std::atomic<int> finished{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 40; ++i) {
    threads.emplace_back([&, i] {
      const std::string body = (i % 4 == 3 ? "taken-" : "ok-") + std::to_string(i);
      results[i] = combiner.Send("/bind", body);
      ++finished;
    });
  }
  // Released whenever every unanswered write is held by the server or waits in the combiner
  // (none is on its way).
  while (held.ReleaseWhen(
      [&] {
        return static_cast<size_t>(held.received - held.answered) + combiner.waiting() ==
               static_cast<size_t>(40 - held.answered);
      },
      [&] { return finished.load() == 40; })) {
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
  std::lock_guard lock(held.mu);
  EXPECT_EQ(held.received, 40);
  // Two batches first, then the 38 that waited: at most 32 in one batch, the rest in the other
  // freed slot.
  EXPECT_LE(held.rounds_with_arrivals.size(), 3u);
}

}  // namespace
}  // namespace berth::client
