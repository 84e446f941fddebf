// Constraint compilation, the default-constraint selector, and the plugin's registration.
#include <gtest/gtest.h>

#include <cctype>

// Cases name only the fields they set.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include "config/plugin_args_codec.h"
#include "plugins/podtopologyspread/constraints.h"
#include "plugins/podtopologyspread/podtopologyspread.h"
#include "plugins/podtopologyspread/state.h"
#include "plugins/podtopologyspread/test_util.h"

namespace berth::podtopologyspread {
namespace {

using namespace testutil;  // NOLINT

TEST(ConstraintsFromPodTest, DefaultsAndPolicies) {
  auto pod =
      MakePod()
          .Name("p")
          .Label("foo", "")
          .Spread(Hard(2, "zone", kFoo))
          .Spread(Soft(1, std::string(kLabelHostname), kFoo))
          .Spread(Hard(1, std::string(kLabelHostname), kBar, SpreadOpts{3, "Ignore", "Honor", {}}))
          .Obj();
  auto hard = ConstraintsFromPod(*pod, kDoNotSchedule);
  ASSERT_TRUE(hard.ok());
  ASSERT_EQ(hard->size(), 2u);
  const SpreadConstraint& zone = hard->at(0);
  EXPECT_EQ(zone.max_skew, 2);
  EXPECT_EQ(zone.topology_key, "zone");
  EXPECT_FALSE(zone.is_hostname);
  EXPECT_EQ(zone.min_domains, 1);
  EXPECT_TRUE(zone.honor_node_affinity);
  EXPECT_FALSE(zone.honor_node_taints);
  const SpreadConstraint& host = hard->at(1);
  EXPECT_TRUE(host.is_hostname);
  EXPECT_EQ(host.min_domains, 3);
  EXPECT_FALSE(host.honor_node_affinity);
  EXPECT_TRUE(host.honor_node_taints);
  EXPECT_NE(zone.count_key, host.count_key);  // different selectors

  auto soft = ConstraintsFromPod(*pod, kScheduleAnyway);
  ASSERT_TRUE(soft.ok());
  ASSERT_EQ(soft->size(), 1u);
  // Same selector and namespace as the zone constraint: same pods counted.
  EXPECT_EQ(soft->at(0).count_key, zone.count_key);
}

TEST(ConstraintsFromPodTest, CountKeys) {
  auto count_key = [](const std::shared_ptr<const Pod>& pod) {
    auto c = ConstraintsFromPod(*pod, kDoNotSchedule);
    EXPECT_TRUE(c.ok());
    return c->at(0).count_key;
  };
  // Selectors that can never count a pod have no key.
  EXPECT_EQ(count_key(MakePod().Name("p").Spread(Hard(1, "zone", std::nullopt)).Obj()), "");
  EXPECT_EQ(count_key(MakePod().Name("p").Spread(Hard(1, "zone", LabelSelector{})).Obj()), "");
  EXPECT_EQ(count_key(MakePod()
                          .Name("p")
                          .Spread(Hard(1, "zone", std::nullopt, {.match_label_keys = {"app"}}))
                          .Label("app", "x")
                          .Obj()),
            "");
  // The namespace and the matchLabelKeys values are part of the key.
  const auto a = count_key(MakePod().Name("p").Spread(Hard(1, "zone", kFoo)).Obj());
  const auto b =
      count_key(MakePod().Name("p").Namespace("other").Spread(Hard(1, "zone", kFoo)).Obj());
  const auto v1 = count_key(MakePod()
                                .Name("p")
                                .Label("rev", "1")
                                .Spread(Hard(1, "zone", kFoo, {.match_label_keys = {"rev"}}))
                                .Obj());
  const auto v2 = count_key(MakePod()
                                .Name("p")
                                .Label("rev", "2")
                                .Spread(Hard(1, "zone", kFoo, {.match_label_keys = {"rev"}}))
                                .Obj());
  EXPECT_NE(a, "");
  EXPECT_NE(a, b);
  EXPECT_NE(a, v1);
  EXPECT_NE(v1, v2);
}

TEST(ConstraintsFromPodTest, MatchLabelKeysNarrowTheSelector) {
  auto pod = MakePod()
                 .Name("p")
                 .Label("foo", "")
                 .Label("rev", "2")
                 .Spread(Hard(1, "zone", kFoo, {.match_label_keys = {"rev", "absent"}}))
                 .Obj();
  auto c = ConstraintsFromPod(*pod, kDoNotSchedule);
  ASSERT_TRUE(c.ok());
  const CompiledSelector& s = c->at(0).selector;
  EXPECT_TRUE(s.Matches({{"foo", ""}, {"rev", "2"}}));
  EXPECT_FALSE(s.Matches({{"foo", ""}, {"rev", "1"}}));
  EXPECT_FALSE(s.Matches({{"foo", ""}}));
}

// A pod created through the API server has the keys merged into its selector already;
// kube-scheduler (v1.34, v1.35) still adds the pod's current values on top, which changes
// nothing while the labels are those the pod was created with, and matches no pod once a key's
// label has changed.
TEST(ConstraintsFromPodTest, AnAdmittedPodsKeysAreAppliedAgainLikeKubeScheduler) {
  LabelSelector merged = kFoo;
  merged.match_expressions.push_back({"rev", "In", {"1"}});
  auto selector_of = [&](const char* rev) {
    auto pod = MakePod()
                   .Name("p")
                   .Label("foo", "")
                   .Label("rev", rev)
                   .Spread(Hard(1, "zone", merged, {.match_label_keys = {"rev"}}))
                   .Obj();
    auto c = ConstraintsFromPod(*pod, kDoNotSchedule);
    EXPECT_TRUE(c.ok());
    return c->at(0).selector;
  };
  const CompiledSelector same = selector_of("1");
  EXPECT_TRUE(same.Matches({{"foo", ""}, {"rev", "1"}}));
  EXPECT_FALSE(same.Matches({{"foo", ""}, {"rev", "2"}}));
  const CompiledSelector relabelled = selector_of("2");
  EXPECT_FALSE(relabelled.Matches({{"foo", ""}, {"rev", "1"}}));
  EXPECT_FALSE(relabelled.Matches({{"foo", ""}, {"rev", "2"}}));
}

// ---------------------------------------------------------------- DefaultSelector

struct SelectorCase {
  std::string name;
  std::vector<Service> services;
  std::vector<ReplicationController> rcs;
  std::vector<ReplicaSet> rss;
  std::vector<StatefulSet> sss;
  std::optional<OwnerReference> owner;
  bool want_none = false;
  std::vector<Labels> matching;
  std::vector<Labels> not_matching;
};

void PrintTo(const SelectorCase& c, std::ostream* os) { *os << c.name; }

class DefaultSelectorTest : public ::testing::TestWithParam<SelectorCase> {};

TEST_P(DefaultSelectorTest, Selector) {
  const SelectorCase& tc = GetParam();
  InMemoryCluster cluster;
  for (auto s : tc.services) {
    s.metadata.namespace_ = s.metadata.namespace_.empty() ? "default" : s.metadata.namespace_;
    cluster.AddService(std::make_shared<const Service>(s));
  }
  for (auto rc : tc.rcs) {
    rc.metadata.namespace_ = "default";
    cluster.AddReplicationController(std::make_shared<const ReplicationController>(rc));
  }
  for (auto rs : tc.rss) {
    rs.metadata.namespace_ = "default";
    cluster.AddReplicaSet(std::make_shared<const ReplicaSet>(rs));
  }
  for (auto ss : tc.sss) {
    ss.metadata.namespace_ = "default";
    cluster.AddStatefulSet(std::make_shared<const StatefulSet>(ss));
  }
  auto b = MakePod().Name("p").Label("foo", "bar").Label("baz", "qux");
  if (tc.owner) b.mutable_pod().metadata.owner_references.push_back(*tc.owner);
  auto selector = DefaultSelector(*b.Obj(), cluster);
  if (tc.want_none) {
    EXPECT_FALSE(selector.has_value());
    return;
  }
  ASSERT_TRUE(selector.has_value());
  auto compiled = CompiledSelector::Compile(*selector);
  ASSERT_TRUE(compiled.ok()) << compiled.error().message;
  for (const auto& l : tc.matching) EXPECT_TRUE(compiled->Matches(l));
  for (const auto& l : tc.not_matching) EXPECT_FALSE(compiled->Matches(l));
}

Service Svc(std::string name, Labels selector, std::string ns = "default") {
  Service s;
  s.metadata.name = std::move(name);
  s.metadata.namespace_ = std::move(ns);
  s.selector = std::move(selector);
  return s;
}

OwnerReference Owner(std::string api_version, std::string kind, std::string name,
                     bool controller = true) {
  return OwnerReference{std::move(api_version), std::move(kind), std::move(name), "uid",
                        controller};
}

template <class T>
T Workload(std::string name, std::optional<LabelSelector> selector) {
  T w;
  w.metadata.name = std::move(name);
  w.selector = std::move(selector);
  return w;
}

ReplicationController Rc(std::string name, Labels selector) {
  ReplicationController rc;
  rc.metadata.name = std::move(name);
  rc.selector = std::move(selector);
  return rc;
}

std::vector<SelectorCase> SelectorCases() {
  LabelSelector baz_exists = Exists("baz");
  return {
      {.name = "nothing selects the pod", .want_none = true},
      {.name = "a service that does not select the pod",
       .services = {Svc("s", {{"foo", "other"}})},
       .want_none = true},
      {.name = "a service in another namespace",
       .services = {Svc("s", {{"foo", "bar"}}, "other")},
       .want_none = true},
      {.name = "a service without selector", .services = {Svc("s", {})}, .want_none = true},
      {.name = "one service",
       .services = {Svc("s", {{"foo", "bar"}})},
       .matching = {{{"foo", "bar"}}, {{"foo", "bar"}, {"x", "y"}}},
       .not_matching = {{{"foo", "baz"}}, {}}},
      {.name = "two services merge",
       .services = {Svc("s1", {{"foo", "bar"}}), Svc("s2", {{"baz", "qux"}})},
       .matching = {{{"foo", "bar"}, {"baz", "qux"}}},
       .not_matching = {{{"foo", "bar"}}}},
      {.name = "replication controller",
       .rcs = {Rc("rc", {{"baz", "qux"}})},
       .owner = Owner("v1", "ReplicationController", "rc"),
       .matching = {{{"baz", "qux"}}},
       .not_matching = {{{"foo", "bar"}}}},
      {.name = "replica set adds its requirements",
       .services = {Svc("s", {{"foo", "bar"}})},
       .rss = {Workload<ReplicaSet>("rs", baz_exists)},
       .owner = Owner("apps/v1", "ReplicaSet", "rs"),
       .matching = {{{"foo", "bar"}, {"baz", "anything"}}},
       .not_matching = {{{"foo", "bar"}}}},
      {.name = "stateful set adds its requirements",
       .sss = {Workload<StatefulSet>("ss", MatchLabels({{"baz", "qux"}}))},
       .owner = Owner("apps/v1", "StatefulSet", "ss"),
       .matching = {{{"baz", "qux"}}},
       .not_matching = {{{"baz", "other"}}}},
      {.name = "replica set without selector adds nothing",
       .rss = {Workload<ReplicaSet>("rs", std::nullopt)},
       .owner = Owner("apps/v1", "ReplicaSet", "rs"),
       .want_none = true},
      {.name = "owner that is not the controller is ignored",
       .rss = {Workload<ReplicaSet>("rs", baz_exists)},
       .owner = Owner("apps/v1", "ReplicaSet", "rs", false),
       .want_none = true},
      {.name = "unsupported controller kind is ignored",
       .rss = {Workload<ReplicaSet>("rs", baz_exists)},
       .owner = Owner("apps/v1", "Deployment", "rs"),
       .want_none = true},
      {.name = "missing replica set is ignored",
       .owner = Owner("apps/v1", "ReplicaSet", "gone"),
       .want_none = true},
  };
}

INSTANTIATE_TEST_SUITE_P(Cases, DefaultSelectorTest, ::testing::ValuesIn(SelectorCases()),
                         [](const auto& info) {
                           std::string n;
                           for (char c : info.param.name) n += std::isalnum(c) ? c : '_';
                           return n;
                         });

// ---------------------------------------------------------------- registration

TEST(RegistrationTest, FactoryAndDecoder) {
  PluginRegistration reg = PodTopologySpreadRegistration();
  EXPECT_EQ(reg.name, "PodTopologySpread");
  ASSERT_TRUE(reg.decode_args);
  auto decoded = reg.decode_args(nullptr, "args");
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded.value()->Kind(), "PodTopologySpreadArgs");

