#include "cache/cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "testing/builders.h"

namespace berth {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::MakeNode;
using testing::MakePod;
using ::testing::UnorderedElementsAre;

constexpr char kZone[] = "topology.kubernetes.io/zone";
constexpr char kRegion[] = "topology.kubernetes.io/region";

std::shared_ptr<const Node> N(const std::string& name, const std::string& zone = "") {
  auto b = MakeNode().Name(name).Capacity({{"cpu", "4"}, {"memory", "8Gi"}});
  if (!zone.empty()) b.Label(kZone, zone);
  return b.Obj();
}

std::shared_ptr<const Pod> P(const std::string& name, const std::string& node,
                             const char* cpu = "1") {
  return MakePod().Name(name).Node(node).Req({{"cpu", cpu}}).Obj();
}

std::vector<std::string> Order(const Snapshot& s) {
  std::vector<std::string> out;
  for (const NodeInfo* ni : s.nodes()) out.push_back(ni->name());
  return out;
}

std::vector<std::string> Order(const std::vector<const NodeInfo*>& list) {
  std::vector<std::string> out;
  for (const NodeInfo* ni : list) out.push_back(ni->name());
  return out;
}

std::vector<std::string> PodNames(const NodeInfo& ni) {
  std::vector<std::string> out;
  for (const auto& p : ni.pods()) out.push_back(p->pod->metadata.name);
  return out;
}

Affinity RequiredAntiAffinity() {
  PodAffinityTerm term;
  term.label_selector = LabelSelector{{{"app", "db"}}, {}};
  term.topology_key = "kubernetes.io/hostname";
  Affinity a;
  a.pod_anti_affinity = PodAffinity{{term}, {}};
  return a;
}

Affinity PreferredAffinity() {
  PodAffinityTerm term;
  term.label_selector = LabelSelector{{{"app", "web"}}, {}};
  term.topology_key = "kubernetes.io/hostname";
  Affinity a;
  a.pod_affinity = PodAffinity{{}, {{10, term}}};
  return a;
}

class CacheTest : public ::testing::Test {
 protected:
  Snapshot& Update() {
    cache_.UpdateSnapshot(&snapshot_);
    return snapshot_;
  }
  const NodeInfo* Get(const std::string& n) { return snapshot_.Get(n); }

  Cache cache_;
  Snapshot snapshot_;
};

TEST_F(CacheTest, NodesAndPodsAppearInTheSnapshot) {
  cache_.AddNode(N("n1"));
  cache_.AddNode(N("n2"));
  cache_.AddPod(P("a", "n1", "1"));
  cache_.AddPod(P("b", "n1", "500m"));
  EXPECT_EQ(cache_.NodeCount(), 2u);
  EXPECT_EQ(cache_.PodCount(), 2u);
  Update();
  EXPECT_THAT(Order(snapshot_), ElementsAre("n1", "n2"));
  ASSERT_NE(Get("n1"), nullptr);
  EXPECT_THAT(PodNames(*Get("n1")), UnorderedElementsAre("a", "b"));
  EXPECT_EQ(Get("n1")->requested().milli_cpu, 1500);
  EXPECT_EQ(Get("n1")->allocatable().milli_cpu, 4000);
  EXPECT_THAT(PodNames(*Get("n2")), IsEmpty());

  cache_.RemovePod(*P("a", "n1"));
  EXPECT_EQ(cache_.PodCount(), 1u);
  Update();
  EXPECT_THAT(PodNames(*Get("n1")), ElementsAre("b"));
  EXPECT_EQ(Get("n1")->requested().milli_cpu, 500);
}

TEST_F(CacheTest, UpdatePodReplacesItsRequests) {
  cache_.AddNode(N("n1"));
  auto old_pod = P("a", "n1", "1");
  cache_.AddPod(old_pod);
  cache_.UpdatePod(old_pod, P("a", "n1", "3"));
  EXPECT_EQ(cache_.PodCount(), 1u);
  Update();
  EXPECT_EQ(Get("n1")->requested().milli_cpu, 3000);
  EXPECT_EQ(Get("n1")->pods().size(), 1u);
}

TEST_F(CacheTest, AssumeForgetAndConfirm) {
  cache_.AddNode(N("n1"));
  auto assumed = P("p", "n1", "2");
  ASSERT_TRUE(cache_.AssumePod(PodInfo::Create(assumed)).ok());
  EXPECT_TRUE(cache_.IsAssumedPod(*assumed));
  EXPECT_EQ(cache_.AssumedPodCount(), 1u);
  Update();
  EXPECT_EQ(Get("n1")->requested().milli_cpu, 2000);

  // Assuming twice is a bug in the caller.
  auto again = cache_.AssumePod(PodInfo::Create(assumed));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().message, "pod default/p is in the cache, so can't be assumed");

