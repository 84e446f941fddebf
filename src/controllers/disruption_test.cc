// The PodDisruptionBudget status arithmetic (upstream's pkg/controller/disruption), on budgets
// and pods as the controller reads them from its informers.
#include "controllers/disruption.h"

#include <gtest/gtest.h>

namespace berth::controllers {
namespace {

constexpr UnixTime kNow = 1'700'000'000;

Json Pod(const std::string& name, bool ready, bool deleting = false) {
  Json pod = {
      {"metadata", {{"name", name}, {"namespace", "default"}}},
      {"status",
       {{"phase", "Running"},
        {"conditions", Json::array({{{"type", "Ready"}, {"status", ready ? "True" : "False"}}})}}}};
  if (deleting) pod["metadata"]["deletionTimestamp"] = NowTimestamp(kNow);
  return pod;
}

Json Budget(Json spec) {
  return {{"metadata", {{"name", "b"}, {"namespace", "default"}, {"generation", 3}}},
          {"spec", std::move(spec)}};
}

struct Pods {
  std::vector<Json> docs;
  BudgetInput Input(int64_t scale) const {
    BudgetInput in;
    for (const auto& d : docs) in.pods.push_back(&d);
    in.expected_from_controllers = scale;
    return in;
  }
};

Json Compute(const Json& budget, const BudgetInput& in, int64_t* requeue = nullptr) {
  int64_t ignored = 0;
  return ComputeBudgetStatus(budget, in, kNow, requeue ? requeue : &ignored);
}

TEST(DisruptionStatusTest, IntegerMinAvailableCountsPods) {
  Pods p{{Pod("a", true), Pod("b", true), Pod("c", false)}};
  Json s = Compute(Budget({{"minAvailable", 1}}), p.Input(5));
  EXPECT_EQ(s["expectedPods"], 3);
  EXPECT_EQ(s["currentHealthy"], 2);
  EXPECT_EQ(s["desiredHealthy"], 1);
  EXPECT_EQ(s["disruptionsAllowed"], 1);
  EXPECT_EQ(s["observedGeneration"], 3);
  EXPECT_EQ(s["conditions"][0]["reason"], "SufficientPods");
  EXPECT_EQ(s["conditions"][0]["status"], "True");
}

TEST(DisruptionStatusTest, PercentMinAvailableRoundsUpOfTheScale) {
  Pods p{{Pod("a", true), Pod("b", true), Pod("c", true)}};
  // 50% of 3 is 1.5: two must stay healthy.
  Json s = Compute(Budget({{"minAvailable", "50%"}}), p.Input(3));
  EXPECT_EQ(s["desiredHealthy"], 2);
  EXPECT_EQ(s["disruptionsAllowed"], 1);
}

TEST(DisruptionStatusTest, MaxUnavailableFromTheScale) {
  Pods p{{Pod("a", true), Pod("b", true), Pod("c", true)}};
  Json s = Compute(Budget({{"maxUnavailable", "34%"}}), p.Input(4));
  // 34% of 4 rounds up to 2: desired 4 - 2 = 2, healthy 3.
  EXPECT_EQ(s["expectedPods"], 4);
  EXPECT_EQ(s["desiredHealthy"], 2);
  EXPECT_EQ(s["disruptionsAllowed"], 1);
  Json zero = Compute(Budget({{"maxUnavailable", 0}}), p.Input(3));
  EXPECT_EQ(zero["disruptionsAllowed"], 0);
  EXPECT_EQ(zero["conditions"][0]["reason"], "InsufficientPods");
  EXPECT_EQ(zero["conditions"][0]["status"], "False");
}

TEST(DisruptionStatusTest, DeletingAndDisruptedPodsAreNotHealthy) {
  Pods p{{Pod("a", true), Pod("b", true, true), Pod("c", true)}};
  Json budget = Budget({{"minAvailable", 1}});
  budget["status"]["disruptedPods"] = {{"c", NowTimestamp(kNow - 10)}, {"b", NowTimestamp(kNow)}};
  int64_t requeue = 0;
  Json s = Compute(budget, p.Input(3), &requeue);
  EXPECT_EQ(s["currentHealthy"], 1);
  EXPECT_EQ(s["disruptionsAllowed"], 0);
  // b is being deleted: its entry goes; c's stays until it expires.
  EXPECT_EQ(s["disruptedPods"], Json({{"c", NowTimestamp(kNow - 10)}}));
  EXPECT_EQ(requeue, kDisruptedPodTimeoutSeconds - 10 + 1);
}

TEST(DisruptionStatusTest, ExpiredDisruptionIsDropped) {
  Pods p{{Pod("a", true), Pod("c", true)}};
  Json budget = Budget({{"minAvailable", 1}});
  budget["status"]["disruptedPods"] = {{"c", NowTimestamp(kNow - kDisruptedPodTimeoutSeconds - 1)}};
  Json s = Compute(budget, p.Input(2));
  EXPECT_EQ(s["disruptedPods"], Json::object());
  EXPECT_EQ(s["currentHealthy"], 2);
  EXPECT_EQ(s["disruptionsAllowed"], 1);
}

TEST(DisruptionStatusTest, MissingControllerFailsSafe) {
  Pods p{{Pod("a", true), Pod("b", true)}};
  BudgetInput in = p.Input(0);
  in.controllers_error = "found no controller ref for pod \"a\"";
  Json s = Compute(Budget({{"maxUnavailable", 1}}), in);
  EXPECT_EQ(s["disruptionsAllowed"], 0);
  EXPECT_EQ(s["conditions"][0]["reason"], "SyncFailed");
  EXPECT_EQ(s["conditions"][0]["message"], "found no controller ref for pod \"a\"");
  // An integer minAvailable needs no controller.
  Json ok = Compute(Budget({{"minAvailable", 1}}), in);
  EXPECT_EQ(ok["disruptionsAllowed"], 1);
}

TEST(DisruptionStatusTest, TransitionTimeKeptWhileTheConditionHolds) {
  Pods p{{Pod("a", true), Pod("b", true)}};
  Json budget = Budget({{"minAvailable", 1}});
  budget["status"]["conditions"] = Json::array({{{"type", "DisruptionAllowed"},
                                                 {"status", "True"},
                                                 {"lastTransitionTime", "2020-01-01T00:00:00Z"}}});
  Json s = Compute(budget, p.Input(2));
  EXPECT_EQ(s["conditions"][0]["lastTransitionTime"], "2020-01-01T00:00:00Z");
}

}  // namespace
}  // namespace berth::controllers
