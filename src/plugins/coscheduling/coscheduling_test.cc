#include "plugins/coscheduling/coscheduling.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "berth/testing/builders.h"
#include "berth/testing/fake_handle.h"

namespace berth {
namespace {

using testing::FakeHandle;
using testing::FakeWaitingPod;
using testing::MakeNode;
using testing::MakePod;

Ptr<PodGroup> Group(const std::string& name, int min, UnixTime created = 100,
                    std::optional<int32_t> timeout = std::nullopt, ResourceList min_res = {}) {
  auto g = std::make_shared<PodGroup>();
  g->metadata.name = name;
  g->metadata.namespace_ = "default";
  g->metadata.creation_timestamp = created;
  g->spec.min_member = min;
  g->spec.schedule_timeout_seconds = timeout;
  if (!min_res.empty()) g->spec.min_resources = min_res;
  return g;
}

Ptr<Pod> Member(const std::string& name, const std::string& group, std::string node = "") {
  auto b = MakePod().Name(name).UID(name).Label(kPodGroupLabel, group).Req({{"cpu", "1"}});
  if (!node.empty()) b.Node(node);
  return b.Obj();
}

struct Harness {
  FakeHandle handle;
  std::unique_ptr<Coscheduling> plugin;
  CycleState state;

  explicit Harness(CoschedulingArgs args = {}) {
    plugin = std::make_unique<Coscheduling>(handle, args);
  }
  testing::FakeCluster& cluster() { return handle.fake_cluster(); }
  void SetNodes(int n, const char* cpu) {
    std::vector<Ptr<Node>> nodes;
    for (int i = 0; i < n; ++i)
      nodes.push_back(MakeNode().Name("n" + std::to_string(i)).Capacity({{"cpu", cpu}}).Obj());
    handle.SetSnapshot(Snapshot::Build(nodes, {}));
  }
  Status PreFilter(const Ptr<Pod>& pod) {
    PreFilterResult r;
    auto info = PodInfo::Create(pod);
    return plugin->PreFilter(state, *info, handle.snapshot().nodes(), &r);
  }
  PermitDecision Permit(const Ptr<Pod>& pod) {
    return plugin->Permit(state, *PodInfo::Create(pod), "n0");
  }
  Status PostFilter(const Ptr<Pod>& pod) {
    PostFilterResult r;
    return plugin->PostFilter(state, *PodInfo::Create(pod), {}, &r);
  }
  std::shared_ptr<FakeWaitingPod> Wait(const Ptr<Pod>& pod) {
    auto w = std::make_shared<FakeWaitingPod>(pod, std::vector<std::string>{"Coscheduling"});
    handle.waiting_pods.push_back(w);
    return w;
  }
};

QueuedPodInfo Queued(Ptr<Pod> pod, TimePoint initial = {}) {
  QueuedPodInfo q;
  q.pod_info = PodInfo::Create(std::move(pod));
  q.initial_attempt_timestamp = initial;
  return q;
}

// ---------------------------------------------------------------- args

TEST(CoschedulingArgsTest, DefaultsAsSchedulerPlugins) {
  auto args = DecodeCoschedulingArgs(nullptr, "args");
  ASSERT_TRUE(args.ok()) << args.error().message;
  const auto& a = dynamic_cast<const CoschedulingArgs&>(**args);
  EXPECT_EQ(a.permit_waiting_time_seconds, 60);
  EXPECT_EQ(a.pod_group_backoff_seconds, 0);
  EXPECT_EQ(a.pod_group_reject_percentage, 10);
}

TEST(CoschedulingArgsTest, DecodesEveryField) {
  const auto raw = nlohmann::json::parse(
      R"({"permitWaitingTimeSeconds": 10, "podGroupBackoffSeconds": 20,
          "podGroupRejectPercentage": 0})");
  auto args = DecodeCoschedulingArgs(&raw, "args");
  ASSERT_TRUE(args.ok()) << args.error().message;
  const auto& a = dynamic_cast<const CoschedulingArgs&>(**args);
  EXPECT_EQ(a.permit_waiting_time_seconds, 10);
  EXPECT_EQ(a.pod_group_backoff_seconds, 20);
  EXPECT_EQ(a.pod_group_reject_percentage, 0);
  nlohmann::json out;
  a.Encode(out);
  EXPECT_EQ(out["podGroupBackoffSeconds"], 20);
}

TEST(CoschedulingArgsTest, ValidationNamesTheField) {
  struct Case {
    const char* json;
    const char* error;
  } cases[] = {
      {R"({"permitWaitingTimeSeconds": -1})",
       "args.permitWaitingTimeSeconds: invalid value -1: must be greater than 0"},
      {R"({"podGroupBackoffSeconds": -5})",
       "args.podGroupBackoffSeconds: invalid value -5: must be greater than 0"},
      {R"({"podGroupRejectPercentage": 101})",
       "args.podGroupRejectPercentage: invalid value 101: must be between 0 and 100"},
      {R"({"permitWaitingTime": 1})", "args.permitWaitingTime: unknown field"},
      {R"({"permitWaitingTimeSeconds": "x"})", "args.permitWaitingTimeSeconds: expected"},
  };
  for (const Case& c : cases) {
    const auto raw = nlohmann::json::parse(c.json);
    auto args = DecodeCoschedulingArgs(&raw, "args");
    ASSERT_FALSE(args.ok()) << c.json;
    EXPECT_NE(args.error().message.find(c.error), std::string::npos)
        << c.json << " -> " << args.error().message;
  }
}

// ---------------------------------------------------------------- QueueSort

TEST(CoschedulingTest, LessOrdersByPriorityThenGroupCreationThenName) {
  Harness t;
  t.cluster().pod_groups = {Group("old", 2, 100), Group("new", 2, 200)};
  const TimePoint at150{std::chrono::seconds(150)};
  auto high = MakePod().Name("z-high").Priority(10).Label(kPodGroupLabel, "new").Obj();
  auto new_a = Member("a", "new");
  auto old_b = Member("b", "old");
  auto old_c = Member("c", "old");
  auto plain = MakePod().Name("plain").Obj();
  EXPECT_TRUE(t.plugin->Less(Queued(high), Queued(old_b)));    // priority first
  EXPECT_TRUE(t.plugin->Less(Queued(old_c), Queued(new_a)));   // older group first
  EXPECT_TRUE(t.plugin->Less(Queued(old_b), Queued(old_c)));   // same group: by name
  EXPECT_FALSE(t.plugin->Less(Queued(old_c), Queued(old_b)));  // strict
  // A pod without a group sorts by its first attempt.
  EXPECT_TRUE(t.plugin->Less(Queued(old_b), Queued(plain, at150)));
  EXPECT_TRUE(t.plugin->Less(Queued(plain, at150), Queued(new_a)));
  // A member whose group does not exist (yet) sorts by its own first attempt too.
  auto orphan = Member("o", "missing");
  EXPECT_TRUE(t.plugin->Less(Queued(orphan, at150), Queued(new_a)));
}

// ---------------------------------------------------------------- PreFilter

TEST(CoschedulingTest, PreFilterPassesPodsWithoutAGroupOrWithAMissingOne) {
  Harness t;
  t.SetNodes(1, "4");
  EXPECT_TRUE(t.PreFilter(MakePod().Name("plain").Obj()).IsSuccess());
  EXPECT_TRUE(t.PreFilter(Member("a", "missing")).IsSuccess());
}

TEST(CoschedulingTest, PreFilterWaitsForMinMemberPods) {
  Harness t;
  t.SetNodes(1, "4");
  t.cluster().pod_groups = {Group("pg", 3)};
  auto a = Member("a", "pg"), b = Member("b", "pg");
  t.cluster().pods = {a, b};
  Status s = t.PreFilter(a);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(),
            "pre-filter pod a cannot find enough sibling pods, current pods number: 2, "
            "minMember of group: 3");
  t.cluster().pods.push_back(Member("c", "pg"));
  EXPECT_TRUE(t.PreFilter(a).IsSuccess());
}

