// Cross-cycle memoization: results must always equal a fresh computation, whatever changed in
// the snapshot between cycles.
#include "plugins/podtopologyspread/spread_cache.h"

#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "framework/snapshot_editor.h"
#include "plugins/podtopologyspread/podtopologyspread.h"
#include "plugins/podtopologyspread/state.h"
#include "plugins/podtopologyspread/test_util.h"

namespace berth::podtopologyspread {
namespace {

using namespace testutil;  // NOLINT

using NodeList = std::vector<std::shared_ptr<const Node>>;
using PodList = std::vector<std::shared_ptr<const Pod>>;

std::map<std::string, int32_t> ZoneCounts(Fixture& fx, const std::shared_ptr<const Pod>& pod,
                                          std::span<const NodeInfo* const> nodes,
                                          const std::vector<std::string>& zones) {
  CycleState state;
  PreFilterResult r;
  Status s = fx.plugin.PreFilter(state, *PodInfo::Create(pod), nodes, &r);
  EXPECT_TRUE(s.IsSuccess()) << s.Message();
  std::map<std::string, int32_t> out;
  const FilterState* fs = state.Read(kFilterStateKey);
  if (fs == nullptr) return out;
  for (const auto& z : zones) {
    if (auto c = fs->counts[0].EligibleCount(z)) out[z] = *c;
  }
  return out;
}

const auto kZonePod = MakePod().Name("p").Label("foo", "").Spread(Hard(1, "zone", kFoo)).Obj();

// kZonePod's one constraint.
SpreadConstraint ZoneConstraint() {
  auto constraints = ConstraintsFromPod(*kZonePod, kDoNotSchedule);
  EXPECT_TRUE(constraints.ok());
  return constraints->at(0);
}

// Replaced keys are found under their new values and the old ones not at all, however many
// replacements; a full index refuses the next one.
TEST(PtrIndexTest, ReplacedKeysAreFoundAndOldOnesAreGone) {
  std::vector<int> objects(200);
  PtrIndex index(16);
  for (int i = 0; i < 16; ++i) index.Insert(&objects[i], i);
  int replaced = 0;
  for (int next = 16; next < 200; ++next) {
    const int slot = next % 16;
    const void* old_key = &objects[next - 16];
    if (!index.Replace(old_key, &objects[next], slot)) break;
    ++replaced;
    EXPECT_EQ(index.Find(old_key), -1);
    EXPECT_EQ(index.Find(&objects[next]), slot);
  }
  EXPECT_GT(replaced, 0);
  EXPECT_LT(replaced, 184);  // the index filled up before every object had a turn
  for (int i = 0; i < 16 + replaced; ++i) {
    EXPECT_EQ(index.Find(&objects[i]), i < replaced ? -1 : i % 16) << i;
  }
}

TEST(PtrIndexTest, FindsWhatWasInserted) {
  std::vector<int> objects(1000);
  PtrIndex index(objects.size());
  for (size_t i = 0; i < objects.size(); i += 2) index.Insert(&objects[i], static_cast<int32_t>(i));
  for (size_t i = 0; i < objects.size(); ++i)
    EXPECT_EQ(index.Find(&objects[i]), i % 2 == 0 ? static_cast<int32_t>(i) : -1);
  EXPECT_EQ(index.Find(nullptr), -1);
  EXPECT_EQ(PtrIndex().Find(&objects[0]), -1);
}

// A node's slot comes from its NodeInfo's list position when that position holds the same
// node, and from the address index otherwise: both must give the same slot.
TEST(NodeTableTest, SlotsFromListPositionsAgreeWithTheAddressIndex) {
  NodeList nodes;
  const char* zones[] = {"z0", "z1", "z2"};
  for (int i = 0; i < 40; ++i)
    nodes.push_back(N("n" + std::to_string(i), {{"zone", zones[i % 3]}}));
  const Snapshot snapshot = Snapshot::Build(nodes, {});
  const NodeTable table(snapshot.nodes(), 1);
  for (size_t i = 0; i < snapshot.size(); ++i) {
    const NodeInfo& info = *snapshot.nodes()[i];
    EXPECT_EQ(info.list_index(), static_cast<int32_t>(i));
    EXPECT_EQ(table.SlotOf(info), static_cast<int32_t>(i));
    EXPECT_EQ(table.SlotOf(info), table.Find(info.node()));
  }
  // A clone (preemption's dry runs) carries the position along with the same node.
  const NodeInfo& seventh = *snapshot.nodes()[7];
  EXPECT_EQ(table.SlotOf(*seventh.Clone()), 7);
  // Outside any snapshot: no position, found by address.
  NodeInfo outside(seventh.node_ptr());
  EXPECT_EQ(outside.list_index(), -1);
  EXPECT_EQ(table.SlotOf(outside), 7);
  // A stale position that holds another node is not trusted.
  SnapshotEditor::SetListIndex(outside, 2);
  EXPECT_EQ(table.SlotOf(outside), 7);
  SnapshotEditor::SetListIndex(outside, 4000);
  EXPECT_EQ(table.SlotOf(outside), 7);
  // A node the table does not have.
  const NodeInfo stranger(N("n7", {{"zone", "z1"}}));
  EXPECT_EQ(table.SlotOf(stranger), -1);
  EXPECT_EQ(table.SlotOf(NodeInfo()), -1);
  // Positions follow the list when it is rebuilt without some nodes.
  nodes.erase(nodes.begin(), nodes.begin() + 5);
  const Snapshot smaller = Snapshot::Build(nodes, {});
  const NodeTable smaller_table(smaller.nodes(), 2);
  for (size_t i = 0; i < smaller.size(); ++i) {
    EXPECT_EQ(smaller.nodes()[i]->list_index(), static_cast<int32_t>(i));
    EXPECT_EQ(smaller_table.SlotOf(*smaller.nodes()[i]), static_cast<int32_t>(i));
  }
}

TEST(SpreadCacheTest, PodsAddedInPlaceAreSeen) {
  Fixture fx({N("n1", {{"zone", "z1"}}), N("n2", {{"zone", "z2"}})}, {P("a", "n1", {{"foo", ""}})});
  EXPECT_EQ(ZoneCounts(fx, kZonePod, fx.Nodes(), {"z1", "z2"}),
            (std::map<std::string, int32_t>{{"z1", 1}, {"z2", 0}}));
  // The scheduler's cache updates snapshot NodeInfos in place.
  auto& map = SnapshotEditor::Map(fx.handle.mutable_snapshot());
  map["n2"]->AddPod(PodInfo::Create(P("b", "n2", {{"foo", ""}})));
  map["n2"]->AddPod(PodInfo::Create(P("c", "n2", {{"foo", ""}})));
  EXPECT_EQ(ZoneCounts(fx, kZonePod, fx.Nodes(), {"z1", "z2"}),
            (std::map<std::string, int32_t>{{"z1", 1}, {"z2", 2}}));
  map["n2"]->RemovePod(*P("b", "n2", {{"foo", ""}}));
  map["n1"]->RemovePod(*P("a", "n1", {{"foo", ""}}));
  EXPECT_EQ(ZoneCounts(fx, kZonePod, fx.Nodes(), {"z1", "z2"}),
            (std::map<std::string, int32_t>{{"z1", 0}, {"z2", 1}}));
}

// A new snapshot over the same node objects, with other pods and possibly the same NodeInfo
// generations and addresses, must not be mistaken for the old one.
TEST(SpreadCacheTest, ReplacedSnapshotWithSameNodesIsRecounted) {
  const NodeList nodes = {N("n1", {{"zone", "z1"}}), N("n2", {{"zone", "z2"}})};
  Fixture fx(nodes, {P("a", "n1", {{"foo", ""}})});
  EXPECT_EQ(ZoneCounts(fx, kZonePod, fx.Nodes(), {"z1", "z2"}),
            (std::map<std::string, int32_t>{{"z1", 1}, {"z2", 0}}));
  for (int round = 0; round < 3; ++round) {
    const bool even = round % 2 == 0;
    fx.handle.SetSnapshot(
        Snapshot::Build(nodes, {P("a", even ? "n2" : "n1", {{even ? "foo" : "bar", ""}})}));
    EXPECT_EQ(ZoneCounts(fx, kZonePod, fx.Nodes(), {"z1", "z2"}),
              even ? (std::map<std::string, int32_t>{{"z1", 0}, {"z2", 1}})
                   : (std::map<std::string, int32_t>{{"z1", 0}, {"z2", 0}}))
        << "round " << round;
  }
}

TEST(SpreadCacheTest, NodeUpdatesAdditionsAndRemovals) {
  NodeList nodes = {N("n1", {{"zone", "z1"}}), N("n2", {{"zone", "z2"}})};
  const PodList pods = {P("a", "n1", {{"foo", ""}}), P("b", "n2", {{"foo", ""}})};
  Fixture fx(nodes, pods);
  EXPECT_EQ(ZoneCounts(fx, kZonePod, fx.Nodes(), {"z1", "z2", "z3"}),
            (std::map<std::string, int32_t>{{"z1", 1}, {"z2", 1}}));
  // n2 moves to z1 (a new node object), n3 joins in z3.
  nodes[1] = N("n2", {{"zone", "z1"}});
  nodes.push_back(N("n3", {{"zone", "z3"}}));
  fx.handle.SetSnapshot(Snapshot::Build(nodes, pods));
  EXPECT_EQ(ZoneCounts(fx, kZonePod, fx.Nodes(), {"z1", "z2", "z3"}),
            (std::map<std::string, int32_t>{{"z1", 2}, {"z3", 0}}));
  // n1 leaves.
  nodes.erase(nodes.begin());
  fx.handle.SetSnapshot(Snapshot::Build(nodes, pods));
  EXPECT_EQ(ZoneCounts(fx, kZonePod, fx.Nodes(), {"z1", "z2", "z3"}),
            (std::map<std::string, int32_t>{{"z1", 1}, {"z3", 0}}));
}

// The scheduler's cache updates its snapshot in place: NodeInfos persist, each mutation changes
// their generation, and every update bumps the snapshot's generation.
TEST(SpreadCacheTest, IncrementalSnapshotChangesAreSeen) {
  Fixture fx({N("n1", {{"zone", "z1"}}), N("n2", {{"zone", "z2"}}), N("n3", {{"zone", "z3"}})},
             {P("a", "n1", {{"foo", ""}})});
  Snapshot& snapshot = fx.handle.mutable_snapshot();
  snapshot.generation = 1;
  const std::vector<std::string> zones = {"z1", "z2", "z3"};
  EXPECT_EQ(ZoneCounts(fx, kZonePod, fx.Nodes(), zones),
            (std::map<std::string, int32_t>{{"z1", 1}, {"z2", 0}, {"z3", 0}}));
  SnapshotEditor::Map(snapshot)["n2"]->AddPod(PodInfo::Create(P("b", "n2", {{"foo", ""}})));
  ++snapshot.generation;
  EXPECT_EQ(ZoneCounts(fx, kZonePod, fx.Nodes(), zones),
            (std::map<std::string, int32_t>{{"z1", 1}, {"z2", 1}, {"z3", 0}}));
  // Same snapshot generation: nothing changed, same answer.
  EXPECT_EQ(ZoneCounts(fx, kZonePod, fx.Nodes(), zones),
            (std::map<std::string, int32_t>{{"z1", 1}, {"z2", 1}, {"z3", 0}}));
  // n3's node object is replaced in place (relabelled into z1).
  SnapshotEditor::Map(snapshot)["n3"]->SetNode(N("n3", {{"zone", "z1"}}));
  SnapshotEditor::Map(snapshot)["n3"]->AddPod(PodInfo::Create(P("c", "n3", {{"foo", ""}})));
  ++snapshot.generation;
  EXPECT_EQ(ZoneCounts(fx, kZonePod, fx.Nodes(), zones),
            (std::map<std::string, int32_t>{{"z1", 2}, {"z2", 1}}));
  // PreScore over the same snapshot agrees (hostname spreading from the same memo).
  SnapshotEditor::Map(snapshot)["n1"]->RemovePod(*P("a", "n1", {{"foo", ""}}));
  ++snapshot.generation;
  EXPECT_EQ(ZoneCounts(fx, kZonePod, fx.Nodes(), zones),
            (std::map<std::string, int32_t>{{"z1", 1}, {"z2", 1}}));
}

// With a delta from the scheduler's cache only the changed nodes are looked at; anything the
// delta cannot express falls back to a full look.
TEST(SpreadCacheTest, DeltaRefresh) {
  Snapshot snapshot = Snapshot::Build({N("n1", {{"zone", "z1"}}), N("n2", {{"zone", "z2"}})},
                                      {P("a", "n1", {{"foo", ""}})});
  snapshot.generation = 1;
  const SpreadConstraint c = ZoneConstraint();
  SpreadCache cache;
  std::lock_guard lock(cache.mutex());
  auto counts = [&] {
    const auto& memo = cache.CountsFor(c.count_key, c.selector, "default");
    return std::vector<int32_t>{memo.Get(0), memo.Get(1)};
  };
  auto table = cache.Refresh(snapshot.nodes(), &snapshot);
  const size_t s1 = table->Find(snapshot.Get("n1")->node());
  const size_t s2 = table->Find(snapshot.Get("n2")->node());
  auto at = [&](std::vector<int32_t> v) { return std::pair<int32_t, int32_t>{v[s1], v[s2]}; };
  EXPECT_EQ(at(counts()), (std::pair<int32_t, int32_t>{1, 0}));

  NodeInfo* n2 = SnapshotEditor::Map(snapshot)["n2"].get();
  n2->AddPod(PodInfo::Create(P("b", "n2", {{"foo", ""}})));
  ++snapshot.generation;
  const NodeInfo* changed[] = {n2};
  SpreadCache::Delta delta{1, changed};
  EXPECT_EQ(cache.Refresh(snapshot.nodes(), &snapshot, &delta), table);
  EXPECT_EQ(at(counts()), (std::pair<int32_t, int32_t>{1, 1}));

  // A delta from another generation is not applicable: everything is looked at.
  n2->AddPod(PodInfo::Create(P("c", "n2", {{"foo", ""}})));
  ++snapshot.generation;
  SpreadCache::Delta stale{1, {}};
  cache.Refresh(snapshot.nodes(), &snapshot, &stale);
  EXPECT_EQ(at(counts()), (std::pair<int32_t, int32_t>{1, 2}));

  // A node object replaced in place makes the delta fall back to a rebuild.
  n2->SetNode(N("n2", {{"zone", "z1"}}));
  ++snapshot.generation;
  SpreadCache::Delta relabel{snapshot.generation - 1, changed};
  auto rebuilt = cache.Refresh(snapshot.nodes(), &snapshot, &relabel);
  EXPECT_NE(rebuilt, table);
  EXPECT_EQ(cache.Domains("zone")->num_domains(), 1u);
}

// Per-domain totals kept across refreshes equal a fresh sum of the per-slot counts, whatever
// the steps: pods added and removed by deltas and by full looks, a relabelled node (a rebuilt
// table), a node without the key (its own bucket).
TEST(SpreadCacheTest, DomainTotalsFollowEveryRecountedSlot) {
  NodeList nodes;
  for (int i = 0; i < 12; ++i) {
    if (i == 11) {
      nodes.push_back(N("n11", {}));
    } else {
      nodes.push_back(N("n" + std::to_string(i), {{"zone", i % 3 == 0   ? "z0"
                                                           : i % 3 == 1 ? "z1"
                                                                        : "z2"}}));
    }
  }
  Snapshot snapshot = Snapshot::Build(nodes, {});
  snapshot.generation = 1;
  const SpreadConstraint c = ZoneConstraint();
  SpreadCache cache;
  std::lock_guard lock(cache.mutex());
  std::mt19937 rng(11);
  int next_pod = 0;
  std::vector<std::shared_ptr<const Pod>> placed;
  for (int step = 0; step < 400; ++step) {
    NodeInfo* changed = nullptr;
    const int what = static_cast<int>(rng() % 10);
    if (what < 6 || placed.empty()) {
      const std::string node = "n" + std::to_string(rng() % nodes.size());
      auto pod = P("p" + std::to_string(next_pod++), node, {{rng() % 4 == 0 ? "bar" : "foo", ""}});
      changed = SnapshotEditor::Map(snapshot)[node].get();
      changed->AddPod(PodInfo::Create(pod));
      placed.push_back(pod);
    } else if (what < 9) {
      const size_t k = rng() % placed.size();
      changed = SnapshotEditor::Map(snapshot)[placed[k]->spec.node_name].get();
      changed->RemovePod(*placed[k]);
      placed.erase(placed.begin() + static_cast<std::ptrdiff_t>(k));
    } else {
      // n4 moves to another zone: a new node object, so the table and domains are built again.
      const std::string zone = step % 2 == 0 ? "z1" : "z0";
      changed = SnapshotEditor::Map(snapshot)["n4"].get();
      changed->SetNode(N("n4", {{"zone", zone.c_str()}}));
    }
    ++snapshot.generation;
    const NodeInfo* delta_nodes[] = {changed};
    SpreadCache::Delta delta{snapshot.generation - 1, delta_nodes};
    const auto table = step % 3 == 0 ? cache.Refresh(snapshot.nodes(), &snapshot)
                                     : cache.Refresh(snapshot.nodes(), &snapshot, &delta);
    const auto domains = cache.Domains("zone");
    const auto& counts = cache.CountsFor(c.count_key, c.selector, "default");
    const std::vector<int64_t> totals = cache.DomainTotals(counts, domains);
    std::vector<int64_t> fresh(domains->num_domains() + 1, 0);
    for (size_t slot = 0; slot < table->size(); ++slot) {
      const int32_t d = domains->slot_domain(slot);
      fresh[d >= 0 ? static_cast<size_t>(d) : domains->num_domains()] += counts.Get(slot);
    }
    ASSERT_EQ(totals, fresh) << "step " << step;
  }
}

// Node objects replaced with the same names and labels (status updates) keep the topology
// domains; a changed label builds them again, with the node in its new domain.
TEST(SpreadCacheTest, DomainsSurviveNodeUpdatesThatKeepLabels) {
  NodeList nodes = {N("n1", {{"zone", "z1"}}), N("n2", {{"zone", "z2"}})};
  const PodList pods = {P("a", "n1", {{"foo", ""}})};
  SpreadCache cache;
  std::lock_guard lock(cache.mutex());
  Snapshot first = Snapshot::Build(nodes, pods);
  const auto before = cache.Refresh(first.nodes(), &first);
  const auto domains = cache.Domains("zone");
  ASSERT_EQ(domains->num_domains(), 2u);

  nodes[1] = N("n2", {{"zone", "z2"}});  // a new object, the same labels
  Snapshot second = Snapshot::Build(nodes, pods);
  const auto& table = cache.Refresh(second.nodes(), &second);
  EXPECT_EQ(table, before);  // the node took its slot in place
  EXPECT_EQ(table->node(table->SlotOf(*second.Get("n2"))), nodes[1].get());
  EXPECT_EQ(table->Find(nodes[1].get()), table->SlotOf(*second.Get("n2")));
  EXPECT_EQ(cache.Domains("zone"), domains);

  nodes[1] = N("n2", {{"zone", "z1"}});  // moved to z1
  Snapshot third = Snapshot::Build(nodes, pods);
  const auto& moved = cache.Refresh(third.nodes(), &third);
  const auto again = cache.Domains("zone");
  EXPECT_NE(again, domains);
  EXPECT_EQ(again->num_domains(), 1u);
  EXPECT_EQ(again->slot_domain(moved->SlotOf(*third.Get("n1"))),
            again->slot_domain(moved->SlotOf(*third.Get("n2"))));
}

TEST(SpreadCacheTest, CountsAreKeptPerNamespace) {
  Fixture fx({N("n1", {{"zone", "z1"}}), N("n2", {{"zone", "z2"}})},
             {P("a", "n1", {{"foo", ""}}), P("b", "n2", {{"foo", ""}}, "other"),
              P("c", "n2", {{"foo", ""}}, "other")});
  auto in_other =
      MakePod().Name("q").Namespace("other").Label("foo", "").Spread(Hard(1, "zone", kFoo)).Obj();
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(ZoneCounts(fx, kZonePod, fx.Nodes(), {"z1", "z2"}),
              (std::map<std::string, int32_t>{{"z1", 1}, {"z2", 0}}));
    EXPECT_EQ(ZoneCounts(fx, in_other, fx.Nodes(), {"z1", "z2"}),
              (std::map<std::string, int32_t>{{"z1", 0}, {"z2", 2}}));
  }
}

TEST(SpreadCacheTest, InclusionFollowsThePod) {
  Fixture fx({N("n1", {{"zone", "z1"}, {"disk", "ssd"}}), N("n2", {{"zone", "z2"}})},
             {P("a", "n1", {{"foo", ""}}), P("b", "n2", {{"foo", ""}})});
  auto ssd = MakePod()
                 .Name("p")
                 .Label("foo", "")
                 .NodeSelector("disk", "ssd")
                 .Spread(Hard(1, "zone", kFoo))
                 .Obj();
  auto hdd = MakePod()
                 .Name("p")
                 .Label("foo", "")
                 .NodeSelector("disk", "hdd")
                 .Spread(Hard(1, "zone", kFoo))
                 .Obj();
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(ZoneCounts(fx, ssd, fx.Nodes(), {"z1", "z2"}),
              (std::map<std::string, int32_t>{{"z1", 1}}));
    EXPECT_EQ(ZoneCounts(fx, hdd, fx.Nodes(), {"z1", "z2"}), (std::map<std::string, int32_t>{}));
    EXPECT_EQ(ZoneCounts(fx, kZonePod, fx.Nodes(), {"z1", "z2"}),
              (std::map<std::string, int32_t>{{"z1", 1}, {"z2", 1}}));
  }
}