  ASSERT_TRUE(cache_.ForgetPod(*assumed).ok());
  EXPECT_FALSE(cache_.IsAssumedPod(*assumed));
  EXPECT_EQ(cache_.PodCount(), 0u);
  EXPECT_EQ(cache_.AssumedPodCount(), 0u);
  Update();
  EXPECT_EQ(Get("n1")->requested().milli_cpu, 0);
  EXPECT_THAT(PodNames(*Get("n1")), IsEmpty());

  // Assume, then the informer confirms the bind.
  ASSERT_TRUE(cache_.AssumePod(PodInfo::Create(assumed)).ok());
  cache_.FinishBinding(*assumed);
  EXPECT_TRUE(cache_.IsAssumedPod(*assumed));
  EXPECT_EQ(cache_.AssumedPodCount(), 1u);
  cache_.AddPod(P("p", "n1", "2"));
  EXPECT_FALSE(cache_.IsAssumedPod(*assumed));
  EXPECT_EQ(cache_.PodCount(), 1u);
  EXPECT_EQ(cache_.AssumedPodCount(), 0u);  // confirmed
  Update();
  EXPECT_THAT(PodNames(*Get("n1")), ElementsAre("p"));
  EXPECT_EQ(Get("n1")->requested().milli_cpu, 2000);

  // A confirmed pod cannot be forgotten.
  auto forget = cache_.ForgetPod(*assumed);
  ASSERT_FALSE(forget.ok());
  EXPECT_EQ(forget.error().message, "pod default/p wasn't assumed so cannot be forgotten");
}

TEST_F(CacheTest, ConfirmationOnAnotherNodeRehomesThePod) {
  cache_.AddNode(N("n1"));
  cache_.AddNode(N("n2"));
  ASSERT_TRUE(cache_.AssumePod(PodInfo::Create(P("p", "n1", "2"))).ok());
  Update();
  EXPECT_EQ(Get("n1")->requested().milli_cpu, 2000);
  cache_.AddPod(P("p", "n2", "2"));
  EXPECT_EQ(cache_.PodCount(), 1u);
  Update();
  EXPECT_THAT(PodNames(*Get("n1")), IsEmpty());
  EXPECT_EQ(Get("n1")->requested().milli_cpu, 0);
  EXPECT_THAT(PodNames(*Get("n2")), ElementsAre("p"));
  EXPECT_EQ(Get("n2")->requested().milli_cpu, 2000);
}

TEST_F(CacheTest, ForgettingAnUnknownPodIsANoop) {
  EXPECT_TRUE(cache_.ForgetPod(*P("ghost", "n1")).ok());
  EXPECT_FALSE(cache_.IsAssumedPod(*P("ghost", "n1")));
}

TEST_F(CacheTest, IncrementalSnapshotOverwritesOnlyChangedNodesInPlace) {
  for (const char* n : {"n1", "n2", "n3"}) cache_.AddNode(N(n));
  cache_.AddPod(P("a", "n1"));
  Update();
  const int64_t gen0 = snapshot_.generation;
  const NodeInfo* n1 = Get("n1");
  const NodeInfo* n2 = Get("n2");
  const NodeInfo* n3 = Get("n3");
  const int64_t n1_gen = n1->generation();
  const int64_t n3_gen = n3->generation();
  const std::vector<const NodeInfo*> list_before = snapshot_.nodes();

  cache_.AddPod(P("b", "n2"));
  Update();
  EXPECT_GT(snapshot_.generation, gen0);
  // Same objects, same list.
  EXPECT_EQ(Get("n1"), n1);
  EXPECT_EQ(Get("n2"), n2);
  EXPECT_EQ(Get("n3"), n3);
  EXPECT_EQ(snapshot_.nodes(), list_before);
  // Untouched nodes were not copied again; the changed one holds the new pod.
  EXPECT_EQ(n1->generation(), n1_gen);
  EXPECT_EQ(n3->generation(), n3_gen);
  EXPECT_THAT(PodNames(*n1), ElementsAre("a"));
  EXPECT_THAT(PodNames(*n2), ElementsAre("b"));

  // A snapshot with nothing to do stays as it is.
  Update();
  EXPECT_EQ(snapshot_.nodes(), list_before);
  EXPECT_THAT(PodNames(*n2), ElementsAre("b"));
}

