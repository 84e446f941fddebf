#include "scenario_command.h"

#include <chrono>
#include <cstdio>
#include <iostream>

#include "scenario/replay_steps.h"
#include "scenario/report.h"
#include "scenario/runner.h"
#include "scenario/scenario_spec.h"
#include "ui/report.h"

namespace berth::cmd {

CLI::App* AddScenarioCommand(CLI::App& app, ScenarioCommand* c) {
  CLI::App* cmd = app.add_subcommand(
      "scenario",
      "Run scenario files (timed steps) against a simulated cluster (docs/scenarios.md)");
  cmd->require_subcommand(1);
  c->run = cmd->add_subcommand(
      "run",
      "Run a scenario against berth up's cluster (API server, controllers, simulated kubelets, "
      "scheduler) in this process on a simulated clock, and report what happened");
  c->run->add_option("file", c->file, "The scenario (YAML)");
  c->run->add_option("--replay", c->replay,
                     "Replay a recording (berth record) instead of a scenario file");
  c->run->add_option("--seed", c->seed, "Seed of the scheduler's tie-breaks and generated names")
      ->capture_default_str();
  c->run
      ->add_option("-o,--output", c->output,
                   "Report format: text, json, or html (a self-contained page with the "
                   "timeline's plots)")
      ->check(CLI::IsMember({"text", "json", "html"}))
      ->capture_default_str();
  c->run->add_option("--config", c->config_file,
                     "KubeSchedulerConfiguration for the scheduler (default: the defaults)");
  c->run->add_option("--feature-gates", c->feature_gates,
                     "Feature gates of the scheduler (key=value,...; repeatable)");
  c->run->add_flag("-v,--verbose", c->verbose, "Print the components' messages to stderr");
  return cmd;
}

int RunScenarioCommand(const ScenarioCommand& c) {
  if (c.file.empty() == c.replay.empty()) {
    std::cerr << "berth scenario run: give a scenario file or --replay RECORDING (one of them)\n";
    return 1;
  }
  auto scenario =
      c.replay.empty() ? scenario::LoadScenario(c.file) : scenario::ScenarioFromRecording(c.replay);
  if (!scenario.ok()) {
    std::cerr << "berth scenario: " << scenario.error().message << "\n";
    return 1;
  }
  scenario::RunOptions options;
  options.cluster.seed = c.seed;
  options.cluster.config_file = c.config_file;
  options.cluster.feature_gates = c.feature_gates;
  if (c.verbose) {
    options.cluster.log = [](const std::string& m) { std::fprintf(stderr, "%s\n", m.c_str()); };
  }
  const auto started = std::chrono::steady_clock::now();
  auto result = scenario::RunScenario(*scenario, options);
  if (!result.ok()) {
    std::cerr << "berth scenario: " << result.error().message << "\n";
    return 1;
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (c.output == "json") {
    std::cout << scenario::ReportJson(*result).dump(2) << "\n";
  } else if (c.output == "html") {
    auto page = ui::TimelineReportHtml(scenario::ReportJson(*result));
    if (!page.ok()) {
      std::cerr << "berth scenario: " << page.error().message << "\n";
      return 1;
    }
    std::cout << *page;
  } else {
    std::cout << scenario::ReportText(*result);
  }
  // Wall time varies from run to run: on stderr, out of the report.
  std::fprintf(stderr, "berth scenario: %s simulated in %.2fs of wall time (%d clock jumps)\n",
               scenario::FormatDuration(result->end.at).c_str(), wall, result->clock_jumps);
  return result->error.empty() ? 0 : 1;
}

}  // namespace berth::cmd
