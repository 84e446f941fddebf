#include "berth/api/selectors.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth {
namespace {

LabelSelectorRequirement Expr(std::string key, std::string op, std::vector<std::string> values) {
  return {std::move(key), std::move(op), std::move(values)};
}

NodeSelectorRequirement NExpr(std::string key, std::string op, std::vector<std::string> values) {
  return {std::move(key), std::move(op), std::move(values)};
}

Node MakeNode(std::string name, Labels labels) {
  Node n;
  n.metadata.name = std::move(name);
  n.metadata.labels = std::move(labels);
  return n;
}

TEST(CompiledSelectorTest, Matching) {
  struct Case {
    std::string name;
    LabelSelector sel;
    Labels labels;
    bool want;
  };
  const std::vector<Case> cases = {
      {"empty selector matches everything", {}, {{"a", "b"}}, true},
      {"empty selector matches empty set", {}, {}, true},
      {"matchLabels hit", {{{"app", "web"}}, {}}, {{"app", "web"}, {"x", "y"}}, true},
      {"matchLabels wrong value", {{{"app", "web"}}, {}}, {{"app", "db"}}, false},
      {"matchLabels missing key", {{{"app", "web"}}, {}}, {{"x", "y"}}, false},
      {"In hit", {{}, {Expr("tier", "In", {"a", "b"})}}, {{"tier", "b"}}, true},
      {"In miss", {{}, {Expr("tier", "In", {"a", "b"})}}, {{"tier", "c"}}, false},
      {"In absent", {{}, {Expr("tier", "In", {"a"})}}, {}, false},
      {"NotIn absent key matches", {{}, {Expr("tier", "NotIn", {"a"})}}, {}, true},
      {"NotIn other value", {{}, {Expr("tier", "NotIn", {"a"})}}, {{"tier", "b"}}, true},
      {"NotIn listed value", {{}, {Expr("tier", "NotIn", {"a"})}}, {{"tier", "a"}}, false},
      {"Exists", {{}, {Expr("tier", "Exists", {})}}, {{"tier", ""}}, true},
      {"Exists absent", {{}, {Expr("tier", "Exists", {})}}, {}, false},
      {"DoesNotExist absent", {{}, {Expr("tier", "DoesNotExist", {})}}, {}, true},
      {"DoesNotExist present", {{}, {Expr("tier", "DoesNotExist", {})}}, {{"tier", "x"}}, false},
      {"all ANDed",
       {{{"app", "web"}}, {Expr("tier", "Exists", {}), Expr("env", "NotIn", {"prod"})}},
       {{"app", "web"}, {"tier", "1"}, {"env", "prod"}},
       false},
  };
  for (const auto& c : cases) {
    auto s = CompiledSelector::Compile(c.sel);
    ASSERT_TRUE(s.ok()) << c.name << ": " << s.error().message;
    EXPECT_EQ(s->Matches(c.labels), c.want) << c.name;
  }
}

TEST(CompiledSelectorTest, ValidationErrors) {
  const std::vector<LabelSelector> bad = {
      {{}, {Expr("k", "In", {})}},        {{}, {Expr("k", "NotIn", {})}},
      {{}, {Expr("k", "Exists", {"v"})}}, {{}, {Expr("k", "DoesNotExist", {"v"})}},
      {{}, {Expr("k", "Gt", {"1"})}},  // Gt is not a label selector operator
      {{}, {Expr("k", "in", {"v"})}},     {{}, {Expr("bad key!", "Exists", {})}},
      {{}, {Expr("k", "In", {"-bad"})}},  {{{"k", "bad value!"}}, {}},
  };
  for (const auto& s : bad) {
    EXPECT_FALSE(CompiledSelector::Compile(s).ok());
    // Callers that ignore errors get a selector matching nothing.
    EXPECT_FALSE(CompiledSelector::FromOptional(s).Matches({{"k", "v"}}));
  }
  auto err = CompiledSelector::Compile({{}, {Expr("k", "Foo", {"v"})}});
  ASSERT_FALSE(err.ok());
  EXPECT_NE(err.error().message.find("\"Foo\" is not a valid label selector operator"),
            std::string::npos);
}

TEST(CompiledSelectorTest, NothingAndEverything) {
  EXPECT_FALSE(CompiledSelector().Matches({}));
  EXPECT_TRUE(CompiledSelector().MatchesNothing());
  EXPECT_FALSE(CompiledSelector::FromOptional(std::nullopt).Matches({}));
  EXPECT_TRUE(CompiledSelector::Everything().Matches({{"a", "b"}}));
  EXPECT_TRUE(CompiledSelector::Everything().Empty());
  EXPECT_TRUE(CompiledSelector::FromOptional(LabelSelector{}).Matches({}));
  EXPECT_TRUE(CompiledSelector::FromSet({}).Matches({{"x", "y"}}));
  EXPECT_TRUE(CompiledSelector::FromSet({{"a", "b"}}).Matches({{"a", "b"}, {"c", "d"}}));
  EXPECT_FALSE(CompiledSelector::FromSet({{"a", "b"}}).Matches({{"c", "d"}}));
}

TEST(CompiledSelectorTest, AddInAndNotIn) {
  CompiledSelector s = CompiledSelector::Everything();
  s.AddIn("app", "web");
  s.AddNotIn("version", "v1");
  EXPECT_FALSE(s.Empty());
  EXPECT_TRUE(s.Matches({{"app", "web"}}));
  EXPECT_TRUE(s.Matches({{"app", "web"}, {"version", "v2"}}));
  EXPECT_FALSE(s.Matches({{"app", "web"}, {"version", "v1"}}));
  EXPECT_FALSE(s.Matches({{"app", "db"}}));
  CompiledSelector nothing;
  nothing.AddIn("app", "web");
  EXPECT_FALSE(nothing.Matches({{"app", "web"}}));
}

TEST(NodeSelectorTest, TermMatching) {
  const Node node = MakeNode("node-1", {{"zone", "us-1"}, {"gpus", "4"}, {"kernel", "5x"}});
  struct Case {
    std::string name;
    NodeSelectorTerm term;
    bool want;
  };
  const std::vector<Case> cases = {
      {"empty term matches nothing", {}, false},
      {"In", {{NExpr("zone", "In", {"us-1", "us-2"})}, {}}, true},
      {"In miss", {{NExpr("zone", "In", {"us-2"})}, {}}, false},
      {"NotIn absent key", {{NExpr("rack", "NotIn", {"r1"})}, {}}, true},
      {"Exists", {{NExpr("zone", "Exists", {})}, {}}, true},
      {"DoesNotExist", {{NExpr("zone", "DoesNotExist", {})}, {}}, false},
      {"Gt", {{NExpr("gpus", "Gt", {"3"})}, {}}, true},
      {"Gt equal", {{NExpr("gpus", "Gt", {"4"})}, {}}, false},
      {"Lt", {{NExpr("gpus", "Lt", {"5"})}, {}}, true},
      {"Lt absent key", {{NExpr("cpus", "Lt", {"5"})}, {}}, false},
      {"Gt non-integer label", {{NExpr("kernel", "Gt", {"1"})}, {}}, false},
      {"Gt non-integer value is invalid", {{NExpr("gpus", "Gt", {"x"})}, {}}, false},
      {"Gt two values is invalid", {{NExpr("gpus", "Gt", {"1", "2"})}, {}}, false},
      {"In without values is invalid", {{NExpr("zone", "NotIn", {})}, {}}, false},
      {"Exists with values is invalid", {{NExpr("rack", "DoesNotExist", {"x"})}, {}}, false},
      {"unknown operator", {{NExpr("zone", "Equals", {"us-1"})}, {}}, false},
      {"ANDed expressions",
       {{NExpr("zone", "In", {"us-1"}), NExpr("gpus", "Lt", {"2"})}, {}},
       false},
      {"field In", {{}, {NExpr("metadata.name", "In", {"node-1"})}}, true},
      {"field In other", {{}, {NExpr("metadata.name", "In", {"node-2"})}}, false},
      {"field NotIn", {{}, {NExpr("metadata.name", "NotIn", {"node-2"})}}, true},
      {"field NotIn self", {{}, {NExpr("metadata.name", "NotIn", {"node-1"})}}, false},
      {"field with two values is invalid",
       {{}, {NExpr("metadata.name", "In", {"node-1", "node-2"})}},
       false},
      {"field Exists is invalid", {{}, {NExpr("metadata.name", "Exists", {})}}, false},
      {"unknown field", {{}, {NExpr("metadata.uid", "In", {"node-1"})}}, false},
      {"labels and fields",
       {{NExpr("zone", "In", {"us-1"})}, {NExpr("metadata.name", "In", {"node-1"})}},
       true},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(NodeSelectorTermMatches(c.term, node), c.want) << c.name;
  }
}

TEST(NodeSelectorTest, TermsAreORedAndBadTermsIgnored) {
  const Node node = MakeNode("n", {{"zone", "a"}});
  NodeSelector sel;
  EXPECT_FALSE(NodeSelectorMatches(sel, node));
  sel.terms.push_back({});                                   // empty
  sel.terms.push_back({{NExpr("zone", "Foo", {"a"})}, {}});  // invalid
  EXPECT_FALSE(NodeSelectorMatches(sel, node));
  sel.terms.push_back({{NExpr("zone", "In", {"a"})}, {}});
  EXPECT_TRUE(NodeSelectorMatches(sel, node));
}

TEST(NodeSelectorTest, PodNodeSelectorAndRequiredAffinity) {
  const Node node = MakeNode("n", {{"zone", "a"}, {"disk", "ssd"}});
  Pod pod;
  EXPECT_TRUE(PodMatchesNodeSelectorAndAffinityTerms(pod, node));
  pod.spec.node_selector = {{"disk", "ssd"}};
  EXPECT_TRUE(PodMatchesNodeSelectorAndAffinityTerms(pod, node));
  pod.spec.node_selector = {{"disk", "hdd"}};
  EXPECT_FALSE(PodMatchesNodeSelectorAndAffinityTerms(pod, node));
  pod.spec.node_selector = {{"disk", "ssd"}};
  pod.spec.affinity.emplace();
  pod.spec.affinity->node_affinity.emplace();
  EXPECT_TRUE(PodMatchesNodeSelectorAndAffinityTerms(pod, node));  // no required part
  pod.spec.affinity->node_affinity->required.emplace();
  EXPECT_FALSE(PodMatchesNodeSelectorAndAffinityTerms(pod, node));  // zero terms
  pod.spec.affinity->node_affinity->required->terms.push_back({{NExpr("zone", "In", {"a"})}, {}});
  EXPECT_TRUE(PodMatchesNodeSelectorAndAffinityTerms(pod, node));
  pod.spec.node_selector = {{"gpu", "yes"}};
  EXPECT_FALSE(PodMatchesNodeSelectorAndAffinityTerms(pod, node));
}

Toleration Tol(std::string key, std::string op, std::string value, std::string effect) {
  Toleration t;
  t.key = std::move(key);
  t.op = std::move(op);
  t.value = std::move(value);
  t.effect = std::move(effect);
  return t;
}

TEST(TaintTest, TolerationToleratesTaint) {
  struct Case {
    std::string name;
    Toleration tol;
    Taint taint;
    bool want;
  };
  const std::vector<Case> cases = {
      {"equal key value effect",
       Tol("k", "Equal", "v", "NoSchedule"),
       {"k", "v", "NoSchedule"},
       true},
      {"empty operator means Equal",
       Tol("k", "", "v", "NoSchedule"),
       {"k", "v", "NoSchedule"},
       true},
      {"value mismatch", Tol("k", "Equal", "v1", "NoSchedule"), {"k", "v2", "NoSchedule"}, false},
      {"key mismatch", Tol("k1", "Equal", "v", "NoSchedule"), {"k2", "v", "NoSchedule"}, false},
      {"effect mismatch", Tol("k", "Equal", "v", "NoExecute"), {"k", "v", "NoSchedule"}, false},
      {"empty effect matches all effects",
       Tol("k", "Equal", "v", ""),
       {"k", "v", "NoExecute"},
       true},
      {"Exists ignores value", Tol("k", "Exists", "", ""), {"k", "anything", "NoSchedule"}, true},
      {"empty key Exists tolerates all", Tol("", "Exists", "", ""), {"x", "y", "NoExecute"}, true},
      {"empty key Exists with effect",
       Tol("", "Exists", "", "NoSchedule"),
       {"x", "y", "NoExecute"},
       false},
      {"unknown operator", Tol("k", "Gt", "v", ""), {"k", "v", "NoSchedule"}, false},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(TolerationToleratesTaint(c.tol, c.taint), c.want) << c.name;
  }
}

TEST(TaintTest, FindUntoleratedTaint) {
  const std::vector<Taint> taints = {
      {"soft", "", "PreferNoSchedule"}, {"a", "1", "NoSchedule"}, {"b", "2", "NoExecute"}};
  std::vector<Toleration> tols = {Tol("a", "Equal", "1", "NoSchedule")};
  const Taint* t = FindUntoleratedTaint(taints, tols, IsScheduleBlockingTaint);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->key, "b");
  t = FindUntoleratedTaint(taints, tols, nullptr);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->key, "soft");
  tols.push_back(Tol("b", "Exists", "", ""));
  EXPECT_EQ(FindUntoleratedTaint(taints, tols, IsScheduleBlockingTaint), nullptr);
  EXPECT_EQ(FindUntoleratedTaint({}, {}, IsScheduleBlockingTaint), nullptr);
  EXPECT_FALSE(IsScheduleBlockingTaint({"k", "", "PreferNoSchedule"}));
}

}  // namespace
}  // namespace berth
