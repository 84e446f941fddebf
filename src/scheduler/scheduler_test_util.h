// Test helpers: a scheduler over an InMemoryCluster, and profiles written as YAML.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "config/load.h"
#include "framework/in_memory_cluster.h"
#include "scheduler/scheduler.h"

namespace berth::testing {

// A v1 configuration whose default profile has `plugins_yaml` (the text under `plugins:`,
// indented four spaces) on top of the defaults.
inline config::SchedulerConfiguration ProfileWithPlugins(const std::string& plugins_yaml,
                                                         const Registry& registry) {
  auto c = config::LoadConfig(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: default-scheduler\n  plugins:\n" +
          plugins_yaml,
      "test.yaml", registry);
  EXPECT_TRUE(c.ok()) << c.error().message;
  return c.ok() ? std::move(c).value() : config::DefaultConfiguration(registry);
}

// A scheduler for `config` over `cluster`, which reports its events to it; null (and a test
// failure) if it cannot be built.
inline std::unique_ptr<Scheduler> SchedulerOver(const config::SchedulerConfiguration& config,
                                                const Registry& registry, InMemoryCluster& cluster,
                                                const Clock& clock, bool inline_binding) {
  SchedulerOptions so;
  so.config = &config;
  so.registry = &registry;
  so.client = &cluster;
  so.clock = &clock;
  so.inline_binding = inline_binding;
  auto s = Scheduler::Create(so);
  EXPECT_TRUE(s.ok()) << s.error().message;
  if (!s.ok()) return nullptr;
  cluster.SetEventHandler(s->get());
  return std::move(s).value();
}

}  // namespace berth::testing
