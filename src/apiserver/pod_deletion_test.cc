#include "apiserver/pod_deletion.h"

#include <gtest/gtest.h>

#include "api/codec.h"
#include "apiserver/resources.h"

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

// A pod on a node that finalizers also hold: its kubelet's confirmation (a DELETE with no
// grace) ends the grace period, so the pod goes once its last finalizer is removed.
TEST(PodGracefulDeletionTest, AConfirmedPodHeldByFinalizersGoesWithItsLastFinalizer) {
  auto opened = Store::Open({});
  ASSERT_TRUE(opened.ok());
  Store& store = **opened;
  const ResourceInfo& pods = *FindResource("", "v1", "pods");
  ASSERT_TRUE(store
                  .Create(*FindResource("", "v1", "namespaces"), "",
                          {{"metadata", {{"name", "team"}}}}, false)
                  .ok());
  Json pod = BoundPod();
  pod["metadata"]["finalizers"] = {"example.com/block"};
  ASSERT_TRUE(store.Create(pods, "team", pod, false).ok());
  auto deleting = [](std::optional<int64_t> requested) {
    return [requested](const Json& current) {
      return PodGraceDecision(current, requested, NowUnixSeconds());
    };
  };
  auto marked =
      store.Delete(pods, "team", "p", {}, false, Durability::kAwait, deleting(std::nullopt));
  ASSERT_TRUE(marked.ok());
  const Json& mark = (*marked->object)["metadata"];
  EXPECT_EQ(mark["deletionGracePeriodSeconds"], 30);
  auto deadline = ParseTimestamp(mark.value("deletionTimestamp", ""));
  ASSERT_TRUE(deadline.ok());

  auto confirmed = store.Delete(pods, "team", "p", {}, false, Durability::kAwait, deleting(0));
  ASSERT_TRUE(confirmed.ok());
  const Json& held = (*confirmed->object)["metadata"];
  EXPECT_EQ(held["deletionGracePeriodSeconds"], 0);
  EXPECT_EQ(held["deletionTimestamp"], FormatTimestamp(*deadline - 30));
  EXPECT_EQ(held["finalizers"], Json::array({"example.com/block"}));
  // Asked again, nothing changes.
  auto again = store.Delete(pods, "team", "p", {}, false, Durability::kAwait, deleting(0));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->rv, confirmed->rv);

  auto released = store.Mutate(
      pods, "team", "p",
      [](const Json* current) -> Result<Json> {
        Json next = *current;
        next["metadata"].erase("finalizers");
        return next;
      },
      false, false);
  ASSERT_TRUE(released.ok()) << released.error().message;
  EXPECT_EQ(store.Get(pods, "team", "p").error().code, ErrorCode::kNotFound);
}

}  // namespace
}  // namespace berth::apiserver
