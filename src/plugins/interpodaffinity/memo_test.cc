// The cross-cycle indexes must never change a decision: a plugin that lives through many cycles
// of a changing cluster has to agree with a fresh plugin in every cycle.
#include "plugins/interpodaffinity/memo.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "berth/testing/fake_handle.h"
#include "cache/cache.h"
#include "framework/snapshot_editor.h"
#include "plugins/interpodaffinity/interpodaffinity.h"
#include "plugins/interpodaffinity/test_util.h"

namespace berth::interpodaffinity {
namespace {

using test::AddTeamNamespaces;
using test::Exists;
using test::Expr;
using test::In;
using test::MakeNode;
using test::Term;
using test::TestPod;

using PodPtr = std::shared_ptr<const Pod>;
using NodePtr = std::shared_ptr<const Node>;

struct Outcome {
  Code pre_filter = Code::kSuccess;
  std::vector<Status> filter;
  Code pre_score = Code::kSuccess;
  std::vector<int64_t> scores;
};

Outcome RunCycle(InterPodAffinity& plugin, const Snapshot& snapshot, const PodPtr& pod) {
  Outcome o;
  PodInfoPtr info = PodInfo::Create(pod);
  CycleState state;
  PreFilterResult result;
  Status pre = plugin.PreFilter(state, *info, snapshot.nodes(), &result);
  o.pre_filter = pre.code();
  if (pre.IsSuccess()) {
    for (const NodeInfo* ni : snapshot.nodes())
      o.filter.push_back(plugin.Filter(state, *info, *ni));
  }
  std::vector<const NodeInfo*> all(snapshot.nodes().begin(), snapshot.nodes().end());
  Status ps = plugin.PreScore(state, *info, all);
  o.pre_score = ps.code();
  if (ps.IsSuccess()) {
    for (const NodeInfo* ni : all) {
      int64_t s = 0;
      EXPECT_TRUE(plugin.Score(state, *info, *ni, &s).IsSuccess());
      o.scores.push_back(s);
    }
  }
  return o;
}

// A small zoo of pods: three apps, two namespaces, every kind of term.
PodPtr RandomPod(std::mt19937& rng, const std::string& name, const std::string& node) {
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const char* apps[] = {"a", "b", "c"};
  const char* keys[] = {"zone", "kubernetes.io/hostname", "region"};
  TestPod p;
  p.Name(name).Label("app", apps[pick(3)]);
  if (pick(4) == 0) p.Namespace("subteam1.team1");
  if (!node.empty()) p.Node(node);
  int terms = pick(4);
  for (int i = 0; i < terms; ++i) {
    PodAffinityTerm t = In("app", {apps[pick(3)]}, keys[pick(3)]);
    if (pick(5) == 0) t.namespace_selector = Expr("team", "In", {"team1"});
    if (pick(7) == 0) t = Exists("app", keys[pick(3)]);
    switch (pick(4)) {
      case 0:
        p.Affinity(t);
        break;
      case 1:
        p.AntiAffinity(t);
        break;
      case 2:
        p.PreferredAffinity(1 + pick(10), t);
        break;
      default:
        p.PreferredAntiAffinity(1 + pick(10), t);
        break;
    }
  }
  return p.Obj();
}

NodePtr RandomNode(std::mt19937& rng, const std::string& name) {
  std::map<std::string, std::string> labels = {{"kubernetes.io/hostname", name}};
  if (rng() % 5) labels["zone"] = "z" + std::to_string(rng() % 3);
  if (rng() % 2) labels["region"] = "r" + std::to_string(rng() % 2);
  return MakeNode(name, labels);
}

// Runs one cycle for `incoming` with the long-lived plugin and with a fresh one on the same
// snapshot; the two must decide alike.
void ExpectSameAsFresh(InterPodAffinity& long_lived, const config::InterPodAffinityArgs& args,
                       testing::FakeHandle& handle, const PodPtr& incoming, int step) {
  InterPodAffinity fresh(args, handle);
  Outcome want = RunCycle(fresh, handle.snapshot(), incoming);
  Outcome got = RunCycle(long_lived, handle.snapshot(), incoming);
  ASSERT_EQ(got.pre_filter, want.pre_filter) << "step " << step;
  ASSERT_EQ(got.filter, want.filter) << "step " << step;
  ASSERT_EQ(got.pre_score, want.pre_score) << "step " << step;
  ASSERT_EQ(got.scores, want.scores) << "step " << step;
}

TEST(InterPodAffinityMemoTest, LongLivedPluginAgreesWithFreshPluginThroughClusterChanges) {
  std::mt19937 rng(7);
  InMemoryCluster cluster;
  AddTeamNamespaces(cluster);
  const int kNodes = 80;  // more than the parallel threshold of the indexes

  std::vector<NodePtr> nodes;
  std::vector<PodPtr> pods;
  for (int i = 0; i < kNodes; ++i) nodes.push_back(RandomNode(rng, "n" + std::to_string(i)));
  int next_pod = 0;
  for (int i = 0; i < 150; ++i) {
    pods.push_back(
        RandomPod(rng, "p" + std::to_string(next_pod++), "n" + std::to_string(rng() % kNodes)));
  }

  // `master` is mutated in place, as the scheduler cache does with its snapshot; the handle
  // holds a shallow copy that shares the NodeInfo objects.
  Snapshot master = Snapshot::Build(nodes, pods);
  std::vector<std::string> order;
  for (const NodeInfo* ni : master.nodes()) order.push_back(ni->name());
  testing::FakeHandle handle(master, &cluster);
  config::InterPodAffinityArgs args;
  args.hard_pod_affinity_weight = 3;
  InterPodAffinity long_lived(args, handle);

  // Most incoming pods come from a small pool, so the indexes are reused across cycles.
  std::vector<PodPtr> pool;
  for (int i = 0; i < 6; ++i) pool.push_back(RandomPod(rng, "pooled" + std::to_string(i), ""));

  for (int step = 0; step < 400; ++step) {
    switch (rng() % 6) {
      case 0:
      case 1: {  // a pod lands on a node
        std::string node = "n" + std::to_string(rng() % kNodes);
        auto pod = RandomPod(rng, "p" + std::to_string(next_pod++), node);
        pods.push_back(pod);
        SnapshotEditor::Map(master)[node]->AddPod(PodInfo::Create(pod));
        break;
      }
      case 2: {  // a pod goes away
        if (pods.empty()) break;
        size_t i = rng() % pods.size();
        SnapshotEditor::Map(master)[pods[i]->spec.node_name]->RemovePod(*pods[i]);
        pods.erase(pods.begin() + static_cast<long>(i));
        break;
      }
      case 3: {  // a node's labels change
        size_t i = rng() % nodes.size();
        nodes[i] = RandomNode(rng, nodes[i]->metadata.name);
        SnapshotEditor::Map(master)[nodes[i]->metadata.name]->SetNode(nodes[i]);
        break;
      }
      case 4: {  // the whole snapshot is rebuilt (fresh NodeInfo objects)
        if (rng() % 8) break;
        master = Snapshot::Build(nodes, pods);
        break;
      }
      default:
        break;
    }
    SnapshotEditor::RebuildLists(master, order);
    handle.SetSnapshot(master);

    auto incoming = rng() % 4 ? pool[rng() % pool.size()]
                              : RandomPod(rng, "incoming" + std::to_string(step), "");
    ExpectSameAsFresh(long_lived, args, handle, incoming, step);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// The scheduler's cache maintains its snapshot incrementally and reports which NodeInfos each
// update touched; a long-lived plugin then only looks at those. It must still agree with a
// fresh plugin every cycle.
TEST(InterPodAffinityMemoTest, LongLivedPluginAgreesWithFreshPluginOnCacheSnapshots) {
  std::mt19937 rng(11);
  InMemoryCluster cluster;
  AddTeamNamespaces(cluster);
  const int kNodes = 80;
  Cache cache;
  std::vector<NodePtr> nodes;
  std::vector<PodPtr> pods;
  for (int i = 0; i < kNodes; ++i) {
    nodes.push_back(RandomNode(rng, "n" + std::to_string(i)));
    cache.AddNode(nodes.back());
  }
  int next_pod = 0;
  for (int i = 0; i < 150; ++i) {
    pods.push_back(
        RandomPod(rng, "p" + std::to_string(next_pod++), "n" + std::to_string(rng() % kNodes)));
    cache.AddPod(pods.back());
  }
  Snapshot master;
  cache.UpdateSnapshot(&master);
  testing::FakeHandle handle(master, &cluster);
  config::InterPodAffinityArgs args;
  InterPodAffinity long_lived(args, handle);
  std::vector<PodPtr> pool;
  for (int i = 0; i < 6; ++i) pool.push_back(RandomPod(rng, "pooled" + std::to_string(i), ""));

  for (int step = 0; step < 400; ++step) {
    switch (rng() % 5) {
      case 0:
      case 1: {
        auto pod =
            RandomPod(rng, "p" + std::to_string(next_pod++), "n" + std::to_string(rng() % kNodes));
        pods.push_back(pod);
        cache.AddPod(pod);
        break;
      }
      case 2: {
        if (pods.empty()) break;
        size_t i = rng() % pods.size();
        cache.RemovePod(*pods[i]);
        pods.erase(pods.begin() + static_cast<long>(i));
        break;
      }
      case 3: {
        size_t i = rng() % nodes.size();
        nodes[i] = RandomNode(rng, nodes[i]->metadata.name);
        cache.UpdateNode(nodes[i]);
        break;
      }
      default:
        break;  // an update with no change
    }
    cache.UpdateSnapshot(&master);
    handle.SetSnapshot(master);
    auto incoming = rng() % 4 ? pool[rng() % pool.size()]
                              : RandomPod(rng, "incoming" + std::to_string(step), "");
    ExpectSameAsFresh(long_lived, args, handle, incoming, step);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// The same incoming pod scheduled repeatedly reuses one memo; each placement must show up.
TEST(InterPodAffinityMemoTest, RepeatedPodsSeeEachOthersPlacements) {
  InMemoryCluster cluster;
  std::vector<NodePtr> nodes;
  for (int i = 0; i < 100; ++i) {
    std::string name = "n" + std::to_string(i);
    nodes.push_back(MakeNode(name, {{"kubernetes.io/hostname", name}}));
  }
  Snapshot master = Snapshot::Build(nodes, {});
  std::vector<std::string> order;
  for (const NodeInfo* ni : master.nodes()) order.push_back(ni->name());
  testing::FakeHandle handle(master, &cluster);
  config::InterPodAffinityArgs args;
  InterPodAffinity plugin(args, handle);

  auto make = [](int i, std::string node) {
    return TestPod()
        .Name("web" + std::to_string(i))
        .Label("app", "web")
        .AntiAffinity(In("app", {"web"}, "kubernetes.io/hostname"))
        .Node(std::move(node))
        .Obj();
  };
  for (int i = 0; i < 100; ++i) {
    handle.SetSnapshot(master);
    PodInfoPtr info = PodInfo::Create(make(i, ""));
    CycleState state;
    PreFilterResult result;
    ASSERT_TRUE(plugin.PreFilter(state, *info, handle.snapshot().nodes(), &result).IsSuccess());
    int feasible = 0;
    std::string first;
    for (const NodeInfo* ni : handle.snapshot().nodes()) {
      if (plugin.Filter(state, *info, *ni).IsSuccess()) {
        if (first.empty()) first = ni->name();
        ++feasible;
      }
    }
    ASSERT_EQ(feasible, 100 - i);
    SnapshotEditor::Map(master)[first]->AddPod(PodInfo::Create(make(i, first)));
    SnapshotEditor::RebuildLists(master, order);
  }
}

}  // namespace
}  // namespace berth::interpodaffinity
