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

TEST(ExplainTest, AnUnknownPodIsNotFound) {
  std::vector<Object> objects{Object(MakePod().Name("web").Obj())};
  auto e = ExplainPod(objects, "default/nope");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, ErrorCode::kNotFound);  // the web view answers 404 on it
  EXPECT_EQ(e.error().message, "pod default/nope not found");
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

TEST(ExplainTest, FeasibleNodesShowEachPluginsScoreAndWeight) {
  std::vector<Object> objects{
      Object(MakeNode().Name("a").Capacity({{"cpu", "4"}, {"memory", "8Gi"}}).Obj()),
      Object(MakeNode().Name("b").Capacity({{"cpu", "8"}, {"memory", "8Gi"}}).Obj()),
      Object(MakePod().Name("web").Req({{"cpu", "1"}}).Obj())};
  auto e = ExplainPod(objects, "default/web");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->result, "Scheduled");
  const std::string text = ToText(*e);
  EXPECT_THAT(text, HasSubstr("TaintToleration=100x3"));
  EXPECT_THAT(text,
              ::testing::ContainsRegex("b +fits, score [0-9]+ \\(.*NodeResourcesFit=[0-9]+x1"));
  const auto json = ToJson(*e);
  EXPECT_EQ(json["scoreWeights"]["TaintToleration"], 3);
  EXPECT_EQ(json["nodes"]["b"]["scores"]["TaintToleration"], 300);
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

TEST(ExplainTest, ExtendedResourcesToFree) {
  // Both nodes have GPUs, all taken; "a" would need one freed, "b" two.
  std::vector<Object> objects{
      Object(MakeNode()
                 .Name("a")
                 .Capacity({{"cpu", "8"}, {"memory", "8Gi"}, {"example.com/gpu", "2"}})
                 .Obj()),
      Object(MakeNode()
                 .Name("b")
                 .Capacity({{"cpu", "8"}, {"memory", "8Gi"}, {"example.com/gpu", "2"}})
                 .Obj()),
      Object(MakePod().Name("train-a").Node("a").Req({{"example.com/gpu", "1"}}).Obj()),
      Object(MakePod().Name("train-b").Node("b").Req({{"example.com/gpu", "2"}}).Obj()),
      Object(MakePod().Name("web").Req({{"example.com/gpu", "2"}}).Obj())};
  auto e = ExplainPod(objects, "default/web");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->result, "Unschedulable");
  ASSERT_FALSE(e->suggestions.empty());
  EXPECT_EQ(e->suggestions[0].kind, "resources");
  EXPECT_EQ(e->suggestions[0].node, "a");
  EXPECT_THAT(e->suggestions[0].description, HasSubstr("free 1 example.com/gpu on node a"));
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
        Object(MakeNode().Name(name).Capacity({{"cpu", "2"}, {"memory", "8Gi"}}).Obj()));
    objects.push_back(
        Object(MakePod().Name("run-" + name).Node(name).Req({{"cpu", "1500m"}}).Obj()));
  }
  objects.push_back(Object(MakePod().Name("web").Req({{"cpu", "1"}}).Obj()));
  static const Registry registry = InTreeRegistry();
  static const auto config = config::DefaultConfiguration(registry);
  ExplainOptions options;
  options.max_candidates_per_kind = 3;
  options.max_suggestions = 100;
  auto e = Explain(config, registry, objects, "default/web", options);
  ASSERT_TRUE(e.ok());
  // Three checked, and being the same change on alike nodes, shown once.
  ASSERT_EQ(e->suggestions.size(), 1u);
  EXPECT_THAT(e->suggestions[0].description,
              HasSubstr("the same change on 2 other node(s) checked works too"));

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

