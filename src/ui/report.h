// `berth simulate --output html`: one self-contained page with the web view's rendering over a
// simulation's outcome — the nodes with what the simulation placed on them, every pod and
// where it went, and per pod its last attempt (score matrix, filter rejections) and, for a pod
// left pending, `berth explain`'s answer over the cluster as the simulation left it (the same
// content the web view shows). The page embeds the web view's files and the data (nodes, pods,
// decisions, explanations, and the `--output json` document under "simulation"); it needs no
// server and no network.
//
// Pure; any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/codec.h"
#include "berth/api/result.h"
#include "berth/framework/registry.h"
#include "config/types.h"
#include "sim/simulator.h"

namespace berth::ui {

struct ReportOptions {
  // What explanations schedule with (the simulation's own); without them, none are written.
  const config::SchedulerConfiguration* config = nullptr;
  const Registry* registry = nullptr;
  uint64_t seed = 1;
  std::string config_source = "default configuration";
  // Each explanation schedules its pod several times over the cluster: the first this many
  // pending pods (in the simulation's order) are explained.
  size_t max_explanations = 20;
};

// `objects` are the simulation's input; pods are shown as the simulation left them.
Result<std::string> SimulationReportHtml(const std::vector<Object>& objects,
                                         const sim::SimulationResult& result,
                                         const ReportOptions& options = {});

// `berth scenario run -o html`: the page of the web view with its Timeline tab alone, over
// `report` (the scenario's JSON report, ReportJson) embedded as <script id="berth-timeline">.
Result<std::string> TimelineReportHtml(const nlohmann::json& report);

// `berth compare -o html`: the same page over `report`, the comparison's JSON document
// (sim::ToJson, as `berth compare -o json` prints it), drawn by the web view's compare.js: the
// cluster-level outcomes, pending pods over time (replays), pods per node and per zone, where
// the differing pods went, and each differing pod's scores. An error when `report` is not a
// comparison (no "configurations" array).
Result<std::string> CompareReportHtml(const nlohmann::json& report);

// The web view's page with its CSS and scripts inline and `data` embedded as
// <script id="`data_id`" type="application/json"> (no "<" in it): needs no server, no network.
Result<std::string> EmbeddedPage(const std::string& data_id, const nlohmann::json& data);

}  // namespace berth::ui