// ---------------------------------------------------------------- throughput

// CPU time of the calling thread: the machine running the tests is shared, so wall time would
// measure the neighbours.
struct ThreadCpuClock {
  using duration = std::chrono::nanoseconds;
  using time_point = std::chrono::time_point<ThreadCpuClock>;
  static time_point now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return time_point(duration(int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec));
  }
};

// The scheduler_perf TopologySpreading / PreferredTopologySpreading shapes on 5000 nodes in 3
// zones: every cycle runs the plugin's points over the snapshot, then places the pod in place
// (as the cache does) on the least loaded zone. Prints the cost per cycle and checks the spread.
struct Cluster5000 {
  Cluster5000() {
    NodeList nodes;
    PodList pods;
    for (int i = 0; i < 5000; ++i) {
      const std::string name = "node-" + std::to_string(i);
      nodes.push_back(MakeNode()
                          .Name(name)
                          .Label("topology.kubernetes.io/zone", "zone-" + std::to_string(i % 3))
                          .Capacity({{"cpu", "4"}, {"memory", "32Gi"}})
                          .Obj());
      pods.push_back(P("init-" + std::to_string(i), name, {}));
    }
    fx = std::make_unique<Fixture>(nodes, pods, SystemArgs());
    fx->handle.mutable_snapshot().generation = 1;
  }
  // What the scheduler's cache does after placing a pod.
  void Place(const NodeInfo& node, std::shared_ptr<const Pod> pod) {
    Snapshot& snapshot = fx->handle.mutable_snapshot();
    SnapshotEditor::Map(snapshot).at(node.name())->AddPod(PodInfo::Create(std::move(pod)));
    ++snapshot.generation;
  }
  const NodeInfo& At(size_t i) const { return *fx->Nodes()[i % fx->Nodes().size()]; }
  std::unique_ptr<Fixture> fx;
};

