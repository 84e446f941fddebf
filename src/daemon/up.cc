#include "daemon/up.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>

#include "api/codec.h"
#include "api/tolerations.h"
#include "apiserver/resources.h"
#include "apiserver/server.h"
#include "apiserver/store.h"
#include "client/kubeconfig.h"
#include "config/feature_gates.h"
#include "config/load.h"
#include "controllers/controller_manager.h"
#include "daemon/cluster_runtime.h"
#include "daemon/default_storage_class.h"
#include "daemon/demo_nodes.h"
#include "daemon/in_process_list_watch.h"
#include "daemon/scheduler_app.h"
#include "daemon/scheduler_flags.h"
#include "daemon/signals.h"
#include "explain/explain.h"
#include "kubelet/simulated_kubelets.h"
#include "pluginlib/loader.h"
#include "ui/decision_log.h"
#include "ui/web_view.h"

namespace berth::daemon {

std::string DefaultDataDir() {
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg && *xdg) {
    return std::string(xdg) + "/berth";
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return std::string(home) + "/.local/share/berth";
  }
  return ".berth";
}

namespace {

// Creates the demo nodes when no nodes are stored yet.
VoidResult CreateDemoNodes(apiserver::Store& store, int count, const NodeShape& shape) {
  const auto* nodes = apiserver::FindResource("", "v1", "nodes");
  auto existing = store.List(*nodes, "", {}, 1, "");
  if (!existing.ok()) return existing.error();
  if (!existing->items.empty()) return {};
  const std::string now = FormatTimestamp(std::chrono::duration_cast<std::chrono::seconds>(
                                              std::chrono::system_clock::now().time_since_epoch())
                                              .count());
  for (int i = 0; i < count; ++i) {
    auto created = store.Create(*nodes, "", ShapedNode(i, count, shape, now), false);
    if (!created.ok()) return created.error();
  }
  return {};
}

// Writes the scheduler's effective configuration where `berth explain --kubeconfig` reads it
// (explain::kPublishedConfigName), or, with no scheduler running, removes a copy an earlier
// start left: an outside scheduler's configuration is not known here.
VoidResult PublishSchedulerConfiguration(apiserver::Store& store,
                                         const config::SchedulerConfiguration* config,
                                         const std::string& source) {
  const auto* configmaps = apiserver::FindResource("", "v1", "configmaps");
  const std::string ns(explain::kPublishedConfigNamespace);
  const std::string name(explain::kPublishedConfigName);
  if (!config) {
    auto gone = store.Delete(*configmaps, ns, name, {}, false);
    if (!gone.ok() && gone.error().code != ErrorCode::kNotFound) return gone.error();
    return {};
  }
  nlohmann::json data = {
      {std::string(explain::kPublishedConfigKey), config::EncodeConfigurationYaml(*config)},
      {std::string(explain::kPublishedSourceKey), source}};
  auto written = store.Mutate(
      *configmaps, ns, name,
      [&](const nlohmann::json* current) -> Result<nlohmann::json> {
        nlohmann::json cm = current
                                ? *current
                                : nlohmann::json{{"apiVersion", "v1"},
                                                 {"kind", "ConfigMap"},
                                                 {"metadata", {{"name", name}, {"namespace", ns}}}};
        cm["metadata"]["labels"]["app.kubernetes.io/managed-by"] = "berth";
        cm["data"] = data;
        return cm;
      },
      true, false);
  if (!written.ok()) return written.error();
  return {};
}

// What /metrics serves: the API server's metrics, then the scheduler's. Both start after the
// route is mounted and stop before the server's threads do, so the route reads them under a lock.
struct MetricsSources {
  std::mutex mu;
  apiserver::Server* server = nullptr;
  SchedulerApp* scheduler = nullptr;