TEST_F(CacheTest, NodeSetChangesRebuildTheList) {
  cache_.AddNode(N("n1"));
  cache_.AddNode(N("n2"));
  Update();
  cache_.AddNode(N("n3"));
  Update();
  EXPECT_THAT(Order(snapshot_), ElementsAre("n1", "n2", "n3"));
  cache_.RemoveNode(*N("n2"));
  EXPECT_EQ(cache_.NodeCount(), 2u);
  Update();
  EXPECT_THAT(Order(snapshot_), ElementsAre("n1", "n3"));
  EXPECT_EQ(Get("n2"), nullptr);
  EXPECT_EQ(snapshot_.size(), 2u);
}

// kube-scheduler's node tree: zones in the order they appeared, then round-robin over zones.
TEST_F(CacheTest, NodeListIsZoneInterleaved) {
  cache_.AddNode(N("a1", "A"));
  cache_.AddNode(N("a2", "A"));
  cache_.AddNode(N("a3", "A"));
  cache_.AddNode(N("b1", "B"));
  cache_.AddNode(N("none1"));
  cache_.AddNode(N("c1", "C"));
  cache_.AddNode(N("b2", "B"));
  Update();
  EXPECT_THAT(Order(snapshot_), ElementsAre("a1", "b1", "none1", "c1", "a2", "b2", "a3"));
}

TEST_F(CacheTest, RegionAndZoneTogetherFormTheZoneKey) {
  auto node = [](const std::string& name, const std::string& region, const std::string& zone) {
    return MakeNode().Name(name).Label(kRegion, region).Label(kZone, zone).Obj();
  };
  cache_.AddNode(node("r1z1-a", "r1", "z1"));
  cache_.AddNode(node("r1z1-b", "r1", "z1"));
  cache_.AddNode(node("r2z1-a", "r2", "z1"));
  Update();
  EXPECT_THAT(Order(snapshot_), ElementsAre("r1z1-a", "r2z1-a", "r1z1-b"));
}

// The deprecated failure-domain labels win over the topology.kubernetes.io ones.
TEST_F(CacheTest, BetaZoneLabelWinsForTheZoneKey) {
  constexpr char kBetaZone[] = "failure-domain.beta.kubernetes.io/zone";
  cache_.AddNode(MakeNode().Name("n1").Label(kBetaZone, "A").Label(kZone, "B").Obj());
  cache_.AddNode(N("n2", "B"));
  cache_.AddNode(MakeNode().Name("n3").Label(kBetaZone, "A").Obj());
  Update();
  EXPECT_THAT(Order(snapshot_), ElementsAre("n1", "n2", "n3"));
}

// A zone keeps its place while it has nodes, even when its first node goes away.
TEST_F(CacheTest, ZoneKeepsItsPlaceWhenItsFirstNodeIsRemoved) {
  cache_.AddNode(N("a1", "A"));
  cache_.AddNode(N("b1", "B"));
  cache_.AddNode(N("a2", "A"));
  Update();
  EXPECT_THAT(Order(snapshot_), ElementsAre("a1", "b1", "a2"));
  cache_.RemoveNode(*N("a1", "A"));
  Update();
  EXPECT_THAT(Order(snapshot_), ElementsAre("a2", "b1"));
  // A zone that lost all its nodes comes back at the end.
  cache_.RemoveNode(*N("a2", "A"));
  cache_.AddNode(N("c1", "C"));
  cache_.AddNode(N("a3", "A"));
  Update();
  EXPECT_THAT(Order(snapshot_), ElementsAre("b1", "c1", "a3"));
}

// A node whose zone label changes moves to the end of its new zone.
TEST_F(CacheTest, NodeChangingZoneMovesToItsNewZone) {
  cache_.AddNode(N("n1", "A"));
  cache_.AddNode(N("n2", "B"));
  cache_.AddNode(N("n3", "A"));
  Update();
  EXPECT_THAT(Order(snapshot_), ElementsAre("n1", "n2", "n3"));
  cache_.UpdateNode(N("n1", "B"));
  Update();
  EXPECT_THAT(Order(snapshot_), ElementsAre("n3", "n2", "n1"));
  // An update that keeps the zone keeps the position.
  cache_.UpdateNode(MakeNode().Name("n2").Label(kZone, "B").Label("x", "y").Obj());
  Update();
  EXPECT_THAT(Order(snapshot_), ElementsAre("n3", "n2", "n1"));
}

