#include "daemon/scheduler_app.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

#include "berth/framework/clock.h"
#include "client/api_cluster_client.h"
#include "client/kubeconfig.h"
#include "client/leader_election.h"
#include "client/rest_client.h"
#include "config/load.h"
#include "config/policy.h"
#include "daemon/config_reload.h"
#include "daemon/scheduler_flags.h"
#include "daemon/signals.h"
#include "explain/decision_record.h"
#include "extender/http_extender.h"
#include "net/http_server.h"
#include "net/tls_certs.h"
#include "observe/log.h"
#include "observe/metrics.h"
#include "pluginlib/loader.h"
#include "plugins/registry.h"
#include "scheduler/prometheus_metrics.h"
#include "scheduler/scheduler.h"

namespace berth::daemon {
namespace {

using observe::KV;

// The families of the scheduler's metrics (kube-scheduler's names, labels and buckets).
using SchedulerMetrics = SchedulerMetricFamilies;

// Turns attempts into what a cluster operator sees: events, klog lines, metrics.
class DaemonObserver final : public AttemptObserver {
 public:
  DaemonObserver(client::ApiClusterClient* client, observe::Logger* log, SchedulerMetrics* metrics,
                 const Clock* clock, bool record_decisions,
                 std::vector<AttemptObserver*> extra_observers)
      : client_(client),
        log_(log),
        metrics_(metrics),
        clock_(clock),
        record_decisions_(record_decisions),
        extra_observers_(std::move(extra_observers)) {}

  void OnAttempt(const SchedulingAttempt& a) override {
    const std::string key = a.pod->Key();
    if (record_decisions_ && a.outcome != SchedulingAttempt::Outcome::kError) RecordDecision(a);
    const char* result = LogOutcome(a, key);
    LogDetails(a, key);
    RecordPreemptions(a, key);
    Observe(a, result);
    for (AttemptObserver* o : extra_observers_) o->OnAttempt(a);
  }

 private:
  // The per-node results as the pod's annotations, on top of the history it carries.
  void RecordDecision(const SchedulingAttempt& a) {
    const Pod& pod = *a.pod;
    auto record = explain::DecisionAnnotations(a);
    // The history builds on what the pod carries now (the informer's copy).
    Ptr<Pod> live = client_->GetPod(pod.metadata.namespace_, pod.metadata.name);
    explain::WithResultHistory(live ? live->metadata.annotations : pod.metadata.annotations,
                               &record);
    client_->AnnotatePod(pod, record);
  }

  // The log line and the pod's event of the outcome; returns the outcome's metric label.
  const char* LogOutcome(const SchedulingAttempt& a, const std::string& key) {
    const Pod& pod = *a.pod;
    const char* result = "error";
    switch (a.outcome) {
      case SchedulingAttempt::Outcome::kScheduled:
        result = "scheduled";
        if (log_->V(2)) {
          log_->Info("Successfully bound pod to node",
                     {KV::Str("pod", key), KV::Str("node", a.node),
                      KV::Int("evaluatedNodes", a.evaluated_nodes),
                      KV::Int("feasibleNodes", a.feasible_nodes)});
        }
        client_->RecordPodEvent(pod, "Normal", "Scheduled", "Binding",
                                fmt::format("Successfully assigned {} to {}", key, a.node),
                                a.profile);
        break;
      case SchedulingAttempt::Outcome::kUnschedulable:
        result = "unschedulable";
        if (log_->V(2)) {
          log_->Info("Unable to schedule pod; no fit; waiting",
                     {KV::Str("pod", key), KV::Str("err", a.message)});
        }
        client_->RecordPodEvent(pod, "Warning", "FailedScheduling", "Scheduling", a.message,
                                a.profile);
        break;
      case SchedulingAttempt::Outcome::kError:
        log_->Error("Error scheduling pod; retrying",
                    {KV::Str("pod", key), KV::Str("err", a.message)});
        client_->RecordPodEvent(pod, "Warning", "FailedScheduling", "Scheduling", a.message,
                                a.profile);
        break;
    }
    return result;
  }

