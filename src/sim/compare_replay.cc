// berth compare --replay: the recording through each configuration (sim/replay.h), the same
// differences and metrics as for a cluster file, plus pending, nodes in use and preemptions
// over time.
#include <fmt/format.h>
#include <time.h>

#include <chrono>

#include "sim/compare.h"
#include "sim/replay.h"

namespace berth::sim {
namespace {

double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

Result<CompareResult> CompareReplay(const std::vector<CompareConfig>& configs,
                                    const Registry& registry, const std::string& recording,
                                    const CompareOptions& options) {
  CompareResult out;
  out.replay = true;
  std::vector<ReplayResult> runs;
  for (const CompareConfig& c : configs) {
    ReplayOptions ro;
    ro.seed = options.seed;
    ro.config_source = c.name;
    const auto wall0 = std::chrono::steady_clock::now();
    const double cpu0 = ProcessCpuSeconds();
    BERTH_TRY_ASSIGN(run, Replay(*c.config, registry, recording, ro));
    ConfigMetrics m = OutcomeMetrics(run.results);
    m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    m.cpu_seconds = ProcessCpuSeconds() - cpu0;
    m.name = c.name;
    // Pending: the pods still waiting when the recording ended (a pod deleted while it
    // waited is not pending any more).
    m.pending = static_cast<int>(run.still_pending.size());
    m.pending_pods = run.still_pending;
    FillPlacementMetrics(run.node_zones, run.per_node, run.holders_per_node, &m);
    m.over_time = run.over_time;
    m.mean_pending_seconds = run.mean_pending_seconds;
    m.max_pending_seconds = run.max_pending_seconds;
    out.events = run.events;
    out.configs.push_back(std::move(m));
    runs.push_back(std::move(run));
  }
  std::vector<const SimulationResult*> ptrs;
  for (const auto& r : runs) ptrs.push_back(&r.results);
  out.diffs = FindDifferences(ptrs);
  out.differing = static_cast<int>(out.diffs.size());
  out.pods = runs.empty() ? 0 : static_cast<int>(runs[0].results.results.size());

  for (size_t c = 0; c < configs.size() && !out.diffs.empty(); ++c) {
    std::unordered_map<std::string, int> attempts;
    for (const PodResult& r : runs[c].results.results) attempts[r.pod] = r.attempts;
    DetailCollector collector(&out.diffs, c, attempts, options.max_explained);
    if (!collector.More()) continue;
    ReplayOptions ro;
    ro.seed = options.seed;
    ro.config_source = configs[c].name;
    ro.record_details = true;
    ro.observer = &collector;
    ro.keep_running = [&collector] { return collector.More(); };
    BERTH_TRY_ASSIGN(detailed, Replay(*configs[c].config, registry, recording, ro));
    (void)detailed;
  }
  for (PodDiff& d : out.diffs)
    for (ConfigDecision& cd : d.per_config)
      if (cd.explained && !cd.node.empty()) cd.tipped_by = TippedBy(cd.views, cd.node);

  if (options.compute_shape_fit && !runs.empty()) {
    BERTH_TRY_ASSIGN(shape, ResolveShape(runs[0].objects, options, &out.shape_source));
    if (shape) {
      out.shape = ShapeText(*shape);
      for (size_t c = 0; c < configs.size(); ++c) {
        VoidResult fit =
            FillShapeFit(configs[c], registry, runs[c].objects, *shape, options, &out.configs[c]);
        if (!fit.ok()) return fit.error();
      }
    }
  }
  return out;
}

}  // namespace berth::sim