// A pod whose required affinity wants a pod labelled app=cache in its `key` domain.
std::shared_ptr<const Pod> AffinityPod(const char* name, const char* key) {
  auto p = std::make_shared<Pod>(*MakePod().Name(name).Req({{"cpu", "1"}}).Obj());
  PodAffinityTerm term;
  term.topology_key = key;
  term.label_selector = LabelSelector{};
  term.label_selector->match_labels["app"] = "cache";
  p->spec.affinity = Affinity{};
  p->spec.affinity->pod_affinity = PodAffinity{};
  p->spec.affinity->pod_affinity->required.push_back(term);
  return p;
}

std::shared_ptr<const Node> ZoneNode(const char* name, const char* zone, const char* cpu) {
  auto b = MakeNode();
  b.Name(name).Label("kubernetes.io/hostname", name).Capacity({{"cpu", cpu}, {"memory", "8Gi"}});
  if (zone) b.Label("topology.kubernetes.io/zone", zone);
  return b.Obj();
}

const Suggestion* FindChange(const Explanation& e, const std::string& change) {
  for (const auto& s : e.suggestions)
    if (s.kind == "pod-affinity" && s.change == change) return &s;
  return nullptr;
}

// Whether `berth simulate` over the objects places the pod.
bool Places(const std::vector<Object>& objects, const std::string& pod) {
  static const Registry registry = InTreeRegistry();
  auto sim = sim::Simulate(config::DefaultConfiguration(registry), registry, objects, {});
  if (!sim.ok()) return false;
  for (const auto& r : sim->results)
    if (r.pod == pod) return r.result == "Scheduled";
  return false;
}

TEST(ExplainTest, PodAffinityWhoseMatchingPodsRunOnlyOnFullNodes) {
  // The only app=cache pod runs in zone-a, whose one node is full; zone-b has room but no
  // matching pod. Relabelling the pod already running in zone-b opens both zone-b nodes.
  std::vector<Object> objects{
      Object(ZoneNode("a", "zone-a", "1")),
      Object(ZoneNode("b1", "zone-b", "4")),
      Object(ZoneNode("b2", "zone-b", "4")),
      Object(MakePod().Name("cache").Node("a").Label("app", "cache").Req({{"cpu", "1"}}).Obj()),
      Object(MakePod().Name("other").Node("b1").Label("app", "other").Obj()),
      Object(AffinityPod("web", "topology.kubernetes.io/zone"))};
  ASSERT_FALSE(Places(objects, "default/web"));
  auto e = ExplainPod(objects, "default/web");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->result, "Unschedulable");
  ASSERT_FALSE(e->suggestions.empty());
  const Suggestion& first = e->suggestions.front();
  EXPECT_EQ(first.kind, "pod-affinity");
  EXPECT_EQ(first.change, "label-pod");
  EXPECT_EQ(first.running_pod, "default/other");
  EXPECT_EQ(first.domain, "topology.kubernetes.io/zone=zone-b");
  EXPECT_EQ(first.opens_nodes, 2);
  EXPECT_THAT(first.description, HasSubstr("kubectl label pod -n default other app=cache"));
  const auto json = ToJson(*e)["suggestions"][0];
  EXPECT_EQ(json["kind"], "pod-affinity");
  EXPECT_EQ(json["change"], "label-pod");
  EXPECT_EQ(json["runningPod"], "default/other");
  EXPECT_EQ(json["domain"], "topology.kubernetes.io/zone=zone-b");

  // Each change, applied, makes `berth simulate` place the pod.
  std::vector<Object> relabelled = objects;
  relabelled[4] = Object(MakePod().Name("other").Node("b1").Label("app", "cache").Obj());
  EXPECT_TRUE(Places(relabelled, "default/web"));

  const Suggestion* peer = FindChange(*e, "new-pod");
  ASSERT_NE(peer, nullptr);
  EXPECT_EQ(peer->opens_nodes, 2);
  EXPECT_THAT(peer->new_pod, HasSubstr("app: \"cache\""));
  EXPECT_THAT(peer->new_pod, HasSubstr("topology.kubernetes.io/zone: \"zone-b\""));
  std::vector<Object> peopled = objects;
  peopled.push_back(Object(MakePod().Name("peer").Node("b2").Label("app", "cache").Obj()));
  EXPECT_TRUE(Places(peopled, "default/web"));

  const Suggestion* join = FindChange(*e, "label-node");
  ASSERT_NE(join, nullptr);
  EXPECT_EQ(join->node, "b1");
  EXPECT_EQ(join->domain, "topology.kubernetes.io/zone=zone-a");
  EXPECT_THAT(join->description,
              HasSubstr("kubectl label node b1 topology.kubernetes.io/zone=zone-a --overwrite"));
  std::vector<Object> moved = objects;
  moved[1] = Object(ZoneNode("b1", "zone-a", "4"));
  EXPECT_TRUE(Places(moved, "default/web"));
}

