// What each in-tree plugin puts in a pod's signature (berth/framework/pod_signer.h), after
// kube-scheduler's SignPod tests: which pods a plugin refuses to sign, and which differences
// between two pods change its part.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "berth/config/plugin_args.h"
#include "berth/framework/pod_signer.h"
#include "berth/testing/builders.h"
#include "berth/testing/fake_handle.h"
#include "config/plugin_names.h"
#include "plugins/registry.h"

namespace berth {
namespace {

using testing::MakePod;
namespace names = config::names;

class PodSignersTest : public ::testing::Test {
 protected:
  // The plugin `name` built with `args` (its defaults when null), as a PodSigner.
  const PodSigner* Signer(std::string_view name, const PluginArgs* args = nullptr) {
    const PluginRegistration* reg = registry_.Find(name);
    EXPECT_NE(reg, nullptr) << name;
    if (reg == nullptr) return nullptr;
    std::shared_ptr<const PluginArgs> defaulted;
    if (args == nullptr && reg->decode_args) {
      auto decoded = reg->decode_args(nullptr, "args");
      EXPECT_TRUE(decoded.ok()) << name;
      defaulted = std::move(decoded).value();
      args = defaulted.get();
    }
    auto built = reg->factory(args, handle_);
    EXPECT_TRUE(built.ok()) << name;
    plugins_.push_back(std::move(built).value());
    return dynamic_cast<const PodSigner*>(plugins_.back().get());
  }

