#include "plugins/nodeports/nodeports.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/testing/fake_handle.h"
#include "testing/builders.h"

namespace berth {
namespace {

using testing::MakeNode;
using testing::MakeNodeInfo;
using testing::MakePod;
using testing::PodBuilder;

// (protocol, hostIP, port)
using Port = std::tuple<std::string, std::string, int32_t>;

PodBuilder WithPorts(PodBuilder b, const std::vector<Port>& ports) {
  for (const auto& [protocol, ip, port] : ports) b.HostPort(port, protocol, ip);
  return b;
}

std::unique_ptr<Plugin> NewPlugin() {
  testing::FakeHandle handle;
  auto plugin = NodePortsRegistration().factory(nullptr, handle);
  EXPECT_TRUE(plugin.ok());
  return std::move(plugin).value();
}

Status RunFilter(const PodBuilder& pod_builder,
                 const std::vector<std::shared_ptr<const Pod>>& on_node, bool* skipped = nullptr) {
  auto plugin = NewPlugin();
  auto* pre = dynamic_cast<PreFilterPlugin*>(plugin.get());
  auto* filter = dynamic_cast<FilterPlugin*>(plugin.get());
  EXPECT_NE(pre, nullptr);
  EXPECT_NE(filter, nullptr);
  PodInfoPtr pod = pod_builder.Info();
  CycleState state;
  PreFilterResult result;
  Status s = pre->PreFilter(state, *pod, {}, &result);
  if (skipped != nullptr) *skipped = s.IsSkip();
  if (s.IsSkip()) return Status::Success();
  EXPECT_TRUE(s.IsSuccess()) << s.Message();
  NodeInfo ni = MakeNodeInfo(MakeNode().Name("n").Obj(), on_node);
  return filter->Filter(state, *pod, ni);
}

TEST(NodePorts, UpstreamConflictMatrix) {
  struct Case {
    std::string name;
    std::vector<Port> wanted;
    std::vector<Port> used;
    bool fits;
  };
  std::vector<Case> cases = {
      {"other port", {{"UDP", "127.0.0.1", 8080}}, {{"UDP", "127.0.0.1", 9090}}, true},
      {"same udp port", {{"UDP", "127.0.0.1", 8080}}, {{"UDP", "127.0.0.1", 8080}}, false},
      {"same tcp port", {{"TCP", "127.0.0.1", 8080}}, {{"TCP", "127.0.0.1", 8080}}, false},
      {"different host ip", {{"TCP", "127.0.0.1", 8080}}, {{"TCP", "127.0.0.2", 8080}}, true},
      {"different protocol", {{"UDP", "127.0.0.1", 8080}}, {{"TCP", "127.0.0.1", 8080}}, true},
      {"second udp port conflict",
       {{"UDP", "127.0.0.1", 8000}, {"UDP", "127.0.0.1", 8080}},
       {{"UDP", "127.0.0.1", 8080}},
       false},
      {"first tcp port conflict",
       {{"TCP", "127.0.0.1", 8001}, {"UDP", "127.0.0.1", 8080}},
       {{"TCP", "127.0.0.1", 8001}, {"UDP", "127.0.0.1", 8081}},
       false},
      {"first tcp port conflict due to 0.0.0.0 hostIP",
       {{"TCP", "0.0.0.0", 8001}},
       {{"TCP", "127.0.0.1", 8001}},
       false},
      {"TCP hostPort conflict due to 0.0.0.0 hostIP",
       {{"TCP", "10.0.10.10", 8001}, {"TCP", "0.0.0.0", 8001}},
       {{"TCP", "127.0.0.1", 8001}},
       false},
      {"second tcp port conflict to 0.0.0.0 hostIP",
       {{"TCP", "127.0.0.1", 8001}},
       {{"TCP", "0.0.0.0", 8001}},
       false},
      {"second different protocol", {{"UDP", "127.0.0.1", 8001}}, {{"TCP", "0.0.0.0", 8001}}, true},
      {"UDP hostPort conflict due to 0.0.0.0 hostIP",
       {{"TCP", "0.0.0.0", 8001}, {"UDP", "0.0.0.0", 8001}},
       {{"TCP", "127.0.0.1", 8001}},
       false},
      {"empty hostIP means every address", {{"TCP", "", 8001}}, {{"TCP", "10.1.1.1", 8001}}, false},
      {"empty protocol means TCP", {{"", "10.1.1.1", 8001}}, {{"TCP", "10.1.1.1", 8001}}, false},
  };
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto existing = WithPorts(MakePod().Name("existing").Node("n"), tc.used).Obj();
    Status got = RunFilter(WithPorts(MakePod().Name("p"), tc.wanted), {existing});
    if (tc.fits) {
      EXPECT_TRUE(got.IsSuccess()) << got.Message();
    } else {
      EXPECT_EQ(got.code(), Code::kUnschedulable);
      EXPECT_EQ(got.reasons(), std::vector<std::string>{
                                   "node(s) didn't have free ports for the requested pod ports"});
    }
  }
}

TEST(NodePorts, PreFilterSkipsPodsWithoutHostPorts) {
  bool skipped = false;
  auto existing = WithPorts(MakePod().Name("existing").Node("n"), {{"TCP", "", 80}}).Obj();
  Status got = RunFilter(MakePod().Name("p").Req({}), {existing}, &skipped);
  EXPECT_TRUE(skipped);
  EXPECT_TRUE(got.IsSuccess());

  // A container port without hostPort does not occupy the node's port.
  Container c;
  c.name = "web";
  c.ports.push_back(ContainerPort{"http", 80, 0, "TCP", ""});
  RunFilter(MakePod().Name("p").Container(c), {existing}, &skipped);
  EXPECT_TRUE(skipped);
}

Container InitWithPort(int32_t port, bool sidecar) {
  Container c;
  c.name = sidecar ? "sidecar" : "init";
  c.ports.push_back(ContainerPort{"", port, port, "TCP", ""});
  if (sidecar) c.restart_policy = "Always";
  return c;
}

TEST(NodePorts, OnlySidecarInitContainersHoldPorts) {
  auto existing = WithPorts(MakePod().Name("existing").Node("n"), {{"TCP", "", 8080}}).Obj();

  PodBuilder with_sidecar = MakePod().Name("p").Req({});
  with_sidecar.mutable_pod().spec.init_containers.push_back(InitWithPort(8080, true));
  bool skipped = true;
  Status got = RunFilter(with_sidecar, {existing}, &skipped);
  EXPECT_FALSE(skipped);
  EXPECT_EQ(got.code(), Code::kUnschedulable);

  PodBuilder with_init = MakePod().Name("p").Req({});
  with_init.mutable_pod().spec.init_containers.push_back(InitWithPort(8080, false));
  got = RunFilter(with_init, {existing}, &skipped);
  EXPECT_TRUE(skipped);
  EXPECT_TRUE(got.IsSuccess());
}

TEST(NodePorts, PortsOfExistingPlainInitContainersAreFree) {
  // A finished init container does not keep its host port; only sidecars do.
  PodBuilder existing = MakePod().Name("existing").Node("n").Req({});
  existing.mutable_pod().spec.init_containers.push_back(InitWithPort(8080, false));
  Status got = RunFilter(WithPorts(MakePod().Name("p"), {{"TCP", "", 8080}}), {existing.Obj()});
  EXPECT_TRUE(got.IsSuccess()) << got.Message();

  PodBuilder existing_sidecar = MakePod().Name("existing").Node("n").Req({});
  existing_sidecar.mutable_pod().spec.init_containers.push_back(InitWithPort(8080, true));
  got = RunFilter(WithPorts(MakePod().Name("p"), {{"TCP", "", 8080}}), {existing_sidecar.Obj()});
  EXPECT_EQ(got.code(), Code::kUnschedulable);
}

TEST(NodePorts, FilterWithoutPreFilterIsAnError) {
  auto plugin = NewPlugin();
  auto* filter = dynamic_cast<FilterPlugin*>(plugin.get());
  CycleState state;
  PodInfoPtr pod = WithPorts(MakePod().Name("p"), {{"TCP", "", 80}}).Info();
  NodeInfo ni = MakeNodeInfo(MakeNode().Name("n").Obj());
  EXPECT_EQ(filter->Filter(state, *pod, ni).code(), Code::kError);
}

}  // namespace
}  // namespace berth
