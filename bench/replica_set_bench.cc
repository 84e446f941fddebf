// berth_replica_set_bench: the cost of one ReplicaSet sync with nothing to create or delete
// (not a test).
//
//   build/berth_replica_set_bench [--pods N] [--min-ready S] [benchmark flags]
//
// Starts the API server of `berth up` in process (plain HTTP, SQLite in a temporary
// directory), creates one ReplicaSet of N replicas (default 100000) and its N pods, Running
// and Ready, then measures ReplicaSetController::Sync on it through the pod and ReplicaSet
// informers, as a worker of `berth up` runs it after each batch of pod events.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/server.h"
#include "berth/framework/clock.h"
#include "controllers/replica_set.h"

namespace {

using berth::controllers::Json;

int g_pods = 100000;
int g_min_ready = 0;

struct Fixture {
  std::filesystem::path dir;
  std::unique_ptr<berth::apiserver::Server> server;
  std::unique_ptr<berth::client::RestClient> rest;
  berth::FakeClock clock{berth::TimePoint(std::chrono::seconds(1'800'000'000))};
  std::unique_ptr<berth::controllers::SharedInformer> pods, sets;
  std::unique_ptr<berth::controllers::ReplicaSetController> controller;
};

Json SetDoc(int replicas) {
  Json set = Json::parse(R"({"apiVersion":"apps/v1","kind":"ReplicaSet",
    "metadata":{"name":"web","namespace":"default"},
    "spec":{"selector":{"matchLabels":{"app":"web","pod-template-hash":"5d4f8"}},
      "template":{"metadata":{"labels":{"app":"web","pod-template-hash":"5d4f8"}},
                  "spec":{"containers":[{"name":"c","image":"pause"}]}}}})");
  set["spec"]["replicas"] = replicas;
  set["spec"]["minReadySeconds"] = g_min_ready;
  return set;
}

// Pods as the simulated kubelets leave them: bound, Running, Ready.
std::string PodBody(int i, const Json& set) {
  Json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", fmt::format("web-{:06d}", i)},
        {"namespace", "default"},
        {"labels", set["spec"]["template"]["metadata"]["labels"]},
        {"ownerReferences",
         Json::array({berth::controllers::NewControllerRef("apps/v1", "ReplicaSet", set)})}}},
      {"spec",
       {{"nodeName", fmt::format("node-{:06d}", i)},
        {"containers", {{{"name", "c"}, {"image", "pause"}}}}}},
      {"status",
       {{"phase", "Running"},
        {"conditions",
         {{{"type", "PodScheduled"}, {"status", "True"}},
          {{"type", "Initialized"}, {"status", "True"}},
          {{"type", "ContainersReady"}, {"status", "True"}},
          {{"type", "Ready"},
           {"status", "True"},
           {"lastTransitionTime", "2027-01-01T00:00:00Z"}}}}}}};
  return pod.dump();
}

void Die(const std::string& message) {
  fmt::print(stderr, "berth_replica_set_bench: {}\n", message);
  std::exit(1);
}

void WaitUntil(const std::function<bool()>& done, const char* what) {
  for (int i = 0; i < 6000 && !done(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (!done()) Die(fmt::format("timed out waiting for {}", what));
}

Fixture* Setup() {
  auto* f = new Fixture;
  f->dir = std::filesystem::temp_directory_path() / fmt::format("berth-rs-bench-{}", ::getpid());
  std::filesystem::remove_all(f->dir);
  berth::apiserver::ServerOptions o;
  o.data_dir = f->dir.string();
  o.port = 0;
  o.plain_http = true;
  auto s = berth::apiserver::Server::Start(o);
  if (!s.ok()) Die(s.error().message);
  f->server = std::move(s).value();
  berth::net::HttpClientOptions ho;
  ho.server = f->server->url();
  ho.bearer_token = f->server->token();
  ho.timeout = std::chrono::seconds(30);
  auto http = berth::net::HttpClient::Create(ho);
  if (!http.ok()) Die(http.error().message);
  f->rest = std::make_unique<berth::client::RestClient>(std::move(http).value(),
                                                        berth::client::RestOptions{.qps = 0});
  auto created = f->rest->Post("/apis/apps/v1/namespaces/default/replicasets", SetDoc(g_pods));
  if (!created.ok()) Die(created.error().message);
  const auto started = std::chrono::steady_clock::now();
  for (int i = 0; i < g_pods; i += 1000) {
    std::vector<berth::client::RestClient::EncodedWrite> writes;
    for (int j = i; j < std::min(g_pods, i + 1000); ++j) {
      writes.push_back({"/api/v1/namespaces/default/pods", PodBody(j, *created)});
    }
    for (const auto& r : f->rest->SendEncodedPipelined("POST", writes)) {
      if (!r.ok()) Die(r.error().message);
    }
  }
  fmt::print(stderr, "created {} pods in {:.1f} s\n", g_pods,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  f->pods = std::make_unique<berth::controllers::SharedInformer>(f->rest.get(), "/api/v1/pods",
                                                                 "Pod", nullptr);
  f->sets = std::make_unique<berth::controllers::SharedInformer>(
      f->rest.get(), "/apis/apps/v1/replicasets", "ReplicaSet", nullptr);
  f->controller = std::make_unique<berth::controllers::ReplicaSetController>(
      berth::controllers::ReplicaSetKind::ReplicaSets(), f->rest.get(), f->pods.get(),
      f->sets.get(), berth::controllers::ControllerOptions{&f->clock, 1, nullptr});
  f->pods->Start();
  f->sets->Start();
  WaitUntil([&] { return f->pods->HasSynced() && f->sets->HasSynced(); }, "the informers");
  // The first sync writes the status; the measured ones find nothing to change.
  if (auto r = f->controller->Sync("default/web"); !r.ok()) Die(r.error().message);
  WaitUntil(
      [&] {
        auto set = f->sets->Get("default/web");
        return set && berth::controllers::IntAt(
                          berth::controllers::Member(berth::controllers::DocOf(*set), "status"),
                          "readyReplicas") == g_pods;
      },
      "the status");
  return f;
}

Fixture* g_fixture = nullptr;

void BM_SyncSteadyState(benchmark::State& state) {
  for (auto _ : state) {
    auto r = g_fixture->controller->Sync("default/web");
    if (!r.ok()) state.SkipWithError(r.error().message.c_str());
  }
  state.counters["pods"] = g_pods;
}
BENCHMARK(BM_SyncSteadyState)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--pods") == 0 && i + 1 < argc) {
      g_pods = std::stoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--min-ready") == 0 && i + 1 < argc) {
      g_min_ready = std::stoi(argv[++i]);
    } else {
      rest.push_back(argv[i]);
    }
  }
  int n = static_cast<int>(rest.size());
  benchmark::Initialize(&n, rest.data());
  g_fixture = Setup();
  benchmark::RunSpecifiedBenchmarks();
  g_fixture->pods->Stop();
  g_fixture->sets->Stop();
  g_fixture->controller.reset();
  g_fixture->server->Stop();
  std::filesystem::remove_all(g_fixture->dir);
  benchmark::Shutdown();
  return 0;
}