TEST_F(CacheTest, AffinityListsFollowPodsWithAffinity) {
  for (const char* n : {"n1", "n2", "n3"}) cache_.AddNode(N(n));
  Update();
  EXPECT_THAT(snapshot_.have_pods_with_affinity(), IsEmpty());
  EXPECT_THAT(snapshot_.have_pods_with_required_anti_affinity(), IsEmpty());

  auto anti = MakePod().Name("anti").Node("n2").Affinity(RequiredAntiAffinity()).Obj();
  auto pref = MakePod().Name("pref").Node("n3").Affinity(PreferredAffinity()).Obj();
  cache_.AddPod(anti);
  cache_.AddPod(pref);
  Update();
  EXPECT_THAT(Order(snapshot_.have_pods_with_affinity()), ElementsAre("n2", "n3"));
  EXPECT_THAT(Order(snapshot_.have_pods_with_required_anti_affinity()), ElementsAre("n2"));

  // A second such pod on the same node changes no list membership.
  cache_.AddPod(MakePod().Name("anti2").Node("n2").Affinity(RequiredAntiAffinity()).Obj());
  Update();
  EXPECT_THAT(Order(snapshot_.have_pods_with_required_anti_affinity()), ElementsAre("n2"));

  cache_.RemovePod(*anti);
  Update();
  EXPECT_THAT(Order(snapshot_.have_pods_with_required_anti_affinity()), ElementsAre("n2"));
  cache_.RemovePod(*MakePod().Name("anti2").Node("n2").Obj());
  Update();
  EXPECT_THAT(snapshot_.have_pods_with_required_anti_affinity(), IsEmpty());
  EXPECT_THAT(Order(snapshot_.have_pods_with_affinity()), ElementsAre("n3"));

  // Assumed pods count as well.
  auto assumed = MakePod().Name("assumed").Node("n1").Affinity(RequiredAntiAffinity()).Obj();
  ASSERT_TRUE(cache_.AssumePod(PodInfo::Create(assumed)).ok());
  Update();
  EXPECT_THAT(Order(snapshot_.have_pods_with_required_anti_affinity()), ElementsAre("n1"));
  ASSERT_TRUE(cache_.ForgetPod(*assumed).ok());
  Update();
  EXPECT_THAT(snapshot_.have_pods_with_required_anti_affinity(), IsEmpty());
}

TEST_F(CacheTest, ClaimsInUseFollowPods) {
  cache_.AddNode(N("n1"));
  Update();
  EXPECT_FALSE(snapshot_.IsPVCUsedByPods("default/data"));
  auto p = MakePod().Name("p").Node("n1").PVC("data").Obj();
  cache_.AddPod(p);
  Update();
  EXPECT_TRUE(snapshot_.IsPVCUsedByPods("default/data"));
  cache_.RemovePod(*p);
  Update();
  EXPECT_FALSE(snapshot_.IsPVCUsedByPods("default/data"));
}

TEST_F(CacheTest, ImageStatesCountDistinctNodes) {
  // n1 reports the same image under two entries: it still counts once.
  cache_.AddNode(
      MakeNode().Name("n1").Image({"img:1", "img@sha256:aa"}, 100).Image({"img:1"}, 100).Obj());
  cache_.AddNode(MakeNode().Name("n2").Image({"img:1"}, 100).Image({"other:2"}, 50).Obj());
  cache_.AddNode(N("n3"));
  Update();
  ASSERT_TRUE(Get("n1")->image_states().count("img:1"));
  EXPECT_EQ(snapshot_.ImageNumNodes("img:1"), 2);
  EXPECT_EQ(Get("n1")->image_states().at("img:1").size, 100);
  EXPECT_EQ(snapshot_.ImageNumNodes("img@sha256:aa"), 1);
  EXPECT_TRUE(Get("n2")->image_states().count("img:1"));
  EXPECT_EQ(snapshot_.ImageNumNodes("other:2"), 1);
  EXPECT_TRUE(Get("n3")->image_states().empty());

  // Another holder raises the count, without touching the other holders' NodeInfos.
  const int64_t n1_generation = Get("n1")->generation();
  cache_.AddNode(MakeNode().Name("n4").Image({"img:1"}, 100).Obj());
  Update();
  EXPECT_EQ(snapshot_.ImageNumNodes("img:1"), 3);
  EXPECT_EQ(Get("n1")->generation(), n1_generation);

  // Losing a holder (deleted node, or an update without the image) lowers it.
  cache_.RemoveNode(*MakeNode().Name("n4").Image({"img:1"}, 100).Obj());
  cache_.UpdateNode(MakeNode().Name("n2").Image({"other:2"}, 50).Obj());
  Update();
  EXPECT_EQ(snapshot_.ImageNumNodes("img:1"), 1);
  EXPECT_FALSE(Get("n2")->image_states().count("img:1"));
  EXPECT_EQ(snapshot_.ImageNumNodes("other:2"), 1);
}