  void Set(apiserver::Server* s, SchedulerApp* app) {
    std::lock_guard lock(mu);
    server = s;
    scheduler = app;
  }
};

apiserver::ExtraRoute MetricsRoute(std::shared_ptr<MetricsSources> sources) {
  return {.prefix = "/metrics",
          .is_public = false,
          .handler = [sources](net::HttpRequest&, apiserver::Store&) {
            net::HttpResponse r;
            r.content_type = "text/plain; version=0.0.4; charset=utf-8";
            std::lock_guard lock(sources->mu);
            if (sources->server) r.body = sources->server->Metrics();
            if (sources->scheduler) r.body += sources->scheduler->Metrics();
            return r;
          }};
}

// The controllers' and kubelets' settings of `berth up`: every node is simulated, and the
// controllers run under the --feature-gates of the scheduler and the API server.
RuntimeOptions UpRuntime(const UpOptions& options, const config::FeatureGates& gates) {
  RuntimeOptions r;
  r.taint_toleration_comparison_operators = gates.Enabled(kTaintTolerationComparisonOperatorsGate);
  r.pod_start_delay = options.pod_start_delay;
  r.node_devices = options.node_devices;
  r.max_termination_grace = options.max_termination_grace;
  r.node_lease_renew_interval = options.node_lease_renew_interval;
  r.node_status_report_interval = options.node_status_report_interval;
  r.cluster_cidr = options.cluster_cidr;
  r.node_cidr_mask_size = options.node_cidr_mask_size;
  if (r.cluster_cidr.empty() && r.node_cidr_mask_size == 0) {
    const PodCidrs cidrs = PodCidrsFor(options.demo_nodes);
    r.cluster_cidr = cidrs.cluster_cidr;
    r.node_cidr_mask_size = cidrs.node_mask_size;
  }
  r.controllers = options.controllers;
  // Without kubelets no node would ever heartbeat, and every node would be unreachable and
  // tainted after the grace period: the node lifecycle controller runs only when named.
  const bool named = std::any_of(r.controllers.begin(), r.controllers.end(), [](const auto& c) {
    return c.find("nodelifecycle") != std::string::npos;
  });
  if (options.no_kubelets && !named && !r.controllers.empty()) {
    r.controllers.push_back("-nodelifecycle");
  }
  // The server empties and removes deleted namespaces itself (apiserver/namespace_deleter.h):
  // the namespace controller, for API servers that do not, runs only when named.
  const bool ns_named = std::any_of(r.controllers.begin(), r.controllers.end(), [](const auto& c) {
    return c.find("namespace") != std::string::npos;
  });
  if (!ns_named && !r.controllers.empty()) r.controllers.push_back("-namespace");
  r.node_monitor_grace_period = options.node_monitor_grace_period;
  r.terminated_pod_gc_threshold = options.terminated_pod_gc_threshold;
  r.log_prefix = "berth up";
  return r;
}

}  // namespace

int RememberedPort(const std::string& data_dir) {
  std::ifstream in(data_dir + "/" + kPortFileName);
  int port = 0;
  if (!(in >> port) || port <= 0 || port > 65535) return 0;
  return port;
}

void RememberPort(const std::string& data_dir, int port) {
  std::ofstream out(data_dir + "/" + kPortFileName, std::ios::trunc);
  out << port << "\n";
}

Result<config::SchedulerConfiguration> UpSchedulerConfiguration(const UpOptions& options,
                                                                const Registry& registry) {
  if (!options.config_file.empty()) return config::LoadConfigFile(options.config_file, registry);
  config::SchedulerConfiguration c = config::DefaultConfiguration(registry);
  c.client_connection.qps = 0;  // the REST client's "no limit"
  return c;
}

// What a cluster starts with: the demo nodes (on a new data directory unless --demo-nodes says
// otherwise) and, once, the default storage class.
VoidResult SeedCluster(apiserver::Store& store, const UpOptions& options, bool new_data_dir) {
  // The default count is for a new data directory only: nodes a user deleted stay deleted.
  const int demo_nodes = options.demo_nodes >= 0 ? options.demo_nodes
                         : new_data_dir          ? kDefaultDemoNodes
                                                 : 0;
  if (demo_nodes > 0) {
    if (auto r = CreateDemoNodes(store, demo_nodes, options.demo_node_shape); !r.ok()) {
      return Error{"creating demo nodes: " + r.error().message, r.error().code};
    }
  }
  if (new_data_dir) {
    if (auto r = CreateDefaultStorageClass(store); !r.ok()) {
      return Error{"creating the default storage class: " + r.error().message, r.error().code};
    }
  }
  return {};
}

// The embedded scheduler's options: it talks to `server`, no leader election, no endpoints.
SchedulerAppOptions UpSchedulerOptions(const UpOptions& options, apiserver::Server& server,
                                       const config::SchedulerConfiguration& config,
                                       const std::string& config_source) {
  SchedulerAppOptions sa;
  sa.kubeconfig = server.kubeconfig_path();
  sa.config_file = options.config_file;
  sa.config = config;
  sa.extra_observer_nodes = ui::DecisionLogOptions{}.max_nodes;
  sa.verbosity = options.verbosity;
  sa.record_decisions = options.record_decisions;
  sa.plugin_libraries = options.plugin_libraries;
  sa.compiled_in = options.compiled_in;
  sa.leader_elect = false;
  sa.secure_port = 0;
  // A reloaded configuration is published too (`berth explain --kubeconfig` reads it).
  sa.on_reloaded = [store = &server.store(),
                    config_source](const config::SchedulerConfiguration& reloaded) {
    if (auto r = PublishSchedulerConfiguration(*store, &reloaded, config_source); !r.ok())
      std::fprintf(stderr, "berth up: publishing the scheduler configuration: %s\n",
                   r.error().message.c_str());
  };
  return sa;
}

