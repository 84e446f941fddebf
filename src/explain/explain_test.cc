// berth explain: suggestions are the smallest changes that place the pod, each verified.
#include "explain/explain.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/load.h"
#include "plugins/registry.h"
#include "sim/simulator.h"
#include "testing/builders.h"

namespace berth::explain {
namespace {

using ::testing::HasSubstr;
using testing::MakeNode;
using testing::MakePod;

Result<Explanation> ExplainPod(const std::vector<Object>& objects, const std::string& pod) {
  static const Registry registry = InTreeRegistry();
  static const auto config = config::DefaultConfiguration(registry);
  return Explain(config, registry, objects, pod, {});
}

std::shared_ptr<const Node> Tainted(const char* name, const char* cpu) {
  auto n = std::make_shared<Node>(
      *MakeNode().Name(name).Capacity({{"cpu", cpu}, {"memory", "8Gi"}}).Obj());
  n->spec.taints.push_back({"dedicated", "gpu", "NoSchedule"});
  return n;
}

TEST(ExplainTest, TolerationFirstAndApplyingItPlacesThePod) {
  std::vector<Object> objects{
      Object(Tainted("gpu-1", "8")), Object(Tainted("gpu-2", "8")),
      Object(MakeNode().Name("full").Capacity({{"cpu", "1"}, {"memory", "8Gi"}}).Obj()),
      Object(MakePod().Name("web").Req({{"cpu", "2"}}).Obj())};
  auto e = ExplainPod(objects, "default/web");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->result, "Unschedulable");
  ASSERT_FALSE(e->suggestions.empty());
  const Suggestion& first = e->suggestions.front();
  EXPECT_EQ(first.kind, "toleration");
  EXPECT_EQ(first.opens_nodes, 2);
  EXPECT_THAT(first.yaml, HasSubstr("key: dedicated"));
  EXPECT_THAT(first.yaml, HasSubstr("effect: NoSchedule"));

