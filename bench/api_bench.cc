// berth_api_bench: throughput and latency of the embedded API server (not a test).
//
//   build/berth_api_bench [--pods N] [--clients C] [--watchers W] [--binds B] [--events E]
//       [--server-threads T]
//
// Starts the server of `berth up` in process (HTTPS, SQLite in a temporary directory), then:
// pod creations from C concurrent keep-alive clients while W watchers follow the pods, the
// binding round trip (POST pods/x/binding) from one client, and E events.k8s.io/v1 Events
// (the scheduler's "Scheduled" event) from C clients. Prints one line per measure.
//
//   build/berth_api_bench --server URL --ca FILE --token-file FILE --kind pods|nodes
//       --count N [--clients C] [--prefix P] [--bound-nodes M] [--wait-bound]
//
// Load mode, against a running server (bench/e2e_scheduler_bench.py): creates N pods or nodes
// from C concurrent keep-alive HTTPS connections, so that the end-to-end benchmark measures
// the server and the scheduler rather than its load generator. Pods are named P0..P(N-1);
// with --bound-nodes they are created bound to node-00000..node-(M-1); with --wait-bound it
// watches them until every one is bound. Prints one JSON line with wall-clock times (Unix
// seconds): first_create, last_create and last_bound.
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "apiserver/server.h"
#include "net/http_client.h"
#include "runtime/allocator_settings.h"

namespace {

using Clock = std::chrono::steady_clock;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string PodBody(const std::string& name, const std::string& scheduler = "") {
  nlohmann::json pod = {{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata", {{"name", name}}},
                        {"spec",
                         {{"containers",
                           {{{"name", "c"},
                             {"image", "pause"},
                             {"resources", {{"requests", {{"cpu", "100m"}}}}}}}}}}};
  if (!scheduler.empty()) pod["spec"]["schedulerName"] = scheduler;
  return pod.dump();
}

// An events.k8s.io/v1 Event shaped as the scheduler's "Scheduled" event for pod `pod`.
std::string EventBody(const std::string& pod, int i) {
  nlohmann::json ev = {
      {"apiVersion", "events.k8s.io/v1"},
      {"kind", "Event"},
      {"metadata",
       {{"name", fmt::format("{}.{:x}", pod, 0x1000000 + i)}, {"namespace", "default"}}},
      {"action", "Binding"},
      {"eventTime", "2026-01-01T00:00:00.000000Z"},
      {"note", fmt::format("Successfully assigned default/{} to node-{:05d}", pod, i % 5000)},
      {"reason", "Scheduled"},
      {"regarding",
       {{"apiVersion", "v1"},
        {"kind", "Pod"},
        {"name", pod},
        {"namespace", "default"},
        {"resourceVersion", "12345"},
        {"uid", "0f3c2a4e-6a53-4d55-9c8e-0123456789ab"}}},
      {"reportingController", "default-scheduler"},
      {"reportingInstance", "default-scheduler-berth"},
      {"type", "Normal"}};
  return ev.dump();
}

// CPU time (user + system) of the whole process, in milliseconds.
double ProcessCpuMs() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(ru.ru_utime) + ms(ru.ru_stime);
}

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string NodeName(int i) { return fmt::format("node-{:05d}", i); }

std::string LoadPodBody(const std::string& name, const std::string& node) {
  nlohmann::json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}}},
      {"spec",
       {{"containers",
         {{{"name", "c"},
           {"image", "pause"},
           {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "500Mi"}}}}}}}}}}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod.dump();
}

std::string LoadNodeBody(int i) {
  const std::string name = NodeName(i);
  nlohmann::json resources = {{"cpu", "4"}, {"memory", "32Gi"}, {"pods", "110"}};
  nlohmann::json node = {{"apiVersion", "v1"},
                         {"kind", "Node"},
                         {"metadata",
                          {{"name", name},
                           {"labels",
                            {{"kubernetes.io/hostname", name},
                             {"topology.kubernetes.io/zone", fmt::format("zone-{}", i % 10)}}}}},
                         {"status",
                          {{"capacity", resources},
                           {"allocatable", resources},
                           {"conditions", {{{"type", "Ready"}, {"status", "True"}}}}}}};
  return node.dump();
}

