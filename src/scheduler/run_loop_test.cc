// The scheduler's own loops: Run schedules what arrives until it is stopped; RunUntilIdle
// schedules until nothing is left, moving its fake clock over backoff and Permit waits.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

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

int Bound(const InMemoryCluster& cluster) {
  int n = 0;
  for (const auto& p : cluster.ListPods()) n += !p->spec.node_name.empty();
  return n;
}

TEST(SchedulerRunTest, SchedulesWhatArrivesUntilStopped) {
  Registry registry = InTreeRegistry();
  config::SchedulerConfiguration config = config::DefaultConfiguration(registry);
  InMemoryCluster cluster;
  RealClock clock;
  auto sched = testing::SchedulerOver(config, registry, cluster, clock, false);
  ASSERT_NE(sched, nullptr);
  cluster.AddNode(MakeNode().Name("n1").Capacity({{"cpu", "8"}, {"pods", "110"}}).Obj());
  std::stop_source stop;
  std::thread loop([&] { sched->Run(stop.get_token()); });
  for (int i = 0; i < 50; ++i)
    cluster.AddPod(MakePod().Name(fmt::format("p{}", i)).Req({{"cpu", "10m"}}).Obj());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (Bound(cluster) < 50 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(Bound(cluster), 50);
  // Stopping ends the blocking wait for the next pod.
  stop.request_stop();
  loop.join();
  sched.reset();
}

// Holds each pod at Permit until it has waited five seconds on the scheduler's clock.
class WaitFiveSeconds final : public PermitPlugin {
 public:
  std::string_view Name() const override { return "WaitFiveSeconds"; }
  PermitDecision Permit(CycleState&, const PodInfo&, const std::string&) override {
    return {Status::Wait(), std::chrono::seconds(5)};
  }
};

TEST(SchedulerRunTest, RunUntilIdleMovesTheClockOverPermitWaits) {
  Registry registry = InTreeRegistry();
  PluginRegistration wait;
  wait.name = "WaitFiveSeconds";
  wait.factory = [](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
    return std::unique_ptr<Plugin>(std::make_unique<WaitFiveSeconds>());
  };
  ASSERT_TRUE(registry.Add(std::move(wait)).ok());
  const config::SchedulerConfiguration config = testing::ProfileWithPlugins(
      "    permit:\n      enabled: [{name: WaitFiveSeconds}]\n", registry);
  InMemoryCluster cluster;
  FakeClock clock;
  auto sched = testing::SchedulerOver(config, registry, cluster, clock, true);
  ASSERT_NE(sched, nullptr);
  cluster.AddNode(MakeNode().Name("n1").Capacity({{"cpu", "8"}, {"pods", "110"}}).Obj());
  for (int i = 0; i < 3; ++i) cluster.AddPod(MakePod().Name(fmt::format("p{}", i)).Obj());
  const TimePoint start = clock.Now();
  int cycles = 0;
  IdleRunHooks hooks;
  hooks.after_cycle = [&] { return ++cycles < 100; };
  sched->RunUntilIdle(clock, hooks);
  // The clock moved past the five seconds (no real waiting), the waits timed out and rejected
  // every pod, and the run ended with nothing left to try.
  EXPECT_EQ(Bound(cluster), 0);
  EXPECT_GE(clock.Now() - start, std::chrono::seconds(5));
  EXPECT_GE(cycles, 3);
}

TEST(SchedulerRunTest, AfterCycleFalseEndsTheRunAtOnce) {
  Registry registry = InTreeRegistry();
  config::SchedulerConfiguration config = config::DefaultConfiguration(registry);
  InMemoryCluster cluster;
  FakeClock clock;
  auto sched = testing::SchedulerOver(config, registry, cluster, clock, true);
  ASSERT_NE(sched, nullptr);
  cluster.AddNode(MakeNode().Name("n1").Capacity({{"cpu", "8"}, {"pods", "110"}}).Obj());
  for (int i = 0; i < 5; ++i) cluster.AddPod(MakePod().Name(fmt::format("p{}", i)).Obj());
  IdleRunHooks hooks;
  hooks.after_cycle = [] { return false; };
  sched->RunUntilIdle(clock, hooks);
  EXPECT_EQ(Bound(cluster), 1);
  sched->RunUntilIdle(clock);
  EXPECT_EQ(Bound(cluster), 5);
}

}  // namespace
}  // namespace berth
