// The web view's decision log: the JSON of one attempt, latest wins, bounds, concurrent use.
#include "ui/decision_log.h"

#include <gtest/gtest.h>

#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "config/load.h"
#include "plugins/registry.h"
#include "sim/simulator.h"
#include "testing/builders.h"

namespace berth::ui {
namespace {

using nlohmann::json;
using testing::MakeNode;
using testing::MakePod;

std::vector<Object> Cluster() {
  return {Object(MakeNode().Name("big").Capacity({{"cpu", "8"}, {"memory", "16Gi"}}).Obj()),
          Object(MakeNode().Name("small").Capacity({{"cpu", "2"}, {"memory", "4Gi"}}).Obj()),
          Object(MakeNode().Name("tiny").Capacity({{"cpu", "100m"}, {"memory", "1Gi"}}).Obj())};
}

SchedulingAttempt Attempt(std::vector<Object> objects) {
  Registry registry = InTreeRegistry();
  auto config = config::DefaultConfiguration(registry);
  auto r = sim::Simulate(config, registry, objects, {});
  EXPECT_TRUE(r.ok());
  return *r->results.at(0).last;
}

SchedulingAttempt Renamed(SchedulingAttempt a, const std::string& name) {
  auto pod = std::make_shared<Pod>(*a.pod);
  pod->metadata.name = name;
  a.pod = std::move(pod);
  return a;
}

TEST(DecisionJsonTest, ScheduledPodHasItsScoreMatrixAndRejections) {
  auto objects = Cluster();
  objects.push_back(Object(MakePod().Name("p").Req({{"cpu", "1"}}).Obj()));
  json d = json::parse(DecisionJson(Attempt(objects), 200));
  EXPECT_EQ(d["pod"], "default/p");
  EXPECT_EQ(d["outcome"], "Scheduled");
  EXPECT_EQ(d["node"], "big");
  EXPECT_EQ(d["filter"]["tiny"]["NodeResourcesFit"], "Insufficient cpu");
  EXPECT_TRUE(d["score"]["big"].contains("TaintToleration"));
  EXPECT_TRUE(d["finalScore"]["small"].contains("TaintToleration"));
  EXPECT_EQ(d["scorePlugins"].size(), d["scoreWeights"].size());
  EXPECT_TRUE(d["preFilter"].is_null());
  EXPECT_EQ(d["truncatedNodes"], 0);

  // Bounded like the decision records: the chosen node first.
  json small = json::parse(DecisionJson(Attempt(objects), 1));
  EXPECT_EQ(small["filter"].size(), 1u);
  EXPECT_TRUE(small["filter"].contains("big"));
  EXPECT_EQ(small["truncatedNodes"], 2);
}

TEST(DecisionJsonTest, ScoresAndRejectionsAreThoseOfTheAttempt) {
  // Written from values copied out of the attempt: the same numbers as the attempt's table.
  auto objects = Cluster();
  objects.push_back(Object(MakePod().Name("p").Req({{"cpu", "1"}}).Obj()));
  const SchedulingAttempt a = Attempt(objects);
  json d = json::parse(DecisionJson(a, 200));
  ASSERT_EQ(a.scored_nodes.size(), 2u);
  for (size_t i = 0; i < a.scored_nodes.size(); ++i) {
    for (size_t pl = 0; pl < a.score_plugins.size(); ++pl) {
      if (pl < a.scores.plugin_ran.size() && !a.scores.plugin_ran[pl]) {
        EXPECT_FALSE(d["score"][a.scored_nodes[i]].contains(a.score_plugins[pl]));
        continue;
      }
      const int64_t v = a.scores.plugin_scores[pl][i];
      EXPECT_EQ(d["score"][a.scored_nodes[i]][a.score_plugins[pl]], std::to_string(v));
      EXPECT_EQ(d["finalScore"][a.scored_nodes[i]][a.score_plugins[pl]],
                std::to_string(v * a.score_weights[pl]));
    }
    for (const auto& plugin : a.filter_plugins)
      EXPECT_EQ(d["filter"][a.scored_nodes[i]][plugin], "passed");
  }
  // tiny failed at NodeResourcesFit: the plugins before it passed, none after it are listed.
  const json& tiny = d["filter"]["tiny"];
  bool before = true;
  for (const auto& plugin : a.filter_plugins) {
    if (plugin == "NodeResourcesFit") {
      before = false;
      continue;
    }
    EXPECT_EQ(tiny.contains(plugin), before) << plugin;
  }
}

TEST(DecisionJsonTest, UnschedulablePodHasTheMessage) {
  auto objects = Cluster();
  objects.push_back(Object(MakePod().Name("huge").Req({{"cpu", "64"}}).Obj()));
  json d = json::parse(DecisionJson(Attempt(objects), 200));
  EXPECT_EQ(d["outcome"], "Unschedulable");
  EXPECT_EQ(d["node"], "");
  EXPECT_NE(d["message"].get<std::string>().find("Insufficient cpu"), std::string::npos);
  EXPECT_EQ(d["filter"].size(), 3u);
}

TEST(DecisionLogTest, LatestAttemptWins) {
  auto objects = Cluster();
  objects.push_back(Object(MakePod().Name("p").Req({{"cpu", "1"}}).Obj()));
  SchedulingAttempt scheduled = Attempt(objects);
  SchedulingAttempt failed = scheduled;
  failed.outcome = SchedulingAttempt::Outcome::kError;
  failed.message = "binding failed";
  DecisionLog log;
  EXPECT_FALSE(log.Get("default/p"));
  log.OnAttempt(failed);
  log.OnAttempt(scheduled);
  ASSERT_TRUE(log.Get("default/p"));
  EXPECT_EQ(json::parse(*log.Get("default/p"))["outcome"], "Scheduled");
  EXPECT_EQ(log.size(), 1u);
  // The log counts the values it keeps; the JSON is written when asked for.
  EXPECT_EQ(log.bytes(), Decision(scheduled, DecisionLogOptions{}.max_nodes).bytes());
  EXPECT_EQ(*log.Get("default/p"), *log.Get("default/p"));
}

TEST(DecisionLogTest, BoundedByPodsAndBytesOldestFirst) {
  auto objects = Cluster();
  objects.push_back(Object(MakePod().Name("p").Req({{"cpu", "1"}}).Obj()));
  SchedulingAttempt a = Attempt(objects);
  DecisionLog by_pods({.max_pods = 3});
  for (int i = 0; i < 5; ++i) by_pods.OnAttempt(Renamed(a, "p" + std::to_string(i)));
  EXPECT_EQ(by_pods.size(), 3u);
  EXPECT_FALSE(by_pods.Get("default/p1"));
  EXPECT_TRUE(by_pods.Get("default/p2"));
  // Deciding p2 again makes it the newest: p3 goes next.
  by_pods.OnAttempt(Renamed(a, "p2"));
  by_pods.OnAttempt(Renamed(a, "p5"));
  EXPECT_TRUE(by_pods.Get("default/p2"));
  EXPECT_FALSE(by_pods.Get("default/p3"));

  const size_t one = Decision(Renamed(a, "p0"), DecisionLogOptions{}.max_nodes).bytes();
  DecisionLog by_bytes({.max_bytes = one * 2 + one / 2});
  for (int i = 0; i < 5; ++i) by_bytes.OnAttempt(Renamed(a, "p" + std::to_string(i)));
  EXPECT_EQ(by_bytes.size(), 2u);
  EXPECT_LE(by_bytes.bytes(), one * 2 + one / 2);
  EXPECT_TRUE(by_bytes.Get("default/p4"));

  // One entry larger than the whole budget is still kept: the newest decision is never lost.
  DecisionLog tiny({.max_bytes = 10});
  tiny.OnAttempt(a);
  EXPECT_TRUE(tiny.Get("default/p"));
}

TEST(DecisionLogTest, WritersAndReadersConcurrently) {
  auto objects = Cluster();
  objects.push_back(Object(MakePod().Name("p").Req({{"cpu", "1"}}).Obj()));
  SchedulingAttempt a = Attempt(objects);
  std::vector<SchedulingAttempt> attempts;
  for (int i = 0; i < 50; ++i) attempts.push_back(Renamed(a, "p" + std::to_string(i)));
  DecisionLog log({.max_pods = 20});
  std::atomic<bool> done{false};
  std::atomic<int> parsed{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      while (!done.load()) {
        for (int i = 0; i < 50; ++i) {
          if (auto d = log.Get("default/p" + std::to_string(i))) {
            EXPECT_TRUE(json::accept(*d));
            ++parsed;
          }
        }
      }
    });
  }
  std::thread writer([&] {
    for (int round = 0; round < 20; ++round)
      for (const auto& x : attempts) log.OnAttempt(x);
  });
  writer.join();
  done = true;
  for (auto& t : readers) t.join();
  EXPECT_EQ(log.size(), 20u);
  EXPECT_TRUE(log.Get("default/p49"));
}

}  // namespace
}  // namespace berth::ui
