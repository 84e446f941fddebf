// Decision records in kube-scheduler-simulator's annotation shapes, from real attempts.
#include "explain/decision_record.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "config/load.h"
#include "plugins/registry.h"
#include "sim/simulator.h"
#include "testing/builders.h"

namespace berth::explain {
namespace {

using nlohmann::json;
using testing::MakeNode;
using testing::MakePod;

SchedulingAttempt Attempt(const std::vector<Object>& objects, int max_attempts = 10,
                          size_t pod_index = 0) {
  Registry registry = InTreeRegistry();
  auto config = config::DefaultConfiguration(registry);
  sim::SimulationOptions so;
  so.max_attempts = max_attempts;
  auto r = sim::Simulate(config, registry, objects, so);
  EXPECT_TRUE(r.ok());
  return *r->results.at(pod_index).last;
}

// Each annotation decodes into the type the simulator's result store marshals it from:
// map[string]string, map[string][]string, map[string]map[string]string, or a plain string.
void ExpectSimulatorShapes(const std::map<std::string, std::string>& ann) {
  const std::string p(kAnnotationPrefix);
  auto plugin_to_string = {
      "prefilter-result-status", "prescore-result", "reserve-result", "permit-result",
      "permit-result-timeout",   "prebind-result",  "bind-result"};
  auto node_to_plugin_to_string = {"filter-result", "postfilter-result", "score-result",
                                   "finalscore-result"};
  for (const char* key : plugin_to_string) {
    SCOPED_TRACE(key);
    json j = json::parse(ann.at(p + key));
    ASSERT_TRUE(j.is_object());
    for (const auto& [plugin, v] : j.items()) EXPECT_TRUE(v.is_string()) << plugin;
  }
  for (const char* key : node_to_plugin_to_string) {
    SCOPED_TRACE(key);
    json j = json::parse(ann.at(p + key));
    ASSERT_TRUE(j.is_object());
    for (const auto& [node, plugins] : j.items()) {
      ASSERT_TRUE(plugins.is_object()) << node;
      for (const auto& [plugin, v] : plugins.items()) EXPECT_TRUE(v.is_string()) << plugin;
    }
  }
  json pre = json::parse(ann.at(p + "prefilter-result"));
  ASSERT_TRUE(pre.is_object());
  for (const auto& [plugin, names] : pre.items()) {
    ASSERT_TRUE(names.is_array()) << plugin;
    for (const auto& n : names) EXPECT_TRUE(n.is_string());
  }
  EXPECT_TRUE(ann.count(p + "selected-node"));
}

TEST(DecisionRecordTest, ScheduledPodInTheSimulatorsShapes) {
  SchedulingAttempt a =
      Attempt({Object(MakeNode().Name("big").Capacity({{"cpu", "8"}, {"memory", "16Gi"}}).Obj()),
               Object(MakeNode().Name("small").Capacity({{"cpu", "2"}, {"memory", "4Gi"}}).Obj()),
               Object(MakeNode().Name("tiny").Capacity({{"cpu", "100m"}, {"memory", "1Gi"}}).Obj()),
               Object(MakePod().Name("p").Req({{"cpu", "1"}}).Obj())});
  auto ann = DecisionAnnotations(a);
  const std::string p(kAnnotationPrefix);
  EXPECT_EQ(ann.at(p + "selected-node"), "big");
  json filter = json::parse(ann.at(p + "filter-result"));
  EXPECT_EQ(filter["big"]["NodeResourcesFit"], "passed");
  EXPECT_EQ(filter["tiny"]["NodeResourcesFit"], "Insufficient cpu");
  EXPECT_EQ(filter["tiny"]["NodeUnschedulable"], "passed");  // ran before the failing one
  EXPECT_FALSE(filter["tiny"].contains("VolumeBinding"));    // after it: not run
  json score = json::parse(ann.at(p + "score-result"));
  json final_score = json::parse(ann.at(p + "finalscore-result"));
  ASSERT_TRUE(score["big"]["TaintToleration"].is_string());
  EXPECT_EQ(std::stoi(final_score["big"]["TaintToleration"].get<std::string>()),
            3 * std::stoi(score["big"]["TaintToleration"].get<std::string>()));
  EXPECT_EQ(ann.count(p + "result-nodes-truncated"), 0u);
  ExpectSimulatorShapes(ann);
  // The other points, per plugin, as the simulator words them.
  json pre_filter = json::parse(ann.at(p + "prefilter-result-status"));
  EXPECT_EQ(pre_filter["NodeResourcesFit"], "success");
  EXPECT_EQ(json::parse(ann.at(p + "prefilter-result")), json::object());
  EXPECT_TRUE(json::parse(ann.at(p + "prescore-result")).contains("TaintToleration"));
  EXPECT_EQ(json::parse(ann.at(p + "reserve-result"))["VolumeBinding"], "success");
  EXPECT_EQ(json::parse(ann.at(p + "prebind-result"))["VolumeBinding"], "success");
  EXPECT_EQ(json::parse(ann.at(p + "bind-result")), json({{"DefaultBinder", "success"}}));
  EXPECT_EQ(ann.at(p + "permit-result"), "{}");      // no Permit plugin in the default profile
  EXPECT_EQ(ann.at(p + "postfilter-result"), "{}");  // it fit: PostFilter did not run

  // Bounded: two nodes at most, the chosen one first.
  auto small = DecisionAnnotations(a, 2);
  json f2 = json::parse(small.at(p + "filter-result"));
  EXPECT_EQ(f2.size(), 2u);
  EXPECT_TRUE(f2.contains("big"));
  EXPECT_EQ(small.at(p + "result-nodes-truncated"), "1");
}

TEST(DecisionRecordTest, UnschedulablePodHasNoSelectedNode) {
  SchedulingAttempt a =
      Attempt({Object(MakeNode().Name("n").Capacity({{"cpu", "1"}, {"memory", "1Gi"}}).Obj()),
               Object(MakePod().Name("p").Req({{"cpu", "4"}}).Obj())});
  auto ann = DecisionAnnotations(a);
  const std::string p(kAnnotationPrefix);
  ExpectSimulatorShapes(ann);
  EXPECT_EQ(ann.at(p + "selected-node"), "");
  EXPECT_EQ(json::parse(ann.at(p + "filter-result"))["n"]["NodeResourcesFit"], "Insufficient cpu");
  // PostFilter saw the rejected node and could not help; nothing after it ran.
  EXPECT_EQ(json::parse(ann.at(p + "postfilter-result")), json({{"n", json::object()}}));
  EXPECT_EQ(ann.at(p + "reserve-result"), "{}");
  EXPECT_EQ(ann.at(p + "bind-result"), "{}");
}

TEST(DecisionRecordTest, PreemptionNominatesAVictimsNode) {
  SchedulingAttempt a =
      Attempt({Object(MakeNode().Name("full").Capacity({{"cpu", "2"}, {"memory", "4Gi"}}).Obj()),
               Object(MakePod().Name("low").Node("full").Priority(0).Req({{"cpu", "2"}}).Obj()),
               Object(MakePod().Name("high").Priority(1000).Req({{"cpu", "1"}}).Obj())},
              /*max_attempts=*/1, /*pod_index=*/0);
  ASSERT_TRUE(a.nominating.has_value());
  auto ann = DecisionAnnotations(a);
  const std::string p(kAnnotationPrefix);
  ExpectSimulatorShapes(ann);
  EXPECT_EQ(json::parse(ann.at(p + "postfilter-result")),
            json({{"full", {{"DefaultPreemption", "preemption victim"}}}}));
}

TEST(DecisionRecordTest, PreFilterResultListsTheNodesItKept) {
  Affinity affinity;
  affinity.node_affinity.emplace().required.emplace().terms.push_back(
      {{}, {{"metadata.name", "In", {"b"}}}});
  SchedulingAttempt a =
      Attempt({Object(MakeNode().Name("a").Capacity({{"cpu", "2"}, {"memory", "4Gi"}}).Obj()),
               Object(MakeNode().Name("b").Capacity({{"cpu", "2"}, {"memory", "4Gi"}}).Obj()),
               Object(MakePod().Name("p").Affinity(affinity).Obj())});
  auto ann = DecisionAnnotations(a);
  const std::string p(kAnnotationPrefix);
  ExpectSimulatorShapes(ann);
  EXPECT_EQ(json::parse(ann.at(p + "prefilter-result")),
            json({{"NodeAffinity", json::array({"b"})}}));
  EXPECT_EQ(json::parse(ann.at(p + "prefilter-result-status"))["NodeAffinity"], "success");
  EXPECT_EQ(ann.at(p + "selected-node"), "b");
}

TEST(DecisionRecordTest, PermitWaitAndTimeout) {
  SchedulingAttempt a;
  a.outcome = SchedulingAttempt::Outcome::kScheduled;
  a.node = a.selected_node = "n";
  a.permit_outcomes.emplace_back("Gang", Status::Wait(), std::chrono::seconds(90));
  a.permit_outcomes.emplace_back("Quota", Status::Success());
  auto ann = DecisionAnnotations(a);
  const std::string p(kAnnotationPrefix);
  ExpectSimulatorShapes(ann);
  EXPECT_EQ(json::parse(ann.at(p + "permit-result")),
            json({{"Gang", "wait"}, {"Quota", "success"}}));
  EXPECT_EQ(json::parse(ann.at(p + "permit-result-timeout")),
            json({{"Gang", "1m30s"}, {"Quota", "0s"}}));
}

TEST(DecisionRecordTest, NodesTheSchedulerLeftOutCountAsTruncated) {
  SchedulingAttempt a;
  a.outcome = SchedulingAttempt::Outcome::kScheduled;
  a.node = a.selected_node = "b";
  a.score_plugins = {"Fit"};
  a.score_weights = {2};
  a.scored_nodes = {"a", "b"};
  a.scores.plugin_scores = {{10, 30}};
  a.scores.plugin_ran = {true};
  a.scores.totals = {20, 60};
  a.scored_nodes_omitted = 3;  // kept by the scheduler: the best two of five
  const std::string p(kAnnotationPrefix);
  auto ann = DecisionAnnotations(a, 10);
  EXPECT_EQ(ann.at(p + "result-nodes-truncated"), "3");
  EXPECT_EQ(json::parse(ann.at(p + "score-result")),
            json({{"a", {{"Fit", "10"}}}, {"b", {{"Fit", "30"}}}}));
  EXPECT_EQ(json::parse(ann.at(p + "finalscore-result")),
            json({{"a", {{"Fit", "20"}}}, {"b", {{"Fit", "60"}}}}));
  // Bounded again by the record: the selected node first.
  auto one = DecisionAnnotations(a, 1);
  EXPECT_EQ(one.at(p + "result-nodes-truncated"), "4");
  EXPECT_EQ(json::parse(one.at(p + "score-result")), json({{"b", {{"Fit", "30"}}}}));
}

TEST(DecisionRecordTest, GoDurations) {
  using namespace std::chrono_literals;
  EXPECT_EQ(GoDurationString(Duration(0)), "0s");
  EXPECT_EQ(GoDurationString(500ns), "500ns");
  EXPECT_EQ(GoDurationString(1500ns), "1.5\u00b5s");
  EXPECT_EQ(GoDurationString(250ms), "250ms");
  EXPECT_EQ(GoDurationString(1500ms), "1.5s");
  EXPECT_EQ(GoDurationString(10s), "10s");
  EXPECT_EQ(GoDurationString(15min), "15m0s");
  EXPECT_EQ(GoDurationString(1h + 2min + 3s), "1h2m3s");
  EXPECT_EQ(GoDurationString(-2s), "-2s");
}

TEST(DecisionRecordTest, ResultHistoryAppendsChangedDecisionsWithinTheLimit) {
  const std::string key(kResultHistoryKey);
  std::map<std::string, std::string> first{{"k/a", "1"}};
  Labels pod;
  WithResultHistory(pod, &first);
  EXPECT_EQ(json::parse(first.at(key)), json::parse(R"([{"k/a": "1"}])"));

  // The same decision again: the history is left as it is.
  for (const auto& [k, v] : first) pod[k] = v;
  std::map<std::string, std::string> same{{"k/a", "1"}};
  WithResultHistory(pod, &same);
  EXPECT_EQ(same.at(key), pod.at(key));

  std::map<std::string, std::string> second{{"k/a", "2"}};
  WithResultHistory(pod, &second);
  EXPECT_EQ(json::parse(second.at(key)), json::parse(R"([{"k/a": "1"}, {"k/a": "2"}])"));

  // Large records: the oldest entries go, and all annotations stay within the limit.
  for (int i = 0; i < 10; ++i) {
    std::map<std::string, std::string> big{{"k/a", std::string(60000, 'a' + i)}};
    WithResultHistory(pod, &big);
    for (const auto& [k, v] : big) pod[k] = v;
    size_t total = 0;
    for (const auto& [k, v] : pod) total += k.size() + v.size();
    EXPECT_LE(total, kTotalAnnotationSizeLimit);
    json h = json::parse(pod.at(key));
    ASSERT_FALSE(h.empty());
    EXPECT_EQ(h.back()["k/a"], std::string(60000, 'a' + i));  // the newest is kept
  }
  EXPECT_LT(json::parse(pod.at(key)).size(), 10u);
}

}  // namespace
}  // namespace berth::explain
