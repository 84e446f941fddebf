// The pod group cycle (GenericWorkload): a Workload API PodGroup's members are scheduled together
// against one snapshot, all of minCount bind or none does, and a rejected group is retried when
// the cluster changes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "config/load.h"
#include "framework/in_memory_cluster.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "testing/builders.h"

namespace berth {
namespace {

using testing::MakeNode;
using testing::MakePod;

Ptr<SchedulingPodGroup> Gang(const std::string& name, int min_count, bool gang = true) {
  auto g = std::make_shared<SchedulingPodGroup>();
  g->metadata.name = name;
  g->metadata.namespace_ = "default";
  g->gang = gang;
  g->min_count = min_count;
  return g;
}

Ptr<Pod> Member(const std::string& name, const std::string& group, const char* cpu = "1") {
  return MakePod().Name(name).UID(name).SchedulingGroup(group).Req({{"cpu", cpu}}).Obj();
}

// Events the scheduler reported, per pod: the last attempt's outcome and message.
class Attempts final : public AttemptObserver {
 public:
  void OnAttempt(const SchedulingAttempt& a) override {
    last[a.pod->metadata.name] = a.message;
    ++count[a.pod->metadata.name];
  }
  std::map<std::string, std::string> last;
  std::map<std::string, int> count;
};

struct Harness {
  Registry registry = InTreeRegistry();
  config::SchedulerConfiguration config;
  InMemoryCluster cluster;
  FakeClock clock{TimePoint{std::chrono::seconds(1000)}};
  Attempts attempts;
  std::unique_ptr<Scheduler> sched;