void PrintWelcome(apiserver::Server& server, const UpOptions& options,
                  const std::string& data_dir) {
  std::printf(
      "Berth is up: API server %s%s, data in %s\n\n"
      "Web view (the token after # stays in the browser):\n"
      "  %s/ui/#token=%s\n\n"
      "In another terminal:\n"
      "  export KUBECONFIG=%s\n"
      "  kubectl get nodes\n"
      "  kubectl create -f examples/up/pods.yaml && kubectl get pods -o wide\n\n"
      "Ctrl-C stops; starting again resumes the same state.\n",
      server.url().c_str(), options.no_scheduler ? " (no scheduler)" : ", scheduler running",
      data_dir.c_str(), server.url().c_str(), server.token().c_str(),
      server.kubeconfig_path().c_str());
  std::fflush(stdout);
}

// What `berth up` loads before anything starts: the feature gates, the plugins and the scheduler's
// configuration (the scheduler runs with them and the web view's explanations schedule with the
// same); a bad --node-devices file stops the start too.
struct UpInputs {
  config::FeatureGates gates;
  std::vector<std::string> gate_warnings;
  Registry registry;
  config::SchedulerConfiguration config;
};

Result<UpInputs> LoadInputs(const UpOptions& options) {
  UpInputs in;
  auto gates = config::ParseFeatureGatesFlags(options.feature_gates, &in.gate_warnings);
  if (!gates.ok()) return gates.error();
  in.gates = *gates;
  auto registry = pluginlib::BuildRegistry(options.plugin_libraries, options.compiled_in, in.gates);
  if (!registry.ok()) return registry.error();
  in.registry = std::move(registry).value();
  auto config = UpSchedulerConfiguration(options, in.registry);
  if (!config.ok()) return config.error();
  in.config = std::move(config).value();
  if (!options.node_devices.empty()) {
    if (auto d = kubelet::LoadNodeDevices(options.node_devices); !d.ok())
      return Error{"--node-devices: " + d.error().message, d.error().code};
  }
  return in;
}

// --event-ttl in whole seconds, as the server's clock; a positive TTL under a second is one second.
Result<std::chrono::seconds> EventTtl(const UpOptions& options) {
  auto event_ttl_ms = ParseGoDurationMs(options.event_ttl, "--event-ttl");
  if (!event_ttl_ms.ok()) return event_ttl_ms.error();
  if (*event_ttl_ms < 0) return Error{"--event-ttl: must not be negative"};
  return std::chrono::seconds((*event_ttl_ms + 999) / 1000);
}

// Starts the API server on so.port; a remembered port taken by now gives way to any free one.
// With `remember`, the port it got is kept for the next start.
Result<std::unique_ptr<apiserver::Server>> StartServer(apiserver::ServerOptions& so, int remembered,
                                                       bool remember) {
  auto server = apiserver::Server::Start(so);
  if (!server.ok() && remembered > 0) {
    std::fprintf(stderr, "berth up: port %d is taken, picking another\n", remembered);
    so.port = 0;
    server = apiserver::Server::Start(so);
  }
  if (server.ok() && remember) RememberPort(so.data_dir, (*server)->port());
  return server;
}

// The API server's options but its routes. *remembered: the port an earlier start picked, if
// --port 0 reuses it.
Result<apiserver::ServerOptions> UpServerOptions(const UpOptions& options,
                                                 const config::FeatureGates& gates,
                                                 int* remembered) {
  apiserver::ServerOptions so;
  so.data_dir = options.data_dir.empty() ? DefaultDataDir() : options.data_dir;
  so.bind_address = options.bind_address;
  so.validation.toleration_comparison_operators =
      gates.Enabled(kTaintTolerationComparisonOperatorsGate);
  so.workload_api = gates.Enabled(config::features::kGenericWorkload);
  so.port = static_cast<uint16_t>(options.port);
  // --port 0 keeps the port an earlier start picked while it is free: kubeconfigs, kubectl
  // proxy and an open web view tab survive a restart.
  *remembered = options.port == 0 ? RememberedPort(so.data_dir) : 0;
  if (*remembered > 0) so.port = static_cast<uint16_t>(*remembered);
  auto event_ttl = EventTtl(options);
  if (!event_ttl.ok()) return event_ttl.error();
  so.event_ttl = *event_ttl;
  return so;
}

namespace {

// What the cluster holds before anything else runs: a new data directory's demo objects and
// the published scheduler configuration.
VoidResult PrepareCluster(apiserver::Server& server, const UpOptions& options, bool new_data_dir,
                          const config::SchedulerConfiguration* config,
                          const std::string& config_source) {
  if (auto r = SeedCluster(server.store(), options, new_data_dir); !r.ok()) {
    return Error{r.error().message};
  }
  if (auto r = PublishSchedulerConfiguration(
          server.store(), options.no_scheduler ? nullptr : config, config_source);
      !r.ok()) {
    return Error{"publishing the scheduler configuration: " + r.error().message};
  }
  return {};
}

}  // namespace

