#include "scheduler/equivalence.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "config/load.h"
#include "framework/in_memory_cluster.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "testing/builders.h"
#include "testing/fake_extender.h"

namespace berth {
namespace {

using testing::MakeNode;
using testing::MakePod;

TEST(EquivalenceTest, NamesAndStatusDoNotMatterTheSpecDoes) {
  auto base = [] {
    return MakePod().Label("app", "a").Req({{"cpu", "100m"}}).Image("nginx").NodeSelector("d", "x");
  };
  const auto a = base().Name("a").UID("1").Obj();
  const auto b = base().Name("b").UID("2").NominatedNodeName("n1").Obj();
  EXPECT_TRUE(SameSchedulingInputs(*a, *b));
  // Quantities compare by value, not by spelling.
  EXPECT_TRUE(SameSchedulingInputs(*a, *MakePod()
                                            .Name("c")
                                            .Label("app", "a")
                                            .Req({{"cpu", "0.1"}})
                                            .Image("nginx")
                                            .NodeSelector("d", "x")
                                            .Obj()));

  EXPECT_FALSE(SameSchedulingInputs(*a, *base().Label("tier", "web").Obj()));
  EXPECT_FALSE(SameSchedulingInputs(*a, *base().Namespace("other").Obj()));
  EXPECT_FALSE(SameSchedulingInputs(*a, *base().Req({{"memory", "1Gi"}}).Obj()));
  EXPECT_FALSE(SameSchedulingInputs(*a, *base().Toleration({"k", "Exists", "", "", {}}).Obj()));
  EXPECT_FALSE(SameSchedulingInputs(*a, *base().HostPort(80).Obj()));
  EXPECT_FALSE(SameSchedulingInputs(*a, *base().SchedulerName("other").Obj()));
  Affinity affinity;
  affinity.node_affinity.emplace().preferred.push_back({1, {{{"zone", "In", {"z1"}}}, {}}});
  EXPECT_FALSE(SameSchedulingInputs(*a, *base().Affinity(affinity).Obj()));
  Pod owned = *a;
  owned.metadata.owner_references.push_back({"apps/v1", "ReplicaSet", "rs", "u1", true});
  EXPECT_FALSE(SameSchedulingInputs(*a, owned));
  // Pod-level requests and in-place resizes change what the pod requests.
  Pod pod_level = *a;
  pod_level.spec.resources.emplace().requests["cpu"] = Quantity::FromMilli(500);
  EXPECT_FALSE(SameSchedulingInputs(*a, pod_level));
  Pod resized = *a;
  resized.status.container_resources.push_back(
      {"c", ResourceList{{"cpu", Quantity::FromInt(2)}}, {}});
  EXPECT_FALSE(SameSchedulingInputs(*a, resized));
}

TEST(EquivalenceTest, VolumesThePluginsLookUp) {
  EXPECT_FALSE(UsesModeledVolumes(*MakePod().Obj()));
  Volume config_map;
  config_map.name = "cfg";  // no source the scheduler models
  EXPECT_FALSE(UsesModeledVolumes(*MakePod().Volume(config_map).Obj()));
  EXPECT_TRUE(UsesModeledVolumes(*MakePod().PVC("data").Obj()));
  Volume csi;
  csi.csi.emplace().driver = "d";
  EXPECT_TRUE(UsesModeledVolumes(*MakePod().Volume(csi).Obj()));
  Volume ephemeral;
  ephemeral.ephemeral = true;
  EXPECT_TRUE(UsesModeledVolumes(*MakePod().Volume(ephemeral).Obj()));
}

// ---------------------------------------------------------------- reuse keeps decisions

// One scheduler over its own in-memory cluster; `reuse` toggles per-node result reuse.
struct SchedulerRun {
  SchedulerRun(bool reuse, int percentage, bool with_extender = false, bool record_details = true)
      : registry(InTreeRegistry()), config(config::DefaultConfiguration(registry)) {
    config.percentage_of_nodes_to_score = percentage;
    SchedulerOptions so;
    so.config = &config;
    so.registry = &registry;
    so.client = &cluster;
    so.clock = &clock;
    so.seed = 7;
    so.inline_binding = true;
    so.record_details = record_details;
    so.reuse_equivalent_pod_results = reuse;
    if (with_extender) {
      // Rejects every seventh node and prefers every fifth: it narrows and reorders nothing
      // the plugins decided, so reuse must follow the nodes it keeps.
      auto ext = std::make_shared<testing::FakeExtender>("ext");
      ext->filter = ext->prioritize = true;
      ext->weight = 3;
      for (int i = 0; i < 400; ++i) {
        const std::string name = fmt::format("node-{:03d}", i);
        if (i % 7 == 0) ext->reject[name] = "not this one";
        if (i % 5 == 0) ext->scores[name] = 10;
      }
      so.extenders.push_back(std::move(ext));
    }
    auto s = Scheduler::Create(so);
    if (!s.ok()) {
      ADD_FAILURE() << s.error().message;
      return;
    }
    sched = std::move(s).value();
    cluster.SetEventHandler(sched.get());
    sched->SetObserver(&observer);
  }

