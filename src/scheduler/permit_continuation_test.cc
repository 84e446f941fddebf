// A pod waiting at Permit holds no binding thread: a gang of 1,000 waits for its last member
// while ordinary pods bind beside it, and a Permit timeout rejects a pod without a thread
// waiting for it.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "berth/framework/handle.h"
#include "config/load.h"
#include "framework/in_memory_cluster.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduler_test_util.h"
#include "testing/builders.h"

namespace berth {
namespace {

using testing::MakeNode;
using testing::MakePod;

// Pods labelled gang=g wait at Permit until `size` of them are reserved, then all go; the
// others pass. A wait lasts `timeout` at most.
class Gang final : public PermitPlugin {
 public:
  Gang(Handle& handle, int size, Duration timeout)
      : handle_(handle), size_(size), timeout_(timeout) {}
  std::string_view Name() const override { return "Gang"; }
  PermitDecision Permit(CycleState&, const PodInfo& pod, const std::string&) override {
    if (!pod->metadata.labels.count("gang")) return {Status::Success(), {}};
    if (++arrived_ < size_) return {Status::Wait(), timeout_};
    handle_.IterateOverWaitingPods([&](WaitingPod& w) { w.Allow(Name()); });
    return {Status::Success(), {}};
  }

 private:
  Handle& handle_;
  const int size_;
  const Duration timeout_;
  int arrived_ = 0;  // scheduling thread only
};

struct GangHarness {
  Registry registry = InTreeRegistry();
  config::SchedulerConfiguration config;
  InMemoryCluster cluster;
  RealClock clock;
  std::unique_ptr<Scheduler> sched;

  GangHarness(int size, Duration timeout) {
    PluginRegistration reg;
    reg.name = "Gang";
    reg.factory = [size, timeout](const PluginArgs*, Handle& h) -> Result<std::unique_ptr<Plugin>> {
      return std::unique_ptr<Plugin>(std::make_unique<Gang>(h, size, timeout));
    };
    EXPECT_TRUE(registry.Add(std::move(reg)).ok());
    config = testing::ProfileWithPlugins("    permit:\n      enabled: [{name: Gang}]\n", registry);
    sched = testing::SchedulerOver(config, registry, cluster, clock, /*inline_binding=*/false);
    for (int i = 0; i < 20; ++i)
      cluster.AddNode(MakeNode()
                          .Name(fmt::format("n{}", i))
                          .Capacity({{"cpu", "200"}, {"memory", "1Ti"}, {"pods", "500"}})
                          .Obj());
  }
  int Bound(const std::string& prefix) const {
    int n = 0;
    for (const auto& p : cluster.ListPods())
      n += !p->spec.node_name.empty() && p->metadata.name.rfind(prefix, 0) == 0;
    return n;
  }
  // Schedules what is queued, then waits (up to a minute) for `done`.
  bool ScheduleAndWaitFor(const std::function<bool()>& done) {
    while (sched->ScheduleOne(false)) {
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!done() && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return done();
  }
};

TEST(PermitContinuationTest, AThousandMemberGangWaitsWhileOrdinaryPodsBind) {
  GangHarness t(1000, std::chrono::minutes(15));
  ASSERT_NE(t.sched, nullptr);
  for (int i = 0; i < 999; ++i)
    t.cluster.AddPod(MakePod()
                         .Name(fmt::format("gang-{:04d}", i))
                         .Label("gang", "g")
                         .Req({{"cpu", "10m"}})
                         .Obj());
  for (int i = 0; i < 500; ++i)
    t.cluster.AddPod(MakePod().Name(fmt::format("plain-{:03d}", i)).Req({{"cpu", "10m"}}).Obj());
  // 999 members wait at Permit (far more than the binding threads); the ordinary pods bind
  // meanwhile. A wait that held a thread would leave them queued behind it for 15 minutes.
  ASSERT_TRUE(t.ScheduleAndWaitFor([&] { return t.Bound("plain-") == 500; }))
      << t.Bound("plain-") << " ordinary pods bound";
  EXPECT_EQ(t.Bound("gang-"), 0);
  EXPECT_EQ(t.sched->binding_cycles_running(), 999);  // the waits count, holding no thread
  // The last member arrives: the whole gang binds.
  t.cluster.AddPod(MakePod().Name("gang-0999").Label("gang", "g").Req({{"cpu", "10m"}}).Obj());
  EXPECT_TRUE(t.ScheduleAndWaitFor([&] { return t.Bound("gang-") == 1000; }))
      << t.Bound("gang-") << " members bound";
}

TEST(PermitContinuationTest, ATimeoutRejectsAWaitingPodWithoutAThreadWaiting) {
  GangHarness t(3, std::chrono::milliseconds(200));
  ASSERT_NE(t.sched, nullptr);
  t.cluster.AddPod(MakePod().Name("gang-a").Label("gang", "g").Obj());
  t.cluster.AddPod(MakePod().Name("plain").Obj());
  // The member times out and its cycle ends (rejected): nothing is left running or assumed.
  ASSERT_TRUE(t.ScheduleAndWaitFor(
      [&] { return t.Bound("plain") == 1 && t.sched->binding_cycles_running() == 0; }));
  EXPECT_EQ(t.Bound("gang-"), 0);
  auto member = t.cluster.GetPod("default", "gang-a");
  ASSERT_NE(member, nullptr);
  EXPECT_FALSE(t.sched->cache().IsAssumedPod(*member));
}

}  // namespace
}  // namespace berth
