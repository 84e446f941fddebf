#include "controllers/pod_util.h"

#include <gtest/gtest.h>

#include "controllers/deployment_util.h"

namespace berth::controllers {
namespace {

TimePoint At(UnixTime t) { return TimePoint(std::chrono::seconds(t)); }

Json MakePod(std::string name, std::string node, std::string phase, bool ready, UnixTime created,
             UnixTime ready_since = 0) {
  Json pod = {{"metadata",
               {{"name", name},
                {"namespace", "ns"},
                {"uid", "uid-" + name},
                {"creationTimestamp", FormatTimestamp(created)}}},
              {"spec", {{"nodeName", node}}},
              {"status", {{"phase", phase}}}};
  if (ready) {
    pod["status"]["conditions"] = {{{"type", "Ready"},
                                    {"status", "True"},
                                    {"lastTransitionTime", FormatTimestamp(ready_since)}}};
  }
  return pod;
}

std::vector<std::string> Order(std::vector<Json>& pods, std::vector<Json>& related, size_t n,
                               UnixTime now) {
  std::vector<const Json*> p, r;
  for (auto& x : pods) p.push_back(&x);
  for (auto& x : related) r.push_back(&x);
  std::vector<std::string> out;
  for (const Json* j : PodsToDelete(p, r, n, At(now))) out.push_back(NameOf(*j));
  return out;
}

TEST(PodRankingTest, UnassignedPendingNotReadyGoFirst) {
  const UnixTime now = 1'700'000'000;
  std::vector<Json> pods = {MakePod("running-ready", "n1", "Running", true, now - 100, now - 50),
                            MakePod("running", "n2", "Running", false, now - 100),
                            MakePod("unknown", "n3", "Unknown", false, now - 100),
                            MakePod("pending", "n4", "Pending", false, now - 100),
                            MakePod("unassigned", "", "Pending", false, now - 100)};
  std::vector<Json> related = pods;
  EXPECT_EQ(Order(pods, related, 4, now),
            (std::vector<std::string>{"unassigned", "pending", "unknown", "running"}));
}

TEST(PodRankingTest, DeletionCostThenDoubledUpThenReadyTimeThenRestartsThenAge) {
  const UnixTime now = 1'700'000'000;
  // Same phase and readiness: a lower deletion cost goes first.
  std::vector<Json> cost = {MakePod("expensive", "n1", "Running", true, now - 1000, now - 900),
                            MakePod("cheap", "n2", "Running", true, now - 1000, now - 900)};
  cost[0]["metadata"]["annotations"] = {{"controller.kubernetes.io/pod-deletion-cost", "10"}};
  std::vector<Json> none;
  EXPECT_EQ(Order(cost, none, 1, now), std::vector<std::string>{"cheap"});

  // More related pods on its node goes first.
  std::vector<Json> doubled = {MakePod("alone", "n1", "Running", true, now - 1000, now - 900),
                               MakePod("crowded", "n2", "Running", true, now - 1000, now - 900)};
  std::vector<Json> related = {doubled[0], doubled[1],
                               MakePod("sibling", "n2", "Running", true, now - 1000, now - 900)};
  EXPECT_EQ(Order(doubled, related, 1, now), std::vector<std::string>{"crowded"});

  // Ready for a much shorter time goes first (ages in different powers of two).
  std::vector<Json> ready = {MakePod("long", "n1", "Running", true, now - 100000, now - 90000),
                             MakePod("short", "n2", "Running", true, now - 100000, now - 10)};
  EXPECT_EQ(Order(ready, none, 1, now), std::vector<std::string>{"short"});

  // More restarts go first.
  std::vector<Json> restarts = {MakePod("calm", "n1", "Running", false, now - 100),
                                MakePod("flaky", "n2", "Running", false, now - 100)};
  restarts[1]["status"]["containerStatuses"] = {{{"name", "c"}, {"restartCount", 4}}};
  EXPECT_EQ(Order(restarts, none, 1, now), std::vector<std::string>{"flaky"});

  // Newer goes first; within the same power of two of age, by UID.
  std::vector<Json> age = {MakePod("old", "n1", "Running", false, now - 100000),
                           MakePod("new", "n2", "Running", false, now - 10)};
  EXPECT_EQ(Order(age, none, 1, now), std::vector<std::string>{"new"});
  std::vector<Json> same_bucket = {MakePod("b", "n1", "Running", false, now - 1000),
                                   MakePod("a", "n2", "Running", false, now - 1001)};
  EXPECT_EQ(Order(same_bucket, none, 1, now), std::vector<std::string>{"a"});
}

TEST(PodUtilTest, AvailableAfterMinReadySeconds) {
  Json pod = MakePod("p", "n", "Running", true, 100, 1000);
  EXPECT_TRUE(IsPodAvailable(pod, 0, 1000));
  EXPECT_FALSE(IsPodAvailable(pod, 10, 1010));  // strictly after
  EXPECT_TRUE(IsPodAvailable(pod, 10, 1011));
  EXPECT_FALSE(IsPodActive(MakePod("f", "n", "Failed", false, 1)));
}

TEST(DeploymentHashTest, SafeEncodingAndStableHash) {
  // '0' is byte 48, index 48 % 27 = 21 of the alphabet.
  EXPECT_EQ(SafeEncodeString("0123456789"), "456789bcdf");
  // FNV-1a test vectors.
  EXPECT_EQ(Fnv32a(""), 2166136261u);
  EXPECT_EQ(Fnv32a("a"), 0xe40c292cu);
  Json tmpl = {{"metadata", {{"labels", {{"app", "web"}}}}},
               {"spec", {{"containers", {{{"name", "nginx"}, {"image", "nginx"}}}}}}};
  const std::string h = ComputeHash(tmpl, std::nullopt);
  EXPECT_EQ(h, ComputeHash(Json::parse(tmpl.dump()), std::nullopt));
  EXPECT_NE(h, ComputeHash(tmpl, 1));
  for (char c : h) EXPECT_NE(std::string("bcdfghjklmnpqrstvwxz2456789").find(c), std::string::npos);
  Json changed = tmpl;
  changed["spec"]["containers"][0]["image"] = "nginx:2";
  EXPECT_NE(h, ComputeHash(changed, std::nullopt));
  Json labeled = tmpl;
  labeled["metadata"]["labels"]["pod-template-hash"] = h;
  EXPECT_TRUE(EqualIgnoreHash(tmpl, labeled));
  EXPECT_FALSE(EqualIgnoreHash(tmpl, changed));
}

TEST(RollingUpdateTest, SurgeRoundsUpUnavailableRoundsDown) {
  auto f = ResolveFenceposts("25%", "25%", 10);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->max_surge, 3);                  // 2.5 up
  EXPECT_EQ(f->max_unavailable, 2);            // 2.5 down
  auto zero = ResolveFenceposts(0, "10%", 5);  // 0.5 down is 0: both zero, unavailable 1
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->max_surge, 0);
  EXPECT_EQ(zero->max_unavailable, 1);
  EXPECT_FALSE(ResolveFenceposts("x%", 1, 5).ok());

