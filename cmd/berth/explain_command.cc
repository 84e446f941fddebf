#include "explain_command.h"

#include <fmt/format.h>

#include <cstdlib>
#include <iostream>

#include "cluster_source.h"
#include "config/load.h"
#include "daemon/scheduler_flags.h"
#include "explain/explain.h"
#include "pluginlib/loader.h"

namespace berth::cmd {

CLI::App* AddExplainCommand(CLI::App& app, ExplainCommand* c) {
  CLI::App* cmd = app.add_subcommand(
      "explain", "Why a pod is pending (or where it goes), and the smallest changes that place it");
  cmd->add_option("pod", c->pod, "The pod's name (or namespace/name)")->required();
  cmd->add_option("-n,--namespace", c->namespace_, "The pod's namespace");
  cmd->add_option("-f,--filename", c->files,
                  "The cluster's manifests (files, directories, -); without -f the cluster is "
                  "read from the API server");
  cmd->add_option("--kubeconfig", c->kubeconfig, "kubeconfig file (default $KUBECONFIG)");
  cmd->add_option("--context", c->context, "kubeconfig context");
  cmd->add_option("--master", c->master, "API server URL (overrides the kubeconfig's)");
  cmd->add_flag("-R,--recursive", c->recursive, "Read directories given with -f recursively");
  cmd->add_option("--config", c->config,
                  "KubeSchedulerConfiguration file (default: against a live cluster, the one "
                  "`berth up` publishes for its scheduler in kube-system/berth-scheduler-config, "
                  "else the default profile)");
  cmd->add_option("--output,-o", c->output, "text or json")->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--seed", c->seed, "Random seed for tie-breaking");
  cmd->add_option("--plugin-library", c->plugin_libraries,
                  "Shared library with scheduler plugins to load (repeatable)");
  daemon::AddFeatureGatesFlag(cmd, &c->feature_gates);
  return cmd;
}

namespace {

struct ChosenConfig {
  config::SchedulerConfiguration config;
  std::string source;
};

// Whether `config` has a profile for pods of `scheduler_name` ("" is "default-scheduler").
bool HasProfile(const config::SchedulerConfiguration& config, std::string scheduler_name) {
  if (scheduler_name.empty()) scheduler_name = "default-scheduler";
  for (const auto& profile : config.profiles)
    if (profile.scheduler_name == scheduler_name) return true;
  return false;
}

// The configuration to schedule with: --config when given; else, against a live cluster, the
// one of the Berth scheduler running there, from the ConfigMap `berth up` publishes (and
// deploy/ installs), explain::kPublishedConfigName in kube-system, when it has a profile for
// the pod's schedulerName; else the default profile (kube-scheduler's, for pods another
// scheduler handles).
Result<ChosenConfig> ChooseConfig(const ExplainCommand& c, const Registry& registry,
                                  const LiveCluster* live, const std::string& scheduler_name) {
  if (!c.config.empty()) {
    auto cfg = config::LoadConfigFile(c.config, registry);
    if (!cfg.ok()) return cfg.error();
    return ChosenConfig{std::move(cfg).value(), c.config};
  }
  ChosenConfig fallback{config::DefaultConfiguration(registry), "default configuration"};
  if (!live) return fallback;
  auto data =
      ReadConfigMap(*live, explain::kPublishedConfigNamespace, explain::kPublishedConfigName);
  if (!data.ok()) return data.error();
  if (!*data) return fallback;
  auto text = (*data)->find(std::string(explain::kPublishedConfigKey));
  if (text == (*data)->end()) return fallback;
  const std::string where =
      fmt::format("{}/{}", explain::kPublishedConfigNamespace, explain::kPublishedConfigName);
  auto cfg = config::LoadConfig(text->second, where, registry);
  if (!cfg.ok())
    return Error{fmt::format(
        "the scheduler's configuration published in ConfigMap {}: {} (give its plugins with "
        "--plugin-library, or --config)",
        where, cfg.error().message)};
  if (!HasProfile(*cfg, scheduler_name)) return fallback;
  auto source = (*data)->find(std::string(explain::kPublishedSourceKey));
  return ChosenConfig{
      std::move(cfg).value(),
      fmt::format("{} ({})", where, source == (*data)->end() ? "published" : source->second)};
}

// The schedulerName of the pod `key` among the objects ("" when absent).
std::string SchedulerNameOf(const std::vector<Object>& objects, const std::string& key) {
  for (const Object& o : objects)
    if (auto* p = std::get_if<std::shared_ptr<const Pod>>(&o); p && (*p)->Key() == key)
      return (*p)->spec.scheduler_name;
  return "";
}

}  // namespace

int RunExplainCommand(const ExplainCommand& c) {
  auto fail = [](const std::string& m) {
    std::cerr << "berth explain: " << m << "\n";
    return 1;
  };
  std::vector<std::string> warnings;
  auto built =
      pluginlib::BuildRegistry(c.plugin_libraries, c.compiled_in, c.feature_gates, &warnings);
  if (!built.ok()) return fail(built.error().message);
  for (const auto& w : warnings) std::cerr << "berth explain: warning: " << w << "\n";
  const Registry& registry = *built;
  const bool live = c.files.empty();
  if (!live && (!c.kubeconfig.empty() || !c.master.empty()))
    return fail("give the cluster either as manifests (-f) or with --kubeconfig, not both");
  if (live && c.kubeconfig.empty() && c.master.empty() && !std::getenv("KUBECONFIG") &&
      !std::getenv("KUBERNETES_SERVICE_HOST"))
    return fail("no cluster: give its manifests with -f, or --kubeconfig (or set KUBECONFIG)");
  const LiveCluster cluster{c.kubeconfig, c.context, c.master};
  auto objects = live ? ReadLiveCluster(cluster) : ReadManifests(c.files, c.recursive);
  if (!objects.ok()) return fail(objects.error().message);
  const std::string key = c.pod.find('/') == std::string::npos ? c.namespace_ + "/" + c.pod : c.pod;
  auto cfg = ChooseConfig(c, registry, live ? &cluster : nullptr, SchedulerNameOf(*objects, key));
  if (!cfg.ok()) return fail(cfg.error().message);
  explain::ExplainOptions options;
  options.seed = c.seed;
  options.config_source = cfg->source;
  auto e = explain::Explain(cfg->config, registry, *objects, key, options);
  if (!e.ok()) return fail(e.error().message);
  if (c.output == "json") {
    std::cout << explain::ToJson(*e).dump(2) << "\n";
  } else {
    std::cout << explain::ToText(*e);
  }
  return 0;
}

}  // namespace berth::cmd
