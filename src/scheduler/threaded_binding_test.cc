// The scheduler as the daemon runs it: binding cycles on the binding executor's threads and
// cluster events arriving from other threads while the scheduling thread works (these tests are
// also what scripts/tsan.sh runs under ThreadSanitizer). And a bind answered 409.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "config/load.h"
#include "framework/in_memory_cluster.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "testing/builders.h"

namespace berth {
namespace {

using testing::MakeNode;
using testing::MakePod;

class CountingObserver final : public AttemptObserver {
 public:
  void OnAttempt(const SchedulingAttempt& a) override {
    std::lock_guard lock(mu_);
    ++by_outcome_[a.outcome];
    if (a.outcome == SchedulingAttempt::Outcome::kScheduled) ++scheduled_[a.pod->Key()];
    last_ = a;
  }
  int count(SchedulingAttempt::Outcome o) const {
    std::lock_guard lock(mu_);
    auto it = by_outcome_.find(o);
    return it == by_outcome_.end() ? 0 : it->second;
  }
  std::map<std::string, int> scheduled() const {
    std::lock_guard lock(mu_);
    return scheduled_;
  }
  SchedulingAttempt last() const {
    std::lock_guard lock(mu_);
    return last_;
  }

 private:
  mutable std::mutex mu_;
  std::map<SchedulingAttempt::Outcome, int> by_outcome_;
  std::map<std::string, int> scheduled_;
  SchedulingAttempt last_;
};

class ThreadedScheduler {
 public:
  explicit ThreadedScheduler(bool inline_binding)
      : registry_(InTreeRegistry()), config_(config::DefaultConfiguration(registry_)) {
    SchedulerOptions so;
    so.config = &config_;
    so.registry = &registry_;
    so.client = &cluster_;
    so.clock = &clock_;
    so.inline_binding = inline_binding;
    auto s = Scheduler::Create(so);
    if (!s.ok()) {
      ADD_FAILURE() << s.error().message;
      return;
    }
    sched_ = std::move(s).value();
    cluster_.SetEventHandler(sched_.get());
    sched_->SetObserver(&observer_);
  }

  static std::shared_ptr<const Node> NodeObj(const std::string& name) {
    return MakeNode().Name(name).Capacity({{"cpu", "4"}, {"memory", "32Gi"}}).Obj();
  }
  static std::shared_ptr<const Pod> PodObj(const std::string& name) {
    return MakePod().Name(name).Req({{"cpu", "100m"}, {"memory", "100Mi"}}).Obj();
  }
  int Bound() const {
    int n = 0;
    for (const auto& p : cluster_.ListPods()) n += !p->spec.node_name.empty();
    return n;
  }

