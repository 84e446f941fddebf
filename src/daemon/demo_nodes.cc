#include "daemon/demo_nodes.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace berth::daemon {

nlohmann::json DemoNode(int index, int count, const std::string& now) {
  static constexpr const char* kZones[] = {"zone-a", "zone-b", "zone-c"};
  const int width = count >= 1000 ? 4 : 3;
  const std::string name = fmt::format("demo-node-{:0{}}", index + 1, width);
  const bool large = index % 4 == 3;
  const std::string cpu = large ? "16" : "8";
  const std::string memory = large ? "64Gi" : "32Gi";
  // Allocatable keeps back what a kubelet reserves for the system on such a node.
  const std::string alloc_cpu = large ? "15800m" : "7800m";
  const std::string alloc_memory = large ? "63Gi" : "31Gi";
  const char* zone = kZones[index % 3];
  nlohmann::json condition_base = {{"lastHeartbeatTime", now}, {"lastTransitionTime", now}};
  auto condition = [&](const char* type, const char* status, const char* reason,
                       const char* message) {
    nlohmann::json c = condition_base;
    c["type"] = type;
    c["status"] = status;
    c["reason"] = reason;
    c["message"] = message;
    return c;
  };
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"labels",
             {{"kubernetes.io/hostname", name},
              {"kubernetes.io/os", "linux"},
              {"kubernetes.io/arch", "amd64"},
              {"node.kubernetes.io/instance-type", large ? "demo.xlarge" : "demo.large"},
              {"topology.kubernetes.io/region", "demo"},
              {"topology.kubernetes.io/zone", zone},
              {"berth.dev/demo", "true"}}}}},
          {"spec", nlohmann::json::object()},
          {"status",
           {{"capacity",
             {{"cpu", cpu}, {"memory", memory}, {"pods", "110"}, {"ephemeral-storage", "100Gi"}}},
            {"allocatable",
             {{"cpu", alloc_cpu},
              {"memory", alloc_memory},
              {"pods", "110"},
              {"ephemeral-storage", "95Gi"}}},
            {"conditions",
             {condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                        "kubelet has sufficient memory available"),
              condition("DiskPressure", "False", "KubeletHasNoDiskPressure",
                        "kubelet has no disk pressure"),
              condition("PIDPressure", "False", "KubeletHasSufficientPID",
                        "kubelet has sufficient PID available"),
              condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")}},
            {"addresses",
             {{{"type", "InternalIP"},
               {"address",
                fmt::format("10.{}.{}.{}", 240 + index / 65536, (index / 256) % 256, index % 256)}},
              {{"type", "Hostname"}, {"address", name}}}},
            {"nodeInfo",
             {{"architecture", "amd64"},
              {"operatingSystem", "linux"},
              {"osImage", "Berth demo node"},
              {"kernelVersion", "6.1.0"},
              {"containerRuntimeVersion", "none://0"},
              {"kubeletVersion", "v1.32.0"},
              {"kubeProxyVersion", "v1.32.0"},
              {"machineID", ""},
              {"systemUUID", ""},
              {"bootID", ""}}}}}};
}

nlohmann::json ShapedNode(int index, int count, const NodeShape& shape, const std::string& now) {
  nlohmann::json node = DemoNode(index, count, now);
  const int width = count >= 1000 ? 4 : 3;
  const std::string name = fmt::format("{}-{:0{}}", shape.name_prefix, index + 1, width);
  auto& meta = node["metadata"];
  meta["name"] = name;
  meta["labels"]["kubernetes.io/hostname"] = name;
  node["status"]["addresses"][1]["address"] = name;
  if (!shape.zones.empty()) {
    meta["labels"]["topology.kubernetes.io/zone"] = shape.zones[index % shape.zones.size()];
  }
  for (const auto& [k, v] : shape.labels) meta["labels"][k] = v;
  for (const auto& [k, v] : shape.annotations) meta["annotations"][k] = v;
  auto& status = node["status"];
  for (const char* field : {"capacity", "allocatable"}) {
    if (!shape.cpu.empty()) status[field]["cpu"] = shape.cpu;
    if (!shape.memory.empty()) status[field]["memory"] = shape.memory;
    status[field]["pods"] = std::to_string(shape.pods);
  }
  return node;
}

}  // namespace berth::daemon
