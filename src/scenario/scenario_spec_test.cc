#include "scenario/scenario_spec.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace berth::scenario {
namespace {

std::string Wrap(const std::string& steps) {
  return "apiVersion: berth.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n"
         "  cluster: {nodes: 3}\n  steps:\n" +
         steps;
}

std::string ErrorOf(const std::string& text) {
  auto s = ParseScenario(text, "", "test.yaml");
  return s.ok() ? "" : s.error().message;
}

TEST(ScenarioSpecTest, ReadsEveryStepKind) {
  auto s = ParseScenario(Wrap(R"(  - at: 0s
    apply: {object: {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: i}]}}}
  - at: 30s
    scale: {kind: Deployment, name: web, replicas: 20}
  - at: 2m
    stopNode: {name: node-002}
  - wait: {for: PodsScheduled, selector: app=web, count: 3, timeout: 10m}
  - checkpoint: {name: after}
  - at: 1h
    startNode: {name: node-002}
  - delete: {objects: [{apiVersion: v1, kind: Pod, metadata: {name: p}}]}
)"),
                         "", "test.yaml");
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->steps.size(), 7u);
  EXPECT_EQ(s->cluster.nodes, 3);
  EXPECT_EQ(s->steps[0].kind, StepKind::kApply);
  EXPECT_EQ(s->steps[0].objects.size(), 1u);
  EXPECT_EQ(s->steps[1].kind, StepKind::kScale);
  EXPECT_EQ(s->steps[1].replicas, 20);
  EXPECT_EQ(s->steps[1].namespace_, "default");
  EXPECT_EQ(*s->steps[1].at, std::chrono::seconds(30));
  EXPECT_EQ(s->steps[2].kind, StepKind::kStopNode);
  EXPECT_EQ(s->steps[2].name, "node-002");
  EXPECT_EQ(s->steps[3].kind, StepKind::kWait);
  EXPECT_FALSE(s->steps[3].at.has_value());
  EXPECT_EQ(s->steps[3].wait.condition, WaitFor::kPodsScheduled);
  EXPECT_EQ(s->steps[3].wait.count, 3);
  EXPECT_EQ(s->steps[3].wait.timeout, std::chrono::minutes(10));
  EXPECT_EQ(s->steps[4].name, "after");
  EXPECT_EQ(*s->steps[5].at, std::chrono::hours(1));
  EXPECT_EQ(s->steps[6].kind, StepKind::kDelete);
}

TEST(ScenarioSpecTest, ErrorsNameTheStepAndField) {
  EXPECT_EQ(ErrorOf(Wrap("  - checkpoint: {name: a}\n  - checkpoint: {name: b}\n"
                         "  - scale: {kind: Deployment, name: web, replicas: -1}\n")),
            "steps[2].scale.replicas: must be >= 0");
  EXPECT_EQ(ErrorOf(Wrap("  - scale: {kind: Deployment, name: web}\n")),
            "steps[0].scale.replicas: required");
  EXPECT_EQ(ErrorOf(Wrap("  - scale: {kind: Pod, name: web, replicas: 1}\n")),
            "steps[0].scale.kind: must be Deployment, ReplicaSet, StatefulSet or "
            "ReplicationController");
  EXPECT_EQ(ErrorOf(Wrap("  - at: soon\n    checkpoint: {name: a}\n")),
            "steps[0].at: invalid duration \"soon\" (e.g. 30s, 2m, 1h30m, 500ms)");
  EXPECT_EQ(ErrorOf(Wrap("  - wait: {for: Forever}\n")),
            "steps[0].wait.for: unknown condition \"Forever\" (PodsScheduled, PodsRunning, "
            "NodeReady, NodeNotReady)");
  EXPECT_EQ(ErrorOf(Wrap("  - wait: {for: NodeReady}\n")), "steps[0].wait.node: required");
  EXPECT_EQ(ErrorOf(Wrap("  - wait: {for: PodsRunning, selector: \"app in web\"}\n"))
                .rfind("steps[0].wait.selector: ", 0),
            0u);
  EXPECT_EQ(ErrorOf(Wrap("  - stopNode: {name: n, when: now}\n")),
            "steps[0].stopNode.when: unknown field");
  EXPECT_EQ(ErrorOf(Wrap("  - fly: {}\n")), "steps[0].fly: unknown field");
  EXPECT_EQ(ErrorOf(Wrap("  - {at: 1m}\n")),
            "steps[0]: needs an action (apply, create, delete, scale, stopNode, startNode, wait, "
            "checkpoint)");
  EXPECT_EQ(ErrorOf(Wrap("  - {stopNode: {name: a}, startNode: {name: a}}\n")),
            "steps[0]: has both startNode and stopNode: one action a step");
  EXPECT_EQ(ErrorOf(Wrap("  - at: 2m\n    checkpoint: {name: a}\n  - at: 1m\n    "
                         "checkpoint: {name: b}\n")),
            "steps[1].at: 1m0s is before the step before it (2m0s)");
  EXPECT_EQ(ErrorOf(Wrap("  - apply: {object: {kind: Pod, metadata: {name: p}}}\n")),
            "steps[0].apply.object: needs apiVersion and kind");
  EXPECT_EQ(ErrorOf(Wrap("  - apply: {file: /nonexistent/x.yaml}\n")),
            "steps[0].apply.file: cannot read /nonexistent/x.yaml");
}

