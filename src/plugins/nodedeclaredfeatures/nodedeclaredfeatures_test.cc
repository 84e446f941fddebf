#include "plugins/nodedeclaredfeatures/nodedeclaredfeatures.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/codec.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/testing/builders.h"
#include "berth/testing/fake_handle.h"

namespace berth {
namespace {

using Json = nlohmann::json;
using testing::MakeNodeInfo;

// Upstream's tests use mock features "FeatureA/B/C"; these are Berth's real ones.
constexpr const char* kRestartAll = "RestartAllContainersOnContainerExits";  // FeatureA
constexpr const char* kHostNetUserNs = "UserNamespacesHostNetworkSupport";   // FeatureB
constexpr const char* kCpuResize = "GuaranteedQoSPodCPUResize";              // FeatureC

std::unique_ptr<Plugin> NewPlugin() {
  testing::FakeHandle handle;
  auto plugin = NodeDeclaredFeaturesRegistration(config::FeatureGates()).factory(nullptr, handle);
  EXPECT_TRUE(plugin.ok());
  return std::move(plugin).value();
}

// A pod as the API gives it: `needs` picks the fields that need features.
std::shared_ptr<const Pod> PodNeeding(bool restart_all, bool host_net_user_ns,
                                      std::string uid = "123") {
  Json container = {{"name", "c"}, {"image", "busybox"}};
  if (restart_all) {
    container["restartPolicyRules"] = {{{"action", "RestartAllContainers"},
                                        {"exitCodes", {{"operator", "In"}, {"values", {42}}}}}};
  }
  Json spec = {{"containers", {container}}};
  if (host_net_user_ns) {
    spec["hostNetwork"] = true;
    spec["hostUsers"] = false;
  }
  Json doc = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "test-pod"}, {"namespace", "default"}, {"uid", uid}}},
              {"spec", spec}};
  auto pod = DecodePod(doc, "test");
  EXPECT_TRUE(pod.ok()) << (pod.ok() ? "" : pod.error().message);
  return std::make_shared<const Pod>(std::move(pod).value());
}