  berth::testing::FakeHandle handle;
  auto plugin = reg.factory(nullptr, handle);
  ASSERT_TRUE(plugin.ok());
  EXPECT_EQ(plugin.value()->Name(), "PodTopologySpread");
  EXPECT_NE(dynamic_cast<FilterPlugin*>(plugin.value().get()), nullptr);
  EXPECT_NE(dynamic_cast<ScorePlugin*>(plugin.value().get()), nullptr);

  config::PodTopologySpreadArgs invalid;  // System defaulting forbids listed constraints
  invalid.default_constraints = {Soft(1, "zone", std::nullopt)};
  EXPECT_FALSE(reg.factory(&invalid, handle).ok());

  config::InterPodAffinityArgs wrong;
  auto rejected = reg.factory(&wrong, handle);
  ASSERT_FALSE(rejected.ok());
  EXPECT_NE(rejected.error().message.find("PodTopologySpreadArgs"), std::string::npos);
}

// Without args the plugin applies the system defaults: a pod selected by a Service is spread
// over hostnames and zones when scored.
TEST(RegistrationTest, SystemDefaultsApplyWithoutArgs) {
  Fixture fx(
      {N("n1", {{"kubernetes.io/hostname", "n1"}}), N("n2", {{"kubernetes.io/hostname", "n2"}})},
      {P("a", "n1", {{"app", "web"}})}, config::PodTopologySpreadArgs{});
  fx.cluster.AddService(std::make_shared<const Service>(Svc("web", {{"app", "web"}})));
  auto pi = PodInfo::Create(MakePod().Name("p").Label("app", "web").Obj());
  CycleState state;
  // No DoNotSchedule default: nothing to filter.
  PreFilterResult r;
  EXPECT_TRUE(fx.plugin.PreFilter(state, *pi, fx.Nodes(), &r).IsSkip());
  std::vector<const NodeInfo*> feasible = {&fx.Node("n1"), &fx.Node("n2")};
  ASSERT_TRUE(fx.plugin.PreScore(state, *pi, feasible).IsSuccess());
  const ScoreState* st = state.Read(kScoreStateKey);
  ASSERT_NE(st, nullptr);
  ASSERT_EQ(st->constraints.size(), 2u);
  EXPECT_EQ(st->constraints[0].topology_key, kLabelHostname);
  EXPECT_EQ(st->constraints[0].max_skew, 3);
  EXPECT_EQ(st->constraints[1].topology_key, kLabelTopologyZone);
  EXPECT_EQ(st->constraints[1].max_skew, 5);
  EXPECT_FALSE(st->require_all_keys);
  // A pod nothing selects gets no default constraints.
  auto lone = PodInfo::Create(MakePod().Name("q").Label("app", "other").Obj());
  CycleState other;
  EXPECT_TRUE(fx.plugin.PreScore(other, *lone, feasible).IsSkip());
}

}  // namespace
}  // namespace berth::podtopologyspread
