// One round of the pod garbage collector (PodGcController::GcOnce) over the informers of a
// cluster of 100,000 pods on 1,000 nodes, served by the embedded API server: the list of both
// informers, the pass over every pod, and (by argument) the deletions it leads to.
//
//   berth_pod_gc_bench --benchmark_filter=Steady   # nothing to collect: the round every 20 s
//
// Setup (the pods written straight into the server's store, the informers' first list) takes
// some seconds and is not timed.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "api/codec.h"
#include "apiserver/resources.h"
#include "apiserver/server.h"
#include "apiserver/store.h"
#include "client/rest_client.h"
#include "controllers/pod_gc.h"

namespace berth::controllers {
namespace {

constexpr int kPods = 100'000;
constexpr int kNodes = 1'000;

struct Cluster {
  std::filesystem::path dir;
  std::unique_ptr<apiserver::Server> server;
  std::unique_ptr<client::RestClient> rest;
  std::unique_ptr<SharedInformer> pods, nodes;
  FakeClock clock{TimePoint(std::chrono::seconds(1'800'000'000))};

  // `terminated` of the pods Succeeded, the rest Running; every pod bound to a node that exists.
  explicit Cluster(int terminated) {
    dir =
        std::filesystem::temp_directory_path() / ("berth-podgc-bench-" + std::to_string(getpid()));
    std::filesystem::remove_all(dir);
    apiserver::ServerOptions o;
    o.data_dir = dir.string();
    o.port = 0;
    o.plain_http = true;
    server = std::move(apiserver::Server::Start(o)).value();
    net::HttpClientOptions ho;
    ho.server = server->url();
    ho.bearer_token = server->token();
    rest = std::make_unique<client::RestClient>(std::move(net::HttpClient::Create(ho)).value(),
                                                client::RestOptions{.qps = 0});
    auto& store = server->store();
    const auto* node_r = apiserver::FindResource("", "v1", "nodes");
    const auto* pod_r = apiserver::FindResource("", "v1", "pods");
    for (int i = 0; i < kNodes; ++i) {
      nlohmann::json node = {
          {"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", "node-" + std::to_string(i)}}},
          {"status", {{"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
      (void)store.Create(*node_r, "", std::move(node), false, apiserver::Durability::kLater);
    }
    for (int i = 0; i < kPods; ++i) {
      nlohmann::json pod = {
          {"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", "pod-" + std::to_string(i)},
            {"namespace", "default"},
            {"labels", {{"app", "web-" + std::to_string(i % 50)}}}}},
          {"spec",
           {{"nodeName", "node-" + std::to_string(i % kNodes)},
            {"containers",
             {{{"name", "c"},
               {"image", "nginx"},
               {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "128Mi"}}}}}}}}}},
          {"status", {{"phase", i < terminated ? "Succeeded" : "Running"}}}};
      (void)store.Create(*pod_r, "default", std::move(pod), false, apiserver::Durability::kLater);
    }
    pods = std::make_unique<SharedInformer>(rest.get(), "/api/v1/pods", "Pod", nullptr);
    nodes = std::make_unique<SharedInformer>(rest.get(), "/api/v1/nodes", "Node", nullptr);
    pods->Start();
    nodes->Start();
    while (!pods->HasSynced() || !nodes->HasSynced())
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ~Cluster() {
    pods->Stop();
    nodes->Stop();
    server->Stop();
    std::filesystem::remove_all(dir);
  }
};

// The steady state: 5,000 finished pods under the default threshold, every node present.
void BM_PodGcRoundSteady(benchmark::State& state) {
  Cluster cluster(5'000);
  ControllerOptions o{&cluster.clock, 1, nullptr};
  PodGcController gc(cluster.rest.get(), cluster.pods.get(), cluster.nodes.get(), o);
  for (auto _ : state) {
    PodGcRound round = gc.GcOnce();
    if (round.Deleted() != 0) state.SkipWithError("deleted pods in a steady cluster");
  }
  state.counters["pods"] = kPods;
}
// Fixed iterations: the setup runs once.
BENCHMARK(BM_PodGcRoundSteady)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(20);

// The pass alone (no request), over 20,000 finished pods: 7,500 over the default threshold
// to choose in collection order.
void BM_PodGcPlanOverThreshold(benchmark::State& state) {
  Cluster cluster(20'000);
  const std::vector<Object> pods = cluster.pods->List();
  const std::vector<Object> nodes = cluster.nodes->List();
  for (auto _ : state) {
    PodGcPlan plan = PlanPodGc(pods, nodes, kDefaultTerminatedPodGcThreshold);
    if (plan.terminated.size() != 7'500) state.SkipWithError("wrong number over the threshold");
    benchmark::DoNotOptimize(plan);
  }
}
BENCHMARK(BM_PodGcPlanOverThreshold)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(50);

}  // namespace
}  // namespace berth::controllers

BENCHMARK_MAIN();
