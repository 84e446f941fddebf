// The per-node decisions of the DaemonSet controller: tolerations, the node-name affinity,
// the target node of a pod and whether a node should run the pod.
#include "controllers/daemon_set_util.h"

#include <gtest/gtest.h>

#include "api/codec.h"

namespace berth::controllers {
namespace {

Json DaemonSet(const Json& pod_spec) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "DaemonSet"},
          {"metadata", {{"name", "agent"}, {"namespace", "default"}, {"uid", "u1"}}},
          {"spec",
           {{"selector", {{"matchLabels", {{"app", "agent"}}}}},
            {"template", {{"metadata", {{"labels", {{"app", "agent"}}}}}, {"spec", pod_spec}}}}}};
}

Node MakeNode(const std::string& name, Labels labels = {}, std::vector<Taint> taints = {}) {
  Node n;
  n.metadata.name = name;
  n.metadata.labels = std::move(labels);
  for (auto& t : taints) n.spec.taints.push_back(t);
  return n;
}

TEST(DaemonSetUtilTest, AddsDaemonTolerationsOnceAndNetworkOnlyForHostNetwork) {
  Json spec = {{"tolerations", Json::array({{{"key", "node.kubernetes.io/unschedulable"},
                                             {"operator", "Exists"},
                                             {"effect", "NoSchedule"}}})}};
  AddDaemonPodTolerations(spec);
  AddDaemonPodTolerations(spec);
  EXPECT_EQ(spec["tolerations"].size(), 6u);
  Json host = {{"hostNetwork", true}};
  AddDaemonPodTolerations(host);
  ASSERT_EQ(host["tolerations"].size(), 7u);
  EXPECT_EQ(host["tolerations"][6]["key"], "node.kubernetes.io/network-unavailable");
}

TEST(DaemonSetUtilTest, NodeNameAffinityReplacesRequiredTermsAndKeepsPreferred) {
  Json spec = Json::parse(R"({"affinity":{"nodeAffinity":{
      "requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[
        {"matchExpressions":[{"key":"a","operator":"Exists"}]}]},
      "preferredDuringSchedulingIgnoredDuringExecution":[{"weight":1,"preference":{}}]}}})");
  ReplaceNodeNameAffinity(spec, "n1");
  const Json& na = spec["affinity"]["nodeAffinity"];
  const Json& terms = na["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
  ASSERT_EQ(terms.size(), 1u);
  EXPECT_EQ(terms[0]["matchFields"][0]["values"][0], "n1");
  EXPECT_FALSE(terms[0].contains("matchExpressions"));
  EXPECT_EQ(na["preferredDuringSchedulingIgnoredDuringExecution"].size(), 1u);
  EXPECT_EQ(TargetNodeName(Json{{"spec", spec}}), "n1");
  EXPECT_EQ(TargetNodeName(Json{{"spec", {{"nodeName", "bound"}}}}), "bound");
  EXPECT_EQ(TargetNodeName(Json{{"spec", Json::object()}}), "");
}

TEST(DaemonSetUtilTest, NewDaemonPodIsPinnedLabelledAndOwned) {
  Json pod = NewDaemonPod(DaemonSet({{"containers", Json::array()}}), "n7", "abc");
  EXPECT_EQ(pod["metadata"]["generateName"], "agent-");
  EXPECT_EQ(pod["metadata"]["labels"]["controller-revision-hash"], "abc");
  EXPECT_EQ(pod["metadata"]["labels"]["app"], "agent");
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["uid"], "u1");
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["controller"], true);
  EXPECT_EQ(TargetNodeName(pod), "n7");
  EXPECT_FALSE(pod["spec"].contains("nodeName"));  // the scheduler binds it
  // The typed pod names the same node, and a bound one its nodeName.
  pod["metadata"]["name"] = "agent-x";
  auto typed = DecodePod(pod, "pod");
  ASSERT_TRUE(typed.ok()) << typed.error().message;
  EXPECT_EQ(TargetNodeName(*typed), "n7");
  typed->spec.node_name = "bound";
  EXPECT_EQ(TargetNodeName(*typed), "bound");
  EXPECT_EQ(TargetNodeName(Pod{}), "");
}