TEST(ScenarioSpecTest, ChecksTheDocument) {
  EXPECT_EQ(ErrorOf("apiVersion: v1\nkind: Scenario\nmetadata: {name: s}\nspec: {steps: []}\n"),
            "apiVersion: must be berth.dev/v1alpha1");
  EXPECT_EQ(ErrorOf("apiVersion: berth.dev/v1alpha1\nkind: Scenario\nspec: {steps: []}\n"),
            "metadata.name: required");
  EXPECT_EQ(ErrorOf("apiVersion: berth.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\n"
                    "spec: {cluster: {nodes: -2}, steps: []}\n"),
            "spec.cluster.nodes: must be >= 0");
  EXPECT_EQ(ErrorOf("apiVersion: berth.dev/v1alpha1\nkind: Scenario\nmetadata: {name: s}\n"
                    "spec: {cluster: {nodeTemplate: {gpu: 1}}, steps: []}\n"),
            "spec.cluster.nodeTemplate.gpu: unknown field");
}

TEST(ScenarioSpecTest, ReadsFilesRelativeToTheScenario) {
  const auto dir = std::filesystem::temp_directory_path() / "berth-scenario-spec-test";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "objs.yaml") << "apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n"
                                      "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n";
  std::ofstream(dir / "s.yaml") << Wrap("  - apply: {file: objs.yaml}\n");
  auto s = LoadScenario((dir / "s.yaml").string());
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s->steps[0].objects.size(), 2u);
  EXPECT_EQ(s->steps[0].objects[1]["metadata"]["name"], "b");
}

TEST(ScenarioDurationTest, ParsesAndFormatsGoDurations) {
  EXPECT_EQ(*ParseDuration("1h30m", "x"), std::chrono::minutes(90));
  EXPECT_EQ(*ParseDuration("1.5s", "x"), std::chrono::milliseconds(1500));
  EXPECT_EQ(*ParseDuration("250ms", "x"), std::chrono::milliseconds(250));
  EXPECT_FALSE(ParseDuration("5 minutes", "x").ok());
  EXPECT_FALSE(ParseDuration("", "x").ok());
  EXPECT_EQ(FormatDuration(std::chrono::minutes(90)), "1h30m0s");
  EXPECT_EQ(FormatDuration(std::chrono::milliseconds(305500)), "5m5.5s");
  EXPECT_EQ(FormatDuration(Duration::zero()), "0s");
}

}  // namespace
}  // namespace berth::scenario