TEST(PerfTest, TopologySpreading5000Nodes) {
  Cluster5000 c;
  auto& fx = *c.fx;
  const int kPods = 2000;
  const size_t kFilterNodes = 500;  // adaptive percentage of 5000 nodes
  using Clock = ThreadCpuClock;
  Clock::duration total{};
  size_t start = 0;
  std::map<std::string, int> per_zone;
  for (int i = 0; i < kPods; ++i) {
    auto pod = MakePod()
                   .Name("m-" + std::to_string(i))
                   .Label("color", "blue")
                   .Spread(Hard(5, "topology.kubernetes.io/zone", MatchLabels({{"color", "blue"}})))
                   .Obj();
    auto pi = PodInfo::Create(pod);
    const auto t0 = Clock::now();
    CycleState state;
    PreFilterResult r;
    ASSERT_TRUE(fx.plugin.PreFilter(state, *pi, fx.Nodes(), &r).IsSuccess());
    const NodeInfo* chosen = nullptr;
    for (size_t k = 0; k < kFilterNodes; ++k) {
      const NodeInfo& n = c.At(start + k);
      if (fx.plugin.Filter(state, *pi, n).IsSuccess() && chosen == nullptr) chosen = &n;
    }
    total += Clock::now() - t0;
    ASSERT_NE(chosen, nullptr);
    start += kFilterNodes;
    c.Place(
        *chosen,
        MakePod().Name("m-" + std::to_string(i)).Node(chosen->name()).Label("color", "blue").Obj());
    ++per_zone[chosen->node()->metadata.labels.at("topology.kubernetes.io/zone")];
  }
  int lo = kPods, hi = 0;
  for (const auto& [z, n] : per_zone) lo = std::min(lo, n), hi = std::max(hi, n);
  EXPECT_EQ(per_zone.size(), 3u);
  EXPECT_LE(hi - lo, 5);
  std::printf("TopologySpreading 5000 nodes: %.1f us CPU per pod (PreFilter + %zu Filter)\n",
              std::chrono::duration<double, std::micro>(total).count() / kPods, kFilterNodes);
}