TEST(ExplainTest, PodAffinityWithNoMatchingPodAnywhereLabelsThePodItself) {
  std::vector<Object> objects{Object(ZoneNode("n1", nullptr, "4")),
                              Object(ZoneNode("n2", nullptr, "4")),
                              Object(AffinityPod("web", "kubernetes.io/hostname"))};
  auto e = ExplainPod(objects, "default/web");
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->result, "Unschedulable");
  ASSERT_FALSE(e->suggestions.empty());
  const Suggestion& first = e->suggestions.front();
  EXPECT_EQ(first.change, "label-self");
  EXPECT_EQ(first.opens_nodes, 2);
  EXPECT_THAT(first.yaml, HasSubstr("labels:\n    app: \"cache\""));
  // The hostname label names a node: no node is asked to take another's.
  for (const auto& s : e->suggestions) EXPECT_NE(s.change, "label-node");

  auto labelled = std::make_shared<Pod>(*AffinityPod("web", "kubernetes.io/hostname"));
  labelled->metadata.labels["app"] = "cache";
  objects.back() = Object(std::shared_ptr<const Pod>(labelled));
  EXPECT_TRUE(Places(objects, "default/web"));
}

TEST(ExplainTest, RequiredNodeAffinityGetsTheLabelOfTheEasiestTerm) {
  auto pod = std::make_shared<Pod>(*MakePod().Name("web").Req({{"cpu", "1"}}).Obj());
  NodeSelector required;
  // Either disk In (ssd, nvme) and no "spot" label, or gen > 5, tier=gold and a rack: the
  // first needs two changes on "old", the second three.
  required.terms.push_back({{{"disk", "In", {"ssd", "nvme"}}, {"spot", "DoesNotExist", {}}}, {}});
  required.terms.push_back(
      {{{"gen", "Gt", {"5"}}, {"tier", "In", {"gold"}}, {"rack", "Exists", {}}}, {}});
  pod->spec.affinity = Affinity{};
  pod->spec.affinity->node_affinity = NodeAffinity{};
  pod->spec.affinity->node_affinity->required = required;
  std::vector<Object> objects{Object(MakeNode()
                                         .Name("old")
                                         .Label("disk", "hdd")
                                         .Label("spot", "true")
                                         .Label("gen", "3")
                                         .Capacity({{"cpu", "4"}, {"memory", "8Gi"}})
                                         .Obj()),
                              Object(std::shared_ptr<const Pod>(pod))};
  auto e = ExplainPod(objects, "default/web");
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_EQ(e->suggestions.size(), 1u);
  EXPECT_EQ(e->suggestions[0].kind, "label");
  EXPECT_THAT(e->suggestions[0].description,
              HasSubstr("kubectl label node old disk=ssd spot- --overwrite"));
  objects[0] = Object(MakeNode()
                          .Name("old")
                          .Label("disk", "ssd")
                          .Label("gen", "3")
                          .Capacity({{"cpu", "4"}, {"memory", "8Gi"}})
                          .Obj());
  EXPECT_TRUE(Places(objects, "default/web"));
}

}  // namespace
}  // namespace berth::explain
