// NetworkTraffic against a Prometheus twin (the query API on 127.0.0.1): scores, one query per
// cache period, the fallback when Prometheus goes away, and args validation.
#include "plugins/networktraffic/networktraffic.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>

#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/testing/fake_handle.h"
#include "net/http_server.h"
#include "testing/builders.h"
#include "testing/fake_prometheus.h"

namespace berth {
namespace {

using ::testing::HasSubstr;
using testing::MakeNode;
using testing::MakePod;

// Scores every node of `snap`; without `pre`, as a profile that enables only Score runs it.
std::map<std::string, int64_t> ScoreAll(ScorePlugin& plugin, PreScorePlugin* pre,
                                        const Snapshot& snap) {
  CycleState state;
  auto pod = PodInfo::Create(MakePod().Name("p").Obj());
  std::vector<const NodeInfo*> nodes(snap.nodes().begin(), snap.nodes().end());
  if (pre) EXPECT_TRUE(pre->PreScore(state, *pod, nodes).IsSuccess());
  std::vector<NodeScore> scores;
  for (const NodeInfo* n : nodes) {
    int64_t s = 0;
    EXPECT_TRUE(plugin.Score(state, *pod, *n, &s).IsSuccess());
    scores.push_back({n, s});
  }
  EXPECT_TRUE(plugin.NormalizeScore(state, *pod, scores).IsSuccess());
  std::map<std::string, int64_t> out;
  for (const auto& s : scores) out[s.node->name()] = s.score;
  return out;
}

TEST(NetworkTrafficTest, QuietNodesScoreHighestFromOneCachedQuery) {
  testing::FakePrometheus prom({{"quiet", 1000}, {"busy", 4000}, {"half", 2000}});
  nlohmann::json raw = {{"prometheusAddress", prom.url()}, {"networkInterface", "ens192"}};
  auto reg = NetworkTrafficRegistration();
  auto args = reg.decode_args(&raw, "args");
  ASSERT_TRUE(args.ok()) << args.error().message;
  Snapshot snap = Snapshot::Build({MakeNode().Name("quiet").Obj(), MakeNode().Name("busy").Obj(),
                                   MakeNode().Name("half").Obj(), MakeNode().Name("new").Obj()},
                                  {});
  testing::FakeHandle handle(snap);
  auto plugin = reg.factory(args->get(), handle);
  ASSERT_TRUE(plugin.ok()) << plugin.error().message;
  auto* score = dynamic_cast<ScorePlugin*>(plugin->get());
  auto* pre = dynamic_cast<PreScorePlugin*>(plugin->get());
  ASSERT_NE(score, nullptr);
  for (int i = 0; i < 3; ++i) {
    auto got = ScoreAll(*score, pre, snap);
    EXPECT_EQ(got["quiet"], 75);
    EXPECT_EQ(got["half"], 50);
    EXPECT_EQ(got["busy"], 0);
    EXPECT_EQ(got["new"], 0);  // no sample: the fallback
  }
  EXPECT_EQ(prom.queries, 1);  // one query, reused within the cache period
  EXPECT_THAT(prom.last_query(),
              HasSubstr("node_network_receive_bytes_total{device=\"ens192\"}[2m]"));
  handle.fake_clock().Advance(std::chrono::seconds(6));
  ScoreAll(*score, pre, snap);
  EXPECT_EQ(prom.queries, 2);

  // Prometheus gone: every node scores the fallback, without waiting beyond the timeout.
  prom.Stop();
  handle.fake_clock().Advance(std::chrono::seconds(6));
  const auto start = std::chrono::steady_clock::now();
  auto down = ScoreAll(*score, pre, snap);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
  for (const auto& [node, s] : down) EXPECT_EQ(s, 0) << node;
}

// Enabled under `score` alone (the tutorials' configuration), PreScore never runs: Score fetches
// the traffic itself, once per cache period, and the quiet node still wins.
TEST(NetworkTrafficTest, ScoresWithoutPreScore) {
  testing::FakePrometheus prom({{"quiet", 1000}, {"busy", 4000}});
  nlohmann::json raw = {{"prometheusAddress", prom.url()}};
  auto reg = NetworkTrafficRegistration();
  auto args = reg.decode_args(&raw, "args");
  ASSERT_TRUE(args.ok()) << args.error().message;
  Snapshot snap =
      Snapshot::Build({MakeNode().Name("quiet").Obj(), MakeNode().Name("busy").Obj()}, {});
  testing::FakeHandle handle(snap);
  auto plugin = reg.factory(args->get(), handle);
  ASSERT_TRUE(plugin.ok()) << plugin.error().message;
  auto* score = dynamic_cast<ScorePlugin*>(plugin->get());
  ASSERT_NE(score, nullptr);
  EXPECT_NE(dynamic_cast<ScoresWithoutPreScore*>(plugin->get()), nullptr);
  for (int i = 0; i < 2; ++i) {
    auto got = ScoreAll(*score, nullptr, snap);
    EXPECT_EQ(got["quiet"], 75);
    EXPECT_EQ(got["busy"], 0);
  }
  EXPECT_EQ(prom.queries, 1);
}

TEST(NetworkTrafficTest, ArgsAreValidatedNamingThePath) {
  auto reg = NetworkTrafficRegistration();
  struct Case {
    nlohmann::json raw;
    std::string want;
  };
  for (const Case& c : std::vector<Case>{
           {nlohmann::json::object(), "args.prometheusAddress"},
           {{{"prometheusAddress", "127.0.0.1:9090"}}, "args.prometheusAddress"},
           {{{"prometheusAddress", "http://p:9090"}, {"networkInterface", "eth0\"}"}},
            "args.networkInterface"},
           {{{"prometheusAddress", "http://p:9090"}, {"timeRangeInMinutes", 0}},
            "args.timeRangeInMinutes"},
           {{{"prometheusAddress", "http://p:9090"}, {"timeout", "soon"}}, "args.timeout"},
           {{{"prometheusAddress", "http://p:9090"}, {"bogus", 1}}, "args.bogus"},
       }) {
    auto r = reg.decode_args(&c.raw, "args");
    ASSERT_FALSE(r.ok()) << c.raw.dump();
    EXPECT_THAT(r.error().message, HasSubstr(c.want)) << c.raw.dump();
  }
}

}  // namespace
}  // namespace berth