// The pod name of a watch line that shows it bound (spec.nodeName set), or "". The watch
// selects bound pods, so a pod appears once, as ADDED when the binding makes it match. Stored
// objects are encoded with sorted keys, so metadata.name is the first "name" after "metadata".
std::string_view BoundPodName(std::string_view line) {
  if (line.find(R"("type":"DELETED")") != std::string_view::npos ||
      line.find(R"("nodeName":")") == std::string_view::npos) {
    return {};
  }
  size_t meta = line.find(R"("metadata":{)");
  if (meta == std::string_view::npos) return {};
  constexpr std::string_view kName = R"("name":")";
  size_t name = line.find(kName, meta);
  if (name == std::string_view::npos) return {};
  name += kName.size();
  size_t end = line.find('"', name);
  if (end == std::string_view::npos) return {};
  return line.substr(name, end - name);
}

int RunLoad(int argc, char** argv) {
  std::string server, ca_file, token_file, kind = "pods", prefix = "new-";
  int count = 0, clients = 16, bound_nodes = 0;
  bool wait_bound = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--wait-bound") {
      wait_bound = true;
      continue;
    }
    if (i + 1 >= argc) {
      fmt::print(stderr, "berth_api_bench: {} needs a value\n", a);
      return 2;
    }
    std::string v = argv[++i];
    if (a == "--server") {
      server = v;
    } else if (a == "--ca") {
      ca_file = v;
    } else if (a == "--token-file") {
      token_file = v;
    } else if (a == "--kind") {
      kind = v;
    } else if (a == "--count") {
      count = std::atoi(v.c_str());
    } else if (a == "--clients") {
      clients = std::max(1, std::atoi(v.c_str()));
    } else if (a == "--prefix") {
      prefix = v;
    } else if (a == "--bound-nodes") {
      bound_nodes = std::atoi(v.c_str());
    } else {
      fmt::print(stderr, "berth_api_bench: unknown flag {}\n", a);
      return 2;
    }
  }
  if (kind != "pods" && kind != "nodes") {
    fmt::print(stderr, "berth_api_bench: --kind must be pods or nodes, not {}\n", kind);
    return 2;
  }
  berth::net::HttpClientOptions co;
  co.server = server;
  co.ca_pem = ReadAll(ca_file);
  co.bearer_token = ReadAll(token_file);
  while (!co.bearer_token.empty() && std::isspace(co.bearer_token.back())) {
    co.bearer_token.pop_back();
  }
  auto client = berth::net::HttpClient::Create(co);
  if (!client.ok()) {
    fmt::print(stderr, "berth_api_bench: {}\n", client.error().message);
    return 1;
  }
  berth::net::HttpClient& http = **client;
  const std::string path = kind == "nodes" ? "/api/v1/nodes" : "/api/v1/namespaces/default/pods";

  // The watch starts at the current revision, before the first create.
  std::thread watcher;
  berth::net::StreamHandle handle;
  std::atomic<double> last_bound{0};
  std::atomic<bool> watch_failed{false};
  if (wait_bound) {
    auto list = http.Do("GET", "/api/v1/namespaces/default/pods?limit=1");
    if (!list.ok() || list->status != 200) {
      fmt::print(stderr, "berth_api_bench: cannot list pods\n");
      return 1;
    }
    std::string rv = nlohmann::json::parse(list->body)["metadata"].value("resourceVersion", "");
    watcher = std::thread([&, rv] {
      std::unordered_set<std::string> bound;
      auto status = http.Stream(
          // Only bound pods: the server sends each new pod once, not also when it is created.
          "/api/v1/namespaces/default/pods?watch=true&fieldSelector=spec.nodeName%21%3D"
          "&resourceVersion=" +
              rv,
          "application/json",
          [&](std::string_view line) {
            std::string_view name = BoundPodName(line);
            if (name.size() <= prefix.size() || name.substr(0, prefix.size()) != prefix) {
              return true;
            }
            bound.emplace(name);
            if (static_cast<int>(bound.size()) < count) return true;
            last_bound = UnixNow();
            return false;
          },
          &handle, std::chrono::seconds(120));
      if (last_bound == 0) {
        watch_failed = true;
        fmt::print(stderr, "berth_api_bench: the watch ended with {} of {} pods bound ({})\n",
                   bound.size(), count,
                   status.ok() ? fmt::format("status {}", *status) : status.error().message);
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }

  // Bodies are encoded before the clock starts: the load generator's own JSON is not measured.
  std::vector<std::string> bodies(count);
  for (int i = 0; i < count; ++i) {
    bodies[i] = kind == "nodes" ? LoadNodeBody(i)
                                : LoadPodBody(prefix + std::to_string(i),
                                              bound_nodes > 0 ? NodeName(i % bound_nodes) : "");
  }
  std::atomic<int> next{0}, failed{0};
  const double first_create = UnixNow();
  std::vector<std::thread> creators;
  for (int c = 0; c < clients; ++c) {
    creators.emplace_back([&] {
      for (int i; (i = next++) < count;) {
        auto r = http.Do("POST", path, bodies[i]);
        if (!r.ok() || r->status != 201) {
          if (failed++ == 0) {
            fmt::print(
                stderr, "berth_api_bench: create {}: {}\n", i,
                r.ok() ? fmt::format("status {}: {}", r->status, r->body) : r.error().message);
          }
        }
      }
    });
  }
  for (auto& t : creators) t.join();
  const double last_create = UnixNow();
  if (watcher.joinable()) {
    if (failed) handle.Cancel();
    watcher.join();
  }
  fmt::print(
      "{{\"created\":{},\"failed\":{},\"clients\":{},\"first_create\":{:.6f},"
      "\"last_create\":{:.6f},\"last_bound\":{:.6f}}}\n",
      count - failed.load(), failed.load(), clients, first_create, last_create, last_bound.load());
  return failed || watch_failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
#ifdef BERTH_WITH_MIMALLOC
  berth::ReturnFreedMemoryPromptly();  // the server's allocator, as in `berth up`
#endif
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--server") return RunLoad(argc, argv);
  }
  int pods = 20000, clients = 16, watchers = 10, binds = 2000, events = 20000, server_threads = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--pods") pods = std::atoi(argv[i + 1]);
    if (a == "--clients") clients = std::atoi(argv[i + 1]);
    if (a == "--watchers") watchers = std::atoi(argv[i + 1]);
    if (a == "--binds") binds = std::atoi(argv[i + 1]);
    if (a == "--events") events = std::atoi(argv[i + 1]);
    if (a == "--server-threads") server_threads = std::atoi(argv[i + 1]);
  }
  auto dir = std::filesystem::temp_directory_path() / fmt::format("berth-api-bench-{}", getpid());
  std::filesystem::remove_all(dir);
  berth::apiserver::ServerOptions so;
  so.data_dir = dir.string();
  so.port = 0;
  if (server_threads > 0) so.threads = server_threads;
  auto server = berth::apiserver::Server::Start(so);
  if (!server.ok()) {
    fmt::print(stderr, "{}\n", server.error().message);
    return 1;
  }
  berth::net::HttpClientOptions co;
  co.server = (*server)->url();
  co.ca_pem = ReadAll((dir / "ca.crt").string());
  co.bearer_token = (*server)->token();
  auto client = berth::net::HttpClient::Create(co);
  if (!client.ok()) return 1;
  berth::net::HttpClient& http = **client;

  // Watchers follow every pod event.
  std::vector<std::thread> watch_threads;
  std::vector<berth::net::StreamHandle> handles(watchers);
  std::atomic<int64_t> watched{0};
  for (int w = 0; w < watchers; ++w) {
    watch_threads.emplace_back([&, w] {
      (void)http.Stream(
          "/api/v1/namespaces/default/pods?watch=true&resourceVersion=0", "application/json",
          [&](std::string_view) {
            ++watched;
            return true;
          },
          &handles[w], std::chrono::seconds(120));
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));

  std::atomic<int> next{0}, failed{0};
  auto start = Clock::now();
  const double cpu_start = ProcessCpuMs();
  std::vector<std::thread> creators;
  for (int c = 0; c < clients; ++c) {
    creators.emplace_back([&] {
      for (int i; (i = next++) < pods;) {
        auto r =
            http.Do("POST", "/api/v1/namespaces/default/pods", PodBody(fmt::format("p-{}", i)));
        if (!r.ok() || r->status != 201) ++failed;
      }
    });
  }
  for (auto& t : creators) t.join();
  double secs = std::chrono::duration<double>(Clock::now() - start).count();
  const double cpu_creates = ProcessCpuMs() - cpu_start;
  fmt::print(
      "creates: {} pods from {} clients in {:.2f}s = {:.0f} pods/s ({} failed), {:.3f} ms CPU "
      "per create (client and server)\n",
      pods, clients, secs, pods / secs, failed.load(), cpu_creates / pods);
  auto deadline = Clock::now() + std::chrono::seconds(30);
  while (watched < int64_t{pods} * watchers && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  double caught = std::chrono::duration<double>(Clock::now() - start).count();
  fmt::print(
      "watchers: {} watchers received {} of {} events; last one {:.2f}s after the first "
      "create\n",
      watchers, watched.load(), int64_t{pods} * watchers, caught);

  // Binding round trip from one client, on pods no scheduler owns.
  for (int i = 0; i < binds; ++i) {
    (void)http.Do("POST", "/api/v1/namespaces/default/pods",
                  PodBody(fmt::format("b-{}", i), "none"));
  }
  std::vector<double> lat;
  const double cpu_binds_start = ProcessCpuMs();
  for (int i = 0; i < binds; ++i) {
    nlohmann::json b = {{"apiVersion", "v1"},
                        {"kind", "Binding"},
                        {"metadata", {{"name", fmt::format("b-{}", i)}}},
                        {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", "n1"}}}};
    auto t0 = Clock::now();
    auto r =
        http.Do("POST", fmt::format("/api/v1/namespaces/default/pods/b-{}/binding", i), b.dump());
    lat.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    if (!r.ok() || r->status != 201) ++failed;
  }
  const double cpu_binds = ProcessCpuMs() - cpu_binds_start;
  std::sort(lat.begin(), lat.end());
  if (!lat.empty()) {  // --binds 0 measures creates alone
    fmt::print(
        "binding round trip: p50 {:.2f} ms, p90 {:.2f} ms, p99 {:.2f} ms ({} binds), {:.3f} ms "
        "CPU per bind (client and server)\n",
        lat[lat.size() / 2], lat[lat.size() * 90 / 100], lat[lat.size() * 99 / 100], binds,
        cpu_binds / binds);
  }

  // Events, as a scheduler writes one per bound pod.
  if (events > 0) {
    std::vector<std::string> bodies(events);
    for (int i = 0; i < events; ++i) bodies[i] = EventBody(fmt::format("p-{}", i), i);
    std::atomic<int> next_event{0}, failed_events{0};
    const auto events_start = Clock::now();
    const double cpu_events_start = ProcessCpuMs();
    std::vector<std::thread> writers;
    for (int c = 0; c < clients; ++c) {
      writers.emplace_back([&] {
        for (int i; (i = next_event++) < events;) {
          auto r = http.Do("POST", "/apis/events.k8s.io/v1/namespaces/default/events", bodies[i]);
          if (!r.ok() || r->status != 201) ++failed_events;
        }
      });
    }
    for (auto& t : writers) t.join();
    const double events_secs = std::chrono::duration<double>(Clock::now() - events_start).count();
    fmt::print(
        "events: {} events.k8s.io Events from {} clients in {:.2f}s = {:.0f}/s ({} failed), "
        "{:.3f} ms CPU per event (client and server)\n",
        events, clients, events_secs, events / events_secs, failed_events.load(),
        (ProcessCpuMs() - cpu_events_start) / events);
    failed += failed_events.load();
  }
  for (auto& h : handles) h.Cancel();
  for (auto& t : watch_threads) t.join();
  (*server)->Stop();
  std::filesystem::remove_all(dir);
  return failed ? 1 : 0;
}
