#include "plugins/gangscheduling/gangscheduling.h"

#include <gtest/gtest.h>

#include <memory>

#include "berth/testing/builders.h"
#include "berth/testing/fake_handle.h"

namespace berth {
namespace {

using testing::FakeHandle;
using testing::FakeWaitingPod;
using testing::MakePod;

Ptr<SchedulingPodGroup> Gang(const std::string& name, int min_count, bool gang = true) {
  auto g = std::make_shared<SchedulingPodGroup>();
  g->metadata.name = name;
  g->metadata.namespace_ = "default";
  g->gang = gang;
  g->min_count = min_count;
  return g;
}

Ptr<Pod> Member(const std::string& name, const std::string& group, std::string node = "") {
  auto b = MakePod().Name(name).UID(name).SchedulingGroup(group);
  if (!node.empty()) b.Node(node);
  return b.Obj();
}

TEST(GangSchedulingTest, PreEnqueueWaitsForTheGroupAndMinCountPods) {
  FakeHandle handle;
  GangScheduling plugin(handle);
  auto a = Member("a", "pg");
  EXPECT_TRUE(plugin.PreEnqueue(*MakePod().Name("plain").Obj()).IsSuccess());
  Status s = plugin.PreEnqueue(*a);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "waiting for pod's pod group \"pg\" to appear in scheduling queue");
  handle.fake_cluster().scheduling_pod_groups = {Gang("pg", 2), Gang("basic", 5, false)};
  handle.fake_cluster().pods = {a};
  s = plugin.PreEnqueue(*a);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "waiting for minCount pods from a gang to appear in scheduling queue");
  handle.fake_cluster().pods.push_back(Member("b", "pg", "n0"));  // a bound member counts
  EXPECT_TRUE(plugin.PreEnqueue(*a).IsSuccess());
  EXPECT_TRUE(plugin.PreEnqueue(*Member("x", "basic")).IsSuccess());  // not a gang
}

TEST(GangSchedulingTest, PermitHoldsMembersUntilMinCountAreScheduled) {
  FakeHandle handle;
  GangScheduling plugin(handle);
  CycleState state;
  auto a = Member("a", "pg"), b = Member("b", "pg"), c = Member("c", "pg");
  auto other = Member("o", "other");
  handle.fake_cluster().scheduling_pod_groups = {Gang("pg", 3), Gang("other", 2)};
  handle.fake_cluster().pods = {a, b, c, other};
  auto info_a = PodInfo::Create(a), info_b = PodInfo::Create(b), info_c = PodInfo::Create(c);

  ASSERT_TRUE(plugin.Reserve(state, *info_a, "n0").IsSuccess());
  PermitDecision d = plugin.Permit(state, *info_a, "n0");
  EXPECT_TRUE(d.status.IsWait());
  EXPECT_EQ(d.status.Message(), "waiting for minCount pods from a gang to be scheduled");
  EXPECT_EQ(d.timeout, std::chrono::minutes(5));
  EXPECT_EQ(handle.activated, (std::vector<std::string>{"default/b", "default/c"}));
  auto wa = std::make_shared<FakeWaitingPod>(a, std::vector<std::string>{"GangScheduling"});
  auto wo = std::make_shared<FakeWaitingPod>(other, std::vector<std::string>{"GangScheduling"});
  handle.waiting_pods = {wa, wo};

  ASSERT_TRUE(plugin.Reserve(state, *info_b, "n0").IsSuccess());
  EXPECT_TRUE(plugin.Permit(state, *info_b, "n0").status.IsWait());
  // b fails after Reserve: it no longer counts.
  plugin.Unreserve(state, *info_b, "n0");
  EXPECT_EQ(plugin.ScheduledCount("default/pg"), 1);
  ASSERT_TRUE(plugin.Reserve(state, *info_b, "n0").IsSuccess());
  ASSERT_TRUE(plugin.Reserve(state, *info_c, "n0").IsSuccess());
  EXPECT_TRUE(plugin.Permit(state, *info_c, "n0").status.IsSuccess());
  EXPECT_EQ(wa->allowed, (std::vector<std::string>{"GangScheduling"}));
  EXPECT_TRUE(wo->allowed.empty());
}

TEST(GangSchedulingTest, PermitPassesNonGangPodsAndErrsWithoutTheGroup) {
  FakeHandle handle;
  GangScheduling plugin(handle);
  CycleState state;
  handle.fake_cluster().scheduling_pod_groups = {Gang("basic", 3, false)};
  EXPECT_TRUE(
      plugin.Permit(state, *PodInfo::Create(MakePod().Name("p").Obj()), "n").status.IsSuccess());
  EXPECT_TRUE(plugin.Permit(state, *PodInfo::Create(Member("b", "basic")), "n").status.IsSuccess());
  PermitDecision d = plugin.Permit(state, *PodInfo::Create(Member("m", "missing")), "n");
  EXPECT_TRUE(d.status.IsError());
}

TEST(GangSchedulingTest, HintsQueueOnlyTheGroupsOwnEvents) {
  FakeHandle handle;
  GangScheduling plugin(handle);
  auto events = plugin.EventsToRegister();
  ASSERT_EQ(events.size(), 3u);
  const Ptr<Pod> waiting_pod = Member("a", "pg");
  const Pod& waiting = *waiting_pod;
  auto pod_hint = events[0].hint;
  EXPECT_EQ(*pod_hint(waiting, {}, Member("b", "pg")), QueueingHint::kQueue);
  EXPECT_EQ(*pod_hint(waiting, {}, Member("x", "other")), QueueingHint::kQueueSkip);
  auto group_hint = events[2].hint;
  EXPECT_EQ(*group_hint(waiting, {}, Gang("pg", 3)), QueueingHint::kQueue);
  EXPECT_EQ(*group_hint(waiting, {}, Gang("other", 3)), QueueingHint::kQueueSkip);
  // minCount lowered: may admit; raised: cannot.
  EXPECT_EQ(*group_hint(waiting, Gang("pg", 3), Gang("pg", 2)), QueueingHint::kQueue);
  EXPECT_EQ(*group_hint(waiting, Gang("pg", 3), Gang("pg", 4)), QueueingHint::kQueueSkip);
}

}  // namespace
}  // namespace berth
