// Demo nodes for `berth up --demo-nodes N`: ready nodes of a few shapes spread over three zones,
// as a kubelet would report them, so a fresh single-machine cluster has somewhere to schedule.
#pragma once

#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

namespace berth::daemon {

// The i-th (0-based) of `count` demo nodes as a core/v1 Node document. `now` is the RFC 3339
// time written into the node's conditions. Names are demo-node-001, demo-node-002, ...; zones
// rotate over zone-a, zone-b, zone-c; every fourth node is larger (16 CPU / 64Gi).
nlohmann::json DemoNode(int index, int count, const std::string& now);

// A shape for nodes of `berth up --demo-nodes` and `berth cluster`: empty fields keep the demo
// node's (the alternating sizes, three zones).
struct NodeShape {
  std::string name_prefix = "demo-node";
  std::string cpu, memory;  // capacity, also allocatable when given
  int pods = 110;
  std::vector<std::string> zones;             // rotated over the nodes
  std::map<std::string, std::string> labels;  // added to every node
  std::map<std::string, std::string> annotations;
};
nlohmann::json ShapedNode(int index, int count, const NodeShape& shape, const std::string& now);

}  // namespace berth::daemon
