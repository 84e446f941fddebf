#include "capacity_command.h"

#include <fmt/format.h>

#include <iostream>

#include "api/codec.h"
#include "api/read_file.h"
#include "cluster_source.h"
#include "config/load.h"
#include "daemon/scheduler_flags.h"
#include "pluginlib/loader.h"
#include "plugins/registry.h"
#include "sim/capacity.h"

namespace berth::cmd {
namespace {

int Fail(const std::string& message) {
  std::cerr << "berth capacity: " << message << "\n";
  return 1;
}

}  // namespace

CLI::App* AddCapacityCommand(CLI::App& app, CapacityCommand* c) {
  CLI::App* cmd = app.add_subcommand(
      "capacity", "How many more pods of a shape the cluster takes now, per node and zone");
  cmd->add_option("-f,--filename", c->files,
                  "The pod template (first), then the cluster's manifests (files, "
                  "directories, - for standard input)")
      ->required();
  cmd->add_flag("-R,--recursive", c->recursive, "Read directories given with -f recursively");
  cmd->add_option("--kubeconfig", c->kubeconfig, "Read the cluster from this API server");
  cmd->add_option("--context", c->context, "kubeconfig context");
  cmd->add_option("--master", c->master, "API server URL (overrides the kubeconfig's)");
  cmd->add_option("--config", c->config, "KubeSchedulerConfiguration file");
  cmd->add_option("--max", c->max, "Stop after this many placements");
  cmd->add_option("--output,-o", c->output, "table or json")
      ->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--seed", c->seed, "Random seed for tie-breaking");
  cmd->add_option("--plugin-library", c->plugin_libraries,
                  "Shared library with scheduler plugins to load (repeatable)");
  daemon::AddFeatureGatesFlag(cmd, &c->feature_gates);
  return cmd;
}

int RunCapacityCommand(const CapacityCommand& c) {
  std::vector<std::string> warnings;
  auto built =
      pluginlib::BuildRegistry(c.plugin_libraries, c.compiled_in, c.feature_gates, &warnings);
  if (!built.ok()) return Fail(built.error().message);
  for (const auto& w : warnings) std::cerr << "berth capacity: warning: " << w << "\n";
  Registry registry = std::move(built).value();
  auto cfg = c.config.empty()
                 ? Result<config::SchedulerConfiguration>(config::DefaultConfiguration(registry))
                 : config::LoadConfigFile(c.config, registry);
  if (!cfg.ok()) return Fail(cfg.error().message);

  // The template: exactly one Pod in the first file.
  auto tmpl_objects = DecodeFile(c.files[0]);
  if (!tmpl_objects.ok()) return Fail(tmpl_objects.error().message);
  std::shared_ptr<const Pod> pod;
  for (const auto& o : *tmpl_objects) {
    if (auto* p = std::get_if<std::shared_ptr<const Pod>>(&o)) {
      if (pod)
        return Fail(fmt::format("{}: expected one Pod (the template), found more", c.files[0]));
      pod = *p;
    }
  }
  if (!pod) return Fail(fmt::format("{}: expected one Pod (the template), found none", c.files[0]));

  std::vector<Object> cluster;
  const bool live = !c.kubeconfig.empty() || !c.master.empty();
  if (live) {
    if (c.files.size() > 1)
      return Fail("give the cluster either as manifests or with --kubeconfig, not both");
    auto objects = ReadLiveCluster({c.kubeconfig, c.context, c.master});
    if (!objects.ok()) return Fail(objects.error().message);
    cluster = std::move(objects).value();
  } else {
    if (c.files.size() < 2)
      return Fail("no cluster: give its manifests with more -f, or --kubeconfig");
    auto objects =
        ReadManifests(std::vector<std::string>(c.files.begin() + 1, c.files.end()), c.recursive);
    if (!objects.ok()) return Fail(objects.error().message);
    cluster = std::move(objects).value();
  }
  sim::CapacityOptions options;
  options.max = c.max;
  options.seed = c.seed;
  options.config_source = c.config.empty() ? "default configuration" : c.config;
  auto result = sim::EstimateCapacity(*cfg, registry, cluster, *pod, options);
  if (!result.ok()) return Fail(result.error().message);
  if (c.output == "json") {
    std::cout << sim::ToJson(*result).dump(2) << "\n";
  } else {
    std::cout << sim::ToTable(*result);
  }
  return 0;
}

}  // namespace berth::cmd
