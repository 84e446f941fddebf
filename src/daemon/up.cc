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

// The controllers' and kubelets' settings of `berth up`: every node is simulated.
RuntimeOptions UpRuntime(const UpOptions& options) {
  RuntimeOptions r;
  r.pod_start_delay = options.pod_start_delay;
  r.node_devices = options.node_devices;
  r.max_termination_grace = options.max_termination_grace;
  r.node_lease_renew_interval = options.node_lease_renew_interval;
  r.node_status_report_interval = options.node_status_report_interval;
  r.controllers = options.controllers;
  // Without kubelets no node would ever heartbeat, and every node would be unreachable and
  // tainted after the grace period: the node lifecycle controller runs only when named.
  const bool named = std::any_of(r.controllers.begin(), r.controllers.end(), [](const auto& c) {
    return c.find("nodelifecycle") != std::string::npos;
  });
  if (options.no_kubelets && !named && !r.controllers.empty()) {
    r.controllers.push_back("-nodelifecycle");
  }
  r.node_monitor_grace_period = options.node_monitor_grace_period;
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

int RunUp(const UpOptions& options) {
  BlockTerminationSignals();
  BlockReloadSignal();

  // The scheduler's configuration and plugins, loaded once: the scheduler runs with them and
  // the web view's explanations schedule with the same.
  std::vector<std::string> gate_warnings;
  auto gates = config::ParseFeatureGatesFlags(options.feature_gates, &gate_warnings);
  if (!gates.ok()) {
    std::fprintf(stderr, "berth up: %s\n", gates.error().message.c_str());
    return 1;
  }
  auto registry = pluginlib::BuildRegistry(options.plugin_libraries, options.compiled_in, *gates);
  if (!registry.ok()) {
    std::fprintf(stderr, "berth up: %s\n", registry.error().message.c_str());
    return 1;
  }
  auto config = UpSchedulerConfiguration(options, *registry);
  if (!config.ok()) {
    std::fprintf(stderr, "berth up: %s\n", config.error().message.c_str());
    return 1;
  }
  // A bad --node-devices file stops the start before anything runs.
  if (!options.node_devices.empty()) {
    if (auto d = kubelet::LoadNodeDevices(options.node_devices); !d.ok()) {
      std::fprintf(stderr, "berth up: --node-devices: %s\n", d.error().message.c_str());
      return 1;
    }
  }
  ui::DecisionLog decisions;

  apiserver::ServerOptions so;
  so.data_dir = options.data_dir.empty() ? DefaultDataDir() : options.data_dir;
  // What a new cluster starts with is created once: a user's deletion stands on restarts.
  std::error_code ignored;
  const bool new_data_dir = !std::filesystem::exists(so.data_dir + "/state.db", ignored);
  so.bind_address = options.bind_address;
  so.validation.toleration_comparison_operators =
      gates->Enabled(kTaintTolerationComparisonOperatorsGate);
  so.port = static_cast<uint16_t>(options.port);
  // --port 0 keeps the port an earlier start picked while it is free: kubeconfigs, kubectl
  // proxy and an open web view tab survive a restart.
  const int remembered = options.port == 0 ? RememberedPort(so.data_dir) : 0;
  if (remembered > 0) so.port = static_cast<uint16_t>(remembered);
  auto event_ttl_ms = ParseGoDurationMs(options.event_ttl, "--event-ttl");
  if (!event_ttl_ms.ok() || *event_ttl_ms < 0) {
    std::fprintf(stderr, "berth up: %s\n",
                 event_ttl_ms.ok() ? "--event-ttl: must not be negative"
                                   : event_ttl_ms.error().message.c_str());
    return 1;
  }
  // Whole seconds, as the server's clock; a positive TTL under a second is one second.
  so.event_ttl = std::chrono::seconds((*event_ttl_ms + 999) / 1000);
  so.extra_routes = ui::WebViewRoutes(
      {.config = &*config,
       .registry = &*registry,
       .config_source = options.config_file.empty() ? "default configuration" : options.config_file,
       .decisions = options.no_scheduler ? nullptr : &decisions});
  auto metrics_sources = std::make_shared<MetricsSources>();
  so.extra_routes.push_back(MetricsRoute(metrics_sources));
  auto server = apiserver::Server::Start(so);
  if (!server.ok() && remembered > 0) {
    std::fprintf(stderr, "berth up: port %d is taken, picking another\n", remembered);
    so.port = 0;
    server = apiserver::Server::Start(so);
  }
  if (!server.ok()) {
    std::fprintf(stderr, "berth up: %s\n", server.error().message.c_str());
    return 1;
  }
  if (options.port == 0) RememberPort(so.data_dir, (*server)->port());
  // The default count is for a new data directory only: nodes a user deleted stay deleted.
  const int demo_nodes = options.demo_nodes >= 0 ? options.demo_nodes
                         : new_data_dir          ? kDefaultDemoNodes
                                                 : 0;
  if (demo_nodes > 0) {
    if (auto r = CreateDemoNodes((*server)->store(), demo_nodes, options.demo_node_shape);
        !r.ok()) {
      std::fprintf(stderr, "berth up: creating demo nodes: %s\n", r.error().message.c_str());
      return 1;
    }
  }
  if (new_data_dir) {
    if (auto r = CreateDefaultStorageClass((*server)->store()); !r.ok()) {
      std::fprintf(stderr, "berth up: creating the default storage class: %s\n",
                   r.error().message.c_str());
      return 1;
    }
  }
  const std::string config_source =
      options.config_file.empty() ? "default configuration" : options.config_file;
  if (auto r = PublishSchedulerConfiguration(
          (*server)->store(), options.no_scheduler ? nullptr : &*config, config_source);
      !r.ok()) {
    std::fprintf(stderr, "berth up: publishing the scheduler configuration: %s\n",
                 r.error().message.c_str());
    return 1;
  }
  auto controllers = StartControllers(UpRuntime(options), (*server)->kubeconfig_path());
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
    SchedulerAppOptions sa;
    sa.kubeconfig = (*server)->kubeconfig_path();
    sa.config_file = options.config_file;
    sa.config = *config;
    sa.extra_observers = {&decisions};
    sa.extra_observer_nodes = ui::DecisionLogOptions{}.max_nodes;
    sa.verbosity = options.verbosity;
    sa.record_decisions = options.record_decisions;
    sa.plugin_libraries = options.plugin_libraries;
    sa.compiled_in = options.compiled_in;
    sa.feature_gates = *gates;
    sa.startup_warnings = gate_warnings;
    sa.leader_elect = false;
    sa.secure_port = 0;
    // A reloaded configuration is published too (`berth explain --kubeconfig` reads it).
    sa.on_reloaded = [store = &(*server)->store(),
                      config_source](const config::SchedulerConfiguration& reloaded) {
      if (auto r = PublishSchedulerConfiguration(*store, &reloaded, config_source); !r.ok())
        std::fprintf(stderr, "berth up: publishing the scheduler configuration: %s\n",
                     r.error().message.c_str());
    };
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
    auto started = StartKubelets(UpRuntime(options), (*server)->kubeconfig_path());
    if (!started.ok()) {
      std::fprintf(stderr, "berth up: kubelets: %s\n", started.error().message.c_str());
      stop_all();
      return 1;
    }
    kubelets = std::move(started).value();
  }
  std::printf(
      "Berth is up: API server %s%s, data in %s\n\n"
      "Web view (the token after # stays in the browser):\n"
      "  %s/ui/#token=%s\n\n"
      "In another terminal:\n"
      "  export KUBECONFIG=%s\n"
      "  kubectl get nodes\n"
      "  kubectl create -f examples/up/pods.yaml && kubectl get pods -o wide\n\n"
      "Ctrl-C stops; starting again resumes the same state.\n",
      (*server)->url().c_str(), options.no_scheduler ? " (no scheduler)" : ", scheduler running",
      so.data_dir.c_str(), (*server)->url().c_str(), (*server)->token().c_str(),
      (*server)->kubeconfig_path().c_str());
  std::fflush(stdout);
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