TEST(CoschedulingTest, PreFilterCountsGatedMembersAsMissing) {
  Harness t;
  t.SetNodes(1, "4");
  t.cluster().pod_groups = {Group("pg", 2)};
  auto a = Member("a", "pg");
  auto gated = MakePod().Name("g").Label(kPodGroupLabel, "pg").SchedulingGate("wait").Obj();
  t.cluster().pods = {a, gated};
  Status s = t.PreFilter(a);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "pre-filter pod a cannot proceed due to gated pods in the same PodGroup");
  // One more member than minMember tolerates one gated pod.
  t.cluster().pods.push_back(Member("b", "pg"));
  EXPECT_TRUE(t.PreFilter(a).IsSuccess());
}

TEST(CoschedulingTest, PreFilterChecksMinResourcesAgainstTheClusterFreeCapacity) {
  Harness t;
  t.SetNodes(2, "4");  // 8 cpu in all
  t.cluster().pod_groups = {Group("big", 2, 100, std::nullopt, testing::RL({{"cpu", "9"}})),
                            Group("fits", 2, 100, std::nullopt, testing::RL({{"cpu", "8"}}))};
  auto a = Member("a", "big"), b = Member("b", "big");
  auto c = Member("c", "fits"), d = Member("d", "fits");
  t.cluster().pods = {a, b, c, d};
  Status s = t.PreFilter(a);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "resource gap: cpu: 1000m");
  EXPECT_TRUE(t.PreFilter(c).IsSuccess());
}

