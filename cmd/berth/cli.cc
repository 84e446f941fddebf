// berth: the one binary. Subcommands: simulate, bench, config print-defaults, version.
#include <fmt/format.h>
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "api/codec.h"
#include "api/read_file.h"
#include "berth/main.h"
#include "capacity_command.h"
#include "cluster_command.h"
#include "cluster_source.h"
#include "compare_command.h"
#include "config/feature_gates.h"
#include "config/legacy_versions.h"
#include "config/load.h"
#include "config/policy.h"
#include "daemon/scheduler_app.h"
#include "daemon/scheduler_flags.h"
#include "daemon/up.h"
#include "explain_command.h"
#include "extender/http_extender.h"
#include "extender_command.h"
#include "framework/in_memory_cluster.h"
#include "pluginlib/loader.h"
#include "plugins/registry.h"
#include "record_command.h"
#include "scenario_command.h"
#include "scheduler/prometheus_metrics.h"
#include "scheduler/scheduler.h"
#include "sim/bench.h"
#include "sim/replay.h"
#include "sim/simulator.h"
#include "ui/report.h"

namespace {

// The daemons run many threads that allocate (informers, the binding executor's threads, HTTP
// I/O); glibc gives each its own malloc arena, up to eight per core, and every arena keeps its
// freed memory. One arena per core holds the scheduler of 5,000 nodes at about 60 MiB instead
// of 70 at the same CPU per pod. MALLOC_ARENA_MAX, when set, still wins.
void LimitMallocArenas() {
  if (std::getenv("MALLOC_ARENA_MAX") != nullptr) return;
  const unsigned cores = std::thread::hardware_concurrency();
  mallopt(M_ARENA_MAX, static_cast<int>(cores < 2 ? 2 : cores));
}

constexpr const char* kVersion = "0.1.0";

int Fail(const std::string& message) {
  std::fprintf(stderr, "berth: %s\n", message.c_str());
  return 1;
}

berth::Result<berth::config::SchedulerConfiguration> LoadConfigOrDefault(
    const std::string& path, const berth::Registry& registry) {
  if (path.empty()) return berth::config::DefaultConfiguration(registry);
  return berth::config::LoadConfigFile(path, registry);
}

int RunSimulate(const std::string& config_path, const std::vector<std::string>& files,
                const std::string& replay, bool recursive, const std::string& output, uint64_t seed,
                const std::vector<std::string>& plugin_libraries,
                const std::vector<std::string>& feature_gates,
                const std::vector<berth::PluginRegistration>& compiled_in) {
  std::vector<std::string> gate_warnings;
  auto gates = berth::config::ParseFeatureGatesFlags(feature_gates, &gate_warnings);
  if (!gates.ok()) return Fail(gates.error().message);
  for (const auto& w : gate_warnings) std::fprintf(stderr, "berth: warning: %s\n", w.c_str());
  auto built = berth::pluginlib::BuildRegistry(plugin_libraries, compiled_in, *gates);
  if (!built.ok()) return Fail(built.error().message);
  berth::Registry registry = std::move(built).value();
  if (files.empty() && replay.empty()) return Fail("simulate: give manifests with -f, or --replay");
  auto cfg = LoadConfigOrDefault(config_path, registry);
  if (!cfg.ok()) return Fail(cfg.error().message);
  if (!replay.empty()) {
    if (!files.empty() || output == "html")
      return Fail("--replay: give no -f, and -o table or json");
    berth::sim::ReplayOptions ro;
    ro.seed = seed;
    ro.opportunistic_batching = gates->Enabled(berth::config::features::kOpportunisticBatching);
    if (!config_path.empty()) ro.config_source = config_path;
    auto replayed = berth::sim::Replay(*cfg, registry, replay, ro);
    if (!replayed.ok()) return Fail(replayed.error().message);
    if (output == "json") {
      std::cout << berth::sim::ToJson(replayed->results).dump(2) << "\n";
    } else {
      berth::sim::WriteTable(std::cout, replayed->results);
    }
    return 0;
  }
  // Objects keep their documents only where something writes them out again: extenders are
  // sent whole pods and nodes, the HTML report shows them.
  berth::DecodeOptions decode;
  decode.keep_raw = !cfg->extenders.empty() || output == "html";
  auto read = berth::cmd::ReadManifests(files, recursive, decode);
  if (!read.ok()) return Fail(read.error().message);
  std::vector<berth::Object> objects = std::move(read).value();
  berth::sim::SimulationOptions opts;
  opts.seed = seed;
  opts.opportunistic_batching = gates->Enabled(berth::config::features::kOpportunisticBatching);
  if (!config_path.empty()) opts.config_source = config_path;
  auto result = berth::sim::Simulate(*cfg, registry, objects, opts);
  if (!result.ok()) return Fail(result.error().message);
  if (output == "json") {
    std::cout << berth::sim::ToJson(*result).dump(2) << "\n";
  } else if (output == "html") {
    berth::ui::ReportOptions report;
    report.config = &*cfg;
    report.registry = &registry;
    report.seed = seed;
    report.config_source = opts.config_source;
    auto page = berth::ui::SimulationReportHtml(objects, *result, report);
    if (!page.ok()) return Fail(page.error().message);
    std::cout << *page;
  } else {
    berth::sim::WriteTable(std::cout, *result);
  }
  return 0;
}

int RunBench(const std::string& workload_file, const std::string& filter,
             const std::string& config_path, const std::string& output, int repeat,
             bool with_metrics, bool reuse, const std::vector<std::string>& feature_gates,
             const std::vector<berth::PluginRegistration>& compiled_in) {
  std::vector<std::string> gate_warnings;
  auto built = berth::pluginlib::BuildRegistry({}, compiled_in, feature_gates, &gate_warnings);
  if (!built.ok()) return Fail(built.error().message);
  for (const auto& w : gate_warnings) std::fprintf(stderr, "berth: warning: %s\n", w.c_str());
  berth::Registry registry = std::move(built).value();
  auto cfg = LoadConfigOrDefault(config_path, registry);
  if (!cfg.ok()) return Fail(cfg.error().message);
  auto gates = berth::config::ParseFeatureGatesFlags(feature_gates, &gate_warnings);
  if (!gates.ok()) return Fail(gates.error().message);
  const bool batching = gates->Enabled(berth::config::features::kOpportunisticBatching);
  auto workloads = berth::sim::LoadWorkloads(workload_file);
  if (!workloads.ok()) return Fail(workloads.error().message);
  int ran = 0;
  for (const auto& w : *workloads) {
    if (!filter.empty() && w.name.find(filter) == std::string::npos) continue;
    std::vector<berth::sim::BenchResult> runs;
    for (int i = 0; i < repeat; ++i) {
      // A fresh sink per run, as a daemon's: its series are resolved when the profile is built.
      std::optional<berth::PrometheusSchedulerMetrics> metrics;
      if (with_metrics) metrics.emplace();
      auto r = berth::sim::RunWorkload(w, *cfg, registry, metrics ? &*metrics : nullptr, reuse,
                                       batching);
      if (!r.ok()) return Fail(fmt::format("{}: {}", w.name, r.error().message));
      runs.push_back(std::move(r).value());
    }
    ++ran;
    const auto summary = berth::sim::Summarize(std::move(runs));
    const auto& r = summary.median;
    if (output == "json") {
      std::cout << (repeat > 1 ? berth::sim::ToJson(summary) : berth::sim::ToJson(r)).dump()
                << std::endl;
    } else {
      std::string spread =
          repeat > 1 ? fmt::format("  (median of {}, {:.0f}..{:.0f})", repeat,
                                   summary.min_pods_per_second, summary.max_pods_per_second)
                     : "";
      std::cout << fmt::format(
                       "{:<50} nodes {:>6}  init {:>6}  measured {:>6}  {:>9.0f} pods/s  "
                       "p50 {:.3f}ms p90 {:.3f}ms p99 {:.3f}ms  CPU {:.4f} ms/pod  peak RSS {} "
                       "MB  load {:.2f}s{}",
                       r.name, r.nodes, r.init_pods, r.scheduled, r.pods_per_second, r.p50_ms,
                       r.p90_ms, r.p99_ms, r.cpu_ms_per_pod, r.peak_rss_mb, r.load_seconds, spread)
                << std::endl;
    }
  }
  if (ran == 0) return Fail(fmt::format("{}: no workload matches \"{}\"", workload_file, filter));
  return 0;
}

// `berth up`: the embedded API server, the scheduler, simulated kubelets and controllers.
CLI::App* AddUpCommand(CLI::App& app, berth::daemon::UpOptions* options) {
  auto* up = app.add_subcommand(
      "up", "Start an embedded, persistent API server with the scheduler on this machine");
  up->add_option("--data-dir", options->data_dir,
                 "Where state, certificates and the kubeconfig live (default " +
                     berth::daemon::DefaultDataDir() + ")");
  up->add_option("--port", options->port, "API server port (0: any free port)");
  up->add_option("--bind-address", options->bind_address, "API server address");
  up->add_option("--config", options->config_file, "KubeSchedulerConfiguration file");
  up->add_option("--demo-nodes", options->demo_nodes,
                 "Create this many nodes when none exist (default: 8 on a new data directory)");
  up->add_option("--demo-node-cpu", options->demo_node_shape.cpu,
                 "Demo nodes' CPU (default 8, every fourth 16)");
  up->add_option("--demo-node-memory", options->demo_node_shape.memory,
                 "Demo nodes' memory (default 32Gi, every fourth 64Gi)");
  up->add_option("--demo-node-pods", options->demo_node_shape.pods, "Pods per demo node")
      ->capture_default_str();
  up->add_option("--demo-node-zones", options->demo_node_shape.zones,
                 "Zones to spread the demo nodes over (default zone-a,zone-b,zone-c)")
      ->delimiter(',');
  up->add_flag("--no-scheduler", options->no_scheduler, "Serve the API only");
  up->add_flag("--no-kubelets", options->no_kubelets,
               "Run no simulated kubelets (bound pods stay Pending, nodes get no leases)");
  up->add_option("--node-devices", options->node_devices,
                 "Simulated kubelets: DRA devices the nodes publish as ResourceSlices (YAML file, "
                 "e.g. examples/up/dra/gpus.yaml)");
  up->add_option("--pod-start-delay", options->pod_start_delay,
                 "Simulated kubelets: how long a bound pod stays Pending (Go duration)")
      ->capture_default_str();
  up->add_option("--max-termination-grace", options->max_termination_grace,
                 "Simulated kubelets: longest a deleted pod stays Terminating (Go duration)")
      ->capture_default_str();
  up->add_option("--node-lease-renew-interval", options->node_lease_renew_interval,
                 "Simulated kubelets: how often each node's Lease is renewed (Go duration)")
      ->capture_default_str();
  up->add_option("--node-status-report-interval", options->node_status_report_interval,
                 "Simulated kubelets: how often an unchanged node status is posted (Go duration)")
      ->capture_default_str();
  up->add_option("--cluster-cidr", options->cluster_cidr,
                 "Pod CIDRs are cut from this range for nodes without one (default 10.64.0.0/10, "
                 "or 10.0.0.0/8 when --demo-nodes needs more than 16,384 /24s)");
  up->add_option("--node-cidr-mask-size", options->node_cidr_mask_size,
                 "Prefix length of each node's pod CIDR (default 24, 25 past 65,536 demo nodes)");
  berth::cmd::AddControllersOption(
      up, &options->controllers,
      "Workload controllers to run, as kube-controller-manager's: '*' (all), 'name', '-name' "
      "(replicaset, deployment, daemonset, statefulset, garbagecollector, disruption, "
      "nodelifecycle, ...)");
  up->add_option("--node-monitor-grace-period", options->node_monitor_grace_period,
                 "Node lifecycle: a node is Unknown and tainted after this long without a "
                 "heartbeat (Go duration)")
      ->capture_default_str();
  up->add_option("--terminated-pod-gc-threshold", options->terminated_pod_gc_threshold,
                 "Pod garbage collector: finished pods (Succeeded, Failed) kept before the "
                 "oldest are deleted (0: keep all)")
      ->capture_default_str();
  up->add_option("--event-ttl", options->event_ttl,
                 "Delete events this long after their last write (Go duration; 0s: keep)")
      ->capture_default_str();
  up->add_flag("--record-decisions", options->record_decisions,
               "Annotate pods with per-node filter and score results");
  up->add_option("-v,--v", options->verbosity, "Log verbosity of the scheduler");
  up->add_option("--plugin-library", options->plugin_libraries,
                 "Shared library with scheduler plugins to load (repeatable)");
  berth::daemon::AddFeatureGatesFlag(up, &options->feature_gates);

  return up;
}

struct SimulateArgs {
  std::string config_path, output = "table", replay;
  std::vector<std::string> files, plugin_libraries, feature_gates;
  bool recursive = false;
  uint64_t seed = 1;
};

CLI::App* AddSimulateCommand(CLI::App& app, SimulateArgs* a) {
  auto* simulate = app.add_subcommand("simulate", "Schedule pending pods of manifests offline");
  simulate->add_option("--config", a->config_path, "KubeSchedulerConfiguration file");
  auto* simulate_files =
      simulate->add_option("-f,--filename", a->files,
                           "Manifests: files (YAML or JSON), directories, or - for standard input");
  simulate
      ->add_option("--replay", a->replay,
                   "Replay a recording (berth record) instead of manifests (docs/compare.md)")
      ->excludes(simulate_files);
  simulate->add_flag("-R,--recursive", a->recursive, "Read directories given with -f recursively");
  simulate->add_option("--output,-o", a->output, "table, json, or html (a self-contained page)")
      ->check(CLI::IsMember({"json", "table", "html"}));
  simulate->add_option("--seed", a->seed, "Random seed for tie-breaking");
  simulate->add_option("--plugin-library", a->plugin_libraries,
                       "Shared library with scheduler plugins to load (repeatable)");
  berth::daemon::AddFeatureGatesFlag(simulate, &a->feature_gates);

  return simulate;
}

struct BenchArgs {
  std::string workload_file = "bench/workloads.yaml", filter, output = "text", config;
  std::vector<std::string> feature_gates;
  int repeat = 1;
  bool metrics = false, no_reuse = false;
};

CLI::App* AddBenchCommand(CLI::App& app, BenchArgs* a) {
  auto* bench = app.add_subcommand("bench", "Run scheduling benchmarks (bench/*.yaml)");
  bench->add_option("--workloads,-w", a->workload_file, "Workload file");
  bench->add_option("--filter", a->filter, "Only workloads whose name contains this");
  bench->add_option("--config", a->config, "KubeSchedulerConfiguration file");
  berth::daemon::AddFeatureGatesFlag(bench, &a->feature_gates);
  bench->add_option("--output,-o", a->output, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  bench
      ->add_option("--repeat", a->repeat,
                   "Run each workload N times; report the median and the spread")
      ->check(CLI::Range(1, 1000));
  bench->add_flag("--metrics", a->metrics,
                  "Report to the daemon's Prometheus metrics while scheduling (measures their "
                  "cost)");
  bench->add_flag("--no-reuse", a->no_reuse,
                  "Do not reuse per-node results across equivalent pods (every pod evaluated "
                  "afresh, as when consecutive pods differ)");

  return bench;
}

// `berth config print-defaults | validate | convert`: the subcommands, and what they read.
struct ConfigArgs {
  CLI::App* print_defaults = nullptr;
  CLI::App* validate = nullptr;
  CLI::App* convert = nullptr;
  std::string validate_path, convert_path;
  std::vector<std::string> validate_plugin_libraries;
  std::vector<std::string> print_defaults_gates;
};

void AddConfigCommands(CLI::App& app, ConfigArgs* a) {
  auto* cfg = app.add_subcommand("config", "Configuration tools");
  cfg->require_subcommand(1);
  a->print_defaults =
      cfg->add_subcommand("print-defaults", "Print the effective default configuration");
  // Gates that add plugins to the default profile (GangScheduling) show in what is printed.
  berth::daemon::AddFeatureGatesFlag(a->print_defaults, &a->print_defaults_gates);
  a->validate = cfg->add_subcommand("validate", "Load and validate a configuration file");
  a->validate->add_option("file", a->validate_path)->required();
  a->validate->add_option("--plugin-library", a->validate_plugin_libraries,
                          "Load plugins from this shared library first (repeatable), so the file "
                          "may name them");
  a->convert = cfg->add_subcommand(
      "convert", "Print the kubescheduler.config.k8s.io/v1 equivalent of a legacy Policy file");
  a->convert->add_option("file", a->convert_path)->required();
}

int RunPrintDefaults(const std::vector<std::string>& feature_gates,
                     const std::vector<berth::PluginRegistration>& compiled_in) {
  std::vector<std::string> gate_warnings;
  auto gates = berth::config::ParseFeatureGatesFlags(feature_gates, &gate_warnings);
  if (!gates.ok()) return Fail(gates.error().message);
  for (const auto& w : gate_warnings) std::fprintf(stderr, "berth: warning: %s\n", w.c_str());
  auto built = berth::pluginlib::BuildRegistry({}, compiled_in, *gates);
  if (!built.ok()) return Fail(built.error().message);
  berth::Registry registry = std::move(built).value();
  berth::config::SchedulerConfiguration config = berth::config::DefaultConfiguration(registry);
  berth::config::ApplyGatedDefaultPlugins(config, *gates);
  std::cout << berth::config::EncodeConfigurationYaml(config);
  return 0;
}

int RunConvert(const std::string& convert_path,
               const std::vector<berth::PluginRegistration>& compiled_in) {
  auto built = berth::pluginlib::BuildRegistry({}, compiled_in);
  if (!built.ok()) return Fail(built.error().message);
  berth::Registry registry = std::move(built).value();
  auto text = berth::ReadFileText(convert_path, berth::kMaxConfigBytes);
  if (!text.ok()) return Fail(text.error().message);
  auto docs = berth::ParseDocuments(*text, convert_path);
  if (!docs.ok()) return Fail(docs.error().message);
  if (docs->size() != 1) return Fail(fmt::format("{}: expected one document", convert_path));
  const std::string dir = std::filesystem::path(convert_path).parent_path().string();
  auto v1 = berth::config::ToV1Document((*docs)[0], convert_path, dir, registry);
  if (!v1.ok()) return Fail(v1.error().message);
  if (v1->translated_from.empty()) {
    // A v1 file (or an error naming what is wrong with it): print it with defaults applied.
    auto c = berth::config::DecodeConfiguration(v1->doc, registry);
    if (!c.ok()) return Fail(fmt::format("{}: {}", convert_path, c.error().message));
    std::cout << berth::config::EncodeConfigurationYaml(*c);
    return 0;
  }
  // The translation must load as v1 before it is offered as the equivalent.
  if (auto c = berth::config::DecodeConfiguration(v1->doc, registry); !c.ok())
    return Fail(fmt::format("{}: translated: {}", convert_path, c.error().message));
  const std::string what =
      v1->translated_from == berth::config::kPolicyKind ? "a legacy Policy" : v1->translated_from;
  std::cout << berth::config::AnnotatedYaml(what, v1->notes, v1->doc);
  return 0;
}

int RunValidate(const std::string& validate_path,
                const std::vector<std::string>& validate_plugin_libraries,
                const std::vector<berth::PluginRegistration>& compiled_in) {
  auto built = berth::pluginlib::BuildRegistry(validate_plugin_libraries, compiled_in);
  if (!built.ok()) return Fail(built.error().message);
  berth::Registry registry = std::move(built).value();
  auto c = berth::config::LoadConfigFile(validate_path, registry);
  if (!c.ok()) return Fail(c.error().message);
  // Building the profiles catches what only the plugins know (e.g. a plugin enabled at a
  // point it does not implement).
  berth::InMemoryCluster cluster;
  berth::FakeClock clock;
  berth::SchedulerOptions so;
  so.config = &*c;
  so.registry = &registry;
  so.client = &cluster;
  so.clock = &clock;
  auto extenders = berth::extender::BuildExtenders(c->extenders);
  if (!extenders.ok()) return Fail(fmt::format("{}: {}", validate_path, extenders.error().message));
  so.extenders = std::move(extenders).value();
  auto sched = berth::Scheduler::Create(so);
  if (!sched.ok()) return Fail(fmt::format("{}: {}", validate_path, sched.error().message));
  for (const auto& fw : (*sched)->profiles())
    for (const std::string& w : fw->warnings())
      std::fprintf(stderr, "berth: %s: warning: %s\n", validate_path.c_str(), w.c_str());
  std::cout << validate_path << ": valid\n";
  return 0;
}

}  // namespace

// The subcommands in the order their --help lists them; each binds its flags to the struct the
// dispatch at the end reads.
int berth::Main(int argc, char** argv, std::vector<PluginRegistration> compiled_in) {
  CLI::App app{"Berth: a Kubernetes scheduler that decides like kube-scheduler"};
  app.require_subcommand(1);

  auto* scheduler = app.add_subcommand(
      "scheduler", "Run as a Kubernetes scheduler against an API server (kube-scheduler's flags)");
  berth::daemon::SchedulerFlags scheduler_flags;
  berth::daemon::AddSchedulerFlags(scheduler, &scheduler_flags);

  berth::daemon::UpOptions up_options;
  auto* up = AddUpCommand(app, &up_options);

  SimulateArgs sim;
  auto* simulate = AddSimulateCommand(app, &sim);

  BenchArgs bench_args;
  auto* bench = AddBenchCommand(app, &bench_args);

  ConfigArgs config_args;
  AddConfigCommands(app, &config_args);

  berth::cmd::CapacityCommand capacity_command;
  auto* capacity = berth::cmd::AddCapacityCommand(app, &capacity_command);

  berth::cmd::CompareCommand compare_command;
  auto* compare = berth::cmd::AddCompareCommand(app, &compare_command);

  berth::cmd::RecordCommand record_command;
  auto* record = berth::cmd::AddRecordCommand(app, &record_command);

  berth::cmd::ScenarioCommand scenario_command;
  auto* scenario = berth::cmd::AddScenarioCommand(app, &scenario_command);

  berth::cmd::ExplainCommand explain_command;
  auto* explain = berth::cmd::AddExplainCommand(app, &explain_command);

  berth::cmd::ExtenderCommand extender_command;
  auto* extender = berth::cmd::AddExtenderCommand(app, &extender_command);
  berth::cmd::ClusterCommand cluster_command;
  berth::cmd::AddClusterCommands(app, &cluster_command);

  auto* version = app.add_subcommand("version", "Print the version");

  std::vector<std::string> args(argv + 1, argv + argc);
  berth::daemon::NormalizeKubeFlags(args);
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (*scheduler) {
    LimitMallocArenas();
    berth::daemon::CollectIgnoredFlags(*scheduler, &scheduler_flags);
    scheduler_flags.compiled_in = compiled_in;
    return berth::daemon::RunSchedulerCommand(scheduler_flags);
  }
  if (*up) {
    LimitMallocArenas();
    up_options.compiled_in = compiled_in;
    return berth::daemon::RunUp(up_options);
  }
  if (*extender) return berth::cmd::RunExtenderCommand(extender_command);
  if (auto rc = berth::cmd::RunClusterCommands(cluster_command)) return *rc;
  if (*explain) {
    explain_command.compiled_in = compiled_in;
    return berth::cmd::RunExplainCommand(explain_command);
  }
  if (*record) return berth::cmd::RunRecordCommand(record_command);
  if (*scenario) return berth::cmd::RunScenarioCommand(scenario_command);
  if (*compare) {
    compare_command.compiled_in = compiled_in;
    return berth::cmd::RunCompareCommand(compare_command);
  }
  if (*capacity) {
    capacity_command.compiled_in = compiled_in;
    return berth::cmd::RunCapacityCommand(capacity_command);
  }

  if (*simulate)
    return RunSimulate(sim.config_path, sim.files, sim.replay, sim.recursive, sim.output, sim.seed,
                       sim.plugin_libraries, sim.feature_gates, compiled_in);
  if (*bench)
    return RunBench(bench_args.workload_file, bench_args.filter, bench_args.config,
                    bench_args.output, bench_args.repeat, bench_args.metrics, !bench_args.no_reuse,
                    bench_args.feature_gates, compiled_in);
  if (*config_args.print_defaults) {
    return RunPrintDefaults(config_args.print_defaults_gates, compiled_in);
  }
  if (*config_args.convert) return RunConvert(config_args.convert_path, compiled_in);
  if (*config_args.validate)
    return RunValidate(config_args.validate_path, config_args.validate_plugin_libraries,
                       compiled_in);
  if (*version) {
    std::cout << "berth " << kVersion << "\n";
    return 0;
  }
  return 0;
}