  Registry registry_ = InTreeRegistry();
  testing::FakeHandle handle_;
  std::vector<std::unique_ptr<Plugin>> plugins_;
};

TEST_F(PodSignersTest, EveryDefaultPluginSigns) {
  for (std::string_view name :
       {names::kDynamicResources, names::kNodeUnschedulable, names::kNodeName,
        names::kTaintToleration, names::kNodeAffinity, names::kNodePorts, names::kNodeResourcesFit,
        names::kVolumeRestrictions, names::kNodeVolumeLimits, names::kVolumeBinding,
        names::kVolumeZone, names::kPodTopologySpread, names::kInterPodAffinity,
        names::kNodeResourcesBalancedAllocation, names::kImageLocality,
        names::kNodeDeclaredFeatures}) {
    EXPECT_NE(Signer(name), nullptr) << name;
  }
}

// DynamicResources signs a pod without resource claims, and compares nothing of it.
TEST_F(PodSignersTest, DynamicResourcesSignsOnlyPodsWithoutClaims) {
  const PodSigner* signer = Signer(names::kDynamicResources);
  ASSERT_NE(signer, nullptr);
  auto plain = MakePod().Name("a").Obj();
  auto other = MakePod().Name("b").Label("app", "x").Obj();
  EXPECT_TRUE(signer->Signable(*plain));
  EXPECT_TRUE(signer->SameSignature(*plain, *other));
  EXPECT_FALSE(signer->Signable(*MakePod().Name("c").Claim("gpu", "my-gpu").Obj()));
  EXPECT_FALSE(signer->Signable(*MakePod().Name("d").ClaimFromTemplate("gpu", "gpu-tmpl").Obj()));
}

TEST_F(PodSignersTest, TopologySpreadSignsOnlyWithoutConstraints) {
  config::PodTopologySpreadArgs system;  // defaultingType System: the system defaults
  config::PodTopologySpreadArgs list;
  list.defaulting_type = "List";
  const PodSigner* with_defaults = Signer(names::kPodTopologySpread, &system);
  const PodSigner* without = Signer(names::kPodTopologySpread, &list);
  ASSERT_NE(with_defaults, nullptr);
  ASSERT_NE(without, nullptr);
  const auto plain = MakePod().Name("p").Obj();
  TopologySpreadConstraint c;
  c.max_skew = 1;
  c.topology_key = "zone";
  c.when_unsatisfiable = "DoNotSchedule";
  const auto spread = MakePod().Name("s").Spread(c).Obj();
  EXPECT_FALSE(with_defaults->Signable(*plain));
  EXPECT_TRUE(without->Signable(*plain));
  EXPECT_FALSE(without->Signable(*spread));
}

TEST_F(PodSignersTest, InterPodAffinitySignsLabelsOfPodsWithoutAffinity) {
  const PodSigner* s = Signer(names::kInterPodAffinity);
  ASSERT_NE(s, nullptr);
  const auto foo = MakePod().Name("a").Label("foo", "bar").Obj();
  const auto foo2 = MakePod().Name("b").Label("foo", "bar").Obj();
  const auto baz = MakePod().Name("c").Label("foo", "baz").Obj();
  EXPECT_TRUE(s->Signable(*foo));
  EXPECT_TRUE(s->SameSignature(*foo, *foo2));
  EXPECT_FALSE(s->SameSignature(*foo, *baz));
  Affinity a;
  a.pod_affinity = PodAffinity{};
  a.pod_affinity->required.push_back(PodAffinityTerm{});
  EXPECT_FALSE(s->Signable(*MakePod().Name("d").Affinity(a).Obj()));
  // With ignorePreferredTermsOfExistingPods the labels are left out.
  config::InterPodAffinityArgs ignore;
  ignore.ignore_preferred_terms_of_existing_pods = true;
  const PodSigner* ignoring = Signer(names::kInterPodAffinity, &ignore);
  ASSERT_NE(ignoring, nullptr);
  EXPECT_TRUE(ignoring->SameSignature(*foo, *baz));
}

TEST_F(PodSignersTest, ResourcePluginsSignRequests) {
  for (std::string_view name :
       {names::kNodeResourcesFit, names::kNodeResourcesBalancedAllocation}) {
    const PodSigner* s = Signer(name);
    ASSERT_NE(s, nullptr) << name;
    const auto small = MakePod().Name("a").Req({{"cpu", "1"}, {"memory", "2Gi"}}).Obj();
    const auto small2 = MakePod().Name("b").Req({{"cpu", "1000m"}, {"memory", "2Gi"}}).Obj();
    const auto big = MakePod().Name("c").Req({{"cpu", "2"}, {"memory", "2Gi"}}).Obj();
    EXPECT_TRUE(s->Signable(*small)) << name;  // no DeviceClass backs any resource here
    EXPECT_TRUE(s->SameSignature(*small, *small2)) << name;
    EXPECT_FALSE(s->SameSignature(*small, *big)) << name;
  }
}

TEST_F(PodSignersTest, NodeLocalPluginsSignWhatTheyRead) {
  const auto base = MakePod().Name("a").Obj();
  const PodSigner* name = Signer(names::kNodeName);
  EXPECT_FALSE(name->SameSignature(*base, *MakePod().Name("b").Node("n1").Obj()));
  const PodSigner* affinity = Signer(names::kNodeAffinity);
  EXPECT_FALSE(affinity->SameSignature(*base, *MakePod().Name("b").NodeSelector("z", "1").Obj()));
  EXPECT_TRUE(affinity->SameSignature(*base, *MakePod().Name("b").Label("x", "y").Obj()));
  const PodSigner* ports = Signer(names::kNodePorts);
  EXPECT_TRUE(ports->SameSignature(*MakePod().Name("a").HostPort(80).HostPort(81).Obj(),
                                   *MakePod().Name("b").HostPort(81).HostPort(80).Obj()));
  EXPECT_FALSE(ports->SameSignature(*base, *MakePod().Name("b").HostPort(80).Obj()));
  const PodSigner* images = Signer(names::kImageLocality);
  EXPECT_TRUE(images->SameSignature(*MakePod().Name("a").Image("nginx").Obj(),
                                    *MakePod().Name("b").Image("nginx:latest").Obj()));
  EXPECT_FALSE(images->SameSignature(*MakePod().Name("a").Image("nginx").Obj(),
                                     *MakePod().Name("b").Image("redis").Obj()));
  Toleration t{"k", "Exists", "", "NoSchedule", std::nullopt};
  for (std::string_view taints : {names::kTaintToleration, names::kNodeUnschedulable}) {
    EXPECT_FALSE(Signer(taints)->SameSignature(*base, *MakePod().Name("b").Toleration(t).Obj()))
        << taints;
  }
  const PodSigner* volumes = Signer(names::kVolumeBinding);
  EXPECT_TRUE(volumes->SameSignature(*MakePod().Name("a").PVC("data").Obj(),
                                     *MakePod().Name("b").PVC("data").Obj()));
  EXPECT_FALSE(volumes->SameSignature(*MakePod().Name("a").PVC("data-0").Obj(),
                                      *MakePod().Name("b").PVC("data-1").Obj()));
}

}  // namespace
}  // namespace berth