  // Applying the suggestion places the pod.
  auto tolerant = std::make_shared<Pod>(*MakePod().Name("web").Req({{"cpu", "2"}}).Obj());
  tolerant->spec.tolerations.push_back({"dedicated", "Equal", "gpu", "NoSchedule", {}});
  objects.back() = Object(std::shared_ptr<const Pod>(tolerant));
  static const Registry registry = InTreeRegistry();
  auto sim = sim::Simulate(config::DefaultConfiguration(registry), registry, objects, {});
  ASSERT_TRUE(sim.ok());
  EXPECT_EQ(sim->results[0].result, "Scheduled");
}

TEST(ExplainTest, ShortOfCpuEverywhereNamesTheCheapestNode) {
  std::vector<Object> objects;
  for (auto [name, cpu] : {std::pair<const char*, const char*>{"a", "2"},
                           std::pair<const char*, const char*>{"b", "3"},
                           std::pair<const char*, const char*>{"c", "2"}}) {
    objects.push_back(
        Object(MakeNode().Name(name).Capacity({{"cpu", cpu}, {"memory", "8Gi"}}).Obj()));
    objects.push_back(
        Object(MakePod().Name(std::string("run-") + name).Node(name).Req({{"cpu", "2"}}).Obj()));
  }
  objects.push_back(Object(MakePod().Name("web").Req({{"cpu", "1500m"}}).Obj()));
  auto e = ExplainPod(objects, "default/web");
  ASSERT_TRUE(e.ok());
  ASSERT_FALSE(e->suggestions.empty());
  EXPECT_EQ(e->suggestions.front().kind, "resources");
  EXPECT_EQ(e->suggestions.front().node, "b");  // 500m to free there, 1500m elsewhere
  EXPECT_THAT(e->suggestions.front().description, HasSubstr("500m cpu"));
}

TEST(ExplainTest, MissingLabelAndNothingUnverified) {
  auto pod = std::make_shared<Pod>(*MakePod().Name("web").Req({{"cpu", "1"}}).Obj());
  pod->spec.node_selector["disk"] = "ssd";
  // "hdd" lacks the label; "tiny" lacks the label and the room: labelling it would not help.
  std::vector<Object> objects{
      Object(MakeNode()
                 .Name("hdd")
                 .Label("disk", "hdd")
                 .Capacity({{"cpu", "4"}, {"memory", "8Gi"}})
                 .Obj()),
      Object(MakeNode().Name("tiny").Capacity({{"cpu", "100m"}, {"memory", "8Gi"}}).Obj()),
      Object(std::shared_ptr<const Pod>(pod))};
  auto e = ExplainPod(objects, "default/web");
  ASSERT_TRUE(e.ok());
  ASSERT_EQ(e->suggestions.size(), 1u);
  EXPECT_EQ(e->suggestions[0].kind, "label");
  EXPECT_EQ(e->suggestions[0].node, "hdd");
  EXPECT_THAT(e->suggestions[0].description, HasSubstr("disk=ssd"));

  auto scheduled =
      ExplainPod({Object(MakeNode().Name("n").Capacity({{"cpu", "4"}, {"memory", "8Gi"}}).Obj()),
                  Object(MakePod().Name("ok").Obj())},
                 "default/ok");
  ASSERT_TRUE(scheduled.ok());
  EXPECT_EQ(scheduled->result, "Scheduled");
  EXPECT_TRUE(scheduled->suggestions.empty());
  EXPECT_FALSE(ExplainPod({}, "default/missing").ok());
}

TEST(ExplainTest, ResourcesNameTheLowerPriorityPodsPreemptionWouldEvict) {
  std::vector<Object> objects{
      Object(MakeNode().Name("a").Capacity({{"cpu", "2"}, {"memory", "8Gi"}}).Obj()),
      Object(MakeNode().Name("b").Capacity({{"cpu", "2"}, {"memory", "8Gi"}}).Obj()),
      Object(MakePod().Name("low").Node("a").Priority(0).Req({{"cpu", "1500m"}}).Obj()),
      Object(MakePod().Name("high").Node("b").Priority(100).Req({{"cpu", "1500m"}}).Obj()),
      Object(MakePod().Name("web").Priority(50).Req({{"cpu", "1"}}).Obj())};
  auto e = ExplainPod(objects, "default/web");
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_NE(e->result, "Scheduled");
  std::map<std::string, const Suggestion*> by_node;
  for (const auto& s : e->suggestions)
    if (s.kind == "resources") by_node[s.node] = &s;
  ASSERT_TRUE(by_node.count("a") && by_node.count("b"));
  EXPECT_THAT(by_node["a"]->victims, ::testing::ElementsAre("default/low"));
  EXPECT_THAT(by_node["a"]->description, HasSubstr("preemption would evict: default/low"));
  EXPECT_TRUE(by_node["b"]->victims.empty());  // "high" outranks the pod
  EXPECT_EQ(ToJson(*e)["suggestions"][0]["kind"], "resources");
}

TEST(ExplainTest, SpreadSkewNamesTheDomainsAndTheMaxSkewThatFits) {
  TopologySpreadConstraint tsc;
  tsc.max_skew = 1;
  tsc.topology_key = "topology.kubernetes.io/zone";
  tsc.when_unsatisfiable = "DoNotSchedule";
  tsc.label_selector = LabelSelector{};
  tsc.label_selector->match_labels["app"] = "web";
  std::vector<Object> objects{Object(MakeNode()
                                         .Name("a")
                                         .Label("topology.kubernetes.io/zone", "zone-a")
                                         .Capacity({{"cpu", "8"}, {"memory", "8Gi"}})
                                         .Obj()),
                              Object(MakeNode()
                                         .Name("b")
                                         .Label("topology.kubernetes.io/zone", "zone-b")
                                         .Taint("maintenance", "", "NoSchedule")
                                         .Capacity({{"cpu", "8"}, {"memory", "8Gi"}})
                                         .Obj()),
                              Object(MakePod().Name("w1").Node("a").Label("app", "web").Obj()),
                              Object(MakePod().Name("w2").Node("a").Label("app", "web").Obj()),
                              Object(MakePod().Name("web").Label("app", "web").Spread(tsc).Obj())};
  auto e = ExplainPod(objects, "default/web");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->result, "Unschedulable");
  const Suggestion* spread = nullptr;
  for (const auto& s : e->suggestions)
    if (s.kind == "spread-skew") spread = &s;
  ASSERT_NE(spread, nullptr);
  EXPECT_THAT(spread->description, HasSubstr("zone-a=2, zone-b=0 (maxSkew 1)"));
  EXPECT_THAT(spread->yaml, HasSubstr("maxSkew: 3"));
  EXPECT_EQ(spread->opens_nodes, 1);
}