TEST_F(CacheTest, RemovedNodeKeepsItsPodsUntilTheyAreGone) {
  cache_.AddNode(N("n1"));
  cache_.AddNode(N("n2"));
  cache_.AddPod(P("p", "n1", "2"));
  Update();
  cache_.RemoveNode(*N("n1"));
  EXPECT_EQ(cache_.NodeCount(), 1u);
  EXPECT_EQ(cache_.PodCount(), 1u);
  Update();
  EXPECT_EQ(Get("n1"), nullptr);
  EXPECT_THAT(Order(snapshot_), ElementsAre("n2"));

  // The node comes back (e.g. re-registered) before its pod was deleted: the pod is still there.
  cache_.AddNode(N("n1"));
  Update();
  ASSERT_NE(Get("n1"), nullptr);
  EXPECT_THAT(PodNames(*Get("n1")), ElementsAre("p"));
  EXPECT_EQ(Get("n1")->requested().milli_cpu, 2000);

  // Removed again, then the pod goes: nothing is left of n1.
  cache_.RemoveNode(*N("n1"));
  cache_.RemovePod(*P("p", "n1"));
  EXPECT_EQ(cache_.PodCount(), 0u);
  cache_.AddNode(N("n1"));
  Update();
  EXPECT_THAT(PodNames(*Get("n1")), IsEmpty());
  EXPECT_EQ(Get("n1")->requested().milli_cpu, 0);
}

TEST_F(CacheTest, PodOnAnUnknownNodeIsKeptForWhenTheNodeArrives) {
  cache_.AddPod(P("early", "late-node"));
  Update();
  EXPECT_EQ(snapshot_.size(), 0u);
  cache_.AddNode(N("late-node"));
  Update();
  ASSERT_NE(Get("late-node"), nullptr);
  EXPECT_THAT(PodNames(*Get("late-node")), ElementsAre("early"));
}

TEST(CacheDeltaTest, SnapshotReportsWhatTheLastUpdateChanged) {
  Cache cache;
  cache.AddNode(N("a"));
  cache.AddNode(N("b"));
  Snapshot snap;
  cache.UpdateSnapshot(&snap);
  // The first update builds the node list: no change set to offer.
  EXPECT_EQ(snap.last_changed_from, -1);
  const int64_t before = snap.generation;

  cache.AddPod(P("p1", "b"));
  cache.UpdateSnapshot(&snap);
  EXPECT_EQ(snap.last_changed_from, before);
  ASSERT_EQ(snap.last_changed.size(), 1u);
  EXPECT_EQ(snap.last_changed[0], snap.Get("b"));

  cache.UpdateSnapshot(&snap);
  EXPECT_EQ(snap.last_changed_from, before + 1);
  EXPECT_THAT(snap.last_changed, IsEmpty());

  // A new node changes the list again.
  cache.AddNode(N("c"));
  cache.UpdateSnapshot(&snap);
  EXPECT_EQ(snap.last_changed_from, -1);
}