int RunUp(const UpOptions& options) {
  BlockTerminationSignals();
  BlockReloadSignal();
  auto fail = [](const std::string& message) {
    std::fprintf(stderr, "berth up: %s\n", message.c_str());
    return 1;
  };

  auto inputs = LoadInputs(options);
  if (!inputs.ok()) return fail(inputs.error().message);
  const config::SchedulerConfiguration* config = &inputs->config;
  ui::DecisionLog decisions;

  int remembered = 0;
  auto server_options = UpServerOptions(options, inputs->gates, &remembered);
  if (!server_options.ok()) return fail(server_options.error().message);
  apiserver::ServerOptions& so = *server_options;
  // What a new cluster starts with is created once: a user's deletion stands on restarts.
  std::error_code ignored;
  const bool new_data_dir = !std::filesystem::exists(so.data_dir + "/state.db", ignored);
  auto timeline = std::make_shared<ui::LiveTimeline>();
  const std::string config_source =
      options.config_file.empty() ? "default configuration" : options.config_file;
  so.extra_routes = ui::WebViewRoutes({.config = config,
                                       .registry = &inputs->registry,
                                       .config_source = config_source,
                                       .decisions = options.no_scheduler ? nullptr : &decisions,
                                       .timeline = timeline});
  auto metrics_sources = std::make_shared<MetricsSources>();
  so.extra_routes.push_back(MetricsRoute(metrics_sources));
  auto server = StartServer(so, remembered, options.port == 0);
  if (!server.ok()) return fail(server.error().message);
  // Declared after the server: the watches go before the store does.
  auto timeline_watches = timeline->Follow((*server)->store());
  if (!timeline_watches.ok()) {
    std::fprintf(stderr, "berth up: timeline: %s\n", timeline_watches.error().message.c_str());
    (*server)->Stop();
    return 1;
  }
  if (auto r = PrepareCluster(**server, options, new_data_dir, config, config_source); !r.ok())
    return fail(r.error().message);
  // The components below read the server's store in process rather than over HTTP (writes
  // still go through the API); declared first, it outlives them.
  InProcessListWatch local((*server)->store());
  RuntimeOptions runtime = UpRuntime(options, inputs->gates);
  runtime.local_list_watch = &local;
  auto controllers = StartControllers(runtime, (*server)->kubeconfig_path());
  if (!controllers.ok()) {
    std::fprintf(stderr, "berth up: controllers: %s\n", controllers.error().message.c_str());
    (*server)->Stop();
    return 1;
  }
  std::unique_ptr<SchedulerApp> scheduler;
  std::unique_ptr<kubelet::SimulatedKubelets> kubelets;
  // Stops what runs, in the reverse order of starting (clients before the server they talk to):
  // at the end, and when a later start fails.
  auto stop_all = [&] {
    metrics_sources->Set(nullptr, nullptr);
    if (kubelets) kubelets->Stop();
    if (scheduler) scheduler->Stop();
    if (*controllers) (*controllers)->Stop();
    (*server)->Stop();
  };
  if (!options.no_scheduler) {
    SchedulerAppOptions sa = UpSchedulerOptions(options, **server, *config, config_source);
    sa.extra_observers = {&decisions};
    sa.feature_gates = inputs->gates;
    sa.startup_warnings = inputs->gate_warnings;
    sa.local_list_watch = &local;
    auto app = SchedulerApp::Start(sa);
    if (!app.ok()) {
      std::fprintf(stderr, "berth up: scheduler: %s\n", app.error().message.c_str());
      stop_all();
      return 1;
    }
    scheduler = std::move(app).value();
  }
  metrics_sources->Set(server->get(), scheduler.get());
  if (!options.no_kubelets) {
    auto started = StartKubelets(runtime, (*server)->kubeconfig_path());
    if (!started.ok()) {
      std::fprintf(stderr, "berth up: kubelets: %s\n", started.error().message.c_str());
      stop_all();
      return 1;
    }
    kubelets = std::move(started).value();
  }
  PrintWelcome(**server, options, so.data_dir);
  WaitForTerminationSignal([&] { return scheduler && scheduler->Failed(); },
                           std::chrono::milliseconds(200),
                           [&] {
                             if (scheduler) scheduler->ReloadConfiguration();
                           });
  const int rc = scheduler && scheduler->Failed() ? 1 : 0;
  stop_all();
  std::printf("berth up: stopped\n");
  return rc;
}

}  // namespace berth::daemon