  Json d = {{"spec",
             {{"replicas", 10},
              {"strategy",
               {{"type", "RollingUpdate"},
                {"rollingUpdate", {{"maxSurge", "25%"}, {"maxUnavailable", "25%"}}}}}}}};
  EXPECT_EQ(MaxSurge(d), 3);
  EXPECT_EQ(MaxUnavailable(d), 2);
  Json old_rs = {{"spec", {{"replicas", 10}}}};
  Json new_rs = {{"spec", {{"replicas", 0}}}};
  // 10 old + 0 new, at most 13 in all: the new set may have 3.
  EXPECT_EQ(NewRSNewReplicas(d, {&old_rs, &new_rs}, new_rs), 3);
  old_rs["spec"]["replicas"] = 8;
  new_rs["spec"]["replicas"] = 3;
  EXPECT_EQ(NewRSNewReplicas(d, {&old_rs, &new_rs}, new_rs), 5);
  Json recreate = {{"spec", {{"replicas", 4}, {"strategy", {{"type", "Recreate"}}}}}};
  EXPECT_EQ(MaxSurge(recreate), 0);
  EXPECT_EQ(MaxUnavailable(recreate), 0);
  EXPECT_EQ(NewRSNewReplicas(recreate, {&new_rs}, new_rs), 4);
}

}  // namespace
}  // namespace berth::controllers