TEST(PerfTest, PreferredTopologySpreading5000Nodes) {
  Cluster5000 c;
  auto& fx = *c.fx;
  const int kPods = 2000;
  const size_t kFeasible = 500;
  using Clock = ThreadCpuClock;
  Clock::duration total{};
  size_t start = 0;
  std::vector<const NodeInfo*> feasible(kFeasible);
  std::vector<NodeScore> scores(kFeasible);
  std::map<std::string, int> per_zone;
  for (int i = 0; i < kPods; ++i) {
    auto pod = MakePod()
                   .Name("m-" + std::to_string(i))
                   .Label("color", "blue")
                   .Spread(Soft(5, "topology.kubernetes.io/zone", MatchLabels({{"color", "blue"}})))
                   .Obj();
    auto pi = PodInfo::Create(pod);
    for (size_t k = 0; k < kFeasible; ++k) feasible[k] = &c.At(start + k);
    start += kFeasible;
    const auto t0 = Clock::now();
    CycleState state;
    ASSERT_TRUE(fx.plugin.PreScore(state, *pi, feasible).IsSuccess());
    for (size_t k = 0; k < kFeasible; ++k) {
      scores[k].node = feasible[k];
      ASSERT_TRUE(fx.plugin.Score(state, *pi, *feasible[k], &scores[k].score).IsSuccess());
    }
    ASSERT_TRUE(fx.plugin.NormalizeScore(state, *pi, scores).IsSuccess());
    total += Clock::now() - t0;
    size_t best = 0;
    for (size_t k = 1; k < kFeasible; ++k)
      if (scores[k].score > scores[best].score) best = k;
    const NodeInfo* chosen = feasible[best];
    c.Place(
        *chosen,
        MakePod().Name("m-" + std::to_string(i)).Node(chosen->name()).Label("color", "blue").Obj());
    ++per_zone[chosen->node()->metadata.labels.at("topology.kubernetes.io/zone")];
  }
  int lo = kPods, hi = 0;
  for (const auto& [z, n] : per_zone) lo = std::min(lo, n), hi = std::max(hi, n);
  EXPECT_LE(hi - lo, 2);
  std::printf(
      "PreferredTopologySpreading 5000 nodes: %.1f us CPU per pod (PreScore + %zu Score + "
      "Normalize)\n",
      std::chrono::duration<double, std::micro>(total).count() / kPods, kFeasible);
}

