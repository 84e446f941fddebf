// Stopping the scheduler with a backlog of binding cycles: pods not bound yet are forgotten, not
// bound one by one after the stop, and pods waiting at Permit are let go at once.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
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

// Holds every pod at Permit for ten minutes.
class HoldAtPermit final : public PermitPlugin {
 public:
  std::string_view Name() const override { return "HoldAtPermit"; }
  PermitDecision Permit(CycleState&, const PodInfo&, const std::string&) override {
    return {Status::Wait(), std::chrono::minutes(10)};
  }
};

// Blocks the first bind until released; counts binds that ran.
class GatedBinder final : public BindPlugin {
 public:
  std::string_view Name() const override { return "GatedBinder"; }
  Status Bind(CycleState&, const PodInfo&, const std::string&) override {
    std::unique_lock lock(mu_);
    ++binds_;
    entered_.notify_all();
    open_.wait(lock, [&] { return released_; });
    return Status::Success();
  }
  void WaitForFirstBind() {
    std::unique_lock lock(mu_);
    entered_.wait(lock, [&] { return binds_ > 0; });
  }
  void Release() {
    std::lock_guard lock(mu_);
    released_ = true;
    open_.notify_all();
  }
  int binds() {
    std::lock_guard lock(mu_);
    return binds_;
  }

 private:
  std::mutex mu_;
  std::condition_variable entered_, open_;
  int binds_ = 0;
  bool released_ = false;
};

struct ShutdownHarness {
  Registry registry = InTreeRegistry();
  config::SchedulerConfiguration config;
  InMemoryCluster cluster;
  RealClock clock;
  std::unique_ptr<Scheduler> sched;

  explicit ShutdownHarness(const std::string& extra_yaml, std::vector<PluginRegistration> plugins) {
    for (auto& r : plugins) EXPECT_TRUE(registry.Add(std::move(r)).ok());
    config = testing::ProfileWithPlugins(extra_yaml, registry);
    sched = testing::SchedulerOver(config, registry, cluster, clock, /*inline_binding=*/false);
    for (int i = 0; i < 4; ++i)
      cluster.AddNode(
          MakeNode().Name(fmt::format("n{}", i)).Capacity({{"cpu", "64"}, {"pods", "500"}}).Obj());
  }
  int Bound() const {
    int n = 0;
    for (const auto& p : cluster.ListPods()) n += !p->spec.node_name.empty();
    return n;
  }
};

// Destroys `sched` on another thread and reports whether that ended within `limit`; the limit
// is generous: without the fix the destruction waits for Permit timeouts of ten minutes.
bool DestroyedWithin(std::unique_ptr<Scheduler>& sched, std::chrono::seconds limit) {
  auto done = std::async(std::launch::async, [&] { sched.reset(); });
  const bool in_time = done.wait_for(limit) == std::future_status::ready;
  if (!in_time) ADD_FAILURE() << "the scheduler did not stop; waiting for it to";
  done.wait();
  return in_time;
}

TEST(SchedulerShutdownTest, PodsWaitingAtPermitAreForgottenNotBound) {
  PluginRegistration hold;
  hold.name = "HoldAtPermit";
  hold.factory = [](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
    return std::unique_ptr<Plugin>(std::make_unique<HoldAtPermit>());
  };
  ShutdownHarness t("    permit:\n      enabled: [{name: HoldAtPermit}]\n", {std::move(hold)});
  ASSERT_NE(t.sched, nullptr);
  // More pods than binding threads: some wait at Permit, the rest queue behind them.
  constexpr int kPods = 100;
  for (int i = 0; i < kPods; ++i)
    t.cluster.AddPod(MakePod().Name(fmt::format("p{:03d}", i)).Req({{"cpu", "100m"}}).Obj());
  int scheduled = 0;
  while (t.sched->ScheduleOne(false)) ++scheduled;
  ASSERT_EQ(scheduled, kPods);
  EXPECT_TRUE(DestroyedWithin(t.sched, std::chrono::seconds(30)));
  EXPECT_EQ(t.Bound(), 0);
  EXPECT_EQ(t.cluster.write_counts().binds, 0);
}

TEST(SchedulerShutdownTest, QueuedBindingCyclesAreForgottenAndTheOneInFlightFinishes) {
  auto binder = std::make_shared<GatedBinder>();
  PluginRegistration gated;
  gated.name = "GatedBinder";
  gated.factory = [binder](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
    // The framework owns the instance it is given; the test keeps its own view through
    // `binder`, which outlives the scheduler.
    struct Forward final : BindPlugin {
      std::shared_ptr<GatedBinder> b;
      std::string_view Name() const override { return "GatedBinder"; }
      Status Bind(CycleState& s, const PodInfo& p, const std::string& n) override {
        return b->Bind(s, p, n);
      }
    };
    auto f = std::make_unique<Forward>();
    f->b = binder;
    return std::unique_ptr<Plugin>(std::move(f));
  };
  ShutdownHarness t(
      "    bind:\n      enabled: [{name: GatedBinder}]\n      disabled: [{name: \"*\"}]\n",
      {std::move(gated)});
  ASSERT_NE(t.sched, nullptr);
  constexpr int kPods = 300;
  for (int i = 0; i < kPods; ++i)
    t.cluster.AddPod(MakePod().Name(fmt::format("p{:03d}", i)).Req({{"cpu", "100m"}}).Obj());
  while (t.sched->ScheduleOne(false)) {
  }
  binder->WaitForFirstBind();
  // Every bind that started blocks until released. The scheduler is destroyed on another
  // thread; once it is stopping, the binds are released, and every cycle still queued finds
  // the scheduler stopping.
  Scheduler* raw = t.sched.get();
  auto destroyed = std::async(std::launch::async, [&] { t.sched.reset(); });
  while (!raw->stopping()) std::this_thread::yield();  // alive: its binds are still blocked
  binder->Release();
  EXPECT_EQ(destroyed.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  destroyed.wait();
  // Only the binds that had started ran: at most one per binding thread (twice the core),
  // not 300.
  EXPECT_GE(binder->binds(), 1);
  EXPECT_LE(binder->binds(), 2 * SchedulerOptions{}.binding_threads);
  EXPECT_LT(binder->binds(), kPods);
}

}  // namespace
}  // namespace berth