  // Ignored extender errors, and at -v=10 every rejection and every score.
  void LogDetails(const SchedulingAttempt& a, const std::string& key) {
    for (const auto& err : a.skipped_extender_errors) {
      log_->Info("Skipping extender as it returned error and has ignorable flag set",
                 {KV::Str("pod", key), KV::Str("err", err)});
    }
    if (log_->V(10)) {
      for (const auto& [node, status] : a.filter_statuses) {
        log_->Info("Node rejected for pod",
                   {KV::Str("pod", key), KV::Str("node", node), KV::Str("by", status.plugin()),
                    KV::Str("reason", status.Message())});
      }
    }
    if (log_->V(10) && !a.scored_nodes.empty()) {
      for (size_t p = 0; p < a.score_plugins.size(); ++p) {
        if (!a.scores.HasRow(p)) continue;  // its PreScore skipped the pod: no scores
        for (size_t n = 0; n < a.scored_nodes.size(); ++n) {
          log_->Info(
              "Plugin scored node for pod",
              {KV::Str("pod", key), KV::Str("plugin", a.score_plugins[p]),
               KV::Str("node", a.scored_nodes[n]), KV::Int("score", a.scores.plugin_scores[p][n])});
        }
      }
      for (const auto& [extender, contributions] : a.scores.extender_scores) {
        for (size_t n = 0; n < a.scored_nodes.size(); ++n) {
          log_->Info("Extender scored node for pod",
                     {KV::Str("pod", key), KV::Str("extender", extender),
                      KV::Str("node", a.scored_nodes[n]), KV::Int("score", contributions[n])});
        }
      }
      for (size_t n = 0; n < a.scored_nodes.size(); ++n) {
        log_->Info("Calculated node's final score for pod",
                   {KV::Str("pod", key), KV::Str("node", a.scored_nodes[n]),
                    KV::Int("score", a.scores.totals[n])});
      }
    }
  }

  // The preemptor's victims: a log line and a Preempted event each.
  void RecordPreemptions(const SchedulingAttempt& a, const std::string& key) {
    const Pod& pod = *a.pod;
    for (const auto& victim : a.victims) {
      log_->Info("Preempting pod", {KV::Str("pod", victim), KV::Str("preemptor", key)});
      size_t slash = victim.find('/');
      // The victim is usually gone from the informer by now: the event needs only its name.
      Pod ref;
      ref.metadata.namespace_ = victim.substr(0, slash);
      ref.metadata.name = victim.substr(slash + 1);
      client_->RecordPodEvent(ref, "Normal", "Preempted", "Preempting",
                              fmt::format("Preempted by pod {} on node {}", pod.metadata.uid,
                                          a.nominating ? a.nominating->node_name : std::string()),
                              a.profile);
    }
  }

  void Observe(const SchedulingAttempt& a, const char* result) {
    auto seconds = [](Duration d) { return std::chrono::duration<double>(d).count(); };
    const TimePoint now = clock_->Now();
    metrics_->attempts->Add({result, a.profile});
    metrics_->attempt_duration->Observe({result, a.profile}, seconds(now - a.cycle_start));
    metrics_->algorithm_duration->Observe({}, seconds(a.algorithm_duration));
    if (a.outcome == SchedulingAttempt::Outcome::kScheduled) {
      metrics_->pod_attempts->Observe({}, a.attempt);
      if (a.initial_attempt_timestamp != TimePoint{}) {
        std::string attempts = a.attempt >= 15 ? "15+" : std::to_string(a.attempt);
        metrics_->sli_duration->Observe({attempts}, seconds(now - a.initial_attempt_timestamp));
      }
    } else if (a.outcome == SchedulingAttempt::Outcome::kUnschedulable) {
      metrics_->preemption_attempts->Add({});
      if (!a.victims.empty()) metrics_->preemption_victims->Observe({}, a.victims.size());
    }
  }