TEST(CoschedulingTest, PreFilterCountsTheGroupsPlacedMembersAsFree) {
  Harness t;
  auto node = MakeNode().Name("n0").Capacity({{"cpu", "4"}}).Obj();
  auto placed = Member("a", "pg", "n0");  // 1 cpu of the group's own
  auto other = MakePod().Name("x").Node("n0").Req({{"cpu", "2"}}).Obj();
  t.handle.SetSnapshot(Snapshot::Build({node}, {placed, other}));
  t.cluster().pod_groups = {Group("pg", 2, 100, std::nullopt, testing::RL({{"cpu", "2"}}))};
  auto b = Member("b", "pg");
  t.cluster().pods = {placed, other, b};
  EXPECT_TRUE(t.PreFilter(b).IsSuccess());  // 4 - 2 (other) = 2 free for the group
  t.cluster().pod_groups = {Group("pg", 2, 100, std::nullopt, testing::RL({{"cpu", "3"}}))};
  Harness fresh;  // no remembered pass
  fresh.handle.SetSnapshot(Snapshot::Build({node}, {placed, other}));
  fresh.cluster().pod_groups = t.cluster().pod_groups;
  fresh.cluster().pods = t.cluster().pods;
  EXPECT_EQ(fresh.PreFilter(b).Message(), "resource gap: cpu: 1000m");
}

// ---------------------------------------------------------------- Permit

TEST(CoschedulingTest, PermitWaitsForMinMemberThenAllowsTheGroup) {
  CoschedulingArgs args;
  args.permit_waiting_time_seconds = 10;
  Harness t(args);
  t.cluster().pod_groups = {Group("pg", 3), Group("timed", 2, 100, 30)};
  auto a = Member("a", "pg"), b = Member("b", "pg"), c = Member("c", "pg");
  auto other = Member("x", "timed");
  t.cluster().pods = {a, b, c, other};

  PermitDecision d = t.Permit(a);
  EXPECT_TRUE(d.status.IsWait());
  EXPECT_EQ(d.timeout, std::chrono::seconds(10));  // permitWaitingTimeSeconds
  // The first member to wait brings its siblings forward.
  EXPECT_EQ(t.handle.activated, (std::vector<std::string>{"default/b", "default/c"}));
  auto wa = t.Wait(a);
  EXPECT_TRUE(t.Permit(b).status.IsWait());
  EXPECT_EQ(t.handle.activated.size(), 2u);  // only the first waiter activates
  auto wb = t.Wait(b);
  auto wx = t.Wait(other);
  EXPECT_EQ(t.plugin->AssignedCount("default/pg"), 2);

  EXPECT_TRUE(t.Permit(c).status.IsSuccess());  // the third: minMember reached
  EXPECT_EQ(wa->allowed, (std::vector<std::string>{"Coscheduling"}));
  EXPECT_EQ(wb->allowed, (std::vector<std::string>{"Coscheduling"}));
  EXPECT_TRUE(wx->allowed.empty());  // another group's member waits on

  // The group's own scheduleTimeoutSeconds wins over the args.
  EXPECT_EQ(t.Permit(other).timeout, std::chrono::seconds(30));
}

TEST(CoschedulingTest, PermitCountsBoundMembers) {
  Harness t;
  t.cluster().pod_groups = {Group("pg", 2)};
  auto bound = Member("a", "pg", "n0");
  auto b = Member("b", "pg");
  t.cluster().pods = {bound, b};
  EXPECT_TRUE(t.Permit(b).status.IsSuccess());
}

TEST(CoschedulingTest, PermitRejectsAPodWhoseGroupIsMissingAndPassesOthers) {
  Harness t;
  EXPECT_TRUE(t.Permit(MakePod().Name("plain").Obj()).status.IsSuccess());
  PermitDecision d = t.Permit(Member("a", "missing"));
  EXPECT_EQ(d.status.code(), Code::kUnschedulable);
  EXPECT_EQ(d.status.Message(), "PodGroup not found");
}

// ---------------------------------------------------------------- PostFilter, Unreserve