  Registry registry_;
  config::SchedulerConfiguration config_;
  InMemoryCluster cluster_;
  RealClock clock_;
  CountingObserver observer_;
  // Declared last: destroyed first, draining its binding cycles while the rest lives.
  std::unique_ptr<Scheduler> sched_;
};

// Binding cycles run on the executor's threads and deliver the bound pods back to the scheduler
// from there, while another thread keeps adding pods and nodes: every pod is bound exactly
// once, and the cache agrees with the cluster.
TEST(ThreadedBindingTest, EveryPodIsBoundOnceWhileEventsArriveFromOtherThreads) {
  ThreadedScheduler t(/*inline_binding=*/false);
  ASSERT_NE(t.sched_, nullptr);
  for (int i = 0; i < 10; ++i)
    t.cluster_.AddNode(ThreadedScheduler::NodeObj(fmt::format("n{}", i)));
  constexpr int kPods = 400;
  std::atomic<bool> added{false};
  std::thread informer([&] {
    for (int i = 0; i < kPods; ++i) {
      t.cluster_.AddPod(ThreadedScheduler::PodObj(fmt::format("p{:03d}", i)));
      if (i % 100 == 50) t.cluster_.AddNode(ThreadedScheduler::NodeObj(fmt::format("late{}", i)));
    }
    added = true;
  });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    if (!t.sched_->ScheduleOne(false)) {
      // A pod is bound in the middle of its binding cycle, which reports the attempt after:
      // the last cycles must end too before the reports are counted.
      if (added && t.Bound() == kPods && t.sched_->binding_cycles_running() == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  informer.join();
  EXPECT_EQ(t.Bound(), kPods);
  EXPECT_EQ(t.cluster_.write_counts().binds, kPods);
  auto scheduled = t.observer_.scheduled();
  EXPECT_EQ(scheduled.size(), static_cast<size_t>(kPods));
  for (const auto& [pod, n] : scheduled) EXPECT_EQ(n, 1) << pod;
  EXPECT_EQ(t.observer_.count(SchedulingAttempt::Outcome::kError), 0);
  // Every binding was confirmed by the cluster's update: nothing is left assumed.
  EXPECT_EQ(t.sched_->cache().PodCount(), static_cast<size_t>(kPods));
  for (const auto& p : t.cluster_.ListPods()) EXPECT_FALSE(t.sched_->cache().IsAssumedPod(*p));
}

// Deleting pods while their binding cycles run on other threads: each pod is either bound or
// gone, and the cache holds exactly the bound ones.
TEST(ThreadedBindingTest, PodsDeletedDuringBindingLeaveNothingBehind) {
  ThreadedScheduler t(/*inline_binding=*/false);
  ASSERT_NE(t.sched_, nullptr);
  for (int i = 0; i < 5; ++i) t.cluster_.AddNode(ThreadedScheduler::NodeObj(fmt::format("n{}", i)));
  constexpr int kPods = 200;
  for (int i = 0; i < kPods; ++i)
    t.cluster_.AddPod(ThreadedScheduler::PodObj(fmt::format("p{:03d}", i)));
  std::thread deleter([&] {
    for (int i = 0; i < kPods; i += 3) t.cluster_.RemovePod("default", fmt::format("p{:03d}", i));
  });
  while (t.sched_->ScheduleOne(false)) {
  }
  deleter.join();
  // Let the last binding cycles finish (the destructor would drain them too).
  for (int i = 0; i < 500; ++i) {
    size_t assumed = 0;
    for (const auto& p : t.cluster_.ListPods()) assumed += t.sched_->cache().IsAssumedPod(*p);
    if (assumed == 0 && t.Bound() == static_cast<int>(t.cluster_.ListPods().size())) break;
    t.sched_->ScheduleOne(false);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto pods = t.cluster_.ListPods();
  EXPECT_EQ(pods.size(), static_cast<size_t>(kPods - (kPods + 2) / 3));
  EXPECT_EQ(t.Bound(), static_cast<int>(pods.size()));
  t.sched_.reset();  // drains binding cycles
}

// A bind answered "already bound" (409: another scheduler won, or an earlier attempt of this
// one whose answer was lost, settled elsewhere) is forgotten: the assumed pod leaves the cache,
// the pod is not put back into the queue to be bound somewhere else, and the update that shows
// it bound then counts it on its real node.
TEST(ThreadedBindingTest, BindAnsweredConflictIsForgotten) {
  ThreadedScheduler t(/*inline_binding=*/true);
  ASSERT_NE(t.sched_, nullptr);
  t.cluster_.AddNode(ThreadedScheduler::NodeObj("n1"));
  t.cluster_.AddNode(ThreadedScheduler::NodeObj("n2"));
  t.cluster_.AddPod(ThreadedScheduler::PodObj("p"));
  ASSERT_EQ(t.sched_->queue().counts().active, 1u);

  // Someone else binds the pod to n2; the update has not reached the scheduler yet.
  t.cluster_.SetEventHandler(nullptr);
  auto before = t.cluster_.GetPod("default", "p");
  ASSERT_TRUE(t.cluster_.Bind(*before, "n2").ok());
  auto after = t.cluster_.GetPod("default", "p");
  t.cluster_.SetEventHandler(t.sched_.get());

  ASSERT_TRUE(t.sched_->ScheduleOne(false));
  SchedulingAttempt a = t.observer_.last();
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kError);
  EXPECT_NE(a.message.find("already assigned to node \"n2\""), std::string::npos) << a.message;
  EXPECT_EQ(t.cluster_.write_counts().binds, 1);  // the outside bind only
  EXPECT_EQ(t.sched_->cache().PodCount(), 0u);    // the assumed pod is forgotten
  auto c = t.sched_->queue().counts();
  EXPECT_EQ(c.active + c.backoff + c.unschedulable, 0u);  // and not retried elsewhere

  // The informer's update arrives: the pod counts on n2, once.
  t.sched_->OnPodUpdate(before, after);
  EXPECT_EQ(t.sched_->cache().PodCount(), 1u);
  EXPECT_FALSE(t.sched_->cache().IsAssumedPod(*after));
  EXPECT_FALSE(t.sched_->ScheduleOne(false));
  EXPECT_EQ(t.observer_.count(SchedulingAttempt::Outcome::kScheduled), 0);
}

}  // namespace
}  // namespace berth
