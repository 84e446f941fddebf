#include "plugins/nodeaffinity/nodeaffinity.h"

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "berth/config/plugin_args.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/testing/fake_handle.h"
#include "testing/builders.h"

namespace berth {
namespace {

using testing::MakeNode;
using testing::MakeNodeInfo;
using testing::MakePod;
using testing::PodBuilder;

NodeSelectorRequirement Expr(std::string key, std::string op,
                             std::vector<std::string> values = {}) {
  return {std::move(key), std::move(op), std::move(values)};
}

NodeSelectorTerm Term(std::vector<NodeSelectorRequirement> expressions,
                      std::vector<NodeSelectorRequirement> fields = {}) {
  return {std::move(expressions), std::move(fields)};
}

NodeSelectorTerm NameIn(std::vector<std::string> names) {
  return Term({}, {Expr("metadata.name", "In", std::move(names))});
}

PodBuilder Required(std::vector<NodeSelectorTerm> terms) {
  Affinity a;
  a.node_affinity.emplace().required = NodeSelector{std::move(terms)};
  return MakePod().Name("p").Affinity(std::move(a));
}

PodBuilder Preferred(std::vector<PreferredSchedulingTerm> terms) {
  Affinity a;
  a.node_affinity.emplace().preferred = std::move(terms);
  return MakePod().Name("p").Affinity(std::move(a));
}

std::unique_ptr<Plugin> NewPlugin(const config::NodeAffinityArgs* args = nullptr) {
  testing::FakeHandle handle;
  auto plugin = NodeAffinityRegistration().factory(args, handle);
  EXPECT_TRUE(plugin.ok()) << (plugin.ok() ? "" : plugin.error().message);
  return std::move(plugin).value();
}

std::shared_ptr<const Node> NodeWith(const std::string& name,
                                     std::vector<std::pair<std::string, std::string>> labels) {
  auto b = MakeNode().Name(name);
  for (auto& [k, v] : labels) b.Label(k, v);
  return b.Obj();
}

constexpr const char* kPodReason = "node(s) didn't match Pod's node affinity/selector";
constexpr const char* kEnforcedReason = "node(s) didn't match scheduler-enforced node affinity";

struct FilterCase {
  std::string name;
  PodBuilder pod;
  std::shared_ptr<const Node> node;
  std::optional<NodeAffinity> added;
  Code want_prefilter = Code::kSuccess;
  std::optional<std::set<std::string>> want_names;  // nullopt: all nodes
  std::string want_reason;                          // empty: Filter passes
  bool run_prefilter = true;
};

// Long by design: kube-scheduler's filter cases, one row each.
TEST(NodeAffinityFilter, UpstreamCases) {
  NodeAffinity added_name_node2;
  added_name_node2.required = NodeSelector{{NameIn({"node2"})}};
  NodeAffinity added_zone_bar;
  added_zone_bar.required = NodeSelector{{Term({Expr("zone", "In", {"bar"})})}};

  std::vector<FilterCase> cases = {
      {"missing labels",
       MakePod().Name("p").NodeSelector("foo", "bar"),
       NodeWith("n", {}),
       {},
       Code::kSuccess,
       std::nullopt,
       kPodReason},
      {"same labels",
       MakePod().Name("p").NodeSelector("foo", "bar"),
       NodeWith("n", {{"foo", "bar"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       ""},
      {"node labels are superset",
       MakePod().Name("p").NodeSelector("foo", "bar"),
       NodeWith("n", {{"foo", "bar"}, {"baz", "blah"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       ""},
      {"node labels are subset",
       MakePod().Name("p").NodeSelector("foo", "bar").NodeSelector("baz", "blah"),
       NodeWith("n", {{"foo", "bar"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       kPodReason},
      {"matchExpressions In matches",
       Required({Term({Expr("foo", "In", {"bar", "value2"})})}),
       NodeWith("n", {{"foo", "bar"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       ""},
      {"matchExpressions Gt matches",
       Required({Term({Expr("kernel-version", "Gt", {"0204"})})}),
       NodeWith("n", {{"kernel-version", "0206"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       ""},
      {"matchExpressions NotIn matches",
       Required({Term({Expr("mem-type", "NotIn", {"DDR", "DDR2"})})}),
       NodeWith("n", {{"mem-type", "DDR3"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       ""},
      {"matchExpressions Exists matches",
       Required({Term({Expr("GPU", "Exists")})}),
       NodeWith("n", {{"GPU", "NVIDIA-GRID-K1"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       ""},
      {"affinity that doesn't match node's labels",
       Required({Term({Expr("foo", "In", {"value1", "value2"})})}),
       NodeWith("n", {{"foo", "bar"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       kPodReason},
      {"empty MatchExpressions match no objects",
       Required({Term({})}),
       NodeWith("n", {{"foo", "bar"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       kPodReason},
      {"no required terms at all match no objects",
       Required({}),
       NodeWith("n", {{"foo", "bar"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       kPodReason},
      {"no affinity: PreFilter skips",
       MakePod().Name("p"),
       NodeWith("n", {{"foo", "bar"}}),
       {},
       Code::kSkip,
       std::nullopt,
       "",
       true},
      {"affinity but nil required: PreFilter skips",
       Preferred({}),
       NodeWith("n", {{"foo", "bar"}}),
       {},
       Code::kSkip,
       std::nullopt,
       "",
       true},
      {"multiple matchExpressions ANDed match",
       Required({Term({Expr("GPU", "Exists"), Expr("GPU", "NotIn", {"AMD", "INTER"})})}),
       NodeWith("n", {{"GPU", "NVIDIA-GRID-K1"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       ""},
      {"multiple matchExpressions ANDed don't match",
       Required({Term({Expr("GPU", "Exists"), Expr("GPU", "In", {"AMD", "INTER"})})}),
       NodeWith("n", {{"GPU", "NVIDIA-GRID-K1"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       kPodReason},
      {"multiple terms ORed, one matches",
       Required({Term({Expr("foo", "In", {"bar", "value2"})}),
                 Term({Expr("diffkey", "In", {"wrong", "value2"})})}),
       NodeWith("n", {{"foo", "bar"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       ""},
      {"affinity and nodeSelector both satisfied",
       Required({Term({Expr("foo", "Exists")})}).NodeSelector("foo", "bar"),
       NodeWith("n", {{"foo", "bar"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       ""},
      {"affinity matches but nodeSelector does not",
       Required({Term({Expr("foo", "Exists")})}).NodeSelector("foo", "bar"),
       NodeWith("n", {{"foo", "barrrrrr"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       kPodReason},
      {"invalid value in affinity term never matches",
       Required({Term({Expr("foo", "NotIn", {"invalid value: ___@#$%^"})})}),
       NodeWith("n", {{"foo", "bar"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       kPodReason},
      {"matchFields In matches the node",
       Required({NameIn({"node1"})}),
       NodeWith("node1", {}),
       {},
       Code::kSuccess,
       std::set<std::string>{"node1"},
       ""},
      {"matchFields In does not match the node",
       Required({NameIn({"node1"})}),
       NodeWith("node2", {}),
       {},
       Code::kSuccess,
       std::set<std::string>{"node1"},
       kPodReason},
      {"two terms: matchFields does not match, but matchExpressions matches",
       Required({Term({}, {Expr("metadata.name", "In", {"node1"}),
                           Expr("metadata.name", "In", {"node2"})}),
                 Term({Expr("foo", "In", {"bar"})})}),
       NodeWith("node2", {{"foo", "bar"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       ""},
      {"one term: matchFields does not match, but matchExpressions matches",
       Required({Term({Expr("foo", "In", {"bar"})}, {Expr("metadata.name", "In", {"node1"})})}),
       NodeWith("node2", {{"foo", "bar"}}),
       {},
       Code::kSuccess,
       std::set<std::string>{"node1"},
       kPodReason},
      {"one term: both matchFields and matchExpressions match",
       Required({Term({Expr("foo", "In", {"bar"})}, {Expr("metadata.name", "In", {"node1"})})}),
       NodeWith("node1", {{"foo", "bar"}}),
       {},
       Code::kSuccess,
       std::set<std::string>{"node1"},
       ""},
      {"two terms: both matchFields and matchExpressions do not match",
       Required({NameIn({"node1"}), Term({Expr("foo", "In", {"not-match-to-bar"})})}),
       NodeWith("node2", {{"foo", "bar"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       kPodReason},
      {"two terms of node.Name affinity",
       Required({NameIn({"node1"}), NameIn({"node2"})}),
       NodeWith("node2", {}),
       {},
       Code::kSuccess,
       std::set<std::string>{"node1", "node2"},
       ""},
      {"two conflicting match field requirements",
       Required({Term(
           {}, {Expr("metadata.name", "In", {"node1"}), Expr("metadata.name", "In", {"node2"})})}),
       NodeWith("node2", {{"foo", "bar"}}),
       {},
       Code::kUnschedulableAndUnresolvable,
       std::nullopt,
       kPodReason},
      {"matches added affinity and pod's node affinity",
       Required({Term({Expr("zone", "In", {"foo"})})}), NodeWith("node2", {{"zone", "foo"}}),
       added_name_node2, Code::kSuccess, std::nullopt, ""},
      {"matches added affinity but not pod's node affinity",
       Required({Term({Expr("zone", "In", {"bar"})})}), NodeWith("node2", {{"zone", "foo"}}),
       added_name_node2, Code::kSuccess, std::nullopt, kPodReason},
      {"doesn't match added affinity", MakePod().Name("p"), NodeWith("node2", {{"zone", "foo"}}),
       added_zone_bar, Code::kSuccess, std::nullopt, kEnforcedReason},
      {"added affinity is checked before the pod's own", MakePod().Name("p").NodeSelector("a", "b"),
       NodeWith("node2", {{"zone", "foo"}}), added_zone_bar, Code::kSuccess, std::nullopt,
       kEnforcedReason},
      {"matches node selector even if PreFilter is not called",
       MakePod().Name("p").NodeSelector("foo", "bar"),
       NodeWith("n", {{"foo", "bar"}, {"baz", "blah"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       "",
       false},
      {"matches node affinity even if PreFilter is not called",
       Required({Term({Expr("GPU", "Exists"), Expr("GPU", "NotIn", {"AMD", "INTER"})})}),
       NodeWith("n", {{"GPU", "NVIDIA-GRID-K1"}}),
       {},
       Code::kSuccess,
       std::nullopt,
       "",
       false},
  };

  for (const FilterCase& tc : cases) {
    SCOPED_TRACE(tc.name);
    config::NodeAffinityArgs args;
    args.added_affinity = tc.added;
    auto plugin = NewPlugin(&args);
    auto* pre = dynamic_cast<PreFilterPlugin*>(plugin.get());
    auto* filter = dynamic_cast<FilterPlugin*>(plugin.get());
    ASSERT_NE(pre, nullptr);
    ASSERT_NE(filter, nullptr);
    PodInfoPtr pod = tc.pod.Info();
    CycleState state;
    if (tc.run_prefilter) {
      PreFilterResult result;
      Status s = pre->PreFilter(state, *pod, {}, &result);
      EXPECT_EQ(s.code(), tc.want_prefilter) << s.Message();
      if (s.code() == Code::kUnschedulableAndUnresolvable) {
        EXPECT_EQ(s.reasons(), std::vector<std::string>{"pod affinity terms conflict"});
      }
      EXPECT_EQ(result.node_names, tc.want_names);
      if (s.IsSkip()) continue;  // the framework would not call Filter
    }
    NodeInfo ni = MakeNodeInfo(tc.node);
    Status got = filter->Filter(state, *pod, ni);
    if (tc.want_reason.empty()) {
      EXPECT_TRUE(got.IsSuccess()) << got.Message();
    } else {
      EXPECT_EQ(got.code(), Code::kUnschedulableAndUnresolvable);
      EXPECT_EQ(got.reasons(), std::vector<std::string>{tc.want_reason});
    }
  }
}

TEST(NodeAffinityPreFilter, AddedRequiredAffinityDisablesSkip) {
  config::NodeAffinityArgs args;
  args.added_affinity.emplace().required = NodeSelector{{Term({Expr("zone", "Exists")})}};
  auto plugin = NewPlugin(&args);
  auto* pre = dynamic_cast<PreFilterPlugin*>(plugin.get());
  CycleState state;
  PreFilterResult result;
  PodInfoPtr pod = MakePod().Name("p").Info();
  EXPECT_TRUE(pre->PreFilter(state, *pod, {}, &result).IsSuccess());
  EXPECT_TRUE(result.AllNodes());

  // Added preferred terms alone do not constrain filtering.
  config::NodeAffinityArgs preferred_only;
  preferred_only.added_affinity.emplace().preferred = {{3, Term({Expr("zone", "Exists")})}};
  auto plugin2 = NewPlugin(&preferred_only);
  EXPECT_TRUE(
      dynamic_cast<PreFilterPlugin*>(plugin2.get())->PreFilter(state, *pod, {}, &result).IsSkip());
}

struct ScoreCase {
  std::string name;
  PodBuilder pod;
  std::vector<std::shared_ptr<const Node>> nodes;
  std::optional<NodeAffinity> added;
  bool want_skip = false;
  std::vector<int64_t> want;
};

// Long by design: kube-scheduler's score cases, one row each.
TEST(NodeAffinityScore, UpstreamCases) {
  const std::vector<std::pair<std::string, std::string>> label1 = {{"foo", "bar"}};
  const std::vector<std::pair<std::string, std::string>> label2 = {{"key", "value"}};
  const std::vector<std::pair<std::string, std::string>> label3 = {{"az", "az1"}};
  const std::vector<std::pair<std::string, std::string>> label4 = {{"abc", "az11"},
                                                                   {"def", "az22"}};
  const std::vector<std::pair<std::string, std::string>> label5 = {
      {"foo", "bar"}, {"key", "value"}, {"az", "az1"}};
  const std::vector<PreferredSchedulingTerm> affinity1 = {{2, Term({Expr("foo", "In", {"bar"})})}};
  const std::vector<PreferredSchedulingTerm> affinity2 = {
      {2, Term({Expr("foo", "In", {"bar"})})},
      {4, Term({Expr("key", "In", {"value"})})},
      {5, Term({Expr("foo", "In", {"bar"}), Expr("key", "In", {"value"}),
                Expr("az", "In", {"az1"})})}};
  NodeAffinity added1;
  added1.preferred = affinity1;
  NodeAffinity added_key;
  added_key.preferred = {{3, Term({Expr("key", "In", {"value"})})}};

  std::vector<ScoreCase> cases = {
      {"Skip is returned in PreScore when NodeAffinity is nil",
       MakePod().Name("p"),
       {NodeWith("node1", label1)},
       std::nullopt,
       true,
       {}},
      {"no node matches preferred scheduling requirements so all nodes' priority is zero",
       Preferred(affinity1),
       {NodeWith("node1", label4), NodeWith("node2", label2), NodeWith("node3", label3)},
       std::nullopt,
       false,
       {0, 0, 0}},
      {"only node1 matches the preferred scheduling requirements of pod",
       Preferred(affinity1),
       {NodeWith("node1", label1), NodeWith("node2", label2), NodeWith("node3", label3)},
       std::nullopt,
       false,
       {kMaxNodeScore, 0, 0}},
      {"all nodes match the preferred scheduling requirements of pod but with different "
       "priorities",
       Preferred(affinity2),
       {NodeWith("node1", label1), NodeWith("node5", label5), NodeWith("node2", label2)},
       std::nullopt,
       false,
       {18, kMaxNodeScore, 36}},
      {"added affinity",
       MakePod().Name("p"),
       {NodeWith("node1", label1), NodeWith("node2", label2)},
       added1,
       false,
       {kMaxNodeScore, 0}},
      {"added affinity and pod has default affinity",
       Preferred(affinity1),
       {NodeWith("node1", label1), NodeWith("node2", label2), NodeWith("node3", label5)},
       added_key,
       false,
       {40, 60, kMaxNodeScore}},
      {"weight-zero and empty terms contribute nothing",
       Preferred({{0, Term({Expr("foo", "In", {"bar"})})},
                  {7, Term({})},
                  {1, Term({Expr("key", "Exists")})}}),
       {NodeWith("node1", label1), NodeWith("node2", label2)},
       std::nullopt,
       false,
       {0, kMaxNodeScore}},
  };

  for (const ScoreCase& tc : cases) {
    for (bool run_pre_score : {true, false}) {
      SCOPED_TRACE(tc.name + (run_pre_score ? " (with PreScore)" : " (without PreScore)"));
      config::NodeAffinityArgs args;
      args.added_affinity = tc.added;
      auto plugin = NewPlugin(&args);
      auto* pre = dynamic_cast<PreScorePlugin*>(plugin.get());
      auto* scorer = dynamic_cast<ScorePlugin*>(plugin.get());
      ASSERT_NE(pre, nullptr);
      ASSERT_NE(scorer, nullptr);
      ASSERT_TRUE(scorer->HasNormalize());
      Snapshot snapshot = Snapshot::Build(tc.nodes, {});
      std::vector<const NodeInfo*> feasible(snapshot.nodes().begin(), snapshot.nodes().end());
      PodInfoPtr pod = tc.pod.Info();
      CycleState state;
      if (run_pre_score) {
        Status s = pre->PreScore(state, *pod, feasible);
        EXPECT_EQ(s.IsSkip(), tc.want_skip);
        if (s.IsSkip()) continue;
      } else if (tc.want_skip) {
        continue;
      }
      std::vector<NodeScore> scores;
      for (const auto& n : tc.nodes) {
        const NodeInfo* ni = snapshot.Get(n->metadata.name);
        NodeScore s{ni, -1};
        ASSERT_TRUE(scorer->Score(state, *pod, *ni, &s.score).IsSuccess());
        scores.push_back(s);
      }
      ASSERT_TRUE(scorer->NormalizeScore(state, *pod, scores).IsSuccess());
      std::vector<int64_t> got;
      for (const auto& s : scores) got.push_back(s.score);
      EXPECT_EQ(got, tc.want);
    }
  }
}

TEST(NodeAffinityFactory, RejectsWrongArgsType) {
  testing::FakeHandle handle;
  config::NodeResourcesFitArgs wrong;
  auto plugin = NodeAffinityRegistration().factory(&wrong, handle);
  ASSERT_FALSE(plugin.ok());
  EXPECT_EQ(plugin.error().message,
            "args are not of type NodeAffinityArgs, got NodeResourcesFitArgs");
  EXPECT_EQ(NodeAffinityRegistration().name, "NodeAffinity");
}

TEST(NodeAffinityFactory, DecodedAddedAffinityIsEnforced) {
  PluginRegistration reg = NodeAffinityRegistration();
  ASSERT_TRUE(static_cast<bool>(reg.decode_args));
  const nlohmann::json raw = {
      {"addedAffinity",
       {{"requiredDuringSchedulingIgnoredDuringExecution",
         {{"nodeSelectorTerms",
           {{{"matchExpressions",
              {{{"key", "zone"}, {"operator", "In"}, {"values", {"a"}}}}}}}}}}}}};
  auto decoded = reg.decode_args(&raw, "args");
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  testing::FakeHandle handle;
  auto plugin = reg.factory(decoded->get(), handle);
  ASSERT_TRUE(plugin.ok());
  auto* filter = dynamic_cast<FilterPlugin*>(plugin->get());
  CycleState state;
  PodInfoPtr pod = MakePod().Name("p").Info();
  NodeInfo in_a = MakeNodeInfo(NodeWith("n1", {{"zone", "a"}}));
  NodeInfo in_b = MakeNodeInfo(NodeWith("n2", {{"zone", "b"}}));
  EXPECT_TRUE(filter->Filter(state, *pod, in_a).IsSuccess());
  EXPECT_EQ(filter->Filter(state, *pod, in_b).reasons(), std::vector<std::string>{kEnforcedReason});
}
}  // namespace
}  // namespace berth
