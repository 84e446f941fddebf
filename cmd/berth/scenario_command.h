// `berth scenario run SCENARIO.yaml [--seed N] [-o text|json]`: a scenario file's steps
// against berth up's whole cluster in one process, on a simulated clock (docs/scenarios.md).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace berth::cmd {

struct ScenarioCommand {
  CLI::App* run = nullptr;
  std::string file;
  std::string replay;  // a recording instead of a scenario file
  uint64_t seed = 1;
  std::string output = "text";
  std::string config_file;
  std::vector<std::string> feature_gates;
  bool verbose = false;
};

CLI::App* AddScenarioCommand(CLI::App& app, ScenarioCommand* command);
int RunScenarioCommand(const ScenarioCommand& command);

}  // namespace berth::cmd
