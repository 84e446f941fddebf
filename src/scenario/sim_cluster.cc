#include "scenario/sim_cluster.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "api/codec.h"
#include "api/tolerations.h"
#include "apiserver/resources.h"
#include "apiserver/server.h"
#include "apiserver/store.h"
#include "client/api_cluster_client.h"
#include "client/kubeconfig.h"
#include "config/feature_gates.h"
#include "config/load.h"
#include "controllers/controller_manager.h"
#include "daemon/default_storage_class.h"
#include "daemon/demo_nodes.h"
#include "kubelet/simulated_kubelets.h"
#include "pluginlib/loader.h"

namespace berth::scenario {
namespace {

// How often the scheduler retries pods left unschedulable too long (kube-scheduler's period),
// and after how long (--pod-max-in-unschedulable-pods-duration's default).
constexpr auto kUnschedulableFlush = std::chrono::seconds(30);
constexpr auto kMaxInUnschedulable = std::chrono::minutes(5);
// The kubelets run work due within this window of now in one batch.
constexpr auto kKubeletBatchWindow = std::chrono::milliseconds(20);
// Real time without any activity after which a cluster that is not quiescent is reported.
constexpr auto kStallLimit = std::chrono::seconds(60);
// Real time after which watch events counted in transit, with every component idle, are taken
// as lost with a cut stream (their informer resumes from the last one it handled).
constexpr auto kTransitLimit = std::chrono::seconds(3);

Result<std::unique_ptr<client::RestClient>> NewRestClient(const std::string& kubeconfig,
                                                          const std::string& agent) {
  auto conn = client::ResolveConnection({.explicit_path = kubeconfig});
  if (!conn.ok()) return conn.error();
  conn->user_agent = agent;
  auto http = net::HttpClient::Create(*conn);
  if (!http.ok()) return http.error();
  return std::make_unique<client::RestClient>(std::move(http).value(),
                                              client::RestOptions{.qps = 0});
}

std::string MakeTempDir() {
  // In memory where the system has it: the server commits every write durably, and on a disk
  // each commit's sync would cost more than the rest of a simulated write.
  std::error_code ec;
  const std::filesystem::path base = std::filesystem::is_directory("/dev/shm", ec)
                                         ? std::filesystem::path("/dev/shm")
                                         : std::filesystem::temp_directory_path();
  std::string pattern = (base / "berth-scenario-XXXXXX").string();
  if (!mkdtemp(pattern.data())) return "";
  return pattern;
}

VoidResult CreateNodes(apiserver::Store& store, const ClusterSpec& spec, TimePoint now) {
  daemon::NodeShape shape;
  shape.name_prefix = "node";
  shape.cpu = spec.node_template.cpu;
  shape.memory = spec.node_template.memory;
  shape.pods = spec.node_template.pods;
  for (int z = 0; z < spec.node_template.zones; ++z)
    shape.zones.push_back(fmt::format("zone-{}", static_cast<char>('a' + z)));
  for (const auto& [k, v] : spec.node_template.labels) shape.labels[k] = v;
  const auto* nodes = apiserver::FindResource("", "v1", "nodes");
  for (int i = 0; i < spec.nodes; ++i) {
    nlohmann::json node = daemon::ShapedNode(i, spec.nodes, shape, TimestampOf(now));
    auto created = store.Create(*nodes, "", std::move(node), false);
    if (!created.ok()) return created.error();
  }
  return {};
}

}  // namespace

std::string TimestampOf(TimePoint t) {
  return FormatTimestamp(
      std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count());
}

Result<std::unique_ptr<SimCluster>> SimCluster::Start(const ClusterSpec& spec,
                                                      const ClusterOptions& options,
                                                      simtime::SimulatedClock* clock) {
  std::unique_ptr<SimCluster> c(new SimCluster());
  c->clock_ = clock;
  c->log_ = options.log;
  c->data_dir_ = MakeTempDir();
  if (c->data_dir_.empty()) return Error{"cannot create a temporary directory"};
  // The server's timestamps and the watch events in transit follow the simulated clock.
  simtime::SimulatedClock::SetActive(clock);
  apiserver::SetServerClock(clock);
  apiserver::ServerOptions so;
  so.data_dir = c->data_dir_;
  so.port = 0;
  so.threads = 2;
  so.event_ttl = std::chrono::seconds(0);  // its sweep runs on the wall clock
  so.seed = options.seed;
  bool comparison_operators = false;  // TaintTolerationComparisonOperators
  {
    std::vector<std::string> warnings;
    auto gates = config::ParseFeatureGatesFlags(options.feature_gates, &warnings);
    if (!gates.ok()) return gates.error();
    so.workload_api = gates->Enabled(config::features::kGenericWorkload);
    comparison_operators = gates->Enabled(kTaintTolerationComparisonOperatorsGate);
    so.validation.toleration_comparison_operators = comparison_operators;
  }
  auto server = apiserver::Server::Start(so);
  if (!server.ok()) return server.error();
  c->server_ = std::move(server).value();
  if (auto r = CreateNodes(c->server_->store(), spec, clock->Now()); !r.ok()) return r.error();
  if (auto r = daemon::CreateDefaultStorageClass(c->server_->store()); !r.ok()) return r.error();
  const std::string kubeconfig = c->server_->kubeconfig_path();
  auto rest = NewRestClient(kubeconfig, "berth-scenario");
  if (!rest.ok()) return rest.error();
  c->rest_ = std::move(rest).value();
  c->watch_ = std::make_unique<ClusterWatch>(c->rest_.get(), clock, clock->Now());
  c->watch_->Start();

  auto controller_rest = NewRestClient(kubeconfig, "berth-controllers");
  if (!controller_rest.ok()) return controller_rest.error();
  controllers::ControllerManagerOptions co;
  co.workers = 1;  // one sync at a time per controller: its writes in one order
  co.clock = clock;
  co.log = options.log;
  co.taint_toleration_comparison_operators = comparison_operators;
  auto controllers = controllers::ControllerManager::Start(std::move(controller_rest).value(), co);
  if (!controllers.ok()) return controllers.error();
  c->controllers_ = std::move(controllers).value();

  auto kubelet_rest = NewRestClient(kubeconfig, "berth-kubelet");
  if (!kubelet_rest.ok()) return kubelet_rest.error();
  c->kubelet_rest_ = std::move(kubelet_rest).value();
  kubelet::SimulatedKubeletOptions ko;
  ko.run_thread = false;  // RunOnce from Settle
  ko.seed = options.seed;
  ko.batch_window = kKubeletBatchWindow;
  ko.log = options.log;
  c->kubelets_ =
      std::make_unique<kubelet::SimulatedKubelets>(c->kubelet_rest_.get(), clock, std::move(ko));
  if (auto r = c->kubelets_->Start(); !r.ok()) return r.error();
  if (auto r = c->StartScheduler(options); !r.ok()) return r.error();
  c->next_unschedulable_flush_ = clock->Now() + kUnschedulableFlush;
  if (auto r = c->WaitForSync(); !r.ok()) return r.error();
  return c;
}

VoidResult SimCluster::StartScheduler(const ClusterOptions& options) {
  std::vector<std::string> warnings;
  auto gates = config::ParseFeatureGatesFlags(options.feature_gates, &warnings);
  if (!gates.ok()) return gates.error();
  auto registry = pluginlib::BuildRegistry({}, {}, *gates);
  if (!registry.ok()) return registry.error();
  registry_ = std::move(registry).value();
  if (!options.config_file.empty()) {
    auto loaded = config::LoadConfigFile(options.config_file, registry_);
    if (!loaded.ok()) return loaded.error();
    config_ = std::move(loaded).value();
  } else {
    config_ = config::DefaultConfiguration(registry_);
  }
  auto rest = NewRestClient(server_->kubeconfig_path(), "berth-scheduler");
  if (!rest.ok()) return rest.error();
  client_ = std::make_unique<client::ApiClusterClient>(std::move(rest).value(), log_);
  if (!config_.profiles.empty()) client_->set_reporting_name(config_.profiles[0].scheduler_name);
  SchedulerOptions so;
  so.config = &config_;
  so.registry = &registry_;
  so.client = client_.get();
  so.clock = clock_;
  so.seed = options.seed;
  so.inline_binding = true;  // binding cycles on Settle's thread, in scheduling order
  so.record_details = false;
  so.nominate_before_binding = gates->Enabled("NominatedNodeNameForExpectation");
  so.opportunistic_batching = gates->Enabled(config::features::kOpportunisticBatching);
  so.pop_from_backoff_q = false;  // backoff ends when the clock says so (NextDue)
  auto sched = Scheduler::Create(so);
  if (!sched.ok()) return sched.error();
  scheduler_ = std::move(sched).value();
  scheduler_->SetObserver(this);
  client_->SetEventHandler(scheduler_.get());
  client_->Start();
  return {};
}

VoidResult SimCluster::WaitForSync() {
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!(watch_->HasSynced() && controllers_->Started() && kubelets_->HasSynced() &&
           client_->HasSynced())) {
    if (std::chrono::steady_clock::now() > give_up)
      return Error{"the cluster's components did not sync within 60s", ErrorCode::kUnavailable};
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  // An informer has synced once it listed; its watch is opened after. An object created before
  // the watch is registered reaches it later from the watch history, without having been
  // counted in transit, so the first step waits until the number of open watches holds still.
  size_t watches = server_->ActiveWatches();
  auto steady_since = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - steady_since < std::chrono::milliseconds(200)) {
    if (std::chrono::steady_clock::now() > give_up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (const size_t now = server_->ActiveWatches(); now != watches) {
      watches = now;
      steady_since = std::chrono::steady_clock::now();
    }
  }
  return Settle();
}

SimCluster::~SimCluster() { Stop(); }

void SimCluster::Stop() {
  if (stopped_) return;
  stopped_ = true;
  if (kubelets_) kubelets_->Stop();
  if (client_) client_->StopWatching();
  scheduler_.reset();
  if (client_) client_->Stop();
  if (controllers_) controllers_->Stop();
  if (watch_) watch_->Stop();
  if (server_) server_->Stop();
  apiserver::SetServerClock(nullptr);
  simtime::SimulatedClock::SetActive(nullptr);
  if (!data_dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(data_dir_, ignored);
  }
}

bool SimCluster::KubeletsDue() const {
  auto due = kubelets_->NextDue();
  return due && *due <= clock_->Now() + kKubeletBatchWindow;
}

VoidResult SimCluster::Settle() {
  auto last_activity = std::chrono::steady_clock::now();
  uint64_t last_epoch = clock_->epoch();
  for (;;) {
    const uint64_t before = clock_->epoch();
    bool worked = false;
    if (kubelets_->HasPendingEvents() || KubeletsDue()) {
      kubelets_->RunOnce();
      worked = true;
    }
    scheduler_->queue().FlushBackoffQCompleted();
    int scheduled = 0;
    while (scheduler_->ScheduleOne(false)) ++scheduled;
    if (scheduled > 0) {
      client_->FlushWrites();  // status patches and preemption victims, written
      worked = true;
    }
    if (worked) continue;
    const simtime::SimulatedClock::Probe probe = clock_->Poll();
    if (probe.quiescent && clock_->epoch() == before && !kubelets_->HasPendingEvents() &&
        !KubeletsDue() && scheduler_->pending_counts().active == 0) {
      return {};
    }
    const auto now = std::chrono::steady_clock::now();
    if (clock_->epoch() != last_epoch) {
      last_epoch = clock_->epoch();
      last_activity = now;
    } else if (probe.busy == "watch events in transit" && now - last_activity > kTransitLimit) {
      if (log_)
        log_(fmt::format("{} watch events counted in transit were lost", clock_->in_transit()));
      clock_->ResetTransit();
    } else if (now - last_activity > kStallLimit) {
      return Error{fmt::format("the cluster did not settle at {}: {}", TimestampOf(clock_->Now()),
                               probe.busy.empty() ? "work queued" : probe.busy),
                   ErrorCode::kUnavailable};
    }
    clock_->WaitForActivity(last_epoch, std::chrono::milliseconds(2));
  }
}

std::optional<TimePoint> SimCluster::NextDue() const {
  std::optional<TimePoint> next = clock_->Poll().next_due;
  auto earliest = [&](std::optional<TimePoint> t) {
    if (t && (!next || *t < *next)) next = t;
  };
  earliest(kubelets_->NextDue());
  earliest(scheduler_->queue().NextBackoffExpiry());
  if (scheduler_->pending_counts().unschedulable > 0) earliest(next_unschedulable_flush_);
  // Nothing is due before now + 1ms: a timer at or before now has just been handled.
  if (next && *next <= clock_->Now()) next = clock_->Now() + std::chrono::milliseconds(1);
  return next;
}

void SimCluster::AdvanceTo(TimePoint t) {
  clock_->AdvanceTo(t);
  scheduler_->queue().FlushBackoffQCompleted();
  while (next_unschedulable_flush_ <= clock_->Now()) {
    scheduler_->queue().FlushUnschedulableLeftover(kMaxInUnschedulable);
    next_unschedulable_flush_ += kUnschedulableFlush;
  }
}

void SimCluster::OnAttempt(const SchedulingAttempt& attempt) {
  if (!attempt.pod) return;
  for (const std::string& victim : attempt.victims) {
    watch_->RecordPreemption(victim, attempt.pod->Key());
  }
}

}  // namespace berth::scenario