  explicit Harness(bool group_cycles = true, const Clock* run_clock = nullptr) {
    auto c = config::LoadConfig(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
        "profiles:\n- schedulerName: default-scheduler\n  plugins:\n"
        "    multiPoint:\n      enabled: [{name: GangScheduling}]\n",
        "gang.yaml", registry);
    EXPECT_TRUE(c.ok()) << c.error().message;
    if (c.ok()) config = std::move(c).value();
    SchedulerOptions so;
    so.config = &config;
    so.registry = &registry;
    so.client = &cluster;
    so.clock = run_clock ? run_clock : &clock;
    so.inline_binding = run_clock == nullptr;
    so.pod_group_cycles = group_cycles;
    auto s = Scheduler::Create(so);
    EXPECT_TRUE(s.ok()) << s.error().message;
    if (s.ok()) sched = std::move(s).value();
    cluster.SetEventHandler(sched.get());
    sched->SetObserver(&attempts);
  }
  void AddNodes(int n, const char* cpu, const std::string& prefix = "n") {
    for (int i = 0; i < n; ++i)
      cluster.AddNode(MakeNode()
                          .Name(fmt::format("{}{:02d}", prefix, i))
                          .Capacity({{"cpu", cpu}, {"pods", "110"}})
                          .Obj());
  }
  int Bound(const std::string& prefix) const {
    int n = 0;
    for (const auto& p : cluster.ListPods())
      n += !p->spec.node_name.empty() && p->metadata.name.rfind(prefix, 0) == 0;
    return n;
  }
  std::string Condition(const std::string& name) const {
    auto p = cluster.GetPod("default", name);
    for (const auto& c : p->status.conditions)
      if (c.type == "PodScheduled") return c.reason + ": " + c.message;
    return "";
  }
  // Runs cycles until the queue has nothing active, completing decided Permit waits.
  int Cycles() {
    int n = 0;
    while (sched->ScheduleOne(false)) {
      ++n;
      sched->CompleteWaitingBindings();
    }
    sched->CompleteWaitingBindings();
    return n;
  }
};

TEST(PodGroupCycleTest, AGangThatDoesNotFitWholeBindsNobody) {
  Harness t;
  t.AddNodes(3, "1");  // room for three one-CPU members
  t.cluster.AddSchedulingPodGroup(Gang("pg", 4));
  for (const char* name : {"m0", "m1", "m2", "m3"}) t.cluster.AddPod(Member(name, "pg"));
  EXPECT_EQ(t.Cycles(), 1);  // one cycle for the whole group
  EXPECT_EQ(t.Bound("m"), 0);
  EXPECT_EQ(t.sched->cache_counts().assumed_pods, 0u);
  // The three placed members fail with the group's reason, the fourth with its own.
  for (const char* name : {"m0", "m1", "m2"})
    EXPECT_EQ(t.Condition(name),
              "Unschedulable: minCount (4) cannot be satisfied: 3 scheduled, 0 remaining")
        << name;
  EXPECT_EQ(t.Condition("m3"), "Unschedulable: 0/3 nodes are available: 3 Insufficient cpu.");
  EXPECT_EQ(t.attempts.last["m0"], "minCount (4) cannot be satisfied: 3 scheduled, 0 remaining");
  EXPECT_EQ(t.sched->pending_counts().unschedulable, 4u);
  // Nothing the group tried is left in the snapshot: an ordinary pod takes a whole node.
  t.cluster.AddPod(MakePod().Name("solo").UID("solo").Req({{"cpu", "1"}}).Obj());
  t.Cycles();
  EXPECT_EQ(t.Bound("solo"), 1);
}

TEST(PodGroupCycleTest, AGangThatFitsBindsWhole) {
  Harness t;
  t.AddNodes(4, "1");
  t.cluster.AddSchedulingPodGroup(Gang("pg", 4));
  for (const char* name : {"m0", "m1", "m2", "m3"}) t.cluster.AddPod(Member(name, "pg"));
  EXPECT_EQ(t.Cycles(), 1);
  EXPECT_EQ(t.Bound("m"), 4);
  // One member per node: each member saw the ones placed before it.
  std::set<std::string> nodes;
  for (const auto& p : t.cluster.ListPods()) nodes.insert(p->spec.node_name);
  EXPECT_EQ(nodes.size(), 4u);
}

TEST(PodGroupCycleTest, EarlyRejectionLeavesTheRestUntried) {
  Harness t;
  t.AddNodes(1, "1");
  t.cluster.AddSchedulingPodGroup(Gang("pg", 3));
  for (const char* name : {"a", "b", "c"}) t.cluster.AddPod(Member(name, "pg", "2"));
  t.Cycles();
  // "a" fits nowhere: 0 scheduled and 2 remaining cannot reach 3, so b and c are not tried.
  EXPECT_EQ(t.Condition("a"), "Unschedulable: 0/1 nodes are available: 1 Insufficient cpu.");
  EXPECT_EQ(t.Condition("b"),
            "Unschedulable: minCount (3) cannot be satisfied: 0 scheduled, 2 remaining");
  EXPECT_EQ(t.Condition("c"),
            "Unschedulable: minCount (3) cannot be satisfied: 0 scheduled, 2 remaining");
}

TEST(PodGroupCycleTest, LaterMembersSeeEarlierOnesInTheGroupSnapshot) {
  Harness t;
  // The big node scores best for every member that does not see the others there.
  t.cluster.AddNode(MakeNode().Name("big").Capacity({{"cpu", "64"}, {"pods", "110"}}).Obj());
  t.AddNodes(2, "8");
  t.cluster.AddSchedulingPodGroup(Gang("pg", 3));
  // Required anti-affinity between members: at most one per node.
  Affinity apart;
  PodAffinityTerm term;
  term.label_selector.emplace().match_labels.insert({"app", "pg"});
  term.topology_key = "kubernetes.io/hostname";
  apart.pod_anti_affinity.emplace().required.push_back(term);
  for (int i = 0; i < 3; ++i) {
    t.cluster.AddPod(MakePod()
                         .Name(fmt::format("m{}", i))
                         .UID(fmt::format("m{}", i))
                         .Label("app", "pg")
                         .SchedulingGroup("pg")
                         .Req({{"cpu", "1"}})
                         .Affinity(apart)
                         .Obj());
  }
  t.Cycles();
  EXPECT_EQ(t.Bound("m"), 3);
  std::set<std::string> nodes;
  for (const auto& p : t.cluster.ListPods()) nodes.insert(p->spec.node_name);
  EXPECT_EQ(nodes.size(), 3u) << "members were not spread by their anti-affinity";
}

TEST(PodGroupCycleTest, ARejectedGroupIsRetriedWhenANodeIsAdded) {
  Harness t;
  t.AddNodes(3, "1");
  t.cluster.AddSchedulingPodGroup(Gang("pg", 4));
  for (const char* name : {"m0", "m1", "m2", "m3"}) t.cluster.AddPod(Member(name, "pg"));
  t.Cycles();
  ASSERT_EQ(t.Bound("m"), 0);
  // A fourth node: the member NodeResourcesFit rejected is moved, and takes its group along.
  t.cluster.AddNode(MakeNode().Name("extra").Capacity({{"cpu", "1"}, {"pods", "110"}}).Obj());
  t.clock.Advance(std::chrono::seconds(20));  // past the backoff
  t.sched->queue().FlushBackoffQCompleted();
  EXPECT_EQ(t.Cycles(), 1);
  EXPECT_EQ(t.Bound("m"), 4);
}

TEST(PodGroupCycleTest, ABasicGroupPlacesWhatFits) {
  Harness t;
  t.AddNodes(2, "1");
  t.cluster.AddSchedulingPodGroup(Gang("pg", 0, /*gang=*/false));
  for (const char* name : {"m0", "m1", "m2"}) t.cluster.AddPod(Member(name, "pg"));
  t.Cycles();
  EXPECT_EQ(t.Bound("m"), 2);
}

TEST(PodGroupCycleTest, MembersAlreadyScheduledCountTowardsMinCount) {
  Harness t;
  t.AddNodes(3, "1");
  t.cluster.AddSchedulingPodGroup(Gang("pg", 3));
  auto bound = MakePod().Name("m0").UID("m0").SchedulingGroup("pg").Req({{"cpu", "1"}}).Node("n00");
  t.cluster.AddPod(bound.Obj());
  for (const char* name : {"m1", "m2"}) t.cluster.AddPod(Member(name, "pg"));
  t.Cycles();
  EXPECT_EQ(t.Bound("m"), 3);
}

TEST(PodGroupCycleTest, WithoutTheGateMembersAreScheduledOneCycleEach) {
  Harness t(/*group_cycles=*/false);
  t.AddNodes(4, "1");
  t.cluster.AddSchedulingPodGroup(Gang("pg", 4));
  for (const char* name : {"m0", "m1", "m2", "m3"}) t.cluster.AddPod(Member(name, "pg"));
  EXPECT_EQ(t.Cycles(), 4);
  EXPECT_EQ(t.Bound("m"), 4);
}

// Threads: Scheduler::Run on its own thread with threaded binding, pods arriving from two
// others. A 1,000-member gang waits (PreEnqueue) while ordinary pods bind; its last member lets it
// in, and the whole gang is placed in one group cycle while more ordinary pods keep arriving and
// binding.
TEST(PodGroupCycleThreadedTest, AThousandMemberGangIsPlacedInOneCycleWhileOrdinaryPodsBind) {
  RealClock real;
  Harness t(/*group_cycles=*/true, &real);
  for (int i = 0; i < 20; ++i)
    t.cluster.AddNode(MakeNode()
                          .Name(fmt::format("n{:02d}", i))
                          .Capacity({{"cpu", "200"}, {"memory", "1Ti"}, {"pods", "500"}})
                          .Obj());
  for (int i = 0; i < 999; ++i)
    t.cluster.AddPod(Member(fmt::format("gang-{:04d}", i), "pg", "10m"));
  // The PodGroup after its members: they wait for it (PreEnqueue), then for the last member.
  t.cluster.AddSchedulingPodGroup(Gang("pg", 1000));
  std::stop_source stop;
  std::thread loop([&] { t.sched->Run(stop.get_token()); });
  auto plain = [&](int from, int to) {
    for (int i = from; i < to; ++i)
      t.cluster.AddPod(MakePod().Name(fmt::format("plain-{:03d}", i)).Req({{"cpu", "10m"}}).Obj());
  };
  auto wait_for = [&](const std::function<bool()>& done) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return done();
  };
  plain(0, 300);
  ASSERT_TRUE(wait_for([&] { return t.Bound("plain-") == 300; })) << t.Bound("plain-");
  EXPECT_EQ(t.Bound("gang-"), 0);
  EXPECT_EQ(t.sched->pending_counts().gated, 999u);

  std::thread more([&] { plain(300, 600); });
  t.cluster.AddPod(Member("gang-0999", "pg", "10m"));
  more.join();
  EXPECT_TRUE(wait_for([&] { return t.Bound("gang-") == 1000 && t.Bound("plain-") == 600; }))
      << t.Bound("gang-") << " members and " << t.Bound("plain-") << " ordinary pods bound";
  // One cycle per ordinary pod and one for the gang (two if the last member was popped before
  // the event that let the others in: it fails alone and joins the next group cycle); one cycle
  // per member would make it 1,600.
  EXPECT_LE(t.sched->queue().scheduling_cycle(), 602);
  stop.request_stop();
  loop.join();
  t.sched.reset();
}

}  // namespace
}  // namespace berth
