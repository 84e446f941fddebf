#include "daemon/cluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "api/codec.h"
#include "client/kubeconfig.h"
#include "daemon/default_storage_class.h"
#include "daemon/signals.h"
#include "daemon/up.h"
#include "kubelet/simulated_kubelets.h"

namespace berth::daemon {
namespace {

constexpr const char* kSimulatedAnnotation = "berth.dev/simulated-kubelet";

bool HasController(const controllers::ControllerManager& m, const std::string& name) {
  const auto& running = m.running();
  return std::find(running.begin(), running.end(), name) != running.end();
}

Result<std::unique_ptr<client::RestClient>> ClientFor(const std::string& kubeconfig) {
  auto conn = client::ResolveConnection({.explicit_path = kubeconfig});
  if (!conn.ok()) return conn.error();
  auto http = net::HttpClient::Create(*conn);
  if (!http.ok()) return http.error();
  return std::make_unique<client::RestClient>(std::move(http).value(),
                                              client::RestOptions{.qps = 0});
}

}  // namespace

VoidResult CreateClusterNodes(client::RestClient& rest, const ClusterOptions& options) {
  NodeShape shape = options.shape;
  shape.annotations[kSimulatedAnnotation] = "true";
  const std::string now = FormatTimestamp(std::chrono::duration_cast<std::chrono::seconds>(
                                              std::chrono::system_clock::now().time_since_epoch())
                                              .count());
  for (int i = 0; i < options.nodes; ++i) {
    nlohmann::json node = ShapedNode(i, options.nodes, shape, now);
    // Capacity and addresses as a kubelet registers them; the conditions are for its
    // simulated kubelet to post: the node is not Ready until one runs.
    node["status"].erase("conditions");
    auto created = rest.Post("/api/v1/nodes", node);
    if (!created.ok() && created.error().code != ErrorCode::kAlreadyExists) {
      return created.error();
    }
  }
  return {};
}

int RunCluster(const ClusterOptions& options) {
  BlockTerminationSignals();
  if (options.kubeconfig.empty()) {
    std::fprintf(stderr, "berth cluster: --kubeconfig is required\n");
    return 1;
  }
  if (!options.runtime.node_devices.empty()) {
    if (auto d = kubelet::LoadNodeDevices(options.runtime.node_devices); !d.ok()) {
      std::fprintf(stderr, "berth cluster: --node-devices: %s\n", d.error().message.c_str());
      return 1;
    }
  }
  auto rest = ClientFor(options.kubeconfig);
  if (!rest.ok()) {
    std::fprintf(stderr, "berth cluster: %s\n", rest.error().message.c_str());
    return 1;
  }
  if (auto r = CreateClusterNodes(**rest, options); !r.ok()) {
    std::fprintf(stderr, "berth cluster: creating nodes: %s\n", r.error().message.c_str());
    return 1;
  }
  auto controllers = StartControllers(options.runtime, options.kubeconfig);
  if (!controllers.ok()) {
    std::fprintf(stderr, "berth cluster: controllers: %s\n", controllers.error().message.c_str());
    return 1;
  }
  // Berth's provisioner makes the volumes of the default class: without it the class would
  // promise volumes nobody provisions (beside a real controller manager and provisioner).
  if (*controllers && HasController(**controllers, "volume-provisioner")) {
    auto created = EnsureDefaultStorageClass(**rest);
    if (!created.ok()) {
      std::fprintf(stderr, "berth cluster: default StorageClass: %s\n",
                   created.error().message.c_str());
    } else if (*created) {
      std::printf("berth cluster: created the default StorageClass standard (berth.dev/local)\n");
    }
  }
  std::unique_ptr<kubelet::SimulatedKubelets> kubelets;
  if (!options.no_kubelets) {
    auto started = StartKubelets(options.runtime, options.kubeconfig);
    if (!started.ok()) {
      std::fprintf(stderr, "berth cluster: kubelets: %s\n", started.error().message.c_str());
      return 1;
    }
    kubelets = std::move(started).value();
  }
  std::printf("berth cluster: %d nodes (%s-NNN), %s, %s\n", options.nodes,
              options.shape.name_prefix.c_str(),
              options.no_kubelets ? "no kubelets" : "simulated kubelets running",
              *controllers ? "controllers running" : "no controllers");
  std::fflush(stdout);
  WaitForTerminationSignal([] { return false; });
  if (kubelets) kubelets->Stop();
  if (*controllers) (*controllers)->Stop();
  std::printf("berth cluster: stopped\n");
  return 0;
}

VoidResult SetNodeStopped(client::RestClient& rest, const std::string& name, bool stopped) {
  nlohmann::json value = stopped ? nlohmann::json("true") : nlohmann::json();
  auto r = rest.Patch("/api/v1/nodes/" + name,
                      {{"metadata", {{"annotations", {{kubelet::kStoppedAnnotation, value}}}}}},
                      "application/merge-patch+json");
  if (!r.ok()) return r.error();
  return {};
}

int RunNodeCommand(const std::string& kubeconfig, const std::string& data_dir,
                   const std::vector<std::string>& names, bool stop) {
  const std::string path = !kubeconfig.empty()
                               ? kubeconfig
                               : (data_dir.empty() ? DefaultDataDir() : data_dir) + "/kubeconfig";
  auto rest = ClientFor(path);
  if (!rest.ok()) {
    std::fprintf(stderr, "berth node: %s\n", rest.error().message.c_str());
    return 1;
  }
  int rc = 0;
  for (const std::string& name : names) {
    if (auto r = SetNodeStopped(**rest, name, stop); !r.ok()) {
      std::fprintf(stderr, "berth node: %s: %s\n", name.c_str(), r.error().message.c_str());
      rc = 1;
      continue;
    }
    std::printf("node/%s %s\n", name.c_str(), stop ? "stopped" : "started");
  }
  return rc;
}

}  // namespace berth::daemon