  client::ApiClusterClient* client_;
  observe::Logger* log_;
  SchedulerMetrics* metrics_;
  const Clock* clock_;
  bool record_decisions_;
  std::vector<AttemptObserver*> extra_observers_;
};

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("{}: cannot read the file", path)};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

struct SchedulerApp::Impl {
  SchedulerAppOptions options;
  net::HttpClientOptions connection;  // to the API server, from the kubeconfig
  observe::Logger log;
  Registry registry;
  config::SchedulerConfiguration config;
  RealClock clock;
  std::unique_ptr<client::ApiClusterClient> client;
  // Declared before the scheduler, which reports to it.
  PrometheusSchedulerMetrics metrics_sink;
  SchedulerMetrics& metrics = metrics_sink.families();
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<DaemonObserver> observer;
  std::unique_ptr<client::RestClient> election_rest;
  std::unique_ptr<client::LeaderElector> elector;
  std::unique_ptr<net::HttpServer> endpoints;
  // Live reload of the --config file; null without one (or with a Policy ConfigMap).
  std::unique_ptr<ConfigReloader> reloader;
  std::atomic<bool> leading{false};
  std::atomic<bool> failed{false};
  std::atomic<bool> stopped{false};
  std::jthread scheduling_thread;
  std::mutex mu;
  std::condition_variable cv;

  explicit Impl(int verbosity) : log(verbosity) {}
  void SchedulingLoop(std::stop_token stop);
  net::HttpResponse Endpoint(net::HttpRequest& req);