TEST(CoschedulingTest, PostFilterRejectsTheWaitingGroupAndBacksItOff) {
  CoschedulingArgs args;
  args.pod_group_backoff_seconds = 20;
  Harness t(args);
  t.SetNodes(1, "4");
  t.cluster().pod_groups = {Group("pg", 3), Group("other", 1)};
  auto a = Member("a", "pg"), b = Member("b", "pg"), c = Member("c", "pg");
  auto x = Member("x", "other");
  t.cluster().pods = {a, b, c, x};
  EXPECT_TRUE(t.Permit(a).status.IsWait());
  auto wa = t.Wait(a);
  auto wx = t.Wait(x);

  Status s = t.PostFilter(b);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(
      s.Message(),
      "PodGroup default/pg gets rejected due to Pod b is unschedulable even after PostFilter");
  EXPECT_EQ(wa->rejected, "Coscheduling: optimistic rejection in PostFilter");
  EXPECT_TRUE(wx->rejected.empty());
  // Backing off: every member is turned away at PreFilter until the backoff ends.
  Status pre = t.PreFilter(c);
  EXPECT_EQ(pre.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(pre.Message(), "podGroup default/pg failed recently");
  // A member failing again during the backoff does not extend it.
  t.handle.fake_clock().Advance(std::chrono::seconds(10));
  EXPECT_FALSE(t.PostFilter(c).IsSuccess());
  t.handle.fake_clock().Advance(std::chrono::seconds(10));
  EXPECT_TRUE(t.PreFilter(c).IsSuccess());
}

TEST(CoschedulingTest, PostFilterSparesAGroupThatHasItsQuorumOrIsClose) {
  CoschedulingArgs args;
  args.pod_group_reject_percentage = 10;
  Harness t(args);
  t.cluster().pod_groups = {Group("pg", 2), Group("wide", 20)};
  auto a = Member("a", "pg", "n0"), b = Member("b", "pg", "n0"), c = Member("c", "pg");
  std::vector<Ptr<Pod>> pods = {a, b, c};
  for (int i = 0; i < 18; ++i) pods.push_back(Member("w" + std::to_string(i), "wide", "n0"));
  auto last = Member("wlast", "wide");
  pods.push_back(last);
  t.cluster().pods = pods;
  auto wc = t.Wait(c);
  // Two of two placed: quorum met, nothing is rejected.
  Status s = t.PostFilter(c);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_TRUE(s.Message().empty());
  EXPECT_TRUE(wc->rejected.empty());
  // 18 of 20 placed: 10% missing is within podGroupRejectPercentage.
  EXPECT_TRUE(t.PostFilter(last).Message().empty());
  // Without a group PostFilter cannot help.
  EXPECT_EQ(t.PostFilter(MakePod().Name("plain").Obj()).Message(), "can not find pod group");
}

TEST(CoschedulingTest, UnreserveRejectsTheGroupsWaitingMembers) {
  Harness t;
  t.cluster().pod_groups = {Group("pg", 3)};
  auto a = Member("a", "pg"), b = Member("b", "pg");
  t.cluster().pods = {a, b, Member("c", "pg")};
  EXPECT_TRUE(t.Permit(a).status.IsWait());
  EXPECT_TRUE(t.Permit(b).status.IsWait());
  auto wa = t.Wait(a);
  EXPECT_EQ(t.plugin->AssignedCount("default/pg"), 2);
  t.plugin->Unreserve(t.state, *PodInfo::Create(b), "n0");  // b timed out
  EXPECT_EQ(wa->rejected, "Coscheduling: rejection in Unreserve");
  EXPECT_EQ(t.plugin->AssignedCount("default/pg"), 1);
}

TEST(CoschedulingTest, AFailedGroupSortsAsOfItsFailure) {
  Harness t;
  t.handle.fake_clock().Set(TimePoint{std::chrono::seconds(500)});
  t.cluster().pod_groups = {Group("pg", 3, 100), Group("later", 1, 300)};
  auto a = Member("a", "pg");
  t.cluster().pods = {a, Member("b", "pg"), Member("c", "pg")};
  auto l = Member("l", "later");
  EXPECT_TRUE(t.plugin->Less(Queued(a), Queued(l)));
  t.plugin->Unreserve(t.state, *PodInfo::Create(a), "n0");
  EXPECT_TRUE(t.plugin->Less(Queued(l), Queued(a)));  // failed at 500, after 300
  // A member that gets through Permit clears the mark.
  t.cluster().pods = {a, Member("b", "pg", "n0"), Member("c", "pg", "n0")};
  EXPECT_TRUE(t.Permit(a).status.IsSuccess());
  EXPECT_TRUE(t.plugin->Less(Queued(a), Queued(l)));
}

}  // namespace
}  // namespace berth
