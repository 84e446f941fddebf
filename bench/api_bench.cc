// berth_api_bench: throughput and latency of the embedded API server (not a test).
//
//   build/berth_api_bench [--pods N] [--clients C] [--watchers W]
//
// Starts the server of `berth up` in process (HTTPS, SQLite in a temporary directory), then:
// pod creations from C concurrent keep-alive clients while W watchers follow the pods, and the
// binding round trip (POST pods/x/binding) from one client. Prints one line per measure.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/server.h"
#include "net/http_client.h"

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

}  // namespace

int main(int argc, char** argv) {
  int pods = 20000, clients = 16, watchers = 10;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--pods") pods = std::atoi(argv[i + 1]);
    if (a == "--clients") clients = std::atoi(argv[i + 1]);
    if (a == "--watchers") watchers = std::atoi(argv[i + 1]);
  }
  auto dir = std::filesystem::temp_directory_path() / fmt::format("berth-api-bench-{}", getpid());
  std::filesystem::remove_all(dir);
  berth::apiserver::ServerOptions so;
  so.data_dir = dir.string();
  so.port = 0;
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
  fmt::print("creates: {} pods from {} clients in {:.2f}s = {:.0f} pods/s ({} failed)\n", pods,
             clients, secs, pods / secs, failed.load());
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
  const int binds = 2000;
  for (int i = 0; i < binds; ++i) {
    (void)http.Do("POST", "/api/v1/namespaces/default/pods",
                  PodBody(fmt::format("b-{}", i), "none"));
  }
  std::vector<double> lat;
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
  std::sort(lat.begin(), lat.end());
  fmt::print("binding round trip: p50 {:.2f} ms, p99 {:.2f} ms ({} binds)\n", lat[lat.size() / 2],
             lat[lat.size() * 99 / 100], binds);
  for (auto& h : handles) h.Cancel();
  for (auto& t : watch_threads) t.join();
  (*server)->Stop();
  std::filesystem::remove_all(dir);
  return failed ? 1 : 0;
}
