// The cost of a plugin loaded from a shared library against the same plugin compiled in:
// SchedulingBasic/5000Nodes with a no-op Score plugin added to the default profile, once
// compiled in ("NoopScoreBuiltIn"), once loaded from libnoop_score.so ("NoopScore"), and once
// without it. Each pod scores ~500 nodes, so the per-call difference is the per-pod difference
// divided by the number of scored nodes.
//
// Usage: berth_plugin_bench LIBNOOP_SO [WORKLOADS_YAML] [ROUNDS]
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "config/load.h"
#include "pluginlib/loader.h"
#include "plugins/registry.h"
#include "sim/bench.h"

berth::PluginRegistration NoopScoreRegistration(const std::string& name);

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: berth_plugin_bench LIBNOOP_SO [WORKLOADS_YAML] [ROUNDS]\n";
    return 2;
  }
  const std::string file = argc > 2 ? argv[2] : "bench/workloads.yaml";
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  berth::Registry registry = berth::InTreeRegistry();
  (void)registry.Add(NoopScoreRegistration("NoopScoreBuiltIn"));
  if (auto r = berth::pluginlib::LoadPluginLibrary(argv[1], &registry); !r.ok()) {
    std::cerr << r.error().message << "\n";
    return 1;
  }
  auto workloads = berth::sim::LoadWorkloads(file);
  if (!workloads.ok()) {
    std::cerr << workloads.error().message << "\n";
    return 1;
  }
  const auto w = std::find_if(workloads->begin(), workloads->end(),
                              [](const auto& x) { return x.name == "SchedulingBasic/5000Nodes"; });
  if (w == workloads->end()) return 1;
  for (const std::string plugin : {"", "NoopScoreBuiltIn", "NoopScore"}) {
    std::string yaml =
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
    if (!plugin.empty())
      yaml += fmt::format(
          "profiles:\n- plugins:\n    multiPoint:\n      enabled: [{{name: {}, weight: 1}}]\n",
          plugin);
    auto config = berth::config::LoadConfig(yaml, "bench", registry);
    if (!config.ok()) {
      std::cerr << config.error().message << "\n";
      return 1;
    }
    double best = 0, p50 = 0;
    for (int i = 0; i < rounds; ++i) {
      auto r = berth::sim::RunWorkload(*w, *config, registry);
      if (!r.ok()) return 1;
      if (r->pods_per_second > best) {
        best = r->pods_per_second;
        p50 = r->p50_ms;
      }
    }
    std::cout << fmt::format("{:<18} best of {}: {:>7.0f} pods/s  p50 {:.4f} ms/pod\n",
                             plugin.empty() ? "(no extra plugin)" : plugin, rounds, best, p50);
  }
  return 0;
}