  // Start's steps, in order.
  VoidResult LoadConfiguration(SchedulerAppOptions options);
  Result<std::unique_ptr<client::RestClient>> NewRestClient() const;
  VoidResult CheckServer(client::RestClient& rest);
  // How bindings go to the API server, for the server CheckServer found.
  client::BindingPipeline bindings;
  VoidResult ApplyPolicyConfigMap(client::RestClient& rest);
  VoidResult CreateScheduler(std::unique_ptr<client::RestClient> rest);
  void StartConfigReload();
  VoidResult StartEndpoints();
  VoidResult StartLeaderElection();
  // The scheduler's metrics, their gauges brought up to date first.
  std::string MetricsText();
};

void SchedulerApp::Impl::SchedulingLoop(std::stop_token stop) {
  {
    std::unique_lock lock(mu);
    while (!stop.stop_requested() && !(leading && client->HasSynced())) {
      cv.wait_for(lock, std::chrono::milliseconds(50));
    }
  }
  if (stop.stop_requested()) return;
  log.Info("Starting scheduling loop",
           {KV::Int("profiles", static_cast<long long>(config.profiles.size()))});
  RunOptions run;
  run.max_in_unschedulable = std::chrono::milliseconds(options.pod_max_in_unschedulable_ms);
  scheduler->Run(stop, run);
}

std::string SchedulerApp::Impl::MetricsText() {
  auto counts = scheduler->pending_counts();
  metrics.pending->Set({"active"}, counts.active);
  metrics.pending->Set({"backoff"}, counts.backoff);
  metrics.pending->Set({"unschedulable"}, counts.unschedulable);
  metrics.pending->Set({"gated"}, counts.gated);
  const Scheduler::CacheCounts cached = scheduler->cache_counts();
  metrics.cache_size->Set({"nodes"}, cached.nodes);
  metrics.cache_size->Set({"pods"}, cached.pods);
  metrics.cache_size->Set({"assumed_pods"}, cached.assumed_pods);
  metrics.goroutines->Set({"binding"}, scheduler->binding_cycles_running());
  metrics.unschedulable_pods->Reset();
  for (const auto& c : scheduler->unschedulable_by_plugin())
    metrics.unschedulable_pods->Set({c.plugin, c.profile}, static_cast<double>(c.pods));
  metrics.leader->Set({config.leader_election.resource_name}, leading ? 1 : 0);
  return metrics.registry.Expose();
}

net::HttpResponse SchedulerApp::Impl::Endpoint(net::HttpRequest& req) {
  net::HttpResponse r;
  r.content_type = "text/plain; charset=utf-8";
  const std::string& p = req.path;
  const bool verbose = req.Query("verbose").has_value();
  auto check = [&](std::vector<std::pair<std::string, bool>> checks) {
    bool ok = true;
    std::string body;
    for (const auto& [name, passed] : checks) {
      ok = ok && passed;
      body += fmt::format("[{}]{} {}\n", passed ? "+" : "-", name, passed ? "ok" : "failed");
    }
    r.status = ok ? 200 : 500;
    r.body = verbose ? body + (ok ? "healthz check passed\n" : "healthz check failed\n")
                     : (ok ? "ok" : body + "healthz check failed\n");
  };
  if (p == "/healthz" || p == "/livez") {
    check({{"ping", true}, {"leaderElection", !failed}});
  } else if (p == "/readyz") {
    check({{"ping", true}, {"informer-sync", client->HasSynced()}, {"leaderElection", !failed}});
  } else if (p == "/configz") {
    r.content_type = "application/json";
    const auto running = reloader ? reloader->running() : nullptr;
    r.body = nlohmann::json{{"componentconfig",
                             config::EncodeConfiguration(running ? *running : config)}}
                 .dump();
  } else if (p == "/metrics") {
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = MetricsText();
  } else {
    r.status = 404;
    r.body = "404 page not found\n";
  }
  return r;
}

SchedulerApp::SchedulerApp(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
SchedulerApp::~SchedulerApp() { Stop(); }
bool SchedulerApp::Failed() const { return impl_->failed; }
std::string SchedulerApp::Metrics() { return impl_->MetricsText(); }
void SchedulerApp::ReloadConfiguration() {
  if (impl_->reloader) {
    impl_->log.Info("Reloading the configuration file",
                    {KV::Str("file", impl_->reloader->watcher().path())});
    impl_->reloader->RequestCheck();
  } else {
    impl_->log.Warning(
        "No configuration file to reload (--config not given, or the profiles "
        "come from a Policy ConfigMap)");
  }
}
uint16_t SchedulerApp::endpoints_port() const {
  return impl_->endpoints ? impl_->endpoints->port() : 0;
}

VoidResult SchedulerApp::Impl::LoadConfiguration(SchedulerAppOptions o) {
  for (const auto& w : o.startup_warnings) log.Warning(w);
  auto built = pluginlib::BuildRegistry(o.plugin_libraries, o.compiled_in, o.feature_gates);
  if (!built.ok()) return built.error();
  registry = std::move(built).value();
  if (o.config) {
    config = *o.config;
  } else if (!o.config_file.empty()) {
    auto c = config::LoadConfigFile(o.config_file, registry);
    if (!c.ok()) return c.error();
    config = std::move(c).value();
  } else {
    config = config::DefaultConfiguration(registry);
  }
  config::ApplyGatedDefaultPlugins(config, o.feature_gates);
  if (o.leader_elect) config.leader_election.leader_elect = *o.leader_elect;
  options = std::move(o);

  client::KubeconfigSelection sel;
  sel.explicit_path =
      options.kubeconfig.empty() ? config.client_connection.kubeconfig : options.kubeconfig;
  sel.master = options.master;
  auto conn = client::ResolveConnection(sel);
  if (!conn.ok()) return conn.error();
  connection = std::move(conn).value();
  if (config.client_connection.content_type.find("protobuf") != std::string::npos && log.V(2)) {
    log.Info("Berth speaks JSON to the API server; the protobuf content type is not used",
             {KV::Str("contentType", config.client_connection.content_type)});
  }
  return {};
}

Result<std::unique_ptr<client::RestClient>> SchedulerApp::Impl::NewRestClient() const {
  auto http = net::HttpClient::Create(connection);
  if (!http.ok()) return http.error();
  client::RestOptions ro;
  ro.qps = config.client_connection.qps;
  ro.burst = config.client_connection.burst;
  return std::make_unique<client::RestClient>(std::move(http).value(), ro);
}

// Fails fast on an unreachable server or bad credentials, with the reason.
VoidResult SchedulerApp::Impl::CheckServer(client::RestClient& rest) {
  auto version =
      rest.http().Do("GET", "/version", {}, {}, "application/json", std::chrono::seconds(10));
  if (!version.ok())
    return Error{fmt::format("cannot reach the API server: {}", version.error().message)};
  if (version->status == 401 || version->status == 403) {
    return Error{fmt::format("the API server {} refused the credentials (HTTP {})",
                             connection.server, version->status)};
  }
  // Berth's own server reads pipelined writes ahead and commits them together: large batches
  // on few connections there; small ones on more elsewhere (kube-apiserver over HTTP/1.1
  // answers a connection's requests in turn).
  bindings = client::BindingPipelineFor(version->body);
  return {};
}

// --policy-configmap, or a v1alpha1 configuration's algorithmSource.policy.configMap.
VoidResult SchedulerApp::Impl::ApplyPolicyConfigMap(client::RestClient& rest) {
  const SchedulerAppOptions& o = options;
  const std::string cm_name =
      !o.policy_configmap.empty() ? o.policy_configmap : config.policy_configmap_name;
  const std::string cm_namespace = !o.policy_configmap.empty() ? o.policy_configmap_namespace
                                                               : config.policy_configmap_namespace;
  if (cm_name.empty()) return {};
  const std::string where = fmt::format("configmap {}/{}", cm_namespace, cm_name);
  auto cm = rest.Get(fmt::format("/api/v1/namespaces/{}/configmaps/{}", cm_namespace, cm_name));
  if (!cm.ok()) return Error{fmt::format("--policy-configmap: {}: {}", where, cm.error().message)};
  const nlohmann::json* text = nullptr;
  if (auto d = cm->find("data"); d != cm->end() && d->is_object()) {
    if (auto k = d->find("policy.cfg"); k != d->end() && k->is_string()) text = &*k;
  }
  if (!text) return Error{fmt::format("--policy-configmap: {}: no data key \"policy.cfg\"", where)};
  auto policy = config::LoadConfig(text->get<std::string>(), where + " policy.cfg", registry);
  if (!policy.ok()) return Error{fmt::format("--policy-configmap: {}", policy.error().message)};
  config.profiles = policy->profiles;
  config.extenders = policy->extenders;
  return {};
}

VoidResult SchedulerApp::Impl::CreateScheduler(std::unique_ptr<client::RestClient> rest) {
  const SchedulerAppOptions& o = options;
  observe::Logger* logger = &log;
  client = std::make_unique<client::ApiClusterClient>(
      std::move(rest), [logger](const std::string& m) { logger->Warning(m); }, bindings);
  if (!config.profiles.empty()) client->set_reporting_name(config.profiles[0].scheduler_name);
  SchedulerOptions so;
  so.config = &config;
  so.registry = &registry;
  so.client = client.get();
  so.clock = &clock;
  so.seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  auto extenders = extender::BuildExtenders(config.extenders);
  if (!extenders.ok()) {
    return Error{fmt::format("{}: {}", o.config_file.empty() ? "configuration" : o.config_file,
                             extenders.error().message)};
  }
  so.extenders = std::move(extenders).value();
  // Extenders receive whole pods and nodes, as kube-scheduler sends them.
  client->set_keep_documents(!so.extenders.empty());
  so.inline_binding = false;
  // As many bindings in flight as the client may send in a second (kube-apiserver takes 100-200
  // ms a bind when busy), between 16 and 128; unlimited QPS: 128.
  const double qps = config.client_connection.qps;
  so.binding_threads = qps <= 0 ? 128 : std::clamp(static_cast<int>(qps), 16, 128);
  so.nominate_before_binding = o.feature_gates.Enabled("NominatedNodeNameForExpectation");
  so.pop_from_backoff_q = o.feature_gates.Enabled(config::features::kSchedulerPopFromBackoffQ);
  so.pod_group_cycles = o.feature_gates.Enabled(config::features::kGenericWorkload);
  so.opportunistic_batching = o.feature_gates.Enabled(config::features::kOpportunisticBatching);
  so.metrics = &metrics_sink;
  so.log = &log;
  so.record_details = o.verbosity >= 10 || o.record_decisions || !o.extra_observers.empty();
  if (o.verbosity < 10 && o.extra_observer_nodes > 0) {
    // The decision records' own bound (DecisionAnnotations) when they are written too.
    so.detail_nodes =
        o.record_decisions ? std::max<size_t>(o.extra_observer_nodes, 100) : o.extra_observer_nodes;
  }
  auto sched = Scheduler::Create(so);
  if (!sched.ok()) {
    return Error{fmt::format("{}: {}", o.config_file.empty() ? "configuration" : o.config_file,
                             sched.error().message)};
  }
  scheduler = std::move(sched).value();
  observer = std::make_unique<DaemonObserver>(client.get(), &log, &metrics, &clock,
                                              o.record_decisions, o.extra_observers);
  scheduler->SetObserver(observer.get());
  client->SetEventHandler(scheduler.get());
  client->Start();
  return {};
}

void SchedulerApp::Impl::StartConfigReload() {
  const SchedulerAppOptions& o = options;
  // A Policy ConfigMap decides the profiles and is read once, at start.
  if (o.config_file.empty() || !o.policy_configmap.empty() || !config.policy_configmap_name.empty())
    return;
  ConfigReloaderOptions ro;
  ro.path = o.config_file;
  ro.registry = &registry;
  ro.load = o.load_config;
  if (!ro.load) {
    ro.load = [leader_elect = o.leader_elect, path = o.config_file, gates = o.feature_gates](
                  const std::string& text,
                  const Registry& registry) -> Result<config::SchedulerConfiguration> {
      auto c = config::LoadConfig(text, path, registry);
      if (c.ok()) config::ApplyGatedDefaultPlugins(*c, gates);
      if (c.ok() && leader_elect) c->leader_election.leader_elect = *leader_elect;
      return c;
    };
  }
  ro.scheduler = scheduler.get();
  ro.log = &log;
  ro.metrics = &metrics.registry;
  ro.clock = &clock;
  ro.on_reloaded = o.on_reloaded;
  reloader = std::make_unique<ConfigReloader>(std::move(ro), config, "");
  if (o.watch_config) reloader->StartWatching();
}

VoidResult SchedulerApp::Impl::StartEndpoints() {
  const SchedulerAppOptions& o = options;
  if (o.secure_port <= 0) return {};
  net::HttpServerOptions eo;
  eo.bind_address = o.bind_address;
  eo.port = static_cast<uint16_t>(o.secure_port);
  eo.threads = 1;
  if (!o.plain_http) {
    net::TlsServerConfig tls;
    if (!o.tls_cert_file.empty()) {
      auto cert = ReadFile(o.tls_cert_file);
      if (!cert.ok()) return cert.error();
      auto key = ReadFile(o.tls_private_key_file);
      if (!key.ok()) return key.error();
      tls = {*cert, *key};
    } else {
      auto gen = net::GenerateSelfSigned("berth-scheduler", {"127.0.0.1", "localhost"});
      if (!gen.ok()) return gen.error();
      tls = {gen->cert_pem, gen->key_pem};
    }
    eo.tls = tls;
  }
  auto ep = net::HttpServer::Start(eo, [this](net::HttpRequest& r) { return Endpoint(r); });
  if (!ep.ok()) return ep.error();
  endpoints = std::move(ep).value();
  log.Info("Serving securely on",
           {KV::Str("address", fmt::format("{}:{}", o.bind_address, endpoints->port()))});
  return {};
}

VoidResult SchedulerApp::Impl::StartLeaderElection() {
  if (!config.leader_election.leader_elect) {
    leading = true;
    return {};
  }
  auto er = NewRestClient();
  if (!er.ok()) return er.error();
  election_rest = std::move(er).value();
  client::LeaderElectionOptions lo;
  lo.lease_namespace = config.leader_election.resource_namespace;
  lo.lease_name = config.leader_election.resource_name;
  lo.lease_duration = std::chrono::milliseconds(config.leader_election.lease_duration_ms);
  lo.renew_deadline = std::chrono::milliseconds(config.leader_election.renew_deadline_ms);
  lo.retry_period = std::chrono::milliseconds(config.leader_election.retry_period_ms);
  lo.on_started_leading = [this] {
    leading = true;
    cv.notify_all();
  };
  lo.on_stopped_leading = [this] {
    leading = false;
    failed = true;
    log.Error("leaderelection lost");
  };
  lo.log = [this](const std::string& m) { log.Info(m); };
  elector = std::make_unique<client::LeaderElector>(election_rest.get(), lo);
  log.Info("Attempting to acquire leader lease",
           {KV::Str("lease", lo.lease_namespace + "/" + lo.lease_name)});
  elector->Start();
  return {};
}

Result<std::unique_ptr<SchedulerApp>> SchedulerApp::Start(SchedulerAppOptions options) {
  auto impl = std::make_unique<Impl>(options.verbosity);
  Impl& s = *impl;
  client::LocalListWatch* const local = options.local_list_watch;
  if (auto r = s.LoadConfiguration(std::move(options)); !r.ok()) return r.error();
  auto rest = s.NewRestClient();
  if (!rest.ok()) return rest.error();
  (*rest)->set_local(local);
  if (auto r = s.CheckServer(**rest); !r.ok()) return r.error();
  if (auto r = s.ApplyPolicyConfigMap(**rest); !r.ok()) return r.error();
  if (auto r = s.CreateScheduler(std::move(rest).value()); !r.ok()) return r.error();
  s.StartConfigReload();
  if (auto r = s.StartEndpoints(); !r.ok()) return r.error();
  if (auto r = s.StartLeaderElection(); !r.ok()) return r.error();
  Impl* raw = &s;
  s.scheduling_thread = std::jthread([raw](std::stop_token stop) { raw->SchedulingLoop(stop); });
  return std::unique_ptr<SchedulerApp>(new SchedulerApp(std::move(impl)));
}

void SchedulerApp::Stop() {
  if (!impl_ || impl_->stopped.exchange(true)) return;
  Impl& s = *impl_;
  // Ends the scheduler's Run (it closes its queue), or the wait for leadership before it.
  {
    std::lock_guard lock(s.mu);
    s.scheduling_thread.request_stop();
  }
  s.cv.notify_all();
  if (s.scheduling_thread.joinable()) s.scheduling_thread.join();
  // No reload is handed on any more: the watcher stops before the scheduler goes.
  if (s.reloader) s.reloader->StopWatching();
  // Victim deletions report failures to the scheduler's queue: they end before it goes.
  s.client->FlushVictimDeletions();
  // The informers deliver events to the scheduler: they end before it goes.
  s.client->StopWatching();
  // Binding cycles in flight finish (the scheduler joins them) before the lease is released,
  // so the next leader never sees a half-bound pod as pending.
  s.scheduler.reset();
  if (s.elector) s.elector->Stop();
  if (s.endpoints) s.endpoints->Stop();
  s.client->Stop();
}

namespace {

// A new text of the --config file as `berth scheduler` reads its configuration at start: a
// --policy-config-file still decides the profiles and extenders, the flags apply over it.
Result<config::SchedulerConfiguration> ReloadedConfiguration(const SchedulerFlags& flags,
                                                             const std::string& text,
                                                             const Registry& registry) {
  auto cfg = config::LoadConfig(text, flags.config_file, registry);
  if (!cfg.ok()) return cfg.error();
  if (!flags.policy_config_file.empty()) {
    auto policy = config::LoadConfigFile(flags.policy_config_file[0], registry);
    if (!policy.ok()) return policy.error();
    cfg->profiles = policy->profiles;
    cfg->extenders = policy->extenders;
  }
  std::vector<std::string> warnings;  // reported at start already
  if (auto r = ApplyFlags(flags, &*cfg, &warnings); !r.ok()) return r.error();
  return cfg;
}

// The configuration `berth scheduler` starts with: the --config file (or the defaults), with a
// --policy-config-file deciding the profiles and extenders.
Result<config::SchedulerConfiguration> StartupConfiguration(const SchedulerFlags& flags,
                                                            const Registry& registry) {
  config::SchedulerConfiguration cfg;
  if (!flags.config_file.empty()) {
    auto c = config::LoadConfigFile(flags.config_file, registry);
    if (!c.ok()) return c.error();
    cfg = std::move(c).value();
  } else {
    cfg = config::DefaultConfiguration(registry);
  }
  if (!flags.policy_config_file.empty()) {
    // The Policy decides the profile and the extenders; the rest stays as configured.
    auto policy = config::LoadConfigFile(flags.policy_config_file[0], registry);
    if (!policy.ok()) return policy.error();
    if (!config::IsPolicyFile(flags.policy_config_file[0])) {
      return Error{fmt::format("{}: --policy-config-file: expected kind Policy",
                               flags.policy_config_file[0])};
    }
    cfg.profiles = policy->profiles;
    cfg.extenders = policy->extenders;
  }
  return cfg;
}

SchedulerAppOptions AppOptions(const SchedulerFlags& flags, config::SchedulerConfiguration cfg,
                               int64_t pod_max_in_unschedulable_ms,
                               const config::FeatureGates& gates,
                               std::vector<std::string> warnings) {
  SchedulerAppOptions o;
  o.config_file = flags.config_file;
  o.config = std::move(cfg);
  o.load_config = [flags](const std::string& text, const Registry& registry) {
    return ReloadedConfiguration(flags, text, registry);
  };
  o.master = flags.master;
  o.policy_configmap = flags.policy_configmap;
  o.policy_configmap_namespace = flags.policy_configmap_namespace;
  if (flags.config_file.empty()) o.kubeconfig = flags.kubeconfig;
  o.pod_max_in_unschedulable_ms = pod_max_in_unschedulable_ms;
  o.verbosity = flags.verbosity;
  o.record_decisions = flags.record_decisions;
  o.plugin_libraries = flags.plugin_libraries;
  o.compiled_in = flags.compiled_in;
  o.feature_gates = gates;
  o.secure_port = flags.secure_port;
  o.bind_address = flags.bind_address;
  o.plain_http = flags.serve_plain_http;
  o.tls_cert_file = flags.tls_cert_file;
  o.tls_private_key_file = flags.tls_private_key_file;
  o.startup_warnings = std::move(warnings);
  return o;
}

}  // namespace

int RunSchedulerCommand(const SchedulerFlags& flags) {
  BlockTerminationSignals();
  BlockReloadSignal();
  // Accepted by the parser so kube-scheduler manifests parse, but not done yet: say so rather
  // than run with a configuration the user did not ask for.

  std::vector<std::string> gate_warnings;
  auto gates = config::ParseFeatureGatesFlags(flags.feature_gates, &gate_warnings);
  if (!gates.ok()) {
    std::fprintf(stderr, "berth scheduler: %s\n", gates.error().message.c_str());
    return 1;
  }
  // Loaded before the configuration is read: it may name their plugins and args.
  auto built = pluginlib::BuildRegistry(flags.plugin_libraries, flags.compiled_in, *gates);
  if (!built.ok()) {
    std::fprintf(stderr, "berth scheduler: %s\n", built.error().message.c_str());
    return 1;
  }
  Registry registry = std::move(built).value();
  auto loaded = StartupConfiguration(flags, registry);
  if (!loaded.ok()) {
    std::fprintf(stderr, "berth scheduler: %s\n", loaded.error().message.c_str());
    return 1;
  }
  config::SchedulerConfiguration cfg = std::move(loaded).value();
  std::vector<std::string> warnings = std::move(gate_warnings);
  if (auto r = ApplyFlags(flags, &cfg, &warnings); !r.ok()) {
    std::fprintf(stderr, "berth scheduler: %s\n", r.error().message.c_str());
    return 1;
  }
  for (const auto& f : flags.ignored) {
    warnings.push_back(fmt::format("flag {} is accepted for compatibility and has no effect", f));
  }
  if (!flags.write_config_to.empty()) {
    std::ofstream out(flags.write_config_to);
    out << config::EncodeConfigurationYaml(cfg);
    if (!out.flush()) {
      std::fprintf(stderr, "berth scheduler: %s: cannot write\n", flags.write_config_to.c_str());
      return 1;
    }
    std::fprintf(stderr, "Wrote configuration to: %s\n", flags.write_config_to.c_str());
    return 0;
  }
  auto pod_max = PodMaxInUnschedulablePodsDurationMs(flags);
  if (!pod_max.ok()) {
    std::fprintf(stderr, "berth scheduler: %s\n", pod_max.error().message.c_str());
    return 1;
  }
  SchedulerAppOptions o = AppOptions(flags, std::move(cfg), *pod_max, *gates, std::move(warnings));
  auto app = SchedulerApp::Start(std::move(o));
  if (!app.ok()) {
    std::fprintf(stderr, "berth scheduler: %s\n", app.error().message.c_str());
    return 1;
  }
  int sig =
      WaitForTerminationSignal([&] { return (*app)->Failed(); }, std::chrono::milliseconds(200),
                               [&] { (*app)->ReloadConfiguration(); });
  (void)sig;
  bool failed = (*app)->Failed();
  (*app)->Stop();
  return failed ? 1 : 0;
}

}  // namespace berth::daemon
