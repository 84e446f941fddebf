#include "controllers/node_lifecycle_util.h"

#include <gtest/gtest.h>

namespace berth::controllers {
namespace {

using Json = nlohmann::json;

Json NodeWithReady(const std::string& status, Json taints = Json::array()) {
  return {{"metadata", {{"name", "n"}}},
          {"spec", {{"taints", std::move(taints)}}},
          {"status",
           {{"conditions",
             {{{"type", "Ready"},
               {"status", status},
               {"lastHeartbeatTime", "2026-01-01T00:00:00Z"},
               {"lastTransitionTime", "2026-01-01T00:00:00Z"}}}}}}};
}

Toleration Tol(std::string key, std::optional<int64_t> seconds, std::string op = "Exists") {
  return {std::move(key), std::move(op), "", "NoExecute", seconds};
}

TEST(NodeLifecycleUtilTest, HeartbeatChangesWithTheLeaseOrTheReadyCondition) {
  Json node = NodeWithReady("True");
  Json lease = {{"spec", {{"renewTime", "2026-01-01T00:00:01.000000Z"}}}};
  const std::string a = NodeHeartbeat(node, &lease);
  lease["spec"]["renewTime"] = "2026-01-01T00:00:11.000000Z";
  EXPECT_NE(NodeHeartbeat(node, &lease), a);
  const std::string b = NodeHeartbeat(node, &lease);
  node["status"]["conditions"][0]["lastHeartbeatTime"] = "2026-01-01T00:05:00Z";
  EXPECT_NE(NodeHeartbeat(node, &lease), b);
}

TEST(NodeLifecycleUtilTest, UnknownConditionsKeepHeartbeatAndAddMissingOnes) {
  Json conditions = UnknownConditions(NodeWithReady("True"), "2026-01-01T00:01:00Z");
  ASSERT_EQ(conditions.size(), 4u);
  EXPECT_EQ(conditions[0]["status"], "Unknown");
  EXPECT_EQ(conditions[0]["reason"], "NodeStatusUnknown");
  EXPECT_EQ(conditions[0]["lastHeartbeatTime"], "2026-01-01T00:00:00Z");
  EXPECT_EQ(conditions[0]["lastTransitionTime"], "2026-01-01T00:01:00Z");
  EXPECT_EQ(conditions[1]["type"], "MemoryPressure");
  EXPECT_EQ(conditions[1]["reason"], "NodeStatusNeverUpdated");
}

TEST(NodeLifecycleUtilTest, TaintsFollowTheReadyCondition) {
  const std::string now = "2026-01-01T00:01:00Z";
  Json other = {{"key", "dedicated"}, {"value", "gpu"}, {"effect", "NoSchedule"}};
  Json unknown = DesiredTaints(NodeWithReady("Unknown", {other}), now);
  ASSERT_EQ(unknown.size(), 3u);
  EXPECT_EQ(unknown[0], other);
  EXPECT_EQ(unknown[1], Json({{"key", kTaintUnreachable}, {"effect", "NoSchedule"}}));
  EXPECT_EQ(unknown[2],
            Json({{"key", kTaintUnreachable}, {"effect", "NoExecute"}, {"timeAdded", now}}));
  // Kept as they are (timeAdded included) while the node stays Unknown.
  EXPECT_EQ(DesiredTaints(NodeWithReady("Unknown", unknown), "2026-01-01T00:09:00Z"), unknown);
  // NotReady swaps unreachable for not-ready; Ready removes both.
  Json not_ready = DesiredTaints(NodeWithReady("False", unknown), now);
  ASSERT_EQ(not_ready.size(), 3u);
  EXPECT_EQ(not_ready[1]["key"], kTaintNotReady);
  EXPECT_EQ(DesiredTaints(NodeWithReady("True", unknown), now), Json::array({other}));
}

TEST(NodeLifecycleUtilTest, EvictionTimeUsesTheShortestTolerationOfTheEarliestTaint) {
  std::vector<NoExecuteTaint> taints = {{{kTaintUnreachable, "", "NoExecute"}, 1000},
                                        {{kTaintNotReady, "", "NoExecute"}, 900}};
  EXPECT_EQ(EvictionTime({}, {}, false), std::nullopt);
  // Not tolerated: at once (when the first taint came).
  EXPECT_EQ(EvictionTime(std::vector<Toleration>{Tol(kTaintUnreachable, 300)}, taints, false), 900);
  // Both tolerated: the shortest tolerationSeconds after the earliest taint.
  EXPECT_EQ(
      EvictionTime(std::vector<Toleration>{Tol(kTaintUnreachable, 300), Tol(kTaintNotReady, 60)},
                   taints, false),
      960);
  // For ever.
  EXPECT_EQ(EvictionTime(std::vector<Toleration>{Tol("", std::nullopt)}, taints, false),
            std::nullopt);
  // A toleration of another effect does not count.
  Toleration no_schedule = Tol("", std::nullopt);
  no_schedule.effect = "NoSchedule";
  EXPECT_EQ(EvictionTime(std::vector<Toleration>{no_schedule}, taints, false), 900);
  // Negative seconds evict at once.
  EXPECT_EQ(EvictionTime(std::vector<Toleration>{Tol("", -5)}, taints, false), 900);
}

// TaintTolerationComparisonOperators: an Lt toleration of a NoExecute taint with a numeric value
// is used (its tolerationSeconds apply) only with the gate on; with it off the pod goes at once.
TEST(NodeLifecycleUtilTest, EvictionTimeFollowsTheComparisonOperatorsGate) {
  std::vector<NoExecuteTaint> taints = {{{"tier", "3", "NoExecute"}, 1000}};
  Toleration lt{"tier", "Lt", "5", "NoExecute", 120};
  EXPECT_EQ(EvictionTime(std::vector<Toleration>{lt}, taints, true), 1120);
  EXPECT_EQ(EvictionTime(std::vector<Toleration>{lt}, taints, false), 1000);
  lt.toleration_seconds.reset();
  EXPECT_EQ(EvictionTime(std::vector<Toleration>{lt}, taints, true), std::nullopt);
  // 7 is not below 5.
  taints[0].taint.value = "7";
  EXPECT_EQ(EvictionTime(std::vector<Toleration>{lt}, taints, true), 1000);
}

}  // namespace
}  // namespace berth::controllers