std::shared_ptr<const Node> NodeDeclaring(const std::vector<std::string>& features,
                                          bool declared = true) {
  Json doc = {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", "node-1"}}}};
  if (declared) doc["status"] = {{"declaredFeatures", features}};
  auto node = DecodeNode(doc, "test");
  EXPECT_TRUE(node.ok());
  return std::make_shared<const Node>(std::move(node).value());
}

struct Outcome {
  Status prefilter, filter;
};

Outcome PreFilterThenFilter(const std::shared_ptr<const Pod>& pod,
                            const std::shared_ptr<const Node>& node) {
  auto plugin = NewPlugin();
  auto* pre = dynamic_cast<PreFilterPlugin*>(plugin.get());
  auto* filter = dynamic_cast<FilterPlugin*>(plugin.get());
  EXPECT_NE(pre, nullptr);
  EXPECT_NE(filter, nullptr);
  PodInfoPtr info = PodInfo::Create(pod);
  CycleState state;
  PreFilterResult result;
  Outcome run{pre->PreFilter(state, *info, {}, &result), Status::Success()};
  if (run.prefilter.IsSuccess()) run.filter = filter->Filter(state, *info, MakeNodeInfo(node));
  return run;
}

// ---- upstream TestPreFilter

TEST(NodeDeclaredFeatures, PreFilterPodWithFeatureRequirements) {
  Outcome r = PreFilterThenFilter(PodNeeding(true, false), NodeDeclaring({kRestartAll}));
  EXPECT_TRUE(r.prefilter.IsSuccess()) << r.prefilter.Message();
  EXPECT_TRUE(r.filter.IsSuccess());
}

TEST(NodeDeclaredFeatures, PreFilterPodWithMultipleFeatureRequirements) {
  // Both are needed: a node with only one of them is rejected.
  Outcome r = PreFilterThenFilter(PodNeeding(true, true), NodeDeclaring({kRestartAll}));
  EXPECT_TRUE(r.prefilter.IsSuccess());
  EXPECT_EQ(r.filter.code(), Code::kUnschedulableAndUnresolvable);
  r = PreFilterThenFilter(PodNeeding(true, true), NodeDeclaring({kRestartAll, kHostNetUserNs}));
  EXPECT_TRUE(r.filter.IsSuccess());
}

TEST(NodeDeclaredFeatures, PreFilterPodWithNoRequirements) {
  Outcome r = PreFilterThenFilter(PodNeeding(false, false), NodeDeclaring({}, false));
  EXPECT_TRUE(r.prefilter.IsSkip());
  // Host networking alone, or a pod built without its document, needs nothing either.
  auto plain = testing::MakePod().Name("p").Obj();
  EXPECT_TRUE(PreFilterThenFilter(plain, NodeDeclaring({}, false)).prefilter.IsSkip());
}

// ---- upstream TestFilter

TEST(NodeDeclaredFeatures, FilterNodeMatchesRequirements) {
  Outcome r =
      PreFilterThenFilter(PodNeeding(true, false), NodeDeclaring({kRestartAll, kHostNetUserNs}));
  EXPECT_TRUE(r.filter.IsSuccess());
}

TEST(NodeDeclaredFeatures, FilterNodeDoesNotMatchRequirements) {
  Outcome r = PreFilterThenFilter(PodNeeding(true, false), NodeDeclaring({kHostNetUserNs}));
  EXPECT_EQ(r.filter.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(r.filter.Message(), "node(s) didn't match Pod's required features");
  EXPECT_EQ(r.filter.plugin(), "NodeDeclaredFeatures");
}

TEST(NodeDeclaredFeatures, FilterNodeWithMultipleFeaturesPodRequiresSubset) {
  Outcome r = PreFilterThenFilter(PodNeeding(true, true),
                                  NodeDeclaring({kCpuResize, kRestartAll, kHostNetUserNs}));
  EXPECT_TRUE(r.filter.IsSuccess());
}

TEST(NodeDeclaredFeatures, FilterNodeHasNoDeclaredFeatures) {
  Outcome r = PreFilterThenFilter(PodNeeding(true, false), NodeDeclaring({}, false));
  EXPECT_EQ(r.filter.code(), Code::kUnschedulableAndUnresolvable);
  // A node built without its document declares nothing.
  r = PreFilterThenFilter(PodNeeding(true, false), testing::MakeNode().Name("n").Obj());
  EXPECT_EQ(r.filter.code(), Code::kUnschedulableAndUnresolvable);
}

TEST(NodeDeclaredFeatures, FilterNodeWithSomeButNotAllRequiredFeatures) {
  Outcome r = PreFilterThenFilter(PodNeeding(true, true), NodeDeclaring({kHostNetUserNs}));
  EXPECT_EQ(r.filter.code(), Code::kUnschedulableAndUnresolvable);
}

TEST(NodeDeclaredFeatures, FilterErrorGettingPreFilterState) {
  auto plugin = NewPlugin();
  auto* filter = dynamic_cast<FilterPlugin*>(plugin.get());
  CycleState state;
  Status s = filter->Filter(state, *PodInfo::Create(PodNeeding(true, false)),
                            MakeNodeInfo(NodeDeclaring({kRestartAll})));
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_NE(s.Message().find("PreFilterNodeDeclaredFeatures"), std::string::npos);
}

// ---- upstream TestEnqueueExtensionsNodeUpdate / TestEnqueueExtensionsPodUpdate

const ClusterEventWithHint* Registered(const std::vector<ClusterEventWithHint>& events,
                                       EventResource resource) {
  for (const auto& e : events)
    if (e.event.resource == resource) return &e;
  return nullptr;
}

QueueingHint Hint(EventResource resource, const Pod& pod, const EventObject& old_object,
                  const EventObject& new_object) {
  auto plugin = NewPlugin();
  auto events = dynamic_cast<EnqueueExtensions*>(plugin.get())->EventsToRegister();
  const ClusterEventWithHint* e = Registered(events, resource);
  EXPECT_NE(e, nullptr);
  auto hint = e->hint(pod, old_object, new_object);
  EXPECT_TRUE(hint.ok());
  return *hint;
}

TEST(NodeDeclaredFeatures, EventsToRegister) {
  auto plugin = NewPlugin();
  auto events = dynamic_cast<EnqueueExtensions*>(plugin.get())->EventsToRegister();
  ASSERT_EQ(events.size(), 2u);
  const ClusterEventWithHint* node = Registered(events, EventResource::kNode);
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->event.actions, kAdd | kUpdateOther);
  ASSERT_NE(Registered(events, EventResource::kPod), nullptr);
}

TEST(NodeDeclaredFeatures, NodeAddWithFeature) {
  EXPECT_EQ(Hint(EventResource::kNode, *PodNeeding(true, false), {}, NodeDeclaring({kRestartAll})),
            QueueingHint::kQueue);
}

TEST(NodeDeclaredFeatures, NodeUpdateFeaturesAdded) {
  EXPECT_EQ(Hint(EventResource::kNode, *PodNeeding(true, false), NodeDeclaring({}, false),
                 NodeDeclaring({kRestartAll})),
            QueueingHint::kQueue);
}

TEST(NodeDeclaredFeatures, NodeUpdateFeaturesUnchanged) {
  EXPECT_EQ(Hint(EventResource::kNode, *PodNeeding(true, false), NodeDeclaring({kRestartAll}),
                 NodeDeclaring({kRestartAll})),
            QueueingHint::kQueueSkip);
}

TEST(NodeDeclaredFeatures, PodUpdateAddsRequirement) {
  auto target = PodNeeding(false, false);
  EXPECT_EQ(Hint(EventResource::kPod, *target, target, PodNeeding(true, false)),
            QueueingHint::kQueue);
}

TEST(NodeDeclaredFeatures, PodUpdateRemovesRequirement) {
  auto target = PodNeeding(true, false);
  EXPECT_EQ(Hint(EventResource::kPod, *target, target, PodNeeding(false, false)),
            QueueingHint::kQueue);
}

TEST(NodeDeclaredFeatures, PodUpdateWithNoChangeInRequirements) {
  auto target = PodNeeding(true, false);
  EXPECT_EQ(Hint(EventResource::kPod, *target, target, PodNeeding(true, false)),
            QueueingHint::kQueueSkip);
}

TEST(NodeDeclaredFeatures, UpdatedPodNotTheSameAsTargetPod) {
  auto target = PodNeeding(false, false, "123");
  EXPECT_EQ(Hint(EventResource::kPod, *target, PodNeeding(false, false, "456"),
                 PodNeeding(true, false, "456")),
            QueueingHint::kQueueSkip);
}

// ---- version bounds (upstream TestPreFilter's MaxVersion cases, with mock features)

using declared_features::Feature;

bool Always(const Pod&) { return true; }
bool Never(const Pod&) { return false; }
bool OnHostNetwork(const Pod& pod) { return pod.spec.host_network; }

std::unique_ptr<Plugin> NewPluginWith(std::span<const Feature> features, std::string_view version) {
  testing::FakeHandle handle;
  auto plugin = NodeDeclaredFeaturesRegistration(config::FeatureGates(), {features, version})
                    .factory(nullptr, handle);
  EXPECT_TRUE(plugin.ok()) << (plugin.ok() ? "" : plugin.error().message);
  return plugin.ok() ? std::move(plugin).value() : nullptr;
}

Outcome RunWith(Plugin& plugin, const std::shared_ptr<const Pod>& pod,
                const std::shared_ptr<const Node>& node) {
  PodInfoPtr info = PodInfo::Create(pod);
  CycleState state;
  PreFilterResult result;
  Outcome run{dynamic_cast<PreFilterPlugin&>(plugin).PreFilter(state, *info, {}, &result),
              Status::Success()};
  if (run.prefilter.IsSuccess())
    run.filter = dynamic_cast<FilterPlugin&>(plugin).Filter(state, *info, MakeNodeInfo(node));
  return run;
}

TEST(NodeDeclaredFeaturesBounds, FeatureNotRequiredWhenVersionIsPastMaxVersion) {
  const Feature features[] = {{"TestFeature1", "g", false, &Always, "1.33.0"},
                              {"TestFeature2", "g", false, &Never}};
  auto plugin = NewPluginWith(features, "1.34.0");
  ASSERT_NE(plugin, nullptr);
  Outcome r = RunWith(*plugin, PodNeeding(false, false), NodeDeclaring({}, false));
  EXPECT_TRUE(r.prefilter.IsSkip());
}

TEST(NodeDeclaredFeaturesBounds, PodWithMultipleRequirementsWithinMaxVersion) {
  const Feature features[] = {{"TestFeature1", "g", false, &Always, "1.38.0"},
                              {"TestFeature2", "g", false, &Always, "1.38.0"}};
  auto plugin = NewPluginWith(features, "1.35.0");
  ASSERT_NE(plugin, nullptr);
  Outcome r = RunWith(*plugin, PodNeeding(false, false), NodeDeclaring({"TestFeature1"}));
  EXPECT_TRUE(r.prefilter.IsSuccess());
  EXPECT_EQ(r.filter.code(), Code::kUnschedulableAndUnresolvable);
  r = RunWith(*plugin, PodNeeding(false, false), NodeDeclaring({"TestFeature1", "TestFeature2"}));
  EXPECT_TRUE(r.filter.IsSuccess());
}

TEST(NodeDeclaredFeaturesBounds, OnlyTheFeaturesWithinTheirBoundAreRequired) {
  // At the scheduler's version 1.37.0: a bound of 1.37.0 still holds, 1.36.0 is past.
  const Feature features[] = {{"Expired", "g", false, &Always, "1.36.0"},
                              {"LastRelease", "g", false, &Always, "1.37.0"}};
  auto plugin = NewPluginWith(features, "v1.37.0");
  ASSERT_NE(plugin, nullptr);
  Outcome r = RunWith(*plugin, PodNeeding(false, false), NodeDeclaring({"LastRelease"}));
  EXPECT_TRUE(r.prefilter.IsSuccess());
  EXPECT_TRUE(r.filter.IsSuccess());
  // A patch release after the bound is past it.
  plugin = NewPluginWith(features, "1.37.1");
  ASSERT_NE(plugin, nullptr);
  EXPECT_TRUE(RunWith(*plugin, PodNeeding(false, false), NodeDeclaring({})).prefilter.IsSkip());
}

TEST(NodeDeclaredFeaturesBounds, AnUnparsableSchedulerVersionFailsTheFactory) {
  testing::FakeHandle handle;
  auto plugin = NodeDeclaredFeaturesRegistration(config::FeatureGates(), {{}, "not-a-version"})
                    .factory(nullptr, handle);
  ASSERT_FALSE(plugin.ok());
  EXPECT_NE(plugin.error().message.find("failed to parse version"), std::string::npos);
}

TEST(NodeDeclaredFeaturesBounds, PodUpdateHintComparesOnlyFeaturesWithinTheirBound) {
  auto hint_for = [](std::span<const Feature> features) {
    auto plugin = NewPluginWith(features, "1.37.0");
    auto events = dynamic_cast<EnqueueExtensions*>(plugin.get())->EventsToRegister();
    const ClusterEventWithHint* e = Registered(events, EventResource::kPod);
    EXPECT_NE(e, nullptr);
    auto target = PodNeeding(false, false);
    auto updated = PodNeeding(false, true);  // hostNetwork now true
    auto hint = e->hint(*target, target, updated);
    EXPECT_TRUE(hint.ok());
    return *hint;
  };
  const Feature within[] = {{"OnHostNetwork", "g", false, &OnHostNetwork, "1.38.0"}};
  const Feature past[] = {{"OnHostNetwork", "g", false, &OnHostNetwork, "1.36.0"}};
  EXPECT_EQ(hint_for(within), QueueingHint::kQueue);
  EXPECT_EQ(hint_for(past), QueueingHint::kQueueSkip);
}

}  // namespace
}  // namespace berth
