// NodeResourcesFit under the PodLevelResources feature gate: with the gate off, a pod's
// spec.resources is ignored in Filter and in the queueing hint that reads the same requests.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/testing/fake_handle.h"
#include "config/feature_gates.h"
#include "plugins/noderesources/noderesources.h"
#include "testing/builders.h"

namespace berth {
namespace {

using testing::MakeNode;
using testing::MakeNodeInfo;
using testing::MakePod;

config::FeatureGates PodLevelResourcesOff() {
  config::FeatureGates gates;
  std::vector<std::string> warnings;
  // InPlacePodLevelResourcesVerticalScaling depends on the gate, so it goes off too.
  EXPECT_TRUE(
      gates.Set("PodLevelResources=false,InPlacePodLevelResourcesVerticalScaling=false", &warnings)
          .ok());
  return gates;
}

std::unique_ptr<Plugin> FitPlugin(const config::FeatureGates& gates, Handle& handle) {
  auto plugin = NodeResourcesFitRegistration(gates).factory(nullptr, handle);
  EXPECT_TRUE(plugin.ok());
  return std::move(plugin).value();
}

// A pod whose container asks 2m cpu and whose spec.resources asks 20m, on a 10m-cpu node.
Status FilterWithGates(const config::FeatureGates& gates) {
  testing::FakeHandle handle;
  std::unique_ptr<Plugin> plugin = FitPlugin(gates, handle);
  Pod pod = *MakePod().Name("p").Req({{"cpu", "2m"}}).Obj();
  pod.spec.resources.emplace().requests = testing::RL({{"cpu", "20m"}});
  PodInfoPtr info = PodInfo::Create(std::make_shared<const Pod>(std::move(pod)));
  CycleState state;
  PreFilterResult result;
  EXPECT_TRUE(dynamic_cast<PreFilterPlugin*>(plugin.get())
                  ->PreFilter(state, *info, {}, &result)
                  .IsSuccess());
  NodeInfo ni =
      MakeNodeInfo(MakeNode().Name("n").Capacity({{"cpu", "10m"}, {"pods", "32"}}).Obj(), {});
  return dynamic_cast<FilterPlugin*>(plugin.get())->Filter(state, *info, ni);
}

TEST(NodeResourcesFitFeatureGates, PodLevelResourcesOnCountsSpecResources) {
  Status got = FilterWithGates(config::FeatureGates());
  // More than the node's whole capacity: preempting would not help.
  EXPECT_EQ(got.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(got.reasons(), std::vector<std::string>{"Insufficient cpu"});
}

TEST(NodeResourcesFitFeatureGates, PodLevelResourcesOffIgnoresSpecResources) {
  EXPECT_TRUE(FilterWithGates(PodLevelResourcesOff()).IsSuccess());
}

// The node-added hint sees the requests Filter sees: a 4-cpu node cannot hold the pod-level
// 8 cpu (skip), but holds the container's 1 cpu once the gate is off (queue).
QueueingHint NodeAddHint(const config::FeatureGates& gates) {
  testing::FakeHandle handle;
  std::unique_ptr<Plugin> plugin = FitPlugin(gates, handle);
  Pod pod = *MakePod().Name("p").Req({{"cpu", "1"}}).Obj();
  pod.spec.resources.emplace().requests = testing::RL({{"cpu", "8"}});
  std::shared_ptr<const Node> node =
      MakeNode().Name("n").Capacity({{"cpu", "4"}, {"pods", "10"}}).Obj();
  for (const ClusterEventWithHint& e :
       dynamic_cast<EnqueueExtensions*>(plugin.get())->EventsToRegister()) {
    if (e.event.resource != EventResource::kNode || (e.event.actions & kAdd) == 0) continue;
    auto hint = e.hint(pod, EventObject{}, EventObject{node});
    EXPECT_TRUE(hint.ok());
    return *hint;
  }
  ADD_FAILURE() << "no node-add event registered";
  return QueueingHint::kQueue;
}

TEST(NodeResourcesFitFeatureGates, NodeAddHintFollowsPodLevelResources) {
  EXPECT_EQ(NodeAddHint(config::FeatureGates()), QueueingHint::kQueueSkip);
  EXPECT_EQ(NodeAddHint(PodLevelResourcesOff()), QueueingHint::kQueue);
}

}  // namespace
}  // namespace berth
