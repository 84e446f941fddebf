// The --node-devices description: its shorthands, its errors, and the ResourceSlice made of it.
#include "kubelet/node_devices.h"

#include <gtest/gtest.h>

namespace berth::kubelet {
namespace {

using Json = nlohmann::json;

constexpr char kGpus[] = R"(
driver: gpu.example.com
nodeSelector:
  matchLabels: {gpu: "true"}
devices:
- name: gpu
  count: 2
  attributes:
    model: A100
    uuid: "gpu-{i}-uuid"
    mig: false
    driverVersion: {version: 1.2.3}
  capacity:
    memory: 80Gi
---
driver: nic.example.com
sharedCounters:
- name: nic-counters
  counters: {bandwidth: 100G}
devices:
- name: port-a
  consumesCounters:
  - counterSet: nic-counters
    counters: {bandwidth: {value: 40G}}
  taints: [{key: k, effect: NoSchedule}]
)";

TEST(NodeDevicesTest, CountStampsDevicesAndShorthandsExpand) {
  auto parsed = ParseNodeDevices(kGpus, "gpus.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  ASSERT_EQ(parsed->size(), 2u);
  const DriverDevices& gpus = (*parsed)[0];
  EXPECT_EQ(gpus.driver, "gpu.example.com");
  ASSERT_EQ(gpus.devices.size(), 2u);
  const Json& second = gpus.devices[1];
  EXPECT_EQ(second["name"], "gpu-1");
  EXPECT_EQ(second["attributes"]["index"], Json({{"int", 1}}));
  EXPECT_EQ(second["attributes"]["model"], Json({{"string", "A100"}}));
  EXPECT_EQ(second["attributes"]["uuid"], Json({{"string", "gpu-1-uuid"}}));
  EXPECT_EQ(second["attributes"]["mig"], Json({{"bool", false}}));
  EXPECT_EQ(second["attributes"]["driverVersion"], Json({{"version", "1.2.3"}}));
  EXPECT_EQ(second["capacity"]["memory"], Json({{"value", "80Gi"}}));
  EXPECT_FALSE(second.contains("count"));

  const DriverDevices& nics = (*parsed)[1];
  EXPECT_EQ(nics.shared_counters[0]["counters"]["bandwidth"], Json({{"value", "100G"}}));
  EXPECT_EQ(nics.devices[0]["consumesCounters"][0]["counters"]["bandwidth"],
            Json({{"value", "40G"}}));
  EXPECT_EQ(nics.devices[0]["taints"][0]["key"], "k");  // copied as given
  EXPECT_NE(gpus.digest, nics.digest);

  Node labelled, plain;
  labelled.metadata.labels["gpu"] = "true";
  EXPECT_TRUE(Offers(gpus, labelled));
  EXPECT_FALSE(Offers(gpus, plain));
  EXPECT_TRUE(Offers(nics, plain));  // no selector: every node
}

TEST(NodeDevicesTest, ErrorsNameTheFileAndField) {
  struct Case {
    const char* text;
    const char* expected;
  } cases[] = {
      {"devices: []", "gpus.yaml: driver: required"},
      {"driver: d\ndevices: [{name: a, capacity: {memory: lots}}]",
       "gpus.yaml: devices[0].capacity.memory: not a quantity: lots"},
      {"driver: d\ndevice: []", "gpus.yaml: device: unknown field"},
      {"driver: d\ndevices: [{count: 2, attributes: {x: [1]}}]",
       "gpus.yaml: devices[0].attributes.x:"},
      {"driver: d\ndevices: [{attributes: {}}]", "gpus.yaml: devices[0].name: required"},
      {"driver: d\n---\ndriver: d", "\"d\" is described twice"},
      {"driver: d\nnodeSelector: {matchExpressions: [{key: a, operator: Bad}]}",
       "gpus.yaml: nodeSelector:"},
      {"driver: d\ndevices: [{count: 100}, {name: \"x{i}\", count: 29}]",
       "129 devices, more than the 128 of one ResourceSlice"},
      {"driver: d\ndevices: [{count: 64}, {name: t, taints: [{key: k, effect: NoSchedule}]}]",
       "65 devices, more than the 64 of one ResourceSlice with taints or counters"},
  };
  for (const Case& c : cases) {
    auto parsed = ParseNodeDevices(c.text, "gpus.yaml");
    ASSERT_FALSE(parsed.ok()) << c.text;
    EXPECT_NE(parsed.error().message.find(c.expected), std::string::npos) << parsed.error().message;
  }
}

TEST(NodeDevicesTest, SliceIsTheNodesPoolOwnedByTheNode) {
  auto parsed = ParseNodeDevices(kGpus, "gpus.yaml");
  ASSERT_TRUE(parsed.ok());
  const std::string name = ResourceSliceName("node-1", "gpu.example.com");
  EXPECT_EQ(name.rfind("node-1-gpu-example-com-", 0), 0u) << name;
  EXPECT_EQ(name.size(), std::string("node-1-gpu-example-com-").size() + 5);
  EXPECT_EQ(name, ResourceSliceName("node-1", "gpu.example.com"));  // stable
  EXPECT_NE(name, ResourceSliceName("node-2", "gpu.example.com"));
  std::vector<Json> gpus = ResourceSlicesFor((*parsed)[0], "node-1", "uid-1", 3);
  ASSERT_EQ(gpus.size(), 1u);
  const Json& slice = gpus[0];
  EXPECT_EQ(slice["metadata"]["name"], name);
  EXPECT_EQ(slice["spec"]["nodeName"], "node-1");
  EXPECT_EQ(slice["spec"]["pool"],
            Json({{"name", "node-1"}, {"generation", 3}, {"resourceSliceCount", 1}}));
  EXPECT_EQ(slice["spec"]["devices"].size(), 2u);
  EXPECT_FALSE(slice["spec"].contains("sharedCounters"));
  const Json& owner = slice["metadata"]["ownerReferences"][0];
  EXPECT_EQ(owner["kind"], "Node");
  EXPECT_EQ(owner["uid"], "uid-1");
  // Counters go in a slice of their own (a slice has devices or counters): two in the pool.
  std::vector<Json> nics = ResourceSlicesFor((*parsed)[1], "node-1", "uid-1", 1);
  ASSERT_EQ(nics.size(), 2u);
  EXPECT_TRUE(nics[0]["spec"].contains("devices"));
  EXPECT_FALSE(nics[0]["spec"].contains("sharedCounters"));
  EXPECT_EQ(nics[1]["metadata"]["name"], ResourceSliceName("node-1", "nic.example.com", true));
  EXPECT_EQ(
      nics[1]["metadata"]["name"].get<std::string>().rfind("node-1-nic-example-com-counters-", 0),
      0u);
  EXPECT_FALSE(nics[1]["spec"].contains("devices"));
  EXPECT_EQ(nics[1]["spec"]["sharedCounters"][0]["name"], "nic-counters");
  for (const Json& s : nics) EXPECT_EQ(s["spec"]["pool"]["resourceSliceCount"], 2);
}

}  // namespace
}  // namespace berth::kubelet
