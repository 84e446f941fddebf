// Test helpers: the end-to-end harness of the scheduler tests (a default-profile scheduler over an
// InMemoryCluster with a fake clock and inline binding) and the observer that records attempts.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "config/load.h"
#include "framework/in_memory_cluster.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "testing/builders.h"

namespace berth::testing {

class Recorder final : public AttemptObserver {
 public:
  void OnAttempt(const SchedulingAttempt& a) override {
    std::lock_guard lock(mu_);
    attempts_.push_back(a);
  }
  std::vector<SchedulingAttempt> attempts() const {
    std::lock_guard lock(mu_);
    return attempts_;
  }
  SchedulingAttempt Last() const {
    std::lock_guard lock(mu_);
    return attempts_.empty() ? SchedulingAttempt{} : attempts_.back();
  }
  size_t size() const {
    std::lock_guard lock(mu_);
    return attempts_.size();
  }

 private:
  mutable std::mutex mu_;
  std::vector<SchedulingAttempt> attempts_;
};

// A scheduler with the default profile over an InMemoryCluster, a fake clock and inline binding.
class Harness {
 public:
  explicit Harness(uint64_t seed = 1,
                   std::function<void(config::SchedulerConfiguration&)> tweak = nullptr,
                   std::vector<PluginRegistration> extra_plugins = {},
                   std::vector<std::shared_ptr<Extender>> extenders = {},
                   SchedulerMetricsSink* metrics = nullptr, size_t detail_nodes = 0,
                   bool opportunistic_batching = true)
      : registry_(InTreeRegistry()), config_(config::DefaultConfiguration(registry_)) {
    for (auto& r : extra_plugins) EXPECT_TRUE(registry_.Add(std::move(r)).ok());
    if (tweak) tweak(config_);
    SchedulerOptions so;
    so.config = &config_;
    so.registry = &registry_;
    so.client = &cluster_;
    so.clock = &clock_;
    so.seed = seed;
    so.inline_binding = true;
    so.record_details = true;
    so.detail_nodes = detail_nodes;
    so.extenders = std::move(extenders);
    so.metrics = metrics;
    so.opportunistic_batching = opportunistic_batching;
    auto s = Scheduler::Create(so);
    if (!s.ok()) {
      ADD_FAILURE() << s.error().message;
      return;
    }
    sched_ = std::move(s).value();
    cluster_.SetEventHandler(sched_.get());
    sched_->SetObserver(&recorder_);
  }

  // Nodes "<prefix>NNNN" with 4 CPUs, 32Gi, 110 pods.
  void AddNodes(int n, const std::string& prefix = "n") {
    for (int i = 0; i < n; ++i) cluster_.AddNode(NodeObj(Name(prefix, i)));
  }
  static std::string Name(const std::string& prefix, int i) {
    return fmt::format("{}{:04d}", prefix, i);
  }
  static std::shared_ptr<const Node> NodeObj(const std::string& name) {
    return MakeNode().Name(name).Capacity({{"cpu", "4"}, {"memory", "32Gi"}}).Obj();
  }
  static std::shared_ptr<const Pod> SmallPod(const std::string& name) {
    return MakePod().Name(name).Req({{"cpu", "100m"}, {"memory", "100Mi"}}).Obj();
  }

  // Adds a pending pod and runs one scheduling cycle for it; returns its attempt.
  SchedulingAttempt Schedule(std::shared_ptr<const Pod> pod) {
    size_t before = recorder_.size();
    cluster_.AddPod(std::move(pod));
    EXPECT_TRUE(sched_->ScheduleOne(false));
    EXPECT_EQ(recorder_.size(), before + 1);
    return recorder_.Last();
  }

  std::string NodeOf(const std::string& pod) {
    auto p = cluster_.GetPod("default", pod);
    return p ? p->spec.node_name : "<missing>";
  }

  Registry registry_;
  config::SchedulerConfiguration config_;
  InMemoryCluster cluster_;
  FakeClock clock_{TimePoint{} + std::chrono::hours(100)};
  Recorder recorder_;
  std::unique_ptr<Scheduler> sched_;
};

}  // namespace berth::testing
