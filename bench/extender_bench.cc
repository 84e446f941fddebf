// Extender overhead: scheduler_perf's SchedulingBasic workloads scheduled with the SDK's example
// label-rule extender (filter + prioritize) served in this process over HTTP on 127.0.0.1,
// with nodeCacheCapable true and false, against the same workload without extenders.
//
// Usage: berth_extender_bench [WORKLOADS_YAML] [WORKLOAD_NAME] [VARIANT]
//   (default bench/workloads.yaml, "SchedulingBasic/5000Nodes" exactly)
#include <fmt/format.h>

#include <cstdlib>
#include <iostream>

#include "config/load.h"
#include "extender/examples.h"
#include "plugins/registry.h"
#include "sim/bench.h"

int main(int argc, char** argv) {
  const std::string file = argc > 1 ? argv[1] : "bench/workloads.yaml";
  const std::string name = argc > 2 ? argv[2] : "SchedulingBasic/5000Nodes";
  const std::string only = argc > 3 ? argv[3] : "";  // run only this variant (and the baseline)
  auto workloads = berth::sim::LoadWorkloads(file);
  if (!workloads.ok()) {
    std::cerr << workloads.error().message << "\n";
    return 1;
  }
  berth::extender::ExtenderServer server;
  auto rule = berth::extender::ParseLabelRule("want=you", "nowhere");
  berth::extender::RegisterLabelRule(server, *rule);
  berth::extender::ServerOptions so;
  so.threads = argc > 4 ? std::atoi(argv[4]) : 4;
  if (auto started = server.Start(so); !started.ok()) {
    std::cerr << started.error().message << "\n";
    return 1;
  }
  berth::Registry registry = berth::InTreeRegistry();
  for (const auto& w : *workloads) {
    if (w.name != name) continue;
    double base_p50 = 0, base_p99 = 0;
    for (const std::string variant : {"none", "nodeCacheCapable=true", "nodeCacheCapable=false"}) {
      if (!only.empty() && variant != "none" && variant != only) continue;
      std::string yaml =
          "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";
      if (const char* p = std::getenv("BERTH_BENCH_PARALLELISM"))
        yaml += fmt::format("parallelism: {}\n", p);
      if (variant != "none") {
        yaml += fmt::format(
            "extenders:\n- urlPrefix: {}\n  filterVerb: filter\n  prioritizeVerb: prioritize\n"
            "  weight: 1\n  nodeCacheCapable: {}\n",
            server.url(), variant == "nodeCacheCapable=true");
      }
      auto config = berth::config::LoadConfig(yaml, "bench", registry);
      if (!config.ok()) {
        std::cerr << config.error().message << "\n";
        return 1;
      }
      auto r = berth::sim::RunWorkload(w, *config, registry);
      if (!r.ok()) {
        std::cerr << r.error().message << "\n";
        return 1;
      }
      if (variant == "none") {
        base_p50 = r->p50_ms;
        base_p99 = r->p99_ms;
      }
      std::cout << fmt::format(
                       "{:<28} extender {:<24} {:>7.0f} pods/s  p50 {:.3f}ms p99 {:.3f}ms  "
                       "extender overhead p50 {:+.3f}ms p99 {:+.3f}ms",
                       w.name, variant, r->pods_per_second, r->p50_ms, r->p99_ms,
                       r->p50_ms - base_p50, r->p99_ms - base_p99)
                << std::endl;
    }
  }
  server.Stop();
  return 0;
}
