#include "apiserver/pod_deletion.h"

#include <gtest/gtest.h>

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

Json BoundPod() {
  return Json::parse(R"({"metadata":{"name":"p"},"spec":{"nodeName":"n1"},
                         "status":{"phase":"Running"}})");
}

TEST(PodGraceDecisionTest, BoundPodIsMarkedForItsGracePeriod) {
  Json pod = BoundPod();
  GraceDecision d = PodGraceDecision(pod, std::nullopt, 1000);
  EXPECT_EQ(d.action, GraceDecision::kMark);
  EXPECT_EQ(d.grace_seconds, 30);  // the default terminationGracePeriodSeconds
  EXPECT_EQ(d.deletion_timestamp, "1970-01-01T00:17:10Z");

  pod["spec"]["terminationGracePeriodSeconds"] = 5;
  EXPECT_EQ(PodGraceDecision(pod, std::nullopt, 1000).grace_seconds, 5);
  EXPECT_EQ(PodGraceDecision(pod, 7, 1000).grace_seconds, 7);
  // A negative request counts as one second.
  EXPECT_EQ(PodGraceDecision(pod, -3, 1000).grace_seconds, 1);
}

TEST(PodGraceDecisionTest, UnboundFinishedOrForcedPodsGoAtOnce) {
  Json unbound = BoundPod();
  unbound["spec"].erase("nodeName");
  EXPECT_EQ(PodGraceDecision(unbound, std::nullopt, 1000).action, GraceDecision::kNow);
  for (const char* phase : {"Succeeded", "Failed"}) {
    Json done = BoundPod();
    done["status"]["phase"] = phase;
    EXPECT_EQ(PodGraceDecision(done, std::nullopt, 1000).action, GraceDecision::kNow) << phase;
  }
  EXPECT_EQ(PodGraceDecision(BoundPod(), 0, 1000).action, GraceDecision::kNow);
}

TEST(PodGraceDecisionTest, ATerminatingPodsGraceOnlyShortens) {
  Json pod = BoundPod();
  pod["metadata"]["deletionTimestamp"] = "1970-01-01T00:17:10Z";  // 1030
  pod["metadata"]["deletionGracePeriodSeconds"] = 30;
  EXPECT_EQ(PodGraceDecision(pod, std::nullopt, 1010).action, GraceDecision::kPending);
  EXPECT_EQ(PodGraceDecision(pod, 30, 1010).action, GraceDecision::kPending);
  EXPECT_EQ(PodGraceDecision(pod, 60, 1010).action, GraceDecision::kPending);
  GraceDecision shorter = PodGraceDecision(pod, 10, 1010);
  EXPECT_EQ(shorter.action, GraceDecision::kMark);
  EXPECT_EQ(shorter.grace_seconds, 10);
  EXPECT_EQ(shorter.deletion_timestamp, "1970-01-01T00:16:50Z");  // 1000 + 10
  // The kubelet's confirmation (no grace) deletes it; so does a mark without grace.
  EXPECT_EQ(PodGraceDecision(pod, 0, 1010).action, GraceDecision::kNow);
  pod["metadata"]["deletionGracePeriodSeconds"] = 0;
  EXPECT_EQ(PodGraceDecision(pod, std::nullopt, 1010).action, GraceDecision::kNow);
}

}  // namespace
}  // namespace berth::apiserver