TEST(ExplainTest, CandidatesPerKindAreCapped) {
  // 40 identical nodes short of CPU: only the configured number of candidates is tried.
  std::vector<Object> objects;
  for (int i = 0; i < 40; ++i) {
    std::string name = "n" + std::to_string(i);
    objects.push_back(
        Object(MakeNode().Name(name).Capacity({{"cpu", "1"}, {"memory", "8Gi"}}).Obj()));
  }
  objects.push_back(Object(MakePod().Name("web").Req({{"cpu", "2"}}).Obj()));
  static const Registry registry = InTreeRegistry();
  static const auto config = config::DefaultConfiguration(registry);
  ExplainOptions options;
  options.max_candidates_per_kind = 3;
  options.max_suggestions = 100;
  auto e = Explain(config, registry, objects, "default/web", options);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->suggestions.size(), 3u);

  // 40 nodes do not fit on a screen one per line: the rejections are grouped.
  const std::string text = ToText(*e);
  EXPECT_THAT(text, HasSubstr("40 node(s) rejected:"));
  EXPECT_THAT(text, HasSubstr("40 by NodeResourcesFit: Insufficient cpu (e.g. "));
  EXPECT_LT(std::count(text.begin(), text.end(), '\n'), 25);
}

TEST(ExplainTest, AntiAffinityNamesThePodsToMove) {
  // Both nodes run a "db" pod; the new db pod's anti-affinity keeps it off both.
  auto anti = [](const char* name, const char* node) {
    auto p = std::make_shared<Pod>(*MakePod().Name(name).Label("app", "db").Obj());
    if (node) p->spec.node_name = node;
    PodAffinityTerm term;
    term.topology_key = "kubernetes.io/hostname";
    term.label_selector = LabelSelector{};
    term.label_selector->match_labels["app"] = "db";
    p->spec.affinity = Affinity{};
    p->spec.affinity->pod_anti_affinity = PodAffinity{};
    p->spec.affinity->pod_anti_affinity->required.push_back(term);
    return std::shared_ptr<const Pod>(p);
  };
  std::vector<Object> objects{Object(MakeNode()
                                         .Name("a")
                                         .Label("kubernetes.io/hostname", "a")
                                         .Capacity({{"cpu", "4"}, {"memory", "8Gi"}})
                                         .Obj()),
                              Object(MakeNode()
                                         .Name("b")
                                         .Label("kubernetes.io/hostname", "b")
                                         .Capacity({{"cpu", "4"}, {"memory", "8Gi"}})
                                         .Obj()),
                              Object(anti("db-1", "a")), Object(anti("db-2", "b")),
                              Object(anti("db-3", nullptr))};
  auto e = ExplainPod(objects, "default/db-3");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->result, "Unschedulable");
  const Suggestion* move = nullptr;
  for (const auto& s : e->suggestions)
    if (s.kind == "anti-affinity" && s.node == "a") move = &s;
  ASSERT_NE(move, nullptr);
  EXPECT_THAT(move->victims, ::testing::ElementsAre("default/db-1"));
  EXPECT_EQ(move->opens_nodes, 1);
}

}  // namespace
}  // namespace berth::explain