// What the scheduler's reuse of per-node results reads: where the changed nodes sit, and
// whether the image table changed. A node updated in place keeps its place (no rebuild).
TEST(CacheDeltaTest, ChangesReportPositionsAndImageTableChanges) {
  Cache cache;
  auto with_image = [](const std::string& name, const std::string& zone, const char* image) {
    auto b = MakeNode().Name(name).Label(kZone, zone).Capacity({{"cpu", "4"}});
    if (image) b.Image({image}, 100 << 20);
    return b.Obj();
  };
  cache.AddNode(with_image("a", "z1", "img:1"));
  cache.AddNode(with_image("b", "z2", nullptr));
  cache.AddNode(with_image("c", "z1", nullptr));
  Snapshot snap;
  Cache::SnapshotChanges changes;
  cache.UpdateSnapshot(&snap, &changes);
  EXPECT_TRUE(changes.images);  // the first fill
  ASSERT_EQ(Order(snap), (std::vector<std::string>{"a", "b", "c"}));

  // New capacity, same zone, same images: changed in place, at its list position.
  auto c2 = MakeNode().Name("c").Label(kZone, "z1").Capacity({{"cpu", "8"}}).Obj();
  cache.AddNode(c2);
  const int64_t before = snap.generation;
  cache.UpdateSnapshot(&snap, &changes);
  EXPECT_EQ(snap.last_changed_from, before);
  EXPECT_THAT(changes.positions, ElementsAre(2u));
  EXPECT_FALSE(changes.images);

  // The same images reported again change no count; a new image does.
  cache.AddNode(with_image("a", "z1", "img:1"));
  cache.UpdateSnapshot(&snap, &changes);
  EXPECT_THAT(changes.positions, ElementsAre(0u));
  EXPECT_FALSE(changes.images);
  cache.AddNode(with_image("b", "z2", "img:1"));
  cache.UpdateSnapshot(&snap, &changes);
  EXPECT_THAT(changes.positions, ElementsAre(1u));
  EXPECT_TRUE(changes.images);
  EXPECT_EQ(snap.ImageNumNodes("img:1"), 2);

  // A zone change moves the node: the list is rebuilt.
  cache.AddNode(with_image("c", "z2", nullptr));
  cache.UpdateSnapshot(&snap, &changes);
  EXPECT_EQ(snap.last_changed_from, -1);
}

TEST(CacheDeltaTest, GenerationsAreUniqueAcrossNodes) {
  Cache cache;
  cache.AddNode(N("a"));
  cache.AddNode(N("b"));
  cache.AddPod(P("p1", "a"));
  Snapshot snap;
  cache.UpdateSnapshot(&snap);
  EXPECT_NE(snap.Get("a")->generation(), snap.Get("b")->generation());
  const int64_t a_before = snap.Get("a")->generation();
  cache.AddPod(P("p2", "b"));
  cache.UpdateSnapshot(&snap);
  EXPECT_GT(snap.Get("b")->generation(), a_before);
}

TEST_F(CacheTest, ChangesReachTheSnapshotOnlyAtTheNextUpdate) {
  cache_.AddNode(N("n1"));
  cache_.AddPod(P("a", "n1"));
  Update();
  const NodeInfo* n1 = Get("n1");
  const int64_t gen = n1->generation();
  // Events arrive while a cycle reads the snapshot: its NodeInfos must not move under it.
  cache_.AddPod(P("b", "n1"));
  cache_.RemovePod(*P("a", "n1"));
  cache_.UpdateNode(MakeNode().Name("n1").Capacity({{"cpu", "8"}}).Obj());
  EXPECT_THAT(PodNames(*n1), ElementsAre("a"));
  EXPECT_EQ(n1->allocatable().milli_cpu, 4000);
  EXPECT_EQ(n1->generation(), gen);
  Update();
  EXPECT_EQ(Get("n1"), n1);
  EXPECT_THAT(PodNames(*n1), ElementsAre("b"));
  EXPECT_EQ(n1->allocatable().milli_cpu, 8000);
  EXPECT_GT(n1->generation(), gen);
}

TEST_F(CacheTest, ANodeRemovedWithPodsComesBackWithThem) {
  cache_.AddNode(N("n1"));
  cache_.AddNode(N("n2"));
  cache_.AddPod(P("a", "n1", "2"));
  Update();
  cache_.RemoveNode(*N("n1"));
  Update();
  EXPECT_EQ(Get("n1"), nullptr);
  EXPECT_THAT(Order(snapshot_), ElementsAre("n2"));
  cache_.AddPod(P("b", "n1", "1"));
  cache_.AddNode(N("n1"));
  Update();
  ASSERT_NE(Get("n1"), nullptr);
  EXPECT_THAT(PodNames(*Get("n1")), ElementsAre("a", "b"));
  EXPECT_EQ(Get("n1")->requested().milli_cpu, 3000);
  EXPECT_THAT(Order(snapshot_), ElementsAre("n2", "n1"));
}

