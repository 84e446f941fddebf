#include "plugins/volumebinding/volumebinding.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "berth/config/plugin_args.h"
#include "plugins/volumebinding/volumebinding_test_util.h"

namespace berth::volumebinding {
namespace {

// Long by design: kube-scheduler's volume binding cases, one row each.
TEST(VolumeBindingTest, UpstreamTable) {
  struct Case {
    std::string name;
    std::shared_ptr<const Pod> pod;
    std::vector<std::shared_ptr<const Node>> nodes;
    std::vector<Ptr<PersistentVolumeClaim>> pvcs;
    std::vector<Ptr<PersistentVolume>> pvs;
    Status want_prefilter;
    std::vector<Status> want_filter;  // per node, when PreFilter succeeds
  };
  const Status kBindConflict = Unresolvable({kErrReasonBindConflict});
  std::vector<Case> cases = {
      {"pod has not pvcs",
       PodWithClaims("pod-a", {}),
       {NodeNamed("node-a")},
       {},
       {},
       Status::Skip(),
       {}},
      {"all bound",
       PodWithClaims("pod-a", {"pvc-a"}),
       {NodeNamed("node-a")},
       {MakePVC("pvc-a", "wait-sc").BoundPV("pv-a").Obj()},
       {MakePV("pv-a", "wait-sc").Obj()},
       {},
       {{}}},
      {"all bound with local volumes (no PreFilterResult narrowing)",
       PodWithClaims("pod-a", {"pvc-a", "pvc-b"}),
       {NodeNamed("node-a"), NodeNamed("node-b")},
       {MakePVC("pvc-a", "wait-sc").BoundPV("pv-a").Obj(),
        MakePVC("pvc-b", "wait-sc").BoundPV("pv-b").Obj()},
       {MakePV("pv-a", "wait-sc").Phase("Bound").NodeAffinity(kHostname, {"node-a"}).Obj(),
        MakePV("pv-b", "wait-sc").Phase("Bound").NodeAffinity(kHostname, {"node-a"}).Obj()},
       {},
       {{}, Unresolvable({kErrReasonNodeConflict})}},
      {"PVC does not exist",
       PodWithClaims("pod-a", {"pvc-a"}),
       {NodeNamed("node-a")},
       {},
       {},
       Status::Unresolvable("persistentvolumeclaim \"pvc-a\" not found"),
       {}},
      {"Part of PVCs do not exist",
       PodWithClaims("pod-a", {"pvc-a", "pvc-b"}),
       {NodeNamed("node-a")},
       {MakePVC("pvc-a", "wait-sc").BoundPV("pv-a").Obj()},
       {},
       Status::Unresolvable("persistentvolumeclaim \"pvc-b\" not found"),
       {}},
      {"immediate claims not bound",
       PodWithClaims("pod-a", {"pvc-a"}),
       {NodeNamed("node-a")},
       {MakePVC("pvc-a", "immediate-sc").Obj()},
       {},
       Status::Unresolvable("pod has unbound immediate PersistentVolumeClaims"),
       {}},
      {"unbound claims no matches",
       PodWithClaims("pod-a", {"pvc-a"}),
       {NodeNamed("node-a")},
       {MakePVC("pvc-a", "wait-sc").Obj()},
       {},
       {},
       {kBindConflict}},
      {"bound and unbound unsatisfied",
       PodWithClaims("pod-a", {"pvc-a", "pvc-b"}),
       {NodeNamed("node-a", {{"foo", "barbar"}})},
       {MakePVC("pvc-a", "wait-sc").BoundPV("pv-a").Obj(), MakePVC("pvc-b", "wait-sc").Obj()},
       {MakePV("pv-a", "wait-sc").NodeAffinity("foo", {"bar"}).Obj()},
       {},
       {Unresolvable({kErrReasonNodeConflict, kErrReasonBindConflict})}},
      {"pv not found",
       PodWithClaims("pod-a", {"pvc-a"}),
       {NodeNamed("node-a")},
       {MakePVC("pvc-a", "wait-sc").BoundPV("pv-a").Obj()},
       {},
       {},
       {Unresolvable({kErrReasonPVNotExist})}},
      {"pv not found claim lost",
       PodWithClaims("pod-a", {"pvc-a"}),
       {NodeNamed("node-a")},
       {MakePVC("pvc-a", "wait-sc").BoundPV("pv-a").Phase("Lost").Obj()},
       {},
       Status::Unresolvable(
           "persistentvolumeclaim \"pvc-a\" bound to non-existent persistentvolume \"pv-a\""),
       {}},
      {"local volumes with close capacity are preferred",
       PodWithClaims("pod-a", {"pvc-a"}),
       {NodeNamed("node-a"), NodeNamed("node-b"), NodeNamed("node-c")},
       {MakePVC("pvc-a", "wait-sc").Request("50Gi").Obj()},
       {MakePV("pv-a-0", "wait-sc").Capacity("200Gi").NodeAffinity(kHostname, {"node-a"}).Obj(),
        MakePV("pv-a-1", "wait-sc").Capacity("200Gi").NodeAffinity(kHostname, {"node-a"}).Obj(),
        MakePV("pv-b-0", "wait-sc").Capacity("100Gi").NodeAffinity(kHostname, {"node-b"}).Obj(),
        MakePV("pv-b-1", "wait-sc").Capacity("100Gi").NodeAffinity(kHostname, {"node-b"}).Obj()},
       {},
       {{}, {}, kBindConflict}},
      {"local volumes with close capacity are preferred (multiple pvcs)",
       PodWithClaims("pod-a", {"pvc-0", "pvc-1"}),
       {NodeNamed("node-a"), NodeNamed("node-b"), NodeNamed("node-c")},
       {MakePVC("pvc-0", "wait-sc").Request("50Gi").Obj(),
        MakePVC("pvc-1", "wait-hdd-sc").Request("100Gi").Obj()},
       {MakePV("pv-a-0", "wait-sc").Capacity("200Gi").NodeAffinity(kHostname, {"node-a"}).Obj(),
        MakePV("pv-a-1", "wait-sc").Capacity("200Gi").NodeAffinity(kHostname, {"node-a"}).Obj(),
        MakePV("pv-a-2", "wait-hdd-sc").Capacity("200Gi").NodeAffinity(kHostname, {"node-a"}).Obj(),
        MakePV("pv-a-3", "wait-hdd-sc").Capacity("200Gi").NodeAffinity(kHostname, {"node-a"}).Obj(),
        MakePV("pv-b-0", "wait-sc").Capacity("100Gi").NodeAffinity(kHostname, {"node-b"}).Obj(),
        MakePV("pv-b-1", "wait-sc").Capacity("100Gi").NodeAffinity(kHostname, {"node-b"}).Obj(),
        MakePV("pv-b-2", "wait-hdd-sc").Capacity("100Gi").NodeAffinity(kHostname, {"node-b"}).Obj(),
        MakePV("pv-b-3", "wait-hdd-sc")
            .Capacity("100Gi")
            .NodeAffinity(kHostname, {"node-b"})
            .Obj()},
       {},
       {{}, {}, kBindConflict}},
      {"pre-bound claim counts as unbound immediate",
       PodWithClaims("pod-a", {"pvc-a"}),
       {NodeNamed("node-a")},
       {MakePVC("pvc-a", "wait-sc").PreBound("pv-a").Obj()},
       {MakePV("pv-a", "wait-sc").Obj()},
       Status::Unresolvable("pod has unbound immediate PersistentVolumeClaims"),
       {}},
  };

  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Env env(tc.nodes, tc.pvcs, tc.pvs);
    auto pod = PodInfo::Create(tc.pod);
    CycleState state;
    PreFilterResult result;
    Status pre = env.plugin.PreFilter(state, *pod, {}, &result);
    EXPECT_EQ(pre, tc.want_prefilter) << pre.Message();
    EXPECT_TRUE(result.AllNodes());
    if (!pre.IsSuccess()) continue;
    ASSERT_EQ(tc.want_filter.size(), tc.nodes.size());
    for (size_t i = 0; i < tc.nodes.size(); ++i) {
      const std::string& name = tc.nodes[i]->metadata.name;
      Status got = env.plugin.Filter(state, *pod, env.node(name));
      EXPECT_EQ(got, tc.want_filter[i]) << name << ": " << got.Message();
    }
  }
}

// Static matching for one unbound WaitForFirstConsumer claim on node-a: which PV is picked.
TEST(VolumeBindingTest, StaticMatching) {
  struct Case {
    std::string name;
    Ptr<PersistentVolumeClaim> pvc;
    std::vector<Ptr<PersistentVolume>> pvs;
    std::string want_pv;  // empty: the node is rejected
  };
  auto claim = [] { return MakePVC("pvc-a", "wait-sc").Request("5Gi"); };
  std::vector<Case> cases = {
      {"smallest fitting PV",
       claim().Obj(),
       {MakePV("pv-big", "wait-sc").Capacity("20Gi").Obj(),
        MakePV("pv-small", "wait-sc").Capacity("4Gi").Obj(),
        MakePV("pv-fit", "wait-sc").Capacity("5Gi").Obj()},
       "pv-fit"},
      {"other class ignored",
       claim().Obj(),
       {MakePV("pv-other", "wait-hdd-sc").Capacity("10Gi").Obj()},
       ""},
      {"not available ignored",
       claim().Obj(),
       {MakePV("pv-released", "wait-sc").Capacity("10Gi").Phase("Released").Obj()},
       ""},
      {"claimed by another claim ignored",
       claim().Obj(),
       {MakePV("pv-taken", "wait-sc").Capacity("10Gi").ClaimRef("other").Obj()},
       ""},
      {"pre-bound to this claim wins over a smaller PV",
       claim().Obj(),
       {MakePV("pv-small", "wait-sc").Capacity("5Gi").Obj(),
        MakePV("pv-prebound", "wait-sc").Capacity("50Gi").Phase("Pending").ClaimRef("pvc-a").Obj()},
       "pv-prebound"},
      {"pre-bound PV with affinity elsewhere rejects the node",
       claim().Obj(),
       {MakePV("pv-small", "wait-sc").Capacity("5Gi").Obj(),
        MakePV("pv-prebound", "wait-sc")
            .Capacity("50Gi")
            .ClaimRef("pvc-a")
            .NodeAffinity(kHostname, {"node-b"})
            .Obj()},
       ""},
      {"access modes must all be offered",
       claim().AccessModes({"ReadWriteOnce", "ReadOnlyMany"}).Obj(),
       {MakePV("pv-rwo", "wait-sc").Capacity("5Gi").AccessModes({"ReadWriteOnce"}).Obj(),
        MakePV("pv-both", "wait-sc")
            .Capacity("6Gi")
            .AccessModes({"ReadOnlyMany", "ReadWriteOnce"})
            .Obj()},
       "pv-both"},
      {"volume mode must match (empty is Filesystem)",
       claim().VolumeMode("Block").Obj(),
       {MakePV("pv-fs", "wait-sc").Capacity("5Gi").Obj(),
        MakePV("pv-block", "wait-sc").Capacity("9Gi").VolumeMode("Block").Obj()},
       "pv-block"},
      {"selector",
       claim().Selector(LabelSelector{{{"tier", "gold"}}, {}}).Obj(),
       {MakePV("pv-plain", "wait-sc").Capacity("5Gi").Obj(),
        MakePV("pv-gold", "wait-sc").Capacity("8Gi").Label("tier", "gold").Obj()},
       "pv-gold"},
      {"node affinity",
       claim().Obj(),
       {MakePV("pv-b", "wait-sc").Capacity("5Gi").NodeAffinity(kHostname, {"node-b"}).Obj(),
        MakePV("pv-a", "wait-sc").Capacity("7Gi").NodeAffinity(kHostname, {"node-a"}).Obj()},
       "pv-a"},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Env env({NodeNamed("node-a"), NodeNamed("node-b")}, {tc.pvc}, tc.pvs);
    auto pod = PodInfo::Create(PodWithClaims("pod-a", {"pvc-a"}));
    CycleState state;
    ASSERT_TRUE(env.plugin.PreFilter(state, *pod, {}, nullptr).IsSuccess());
    Status got = env.plugin.Filter(state, *pod, env.node("node-a"));
    if (tc.want_pv.empty()) {
      EXPECT_EQ(got, Unresolvable({kErrReasonBindConflict}));
      continue;
    }
    ASSERT_TRUE(got.IsSuccess()) << got.Message();
    ASSERT_TRUE(env.plugin.Reserve(state, *pod, "node-a").IsSuccess());
    ASSERT_TRUE(env.plugin.PreBind(state, *pod, "node-a").IsSuccess());
    auto pvc = env.cluster.GetPVC("default", "pvc-a");
    EXPECT_EQ(pvc->spec.volume_name, tc.want_pv);
  }
}

TEST(VolumeBindingTest, SmallestRequestChoosesFirst) {
  // pvc-big sorts after pvc-small, so pvc-small takes the 5Gi PV and pvc-big the 10Gi one.
  Env env({NodeNamed("node-a")},
          {MakePVC("pvc-big", "wait-sc").Request("8Gi").Obj(),
           MakePVC("pvc-small", "wait-sc").Request("1Gi").Obj()},
          {MakePV("pv-10", "wait-sc").Capacity("10Gi").Obj(),
           MakePV("pv-5", "wait-sc").Capacity("5Gi").Obj()});
  auto pod = PodInfo::Create(PodWithClaims("pod-a", {"pvc-big", "pvc-small"}));
  CycleState state;
  ASSERT_TRUE(env.plugin.PreFilter(state, *pod, {}, nullptr).IsSuccess());
  ASSERT_TRUE(env.plugin.Filter(state, *pod, env.node("node-a")).IsSuccess());
  ASSERT_TRUE(env.plugin.Reserve(state, *pod, "node-a").IsSuccess());
  ASSERT_TRUE(env.plugin.PreBind(state, *pod, "node-a").IsSuccess());
  EXPECT_EQ(env.cluster.GetPVC("default", "pvc-small")->spec.volume_name, "pv-5");
  EXPECT_EQ(env.cluster.GetPVC("default", "pvc-big")->spec.volume_name, "pv-10");
}

TEST(VolumeBindingTest, DynamicProvisioning) {
  auto zonal = Class("zonal", "WaitForFirstConsumer", "csi.example.com");
  zonal->allowed_topologies = {{{"topology.kubernetes.io/zone", {"zone-a", "zone-b"}}}};
  auto anywhere = Class("anywhere", "WaitForFirstConsumer", "csi.example.com");
  auto no_provisioner = Class("static", "WaitForFirstConsumer", "kubernetes.io/no-provisioner");
  auto empty_term = Class("empty-term", "WaitForFirstConsumer", "csi.example.com");
  empty_term->allowed_topologies = {{}};

  struct Case {
    std::string name;
    std::string class_name;
    Labels node_labels;
    bool fits;
  };
  std::vector<Case> cases = {
      {"no topology restriction", "anywhere", {}, true},
      {"allowed zone", "zonal", {{"topology.kubernetes.io/zone", "zone-b"}}, true},
      {"other zone", "zonal", {{"topology.kubernetes.io/zone", "zone-c"}}, false},
      {"label missing", "zonal", {}, false},
      {"no-provisioner cannot provision", "static", {}, false},
      {"a term without requirements selects nothing", "empty-term", {}, false},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    Env env({NodeNamed("node-a", tc.node_labels)},
            {MakePVC("pvc-a", tc.class_name).Request("1Gi").Obj()}, {},
            {zonal, anywhere, no_provisioner, empty_term});
    auto pod = PodInfo::Create(PodWithClaims("pod-a", {"pvc-a"}));
    CycleState state;
    ASSERT_TRUE(env.plugin.PreFilter(state, *pod, {}, nullptr).IsSuccess());
    Status got = env.plugin.Filter(state, *pod, env.node("node-a"));
    if (!tc.fits) {
      EXPECT_EQ(got, Unresolvable({kErrReasonBindConflict}));
      continue;
    }
    ASSERT_TRUE(got.IsSuccess()) << got.Message();
    ASSERT_TRUE(env.plugin.Reserve(state, *pod, "node-a").IsSuccess());
    ASSERT_TRUE(env.plugin.PreBind(state, *pod, "node-a").IsSuccess());
    auto pvc = env.cluster.GetPVC("default", "pvc-a");
    EXPECT_EQ(pvc->metadata.annotations.at("volume.kubernetes.io/selected-node"), "node-a");
    EXPECT_EQ(env.cluster.write_counts().provisions, 1);
  }
}

TEST(VolumeBindingTest, StaticFallsBackToProvisioning) {
  Env env({NodeNamed("node-a")}, {MakePVC("pvc-a", "dyn").Request("10Gi").Obj()},
          {MakePV("pv-small", "dyn").Capacity("1Gi").Obj()},
          {Class("dyn", "WaitForFirstConsumer", "csi.example.com")});
  auto pod = PodInfo::Create(PodWithClaims("pod-a", {"pvc-a"}));
  CycleState state;
  ASSERT_TRUE(env.plugin.PreFilter(state, *pod, {}, nullptr).IsSuccess());
  EXPECT_TRUE(env.plugin.Filter(state, *pod, env.node("node-a")).IsSuccess());
}

TEST(VolumeBindingTest, SelectedNodeClaimFitsOnlyThatNode) {
  Env env({NodeNamed("node-a"), NodeNamed("node-b")},
          {MakePVC("pvc-a", "dyn").SelectedNode("node-b").Obj()}, {},
          {Class("dyn", "WaitForFirstConsumer", "csi.example.com")});
  auto pod = PodInfo::Create(PodWithClaims("pod-a", {"pvc-a"}));
  CycleState state;
  ASSERT_TRUE(env.plugin.PreFilter(state, *pod, {}, nullptr).IsSuccess());
  EXPECT_EQ(env.plugin.Filter(state, *pod, env.node("node-a")),
            Unresolvable({kErrReasonBindConflict}));
  EXPECT_TRUE(env.plugin.Filter(state, *pod, env.node("node-b")).IsSuccess());
}

TEST(VolumeBindingTest, PreFilterErrors) {
  Env env({NodeNamed("node-a")},
          {MakePVC("pvc-nomode", "nomode").Obj(), MakePVC("pvc-missing-class", "ghost").Obj()}, {},
          {Class("nomode", std::nullopt)});
  {
    CycleState state;
    auto pod = PodInfo::Create(PodWithClaims("pod-a", {"pvc-nomode"}));
    EXPECT_EQ(env.plugin.PreFilter(state, *pod, {}, nullptr),
              Status::Error("VolumeBindingMode not set for StorageClass \"nomode\""));
  }
  {
    // A class that does not exist binds immediately, so the claim should have been bound.
    CycleState state;
    auto pod = PodInfo::Create(PodWithClaims("pod-a", {"pvc-missing-class"}));
    EXPECT_EQ(env.plugin.PreFilter(state, *pod, {}, nullptr),
              Status::Unresolvable("pod has unbound immediate PersistentVolumeClaims"));
  }
  {
    CycleState state;
    Volume v;
    v.name = "scratch";
    v.ephemeral = true;
    auto pod = PodInfo::Create(MakePod().Name("pod-e").Volume(v).Obj());
    EXPECT_EQ(env.plugin.PreFilter(state, *pod, {}, nullptr),
              Status::Unresolvable("waiting for ephemeral volume controller to create the "
                                   "persistentvolumeclaim \"pod-e-scratch\""));
  }
}

// Reserve assumes the chosen PV, so the next pod of the run cannot take it; Unreserve gives it
// back.
TEST(VolumeBindingTest, ReservePreventsDoubleUse) {
  Env env({NodeNamed("node-a")},
          {MakePVC("pvc-1", "wait-sc").Obj(), MakePVC("pvc-2", "wait-sc").Obj()},
          {MakePV("pv-only", "wait-sc").Obj()});
  auto first = PodInfo::Create(PodWithClaims("first", {"pvc-1"}));
  auto second = PodInfo::Create(PodWithClaims("second", {"pvc-2"}));
  const NodeInfo& node = env.node("node-a");

  CycleState s1;
  ASSERT_TRUE(env.plugin.PreFilter(s1, *first, {}, nullptr).IsSuccess());
  ASSERT_TRUE(env.plugin.Filter(s1, *first, node).IsSuccess());
  ASSERT_TRUE(env.plugin.Reserve(s1, *first, "node-a").IsSuccess());
  auto assumed = env.plugin.assume_cache().GetPV("pv-only");
  ASSERT_TRUE(assumed->spec.claim_ref);
  EXPECT_EQ(assumed->spec.claim_ref->name, "pvc-1");
  EXPECT_EQ(assumed->metadata.annotations.at("pv.kubernetes.io/bound-by-controller"), "yes");
  // The cluster itself is untouched until PreBind.
  EXPECT_FALSE(env.cluster.GetPV("pv-only")->spec.claim_ref);

  CycleState s2;
  ASSERT_TRUE(env.plugin.PreFilter(s2, *second, {}, nullptr).IsSuccess());
  EXPECT_EQ(env.plugin.Filter(s2, *second, node), Unresolvable({kErrReasonBindConflict}));

  env.plugin.Unreserve(s1, *first, "node-a");
  EXPECT_FALSE(env.plugin.assume_cache().GetPV("pv-only")->spec.claim_ref);
  CycleState s3;
  ASSERT_TRUE(env.plugin.PreFilter(s3, *second, {}, nullptr).IsSuccess());
  EXPECT_TRUE(env.plugin.Filter(s3, *second, node).IsSuccess());
  // Unreserve is idempotent.
  env.plugin.Unreserve(s1, *first, "node-a");
}

TEST(VolumeBindingTest, PreBindBindsAndLaterPodsSeeTheApiObjects) {
  Env env({NodeNamed("node-a")},
          {MakePVC("pvc-1", "wait-sc").Obj(), MakePVC("pvc-2", "wait-sc").Obj()},
          {MakePV("pv-only", "wait-sc").Obj()});
  auto first = PodInfo::Create(PodWithClaims("first", {"pvc-1"}));
  CycleState s1;
  ASSERT_TRUE(env.plugin.PreFilter(s1, *first, {}, nullptr).IsSuccess());
  ASSERT_TRUE(env.plugin.Filter(s1, *first, env.node("node-a")).IsSuccess());
  ASSERT_TRUE(env.plugin.Reserve(s1, *first, "node-a").IsSuccess());
  ASSERT_TRUE(env.plugin.PreBind(s1, *first, "node-a").IsSuccess());
  EXPECT_EQ(env.cluster.write_counts().volume_binds, 1);
  auto pvc = env.cluster.GetPVC("default", "pvc-1");
  EXPECT_TRUE(IsClaimFullyBound(*pvc));
  EXPECT_EQ(pvc->spec.volume_name, "pv-only");

  // The PV is bound in the API now; the assumption gave way to it and it stays taken.
  auto pv = env.plugin.assume_cache().GetPV("pv-only");
  EXPECT_EQ(pv, env.cluster.GetPV("pv-only"));
  auto second = PodInfo::Create(PodWithClaims("second", {"pvc-2"}));
  CycleState s2;
  ASSERT_TRUE(env.plugin.PreFilter(s2, *second, {}, nullptr).IsSuccess());
  EXPECT_EQ(env.plugin.Filter(s2, *second, env.node("node-a")),
            Unresolvable({kErrReasonBindConflict}));

  // A pod that uses the now bound claim needs no binding work.
  auto again = PodInfo::Create(PodWithClaims("again", {"pvc-1"}));
  CycleState s3;
  ASSERT_TRUE(env.plugin.PreFilter(s3, *again, {}, nullptr).IsSuccess());
  ASSERT_TRUE(env.plugin.Filter(s3, *again, env.node("node-a")).IsSuccess());
  ASSERT_TRUE(env.plugin.Reserve(s3, *again, "node-a").IsSuccess());
  ASSERT_TRUE(env.plugin.PreBind(s3, *again, "node-a").IsSuccess());
  EXPECT_EQ(env.cluster.write_counts().volume_binds, 1);
}

TEST(VolumeBindingTest, ProvisioningReservationRestrictsSharers) {
  // Two pods share one unbound claim: once the first reserved node-a, the claim carries the
  // selected node and the second pod fits node-a only.
  Env env({NodeNamed("node-a"), NodeNamed("node-b")}, {MakePVC("shared", "dyn").Obj()}, {},
          {Class("dyn", "WaitForFirstConsumer", "csi.example.com")});
  auto first = PodInfo::Create(PodWithClaims("first", {"shared"}));
  auto second = PodInfo::Create(PodWithClaims("second", {"shared"}));
  CycleState s1;
  ASSERT_TRUE(env.plugin.PreFilter(s1, *first, {}, nullptr).IsSuccess());
  ASSERT_TRUE(env.plugin.Filter(s1, *first, env.node("node-b")).IsSuccess());
  ASSERT_TRUE(env.plugin.Reserve(s1, *first, "node-a").IsSuccess());
  CycleState s2;
  ASSERT_TRUE(env.plugin.PreFilter(s2, *second, {}, nullptr).IsSuccess());
  EXPECT_TRUE(env.plugin.Filter(s2, *second, env.node("node-a")).IsSuccess());
  EXPECT_EQ(env.plugin.Filter(s2, *second, env.node("node-b")),
            Unresolvable({kErrReasonBindConflict}));
}

TEST(VolumeBindingTest, PreBindWithoutReserveIsAnError) {
  Env env({NodeNamed("node-a")});
  CycleState state;
  auto pod = PodInfo::Create(PodWithClaims("pod-a", {}));
  EXPECT_EQ(env.plugin.PreBind(state, *pod, "node-a"),
            Status::Error("no pod volumes found for node \"node-a\""));
  // A pod without claims reserves trivially and has nothing to bind.
  ASSERT_TRUE(env.plugin.PreFilter(state, *pod, {}, nullptr).IsSkip());
  ASSERT_TRUE(env.plugin.Reserve(state, *pod, "node-a").IsSuccess());
  EXPECT_TRUE(env.plugin.PreBind(state, *pod, "node-a").IsSuccess());
}

TEST(VolumeBindingTest, PVAffinityIgnoresMatchFields) {
  // As in kube-scheduler, a PV's node affinity is evaluated against the node's labels only, and
  // field requirements of a node without name are not checked.
  auto with_fields = std::make_shared<PersistentVolume>(*MakePV("pv", "wait-sc").Obj());
  NodeSelectorTerm term;
  term.match_fields.push_back({"metadata.name", "In", {"node-b"}});
  with_fields->spec.node_affinity = NodeSelector{{term}};
  EXPECT_TRUE(CheckNodeAffinity(*with_fields, *NodeNamed("node-a")));
  // Label requirements of the same term still apply.
  with_fields->spec.node_affinity->terms[0].match_expressions.push_back({"zone", "In", {"z1"}});
  EXPECT_FALSE(CheckNodeAffinity(*with_fields, *NodeNamed("node-a")));
  EXPECT_TRUE(CheckNodeAffinity(*with_fields, *NodeNamed("node-a", {{"zone", "z1"}})));
}

TEST(VolumeBindingTest, Registration) {
  PluginRegistration reg = VolumeBindingRegistration(config::FeatureGates());
  EXPECT_EQ(reg.name, "VolumeBinding");
  ASSERT_TRUE(reg.decode_args);
  FakeHandle handle;
  auto defaults = reg.factory(nullptr, handle);
  ASSERT_TRUE(defaults.ok());
  auto* plugin = dynamic_cast<VolumeBinding*>(defaults->get());
  ASSERT_NE(plugin, nullptr);
  EXPECT_EQ(plugin->bind_timeout_seconds(), 600);

  config::VolumeBindingArgs args;
  args.bind_timeout_seconds = 30;
  auto custom = reg.factory(&args, handle);
  ASSERT_TRUE(custom.ok());
  EXPECT_EQ(dynamic_cast<VolumeBinding*>(custom->get())->bind_timeout_seconds(), 30);

  config::DefaultPreemptionArgs wrong;
  EXPECT_FALSE(reg.factory(&wrong, handle).ok());
}

}  // namespace
}  // namespace berth::volumebinding