TEST(DaemonSetUtilTest, NodeSelectorDecidesFit) {
  auto pod = DaemonPodOf(DaemonSet({{"nodeSelector", {{"role", "edge"}}}}));
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  NodeFit on = NodeShouldRunDaemonPod(*pod, MakeNode("a", {{"role", "edge"}}), false);
  NodeFit off = NodeShouldRunDaemonPod(*pod, MakeNode("b"), false);
  EXPECT_TRUE(on.should_run && on.should_continue_running);
  EXPECT_FALSE(off.should_run || off.should_continue_running);
}

TEST(DaemonSetUtilTest, TaintsStopNewPodsAndNoExecuteEvicts) {
  auto pod = DaemonPodOf(DaemonSet(Json::object()));
  ASSERT_TRUE(pod.ok());
  NodeFit no_schedule =
      NodeShouldRunDaemonPod(*pod, MakeNode("a", {}, {{"k", "v", "NoSchedule"}}), false);
  EXPECT_FALSE(no_schedule.should_run);
  EXPECT_TRUE(no_schedule.should_continue_running);
  NodeFit no_execute =
      NodeShouldRunDaemonPod(*pod, MakeNode("a", {}, {{"k", "v", "NoExecute"}}), false);
  EXPECT_FALSE(no_execute.should_run || no_execute.should_continue_running);
  NodeFit prefer =
      NodeShouldRunDaemonPod(*pod, MakeNode("a", {}, {{"k", "v", "PreferNoSchedule"}}), false);
  EXPECT_TRUE(prefer.should_run);
  // The daemon tolerations cover a cordoned or not-ready node.
  NodeFit cordoned =
      NodeShouldRunDaemonPod(*pod,
                             MakeNode("a", {},
                                      {{"node.kubernetes.io/unschedulable", "", "NoSchedule"},
                                       {"node.kubernetes.io/not-ready", "", "NoExecute"}}),
                             false);
  EXPECT_TRUE(cordoned.should_run);
  auto tolerant = DaemonPodOf(
      DaemonSet({{"tolerations", Json::array({{{"key", "k"}, {"operator", "Exists"}}})}}));
  ASSERT_TRUE(tolerant.ok());
  EXPECT_TRUE(NodeShouldRunDaemonPod(*tolerant, MakeNode("a", {}, {{"k", "v", "NoExecute"}}), false)
                  .should_run);
}

TEST(DaemonSetUtilTest, TemplateNodeNameLimitsToThatNode) {
  auto pod = DaemonPodOf(DaemonSet({{"nodeName", "a"}}));
  ASSERT_TRUE(pod.ok());
  EXPECT_TRUE(NodeShouldRunDaemonPod(*pod, MakeNode("a"), false).should_run);
  EXPECT_FALSE(NodeShouldRunDaemonPod(*pod, MakeNode("b"), false).should_run);
}

// TaintTolerationComparisonOperators: with the gate on a Gt toleration of the template tolerates
// a taint whose value is above its own; with it off it tolerates nothing, so the NoSchedule taint
// keeps new pods off and the NoExecute one evicts.
TEST(DaemonSetUtilTest, ComparisonOperatorsFollowTheGate) {
  auto pod = DaemonPodOf(DaemonSet(
      {{"tolerations", Json::array({{{"key", "sla"}, {"operator", "Gt"}, {"value", "500"}}})}}));
  ASSERT_TRUE(pod.ok()) << pod.error().message;
  const Node no_schedule = MakeNode("a", {}, {{"sla", "800", "NoSchedule"}});
  const Node no_execute = MakeNode("a", {}, {{"sla", "800", "NoExecute"}});
  const Node below = MakeNode("a", {}, {{"sla", "300", "NoExecute"}});
  NodeFit on = NodeShouldRunDaemonPod(*pod, no_schedule, true);
  EXPECT_TRUE(on.should_run && on.should_continue_running);
  NodeFit off = NodeShouldRunDaemonPod(*pod, no_schedule, false);
  EXPECT_FALSE(off.should_run);
  EXPECT_TRUE(off.should_continue_running);
  EXPECT_TRUE(NodeShouldRunDaemonPod(*pod, no_execute, true).should_continue_running);
  EXPECT_FALSE(NodeShouldRunDaemonPod(*pod, no_execute, false).should_continue_running);
  // 300 is not above 500: not tolerated even with the gate.
  EXPECT_FALSE(NodeShouldRunDaemonPod(*pod, below, true).should_continue_running);
}

}  // namespace
}  // namespace berth::controllers
