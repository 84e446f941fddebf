#include "plugins/nodeunschedulable/nodeunschedulable.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/framework/remedy.h"
#include "berth/testing/fake_handle.h"
#include "testing/builders.h"

namespace berth {
namespace {

TEST(NodeUnschedulable, Filter) {
  struct Case {
    std::string name;
    std::vector<Toleration> tolerations;
    bool unschedulable;
    bool fits;
  };
  std::vector<Case> cases = {
      {"Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
       {},
       true,
       false},
      {"Schedule pod to normal node", {}, false, true},
      {"Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
       {{"node.kubernetes.io/unschedulable", "", "", "NoSchedule"}},
       true,
       true},
      {"Exists toleration without key tolerates cordoned nodes",
       {{"", "Exists", "", ""}},
       true,
       true},
      {"Toleration for another effect does not help",
       {{"node.kubernetes.io/unschedulable", "Exists", "", "NoExecute"}},
       true,
       false},
  };
  testing::FakeHandle handle;
  auto plugin = NodeUnschedulableRegistration().factory(nullptr, handle);
  ASSERT_TRUE(plugin.ok());
  auto* filter = dynamic_cast<FilterPlugin*>(plugin->get());
  ASSERT_NE(filter, nullptr);
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto b = testing::MakePod().Name("p");
    for (const auto& t : tc.tolerations) b.Toleration(t);
    PodInfoPtr pod = b.Info();
    NodeInfo ni =
        testing::MakeNodeInfo(testing::MakeNode().Name("n").Unschedulable(tc.unschedulable).Obj());
    CycleState state;
    Status got = filter->Filter(state, *pod, ni);
    if (tc.fits) {
      EXPECT_TRUE(got.IsSuccess()) << got.Message();
    } else {
      EXPECT_EQ(got.code(), Code::kUnschedulableAndUnresolvable);
      EXPECT_EQ(got.reasons(), std::vector<std::string>{"node(s) were unschedulable"});
    }
  }
}

// FilterRemedySearch: each cordoned node uncordoned (which Filter then passes), all merged as
// one change; a node that is not cordoned gets nothing.
TEST(NodeUnschedulable, RemedyUncordonsTheNode) {
  testing::FakeHandle handle;
  auto plugin = NodeUnschedulableRegistration().factory(nullptr, handle);
  ASSERT_TRUE(plugin.ok());
  auto* remedies = dynamic_cast<const FilterRemedySearch*>(plugin->get());
  ASSERT_NE(remedies, nullptr);
  auto pod = testing::MakePod().Name("p").Obj();
  auto node = testing::MakeNode().Name("n").Unschedulable().Obj();
  auto open = testing::MakeNode().Name("o").Obj();
  const Status rejected = Status::Unresolvable("node(s) were unschedulable");
  const RejectedNode asked[] = {{node.get(), &rejected}, {open.get(), &rejected}};
  RemedyProposal p = remedies->ProposeRemedies(*pod, asked, 8);
  EXPECT_TRUE(p.notes.empty());
  ASSERT_EQ(p.remedies.size(), 1u);
  const ClusterRemedy& r = p.remedies[0];
  EXPECT_EQ(r.kind, "uncordon");
  EXPECT_EQ(r.description, "uncordon node n (kubectl uncordon n)");
  EXPECT_EQ(r.node, "n");
  EXPECT_EQ(r.merge_key, "uncordon");
  ASSERT_EQ(r.nodes.size(), 1u);
  EXPECT_FALSE(r.nodes[0]->spec.unschedulable);
  EXPECT_EQ(r.pod, nullptr);
  CycleState state;
  auto* filter = dynamic_cast<FilterPlugin*>(plugin->get());
  EXPECT_TRUE(
      filter->Filter(state, *PodInfo::Create(pod), testing::MakeNodeInfo(r.nodes[0])).IsSuccess());
}

// TaintTolerationComparisonOperators reaches the plugin (as upstream's feature flag): with the
// gate on, tolerations still match under its rules. The unschedulable taint has no value, so
// Lt and Gt, which compare values as integers, never tolerate it, gate on or off.
TEST(NodeUnschedulable, ComparisonOperatorsGate) {
  struct Case {
    std::string name;
    Toleration toleration;
    bool fits;
  };
  const std::string key = "node.kubernetes.io/unschedulable";
  const std::vector<Case> cases = {
      {"Gt toleration", {key, "Gt", "0", "NoSchedule", std::nullopt}, false},
      {"Lt toleration", {key, "Lt", "5", "NoSchedule", std::nullopt}, false},
      {"Exists toleration", {key, "Exists", "", "NoSchedule", std::nullopt}, true},
      {"Equal toleration with the empty value", {key, "Equal", "", "", std::nullopt}, true},
  };
  for (bool on : {false, true}) {
    config::FeatureGates gates;
    std::vector<std::string> warnings;
    ASSERT_TRUE(
        gates.Set(on ? "TaintTolerationComparisonOperators=true" : "AllAlpha=false", &warnings)
            .ok());
    testing::FakeHandle handle;
    auto plugin = NodeUnschedulableRegistration(gates).factory(nullptr, handle);
    ASSERT_TRUE(plugin.ok());
    auto* filter = dynamic_cast<FilterPlugin*>(plugin->get());
    ASSERT_NE(filter, nullptr);
    for (const Case& tc : cases) {
      SCOPED_TRACE(tc.name + (on ? ", gate on" : ", gate off"));
      PodInfoPtr pod = testing::MakePod().Name("p").Toleration(tc.toleration).Info();
      NodeInfo ni = testing::MakeNodeInfo(testing::MakeNode().Name("n").Unschedulable().Obj());
      CycleState state;
      EXPECT_EQ(filter->Filter(state, *pod, ni).IsSuccess(), tc.fits);
    }
  }
}

}  // namespace
}  // namespace berth