TEST_F(CacheTest, AnotherSnapshotIsFilledFromScratch) {
  cache_.AddNode(N("n1"));
  cache_.AddNode(N("n2", "B"));
  cache_.AddPod(P("a", "n2"));
  Update();
  cache_.AddPod(P("b", "n1"));
  Snapshot other;
  cache_.UpdateSnapshot(&other);
  EXPECT_THAT(Order(other), ElementsAre("n1", "n2"));
  EXPECT_THAT(PodNames(*other.Get("n1")), ElementsAre("b"));
  EXPECT_THAT(PodNames(*other.Get("n2")), ElementsAre("a"));
  EXPECT_EQ(other.last_changed_from, -1);
  // The first snapshot starts over too when it is fed again.
  Update();
  EXPECT_THAT(PodNames(*Get("n1")), ElementsAre("b"));
  EXPECT_EQ(snapshot_.last_changed_from, -1);
}

// The snapshot the cache maintains incrementally must equal one built from scratch out of the
// same nodes and pods, whatever the order of events and updates.
// Long by design: one random walk over every kind of cache event, compared at each step.
TEST(CacheRandomTest, IncrementalSnapshotEqualsOneBuiltFromScratch) {
  std::mt19937 rng(7);
  Cache cache;
  Snapshot snap;
  std::map<std::string, std::shared_ptr<const Node>> nodes;
  std::map<std::string, std::shared_ptr<const Pod>> pods;  // by name; all bound or assumed
  std::set<std::string> assumed;
  int next_pod = 0;
  auto make_node = [&](const std::string& name) {
    auto b = MakeNode().Name(name).Capacity(
        {{"cpu", std::to_string(1 + rng() % 8).c_str()}, {"memory", "8Gi"}});
    if (rng() % 3) b.Label(kZone, "z" + std::to_string(rng() % 3));
    if (rng() % 2) b.Image({"img" + std::to_string(rng() % 4)}, 1000 * (1 + rng() % 5));
    return b.Obj();
  };
  auto make_pod = [&](const std::string& name, const std::string& node) {
    auto b = MakePod().Name(name).Node(node).Req({{"cpu", rng() % 2 ? "100m" : "1"}});
    if (rng() % 4 == 0) b.Affinity(PreferredAffinity());
    if (rng() % 5 == 0) b.Affinity(RequiredAntiAffinity());
    if (rng() % 4 == 0) b.PVC("claim" + std::to_string(rng() % 60));
    if (rng() % 4 == 0) b.HostPort(8000 + static_cast<int32_t>(rng() % 3));
    return b.Obj();
  };
  auto any_of = [&](auto& m) {
    auto it = m.begin();
    std::advance(it, static_cast<long>(rng() % m.size()));
    return it;
  };
  std::set<int64_t> seen_generations;
  int incremental_updates = 0;
  for (int step = 0; step < 3000; ++step) {
    const std::string node_name = "n" + std::to_string(rng() % 12);
    unsigned op = rng() % 8;
    // The second half changes nodes rarely, so that most updates keep the node list and
    // maintain the affinity and claim lists incrementally.
    if (step >= 1500 && op <= 2 && rng() % 8 != 0) op = 3 + rng() % 4;
    switch (op) {
      case 0:
      case 1: {
        auto n = make_node(node_name);
        nodes[node_name] = n;
        cache.AddNode(n);
        break;
      }
      case 2:
        if (auto it = nodes.find(node_name); it != nodes.end()) {
          cache.RemoveNode(*it->second);
          nodes.erase(it);
        }
        break;
      case 3:
      case 4: {
        const std::string name = "p" + std::to_string(next_pod++);
        auto p = make_pod(name, node_name);
        pods[name] = p;
        if (rng() % 2) {
          ASSERT_TRUE(cache.AssumePod(PodInfo::Create(p)).ok());
          assumed.insert(name);
        } else {
          cache.AddPod(p);
        }
        break;
      }
      case 5:
        if (!pods.empty()) {
          auto it = any_of(pods);
          if (assumed.count(it->first)) {
            ASSERT_TRUE(cache.ForgetPod(*it->second).ok());
            assumed.erase(it->first);
          } else {
            cache.RemovePod(*it->second);
          }
          pods.erase(it);
        }
        break;
      case 6:
        if (!pods.empty()) {
          // Confirmed by the informer, possibly on another node than assumed.
          auto it = any_of(pods);
          auto moved = make_pod(it->first, node_name);
          cache.AddPod(moved);
          it->second = moved;
          assumed.erase(it->first);
        }
        break;
      default: {
        cache.UpdateSnapshot(&snap);
        std::vector<std::shared_ptr<const Node>> node_list;
        for (const auto& [name, n] : nodes) node_list.push_back(n);
        std::vector<std::shared_ptr<const Pod>> pod_list;
        for (const auto& [name, p] : pods) pod_list.push_back(p);
        const Snapshot want = Snapshot::Build(node_list, pod_list);
        ASSERT_EQ(snap.size(), want.size()) << "step " << step;
        EXPECT_EQ(snap.image_num_nodes, want.image_num_nodes) << "step " << step;
        auto as_set = [](const std::vector<std::string>& v) {
          return std::set<std::string>(v.begin(), v.end());
        };
        ASSERT_EQ(as_set(Order(snap)), as_set(Order(want))) << "step " << step;
        // Every NodeInfo knows its position in the list (plugins index their tables by it).
        for (size_t i = 0; i < snap.size(); ++i)
          ASSERT_EQ(snap.nodes()[i]->list_index(), static_cast<int32_t>(i)) << "step " << step;
        EXPECT_EQ(as_set(Order(snap.have_pods_with_affinity())),
                  as_set(Order(want.have_pods_with_affinity())))
            << "step " << step;
        EXPECT_EQ(as_set(Order(snap.have_pods_with_required_anti_affinity())),
                  as_set(Order(want.have_pods_with_required_anti_affinity())))
            << "step " << step;
        for (const NodeInfo* w : want.nodes()) {
          const NodeInfo* g = snap.Get(w->name());
          ASSERT_NE(g, nullptr) << w->name() << " step " << step;
          EXPECT_EQ(g->node(), w->node()) << w->name() << " step " << step;
          auto sorted = [](const NodeInfo& ni) {
            auto names = PodNames(ni);
            std::sort(names.begin(), names.end());
            return names;
          };
          EXPECT_EQ(sorted(*g), sorted(*w)) << w->name() << " step " << step;
          EXPECT_EQ(g->requested(), w->requested()) << w->name() << " step " << step;
          EXPECT_EQ(g->non_zero_requested(), w->non_zero_requested()) << w->name();
          EXPECT_EQ(g->allocatable(), w->allocatable()) << w->name();
          EXPECT_EQ(g->pods_with_affinity().size(), w->pods_with_affinity().size()) << w->name();
          EXPECT_EQ(g->pods_with_required_anti_affinity().size(),
                    w->pods_with_required_anti_affinity().size())
              << w->name();
          EXPECT_EQ(g->pvc_ref_counts(), w->pvc_ref_counts()) << w->name() << " step " << step;
          EXPECT_EQ(g->used_ports().size(), w->used_ports().size()) << w->name();
          std::map<std::string, int64_t> gi, wi;
          for (const auto& [k, v] : g->image_states()) gi[k] = v.size;
          for (const auto& [k, v] : w->image_states()) wi[k] = v.size;
          EXPECT_EQ(gi, wi) << w->name() << " step " << step;
        }
        // The derived lists are the node list filtered, in its order.
        std::vector<const NodeInfo*> with_affinity, with_anti_affinity;
        for (const NodeInfo* ni : snap.nodes()) {
          if (!ni->pods_with_affinity().empty()) with_affinity.push_back(ni);
          if (!ni->pods_with_required_anti_affinity().empty()) with_anti_affinity.push_back(ni);
        }
        EXPECT_EQ(snap.have_pods_with_affinity(), with_affinity) << "step " << step;
        EXPECT_EQ(snap.have_pods_with_required_anti_affinity(), with_anti_affinity)
            << "step " << step;
        if (snap.last_changed_from >= 0) ++incremental_updates;
        for (int c = 0; c < 60; ++c) {
          const std::string claim = "default/claim" + std::to_string(c);
          EXPECT_EQ(snap.IsPVCUsedByPods(claim), want.IsPVCUsedByPods(claim)) << claim << step;
        }
        // A node changed by this update carries a generation no NodeInfo had before.
        for (const NodeInfo* changed : snap.last_changed)
          EXPECT_TRUE(seen_generations.insert(changed->generation()).second) << step;
        for (const NodeInfo* ni : snap.nodes()) seen_generations.insert(ni->generation());
        if (::testing::Test::HasFailure()) return;
        break;
      }
    }
  }
  // The incremental path (node list kept) was exercised, not only full rebuilds.
  EXPECT_GT(incremental_updates, 50);
}

}  // namespace
}  // namespace berth
