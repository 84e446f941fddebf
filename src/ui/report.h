// `berth simulate --output html`: one self-contained page with the web view's rendering over a
// simulation's outcome — the nodes with what the simulation placed on them, every pod and
// where it went, and per pod its last attempt (score matrix, filter rejections). The page
// embeds the web view's files and the data (nodes, pods, decisions, and the `--output json`
// document under "simulation"); it needs no server and no network.
//
// Pure; any thread.
#pragma once

#include <string>
#include <vector>

#include "api/codec.h"
#include "berth/api/result.h"
#include "sim/simulator.h"

namespace berth::ui {

// `objects` are the simulation's input; pods are shown as the simulation left them.
Result<std::string> SimulationReportHtml(const std::vector<Object>& objects,
                                         const sim::SimulationResult& result);

}  // namespace berth::ui
