#include "compare_command.h"

#include <fmt/format.h>

#include <iostream>

#include "cluster_source.h"
#include "config/load.h"
#include "daemon/scheduler_flags.h"
#include "pluginlib/loader.h"
#include "sim/compare.h"
#include "ui/report.h"

namespace berth::cmd {
namespace {

int Fail(int code, const std::string& message) {
  std::cerr << "berth compare: " << message << "\n";
  return code;
}

}  // namespace

CLI::App* AddCompareCommand(CLI::App& app, CompareCommand* c) {
  CLI::App* cmd = app.add_subcommand(
      "compare",
      "Schedule the same cluster under several configurations and report, pod by "
      "pod, where and why they differ");
  cmd->add_option("--config", c->configs,
                  "KubeSchedulerConfiguration file (repeat: two or more; \"default\" for the "
                  "default configuration)")
      ->required();
  cmd->add_option("-f,--filename", c->files,
                  "The cluster: manifests as berth simulate reads them (files, directories, -)");
  cmd->add_flag("-R,--recursive", c->recursive, "Read directories given with -f recursively");
  cmd->add_option("--replay", c->replay,
                  "Replay a recording (berth record, kube-scheduler-simulator's recorder) "
                  "instead of a cluster file");
  cmd->add_option("--output,-o", c->output, "text, json, or html (a self-contained page)")
      ->check(CLI::IsMember({"text", "json", "html"}));
  cmd->add_option("--seed", c->seed, "Random seed for tie-breaking (the same for every run)");
  cmd->add_option("--shape", c->shape,
                  "Pod shape for the fragmentation figure, e.g. cpu=500m,memory=1Gi (default: "
                  "the median pending pod)");
  cmd->add_option("--shape-max", c->shape_max, "Stop counting pods of the shape at this many")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--explain", c->explain,
                  "Explain (per-node plugin scores) the first N differing pods")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--plugin-library", c->plugin_libraries,
                  "Shared library with scheduler plugins to load (repeatable)");
  daemon::AddFeatureGatesFlag(cmd, &c->feature_gates);
  return cmd;
}

int RunCompareCommand(const CompareCommand& c) {
  if (c.configs.size() < 2)
    return Fail(kCompareUsageError,
                fmt::format("--config: give two or more configurations to compare (got {})",
                            c.configs.size()));
  if (c.files.empty() == c.replay.empty())
    return Fail(kCompareUsageError,
                "give the input either with -f (a cluster file) or with "
                "--replay (a recording), one of the two");
  std::vector<std::string> warnings;
  auto built =
      pluginlib::BuildRegistry(c.plugin_libraries, c.compiled_in, c.feature_gates, &warnings);
  if (!built.ok()) return Fail(kCompareInputError, built.error().message);
  for (const auto& w : warnings) std::cerr << "berth compare: warning: " << w << "\n";
  Registry registry = std::move(built).value();
  std::vector<config::SchedulerConfiguration> loaded;
  loaded.reserve(c.configs.size());
  for (const std::string& path : c.configs) {
    auto cfg = path == "default"
                   ? Result<config::SchedulerConfiguration>(config::DefaultConfiguration(registry))
                   : config::LoadConfigFile(path, registry);
    if (!cfg.ok()) return Fail(kCompareInputError, cfg.error().message);
    loaded.push_back(std::move(cfg).value());
  }
  std::vector<sim::CompareConfig> configs;
  for (size_t i = 0; i < loaded.size(); ++i)
    configs.push_back(
        {c.configs[i] == "default" ? "default configuration" : c.configs[i], &loaded[i]});
  sim::CompareOptions options;
  options.seed = c.seed;
  options.shape = c.shape;
  options.shape_max = c.shape_max;
  options.max_explained = c.explain;
  Result<sim::CompareResult> result = Error{"no input"};
  if (!c.files.empty()) {
    DecodeOptions decode;
    for (const auto& cfg : loaded) decode.keep_raw |= !cfg.extenders.empty();
    auto objects = ReadManifests(c.files, c.recursive, decode);
    if (!objects.ok()) return Fail(kCompareInputError, objects.error().message);
    result = sim::Compare(configs, registry, *objects, options);
  } else {
    result = sim::CompareReplay(configs, registry, c.replay, options);
  }
  if (!result.ok()) return Fail(kCompareInputError, result.error().message);
  if (c.output == "json") {
    std::cout << sim::ToJson(*result).dump(2) << "\n";
  } else if (c.output == "html") {
    auto page = ui::CompareReportHtml(sim::ToJson(*result));
    if (!page.ok()) return Fail(kCompareInputError, page.error().message);
    std::cout << *page;
  } else {
    std::cout << sim::ToText(*result);
  }
  return 0;
}

}  // namespace berth::cmd
