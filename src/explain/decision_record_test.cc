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

SchedulingAttempt Attempt(const std::vector<Object>& objects) {
  Registry registry = InTreeRegistry();
  auto config = config::DefaultConfiguration(registry);
  auto r = sim::Simulate(config, registry, objects, {});
  EXPECT_TRUE(r.ok());
  return *r->results.at(0).last;
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
  EXPECT_EQ(ann.count(p + "selected-node"), 0u);
  EXPECT_EQ(json::parse(ann.at(p + "filter-result"))["n"]["NodeResourcesFit"], "Insufficient cpu");
}

}  // namespace
}  // namespace berth::explain