  struct Observer final : AttemptObserver {
    void OnAttempt(const SchedulingAttempt& a) override {
      std::string line = fmt::format("{} {} node={} msg={} evaluated={} feasible={}",
                                     a.pod->metadata.name, static_cast<int>(a.outcome), a.node,
                                     a.message, a.evaluated_nodes, a.feasible_nodes);
      decisions.push_back(line);
      for (const auto& [node, status] : a.filter_statuses)
        line += fmt::format(" [{}:{}:{}]", node, status.plugin(), status.Message());
      for (size_t i = 0; i < a.scored_nodes.size(); ++i)
        line += fmt::format(" {}={}", a.scored_nodes[i], a.scores.totals[i]);
      for (size_t p = 0; p < a.scores.plugin_scores.size(); ++p)
        line += fmt::format(" p{}:{}", p, fmt::join(a.scores.plugin_scores[p], ","));
      lines.push_back(std::move(line));
    }
    std::vector<std::string> lines;      // with filter statuses and scores
    std::vector<std::string> decisions;  // outcome, node, message and node counts only
  };

  Registry registry;
  config::SchedulerConfiguration config;
  InMemoryCluster cluster;
  FakeClock clock{TimePoint{} + std::chrono::hours(100)};
  Observer observer;
  std::unique_ptr<Scheduler> sched;
};

// A cluster in three zones whose nodes differ in size, labels, taints and images.
std::shared_ptr<const Node> RandomNode(std::mt19937& rng, const std::string& name) {
  auto b =
      MakeNode().Name(name).Label("topology.kubernetes.io/zone", fmt::format("z{}", rng() % 3));
  const char* cpu[] = {"2", "4", "8"};
  b.Capacity({{"cpu", cpu[rng() % 3]}, {"memory", "16Gi"}, {"pods", "30"}});
  if (rng() % 3 == 0) b.Label("disk", "ssd");
  if (rng() % 6 == 0) b.Taint("dedicated", "db", "NoSchedule");
  if (rng() % 4 == 0) b.Image({"registry/app-a:1"}, 400 * 1024 * 1024);
  // Large enough that one node more or less holding it moves ImageLocality's score.
  if (rng() % 5 == 0) b.Image({"registry/app-b:1"}, int64_t{2500} << 20);
  return b.Obj();
}

// Pods of a few workloads, so runs of equivalent pods alternate with changes of pod.
std::shared_ptr<const Pod> PodOf(int kind, const std::string& name) {
  auto b = MakePod().Name(name);
  switch (kind) {
    case 0:  // plain, with an image some nodes hold
      return b.Label("app", "a")
          .Req({{"cpu", "300m"}, {"memory", "1Gi"}})
          .Image("registry/app-a:1")
          .Obj();
    case 1:  // only on ssd nodes, large: they run out of room
      return b.Label("app", "b").Req({{"cpu", "2"}}).NodeSelector("disk", "ssd").Obj();
    case 2:  // tolerates the dedicated taint, prefers ssd
    {
      Affinity affinity;
      affinity.node_affinity.emplace().preferred.push_back({5, {{{"disk", "In", {"ssd"}}}, {}}});
      return b.Label("app", "c")
          .Req({{"cpu", "500m"}})
          .Toleration({"dedicated", "Equal", "db", "NoSchedule", {}})
          .Affinity(affinity)
          .Obj();
    }
    case 3: {  // a ReplicaSet's replica: default spreading scores it
      Pod p = *b.Label("app", "d").Req({{"cpu", "200m"}}).Image("registry/app-b:1").Obj();
      p.metadata.owner_references.push_back({"apps/v1", "ReplicaSet", "rs-d", "uid-d", true});
      return std::make_shared<const Pod>(std::move(p));
    }
    case 4: {  // keeps other "app: f" pods out of its zone
      Affinity affinity;
      PodAffinityTerm term;
      term.label_selector.emplace().match_labels.insert({"app", "f"});
      term.topology_key = "topology.kubernetes.io/zone";
      affinity.pod_anti_affinity.emplace().required.push_back(term);
      return b.Label("app", "e").Req({{"cpu", "100m"}}).Affinity(affinity).Obj();
    }
    case 5:  // matched by kind 4's anti-affinity
      return b.Label("app", "f").Req({{"cpu", "250m"}}).Obj();
    case 6:  // a host port
      return b.Label("app", "g").Req({{"cpu", "100m"}}).HostPort(8080).Obj();
    case 7: {  // spread evenly over the zones: each bind changes what the others may take
      TopologySpreadConstraint spread;
      spread.max_skew = 1;
      spread.topology_key = "topology.kubernetes.io/zone";
      spread.when_unsatisfiable = "DoNotSchedule";
      spread.label_selector.emplace().match_labels.insert({"app", "s"});
      return b.Label("app", "s").Req({{"cpu", "200m"}}).Spread(spread).Obj();
    }
    default:  // high priority: preempts when the cluster is full
      return b.Label("app", "h").Req({{"cpu", "3"}}).Priority(1000).Obj();
  }
}

// Drives the same random history of pods and cluster changes through a scheduler that reuses
// per-node results and one that does not: every attempt must come out the same, down to the
// filter statuses and each plugin's scores.
// `record_details` false: the reusing scheduler records no details (its rejections are kept
// aside and written only for a failed attempt), so only decisions and messages are compared.
// Long by design: one random sequence of cluster changes and attempts, run by both schedulers
// and compared.
void ExpectSameDecisions(int percentage, uint32_t seed, bool with_extender = false,
                         bool record_details = true) {
  SchedulerRun with(true, percentage, with_extender, record_details),
      without(false, percentage, with_extender);
  ASSERT_NE(with.sched, nullptr);
  ASSERT_NE(without.sched, nullptr);
  std::mt19937 rng(seed);
  int next_node = 0, next_pod = 0;
  std::vector<std::string> nodes, pods;
  std::map<std::string, std::shared_ptr<const Node>> node_objects;
  auto both = [&](auto&& fn) {
    fn(with.cluster);
    fn(without.cluster);
  };
  auto add_node = [&] {
    auto node = RandomNode(rng, fmt::format("node-{:03d}", next_node++));
    nodes.push_back(node->metadata.name);
    node_objects[node->metadata.name] = node;
    both([&](InMemoryCluster& c) { c.AddNode(node); });
  };
  for (int i = 0; i < 220; ++i) add_node();
  ReplicaSet rs;
  rs.metadata.name = "rs-d";
  rs.metadata.namespace_ = "default";
  rs.metadata.uid = "uid-d";
  rs.selector.emplace().match_labels.insert({"app", "d"});
  auto rs_ptr = std::make_shared<const ReplicaSet>(rs);
  both([&](InMemoryCluster& c) { c.AddReplicaSet(rs_ptr); });

  auto schedule_all = [&] {
    while (with.sched->ScheduleOne(false)) {
    }
    while (without.sched->ScheduleOne(false)) {
    }
  };
  // A change to the cluster between two pods.
  auto change = [&] {
    const uint32_t op = rng() % 100;
    if (op < 25) {
      // A node changes: new labels, zone, taints, size or images.
      const std::string name = nodes[rng() % nodes.size()];
      auto node = RandomNode(rng, name);
      node_objects[name] = node;
      both([&](InMemoryCluster& c) { c.AddNode(node); });
    } else if (op < 50) {
      // A node pulls or drops an image and changes nothing else: the image's spread, and so
      // ImageLocality's score, changes on the other nodes that hold it.
      const std::string name = nodes[rng() % nodes.size()];
      Node node = *node_objects[name];
      if (node.status.images.empty()) {
        node.status.images.push_back({{"registry/app-b:1"}, int64_t{2500} << 20});
      } else {
        node.status.images.clear();
      }
      auto ptr = std::make_shared<const Node>(std::move(node));
      node_objects[name] = ptr;
      both([&](InMemoryCluster& c) { c.AddNode(ptr); });
    } else if (op < 58) {
      add_node();
    } else if (op < 64 && nodes.size() > 150) {
      const size_t i = rng() % nodes.size();
      const std::string name = nodes[i];
      nodes.erase(nodes.begin() + static_cast<long>(i));
      both([&](InMemoryCluster& c) { c.RemoveNode(name); });
    } else if (op < 92 && !pods.empty()) {
      // Pods go away (a scale-down, a finished job).
      for (int k = 0; k < 4 && !pods.empty(); ++k) {
        const size_t i = rng() % pods.size();
        const std::string name = pods[i];
        pods.erase(pods.begin() + static_cast<long>(i));
        both([&](InMemoryCluster& c) { c.RemovePod("default", name); });
      }
    } else {
      // A Service starts (or stops) selecting kind 0's pods: default spreading applies to them.
      Service svc;
      svc.metadata.name = "svc-a";
      svc.metadata.namespace_ = "default";
      svc.selector.insert({"app", "a"});
      auto svc_ptr = std::make_shared<const Service>(svc);
      if (rng() % 2) {
        both([&](InMemoryCluster& c) { c.AddService(svc_ptr); });
      } else {
        both([&](InMemoryCluster& c) { c.RemoveService("default", "svc-a"); });
      }
    }
  };
  for (int step = 0; step < 180; ++step) {
    // A run of equivalent pods (kinds 0-3 most often), each scheduled as it arrives, with
    // changes to the cluster between some of them.
    const int kind = rng() % 4 == 0 ? static_cast<int>(rng() % 9) : static_cast<int>(rng() % 4);
    const int count = 1 + static_cast<int>(rng() % 12);
    for (int i = 0; i < count; ++i) {
      if (rng() % 3 == 0) change();
      auto pod = PodOf(kind, fmt::format("p{:04d}", next_pod++));
      pods.push_back(pod->metadata.name);
      both([&](InMemoryCluster& c) { c.AddPod(pod); });
      schedule_all();
      ASSERT_EQ(with.observer.lines.size(), without.observer.lines.size()) << "step " << step;
    }
  }
  ASSERT_GT(with.observer.lines.size(), 500u);
  // Reuse did happen (and only where enabled).
  EXPECT_GT(with.sched->reused_verdicts(), 20'000u);
  EXPECT_EQ(without.sched->reused_verdicts(), 0u);
  const auto& got = record_details ? with.observer.lines : with.observer.decisions;
  const auto& want = record_details ? without.observer.lines : without.observer.decisions;
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "attempt " << i;
}

TEST(NodeResultReuseTest, DecisionsAreTheSameWithTheAdaptiveSample) { ExpectSameDecisions(0, 1); }

TEST(NodeResultReuseTest, DecisionsAreTheSameScoringEveryNode) { ExpectSameDecisions(100, 2); }

TEST(NodeResultReuseTest, DecisionsAreTheSameWithASmallSample) { ExpectSameDecisions(10, 3); }

TEST(NodeResultReuseTest, DecisionsAreTheSameWithAnExtender) { ExpectSameDecisions(0, 4, true); }

TEST(NodeResultReuseTest, DecisionsAndMessagesAreTheSameWithoutDetails) {
  ExpectSameDecisions(0, 5, false, false);
  ExpectSameDecisions(100, 6, true, false);
}

// A node that pulls an image changes ImageLocality's score on every other node holding it
// (the image's spread grows), though only that node changed.
TEST(NodeResultReuseTest, AnImagePulledElsewhereIsSeen) {
  SchedulerRun with(true, 100), without(false, 100);
  ASSERT_NE(with.sched, nullptr);
  ASSERT_NE(without.sched, nullptr);
  auto node = [](int i, bool image) {
    auto b = MakeNode().Name(fmt::format("n{}", i)).Capacity({{"cpu", "8"}, {"memory", "16Gi"}});
    if (image) b.Image({"registry/big:1"}, int64_t{2500} << 20);
    return b.Obj();
  };
  for (int i = 0; i < 10; ++i) {
    auto n = node(i, i < 4);
    with.cluster.AddNode(n);
    without.cluster.AddNode(n);
  }
  int next_pod = 0;
  auto schedule_pod = [&] {
    auto pod = MakePod()
                   .Name(fmt::format("p{}", next_pod++))
                   .Req({{"cpu", "1"}})
                   .Image("registry/big:1")
                   .Obj();
    with.cluster.AddPod(pod);
    without.cluster.AddPod(pod);
    ASSERT_TRUE(with.sched->ScheduleOne(false));
    ASSERT_TRUE(without.sched->ScheduleOne(false));
  };
  // Two equivalent pods (the second reuses the first's results), then n4..n8 pull the image
  // one by one, each followed by another pod: the holders a pod did not land on keep their
  // results from before, but their ImageLocality score changed.
  schedule_pod();
  schedule_pod();
  for (int i = 4; i < 9; ++i) {
    auto n = node(i, true);
    with.cluster.AddNode(n);
    without.cluster.AddNode(n);
    schedule_pod();
  }
  EXPECT_GT(with.sched->reused_verdicts(), 0u);
  EXPECT_EQ(with.observer.lines, without.observer.lines);
}

// Two workloads scaling at once arrive interleaved in the queue: each keeps its own results.
TEST(NodeResultReuseTest, InterleavedWorkloadsEachReuse) {
  SchedulerRun with(true, 100), without(false, 100);
  ASSERT_NE(with.sched, nullptr);
  ASSERT_NE(without.sched, nullptr);
  std::mt19937 rng(9);
  for (int i = 0; i < 200; ++i) {
    auto n = RandomNode(rng, fmt::format("node-{:03d}", i));
    with.cluster.AddNode(n);
    without.cluster.AddNode(n);
  }
  for (int i = 0; i < 60; ++i) {
    auto pod = PodOf(i % 3, fmt::format("p{:04d}", i));
    with.cluster.AddPod(pod);
    without.cluster.AddPod(pod);
    ASSERT_TRUE(with.sched->ScheduleOne(false));
    ASSERT_TRUE(without.sched->ScheduleOne(false));
  }
  EXPECT_EQ(with.observer.lines, without.observer.lines);
  // Every pod after the first of each kind reuses all but the node the last bind changed
  // (and the nodes two other pods changed since): most of 200 verdicts per pod.
  EXPECT_GT(with.sched->reused_verdicts(), 57u * 150u);
}

// Where every pod differs from the last, nothing is recorded for later pods; once a pod repeats,
// recording resumes: the second of a run records, the third reuses. Decisions never change.
TEST(NodeResultReuseTest, OneOffPodsRecordNothingUntilOneRepeats) {
  SchedulerRun with(true, 100), without(false, 100);
  ASSERT_NE(with.sched, nullptr);
  ASSERT_NE(without.sched, nullptr);
  std::mt19937 rng(11);
  for (int i = 0; i < 50; ++i) {
    auto n = RandomNode(rng, fmt::format("node-{:03d}", i));
    with.cluster.AddNode(n);
    without.cluster.AddNode(n);
  }
  int next = 0;
  auto schedule = [&](const char* cpu) {
    auto pod = MakePod().Name(fmt::format("p{:03d}", next++)).Req({{"cpu", cpu}}).Obj();
    with.cluster.AddPod(pod);
    without.cluster.AddPod(pod);
    ASSERT_TRUE(with.sched->ScheduleOne(false));
    ASSERT_TRUE(without.sched->ScheduleOne(false));
  };
  for (int i = 0; i < 20; ++i) schedule(fmt::format("{}m", 101 + i).c_str());
  EXPECT_EQ(with.sched->reused_verdicts(), 0u);
  schedule("250m");
  schedule("250m");  // the run's second pod: records, as the first was taken for a one-off
  EXPECT_EQ(with.sched->reused_verdicts(), 0u);
  schedule("250m");
  EXPECT_GT(with.sched->reused_verdicts(), 40u);
  EXPECT_EQ(with.observer.lines, without.observer.lines);
}

}  // namespace
}  // namespace berth
