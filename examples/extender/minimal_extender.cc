// A complete scheduler extender: only nodes labelled disktype=ssd pass the filter, and the
// prioritizer prefers nodes with more CPU. Configure it with nodeCacheCapable: false, so that
// the scheduler sends whole nodes. Usage: minimal_extender [PORT] (default 8888).
#include <berth/extender/server.h>

#include <algorithm>
#include <cstdlib>

namespace v1 = berth::extender::v1;

int main(int argc, char** argv) {
  berth::extender::ExtenderServer server;
  server.Filter("filter", [](const v1::ExtenderArgs& args) {
    v1::ExtenderFilterResult result;
    result.nodes.emplace();
    for (const v1::NodePtr& node : args.nodes.value_or(std::vector<v1::NodePtr>{})) {
      auto disk = node->metadata.labels.find("disktype");
      if (disk != node->metadata.labels.end() && disk->second == "ssd") {
        result.nodes->push_back(node);
      } else {
        result.failed_nodes[node->metadata.name] = "node(s) without an SSD";
      }
    }
    return result;
  });
  server.Prioritize("prioritize", [](const v1::ExtenderArgs& args) {
    v1::HostPriorityList scores;
    for (const v1::NodePtr& node : args.nodes.value_or(std::vector<v1::NodePtr>{})) {
      auto cpu = node->status.allocatable.find("cpu");
      int64_t cores = cpu == node->status.allocatable.end() ? 0 : cpu->second.MilliValue() / 1000;
      scores.push_back({node->metadata.name, std::min<int64_t>(cores, 10)});
    }
    return scores;
  });
  return server.ServeUntilSignal({.port = uint16_t(argc > 1 ? std::atoi(argv[1]) : 8888)});
}
