#include "daemon/demo_nodes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "api/codec.h"

namespace berth::daemon {
namespace {

TEST(DemoNodesTest, DecodeAsReadyNodesWithZonesAndCapacity) {
  std::set<std::string> zones, names;
  for (int i = 0; i < 6; ++i) {
    auto doc = DemoNode(i, 6, "2026-01-01T00:00:00Z");
    auto node = DecodeNode(doc, "demo");
    ASSERT_TRUE(node.ok()) << node.error().message;
    names.insert(node->metadata.name);
    zones.insert(node->metadata.labels.at("topology.kubernetes.io/zone"));
    EXPECT_GT(node->status.allocatable.at("cpu").MilliValue(), 0);
    EXPECT_LE(node->status.allocatable.at("cpu").MilliValue(),
              node->status.capacity.at("cpu").MilliValue());
    EXPECT_EQ(doc["status"]["conditions"].back()["type"], "Ready");
    EXPECT_EQ(doc["status"]["conditions"].back()["status"], "True");
  }
  EXPECT_EQ(names.size(), 6u);
  EXPECT_EQ(zones, (std::set<std::string>{"zone-a", "zone-b", "zone-c"}));
  EXPECT_EQ(DemoNode(0, 6, "t")["metadata"]["name"], "demo-node-001");
  EXPECT_EQ(DemoNode(0, 5000, "t")["metadata"]["name"], "demo-node-0001");
}

TEST(DemoNodesTest, EveryFourthNodeIsLarger) {
  auto small = DecodeNode(DemoNode(0, 4, "t"), "demo");
  auto large = DecodeNode(DemoNode(3, 4, "t"), "demo");
  ASSERT_TRUE(small.ok() && large.ok());
  EXPECT_GT(large->status.allocatable.at("cpu").MilliValue(),
            small->status.allocatable.at("cpu").MilliValue());
}

TEST(DemoNodesTest, ShapedNodesTakeTheirNameCapacityZonesAndLabels) {
  NodeShape shape;
  shape.name_prefix = "sim";
  shape.cpu = "4";
  shape.memory = "16Gi";
  shape.pods = 50;
  shape.zones = {"east", "west"};
  shape.labels = {{"team", "blue"}};
  shape.annotations = {{"berth.dev/simulated-kubelet", "true"}};
  nlohmann::json node = ShapedNode(1, 3, shape, "t");
  EXPECT_EQ(node["metadata"]["name"], "sim-002");
  EXPECT_EQ(node["metadata"]["labels"]["kubernetes.io/hostname"], "sim-002");
  EXPECT_EQ(node["metadata"]["labels"]["topology.kubernetes.io/zone"], "west");
  EXPECT_EQ(node["metadata"]["labels"]["team"], "blue");
  EXPECT_EQ(node["metadata"]["annotations"]["berth.dev/simulated-kubelet"], "true");
  for (const char* field : {"capacity", "allocatable"}) {
    EXPECT_EQ(node["status"][field]["cpu"], "4") << field;
    EXPECT_EQ(node["status"][field]["memory"], "16Gi") << field;
    EXPECT_EQ(node["status"][field]["pods"], "50") << field;
  }
  // The default shape is the demo node.
  EXPECT_EQ(ShapedNode(3, 8, NodeShape{}, "t"), DemoNode(3, 8, "t"));
}

}  // namespace
}  // namespace berth::daemon
