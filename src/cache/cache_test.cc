#include "cache/cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
  Update();
  EXPECT_EQ(Get("n1")->requested().milli_cpu, 2000);

  // Assuming twice is a bug in the caller.
  auto again = cache_.AssumePod(PodInfo::Create(assumed));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().message, "pod default/p is in the cache, so can't be assumed");

  ASSERT_TRUE(cache_.ForgetPod(*assumed).ok());
  EXPECT_FALSE(cache_.IsAssumedPod(*assumed));
  EXPECT_EQ(cache_.PodCount(), 0u);
  Update();
  EXPECT_EQ(Get("n1")->requested().milli_cpu, 0);
  EXPECT_THAT(PodNames(*Get("n1")), IsEmpty());

  // Assume, then the informer confirms the bind.
  ASSERT_TRUE(cache_.AssumePod(PodInfo::Create(assumed)).ok());
  cache_.FinishBinding(*assumed);
  EXPECT_TRUE(cache_.IsAssumedPod(*assumed));
  cache_.AddPod(P("p", "n1", "2"));
  EXPECT_FALSE(cache_.IsAssumedPod(*assumed));
  EXPECT_EQ(cache_.PodCount(), 1u);
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

}  // namespace
}  // namespace berth