// System-default spreading (hostname + zone) for pods selected by a Service.
TEST(PerfTest, DefaultTopologySpreading5000Nodes) {
  Cluster5000 c;
  auto& fx = *c.fx;
  Service svc;
  svc.metadata.name = "svc";
  svc.metadata.namespace_ = "default";
  svc.selector["color"] = "blue";
  fx.cluster.AddService(std::make_shared<const Service>(svc));
  const int kPods = 2000;
  const size_t kFeasible = 500;
  using Clock = ThreadCpuClock;
  Clock::duration total{};
  size_t start = 0;
  std::vector<const NodeInfo*> feasible(kFeasible);
  std::vector<NodeScore> scores(kFeasible);
  for (int i = 0; i < kPods; ++i) {
    auto pi =
        PodInfo::Create(MakePod().Name("m-" + std::to_string(i)).Label("color", "blue").Obj());
    for (size_t k = 0; k < kFeasible; ++k) feasible[k] = &c.At(start + k);
    start += kFeasible;
    const auto t0 = Clock::now();
    CycleState state;
    ASSERT_TRUE(fx.plugin.PreScore(state, *pi, feasible).IsSuccess());
    for (size_t k = 0; k < kFeasible; ++k) {
      scores[k].node = feasible[k];
      ASSERT_TRUE(fx.plugin.Score(state, *pi, *feasible[k], &scores[k].score).IsSuccess());
    }
    ASSERT_TRUE(fx.plugin.NormalizeScore(state, *pi, scores).IsSuccess());
    total += Clock::now() - t0;
    size_t best = 0;
    for (size_t k = 1; k < kFeasible; ++k)
      if (scores[k].score > scores[best].score) best = k;
    const NodeInfo* chosen = feasible[best];
    c.Place(
        *chosen,
        MakePod().Name("m-" + std::to_string(i)).Node(chosen->name()).Label("color", "blue").Obj());
  }
  std::printf(
      "DefaultTopologySpreading 5000 nodes: %.1f us CPU per pod (PreScore + %zu Score + "
      "Normalize)\n",
      std::chrono::duration<double, std::micro>(total).count() / kPods, kFeasible);
}

}  // namespace
}  // namespace berth::podtopologyspread
